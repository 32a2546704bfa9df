import Hummingbird
import Logging
import ServiceLifecycle

/// The listening socket's life: idle, starting, running, stopping. One per ``MockServer``.
actor ServerLifecycle {
    enum State {
        case idle
        case starting
        case running(port: Int, group: ServiceGroup, task: Task<Void, any Error>)
        case stopping
    }

    private var state = State.idle

    var port: Int? {
        if case .running(let port, _, _) = state { return port }
        return nil
    }

    func start(_ server: MockServer, host: String, port: Int) async throws -> Int {
        guard case .idle = state else { throw MockServerError.alreadyRunning }
        state = .starting
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let application = Application(
            responder: HummingbirdResponder(server: server),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "Hammock"),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? port)
                continuation.finish()
            },
            logger: Logger(label: "Hammock.HTTP", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: [application], logger: server.logger))
        let task = Task {
            defer { continuation.finish() }
            try await group.run()
        }
        var bound: Int?
        for await value in ports {
            bound = value
            break
        }
        guard let bound else {
            // The server stopped before it listened: report why.
            state = .idle
            do {
                try await task.value
            } catch {
                throw MockServerError.cannotListen(host: host, port: port, reason: String(describing: error))
            }
            throw MockServerError.cannotListen(host: host, port: port, reason: "the server stopped before listening")
        }
        state = .running(port: bound, group: group, task: task)
        return bound
    }

    func stop() async {
        guard case .running(_, let group, let task) = state else { return }
        state = .stopping
        await group.triggerGracefulShutdown()
        _ = try? await task.value
        state = .idle
    }
}

/// Failures to start serving.
///
/// ```swift
/// do { try await server.start(port: 8888) }
/// catch let error as MockServerError { print(error) }   // cannot listen on 127.0.0.1:8888: ... in use
/// ```
public enum MockServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `start` was called on a server that is already listening.
    case alreadyRunning
    /// The address could not be bound (in use, not permitted, not local).
    case cannotListen(host: String, port: Int, reason: String)

    /// A one-line message.
    public var description: String {
        switch self {
        case .alreadyRunning: "the server is already running"
        case .cannotListen(let host, let port, let reason): "cannot listen on \(host):\(port): \(reason)"
        }
    }
}

extension MockServer {
    /// Starts listening for HTTP on `host:port` and returns the bound port (pass 0 for a free one).
    ///
    /// ```swift
    /// let port = try await server.start(host: "127.0.0.1", port: 0)
    /// defer { Task { await server.stop() } }
    /// ```
    /// - Throws: ``MockServerError`` if already running or the address cannot be bound.
    @discardableResult
    public func start(host: String = "127.0.0.1", port: Int = 8888) async throws -> Int {
        try await lifecycle.start(self, host: host, port: port)
    }

    /// The port the server listens on, while it runs.
    public var port: Int? {
        get async { await lifecycle.port }
    }

    /// Stops listening after in-flight requests finish; responses still held back by simulated latency
    /// are sent at once. Calling it on a stopped server does nothing.
    public func stop() async {
        // Responses held back by simulated latency go out now, so stopping never waits out a delay.
        stopSignal.raise()
        await lifecycle.stop()
        stopSignal.lower()
    }
}
