public import Foundation
import NIOCore
import NIOExtras
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOTLS
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The listening socket's life: idle, starting, running, stopping. One per `MockServer`.
///
/// Connections are served by a SwiftNIO pipeline of our own: NIO's HTTP/1.1 decoder inside
/// ``RequestDecoder``, and ``HTTPConnectionHandler``, which writes responses as bytes itself. When the process runs out of descriptors,
/// waiting connections are closed instead of retried in a loop, and stopping closes the listener,
/// lets each connection finish the responses it owes, and waits for every socket to close.
actor ServerLifecycle: MockServerListener {
    enum State {
        case idle
        case starting
        case running(host: String, port: Int, channel: any Channel, quiescing: ServerQuiescingHelper, isTLS: Bool)
        case stopping
    }

    private var state = State.idle

    var port: Int? {
        if case .running(_, let port, _, _, _) = state { return port }
        return nil
    }

    /// The host it listens on, its port, and whether it speaks TLS, while running.
    var address: (host: String, port: Int, isTLS: Bool)? {
        if case .running(let host, let port, _, _, let isTLS) = state { return (host, port, isTLS) }
        return nil
    }

    func start(
        _ server: MockServer, host: String, port: Int, limits: ConnectionLimits, tls: TLSIdentity? = nil
    ) async throws
        -> Int
    {
        guard case .idle = state else { throw MockServerError.alreadyRunning }
        let limits = limits.effective
        state = .starting
        let group = MultiThreadedEventLoopGroup.singleton
        let quiescing = ServerQuiescingHelper(group: group)
        let listening: Int32
        do {
            listening = try ListeningSocket.make(host: host, port: port)
        } catch {
            state = .idle
            throw MockServerError.cannotListen(host: host, port: port, reason: Self.reason(error))
        }
        let logger = server.logger
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        DescriptorExhaustionHandler(listening: listening, logger: logger))
                    try channel.pipeline.syncOperations.addHandler(quiescing.makeServerChannelHandler(channel: channel))
                }
            }
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            // A client that closes its side after the request (shutdown(SHUT_WR)) still gets the answer.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    guard let tls else {
                        try Self.configure(channel.pipeline.syncOperations, server: server, limits: limits, isSecure: false)
                        return
                    }
                    // TLS first; then the protocol the handshake agreed on (ALPN): HTTP/2 if the client
                    // offered it and the identity does, else HTTP/1.1 as on a plain connection.
                    try channel.pipeline.syncOperations.addHandler(PlainHTTPRefusal())
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls.context))
                    try channel.pipeline.syncOperations.addHandler(HandshakeTimeout(limit: limits.idleTimeout))
                    try channel.pipeline.syncOperations.addHandler(
                        ApplicationProtocolNegotiationHandler { result, channel in
                            channel.eventLoop.makeCompletedFuture {
                                if case .negotiated("h2") = result {
                                    try HTTP2Connection.configure(channel, server: server, limits: limits)
                                } else {
                                    try Self.configure(
                                        channel.pipeline.syncOperations, server: server, limits: limits, isSecure: true)
                                }
                            }
                        })
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.withBoundSocket(listening).get()
        } catch {
            state = .idle
            throw MockServerError.cannotListen(host: host, port: port, reason: Self.reason(error))
        }
        let bound = channel.localAddress?.port ?? port
        state = .running(host: host, port: bound, channel: channel, quiescing: quiescing, isTLS: tls != nil)
        return bound
    }

    func stop() async {
        guard case .running(_, _, _, let quiescing, _) = state else { return }
        state = .stopping
        let done = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: Void.self)
        quiescing.initiateShutdown(promise: done)
        try? await done.futureResult.get()
        state = .idle
    }

    /// A connection's pipeline, front to back.
    static func configure(
        _ pipeline: ChannelPipeline.SynchronousOperations, server: MockServer, limits: ConnectionLimits, isSecure: Bool
    ) throws {
        var decoderLimits = NIOHTTPDecoderLimitConfiguration()
        decoderLimits.maxHeaderListSize = limits.maximumHeaderBytes
        decoderLimits.maxHeaderFieldSize = limits.maximumHeaderBytes
        decoderLimits.maxHeaderFieldCount = limits.maximumHeaderFields
        let activity = ConnectionActivity(now: .now())
        // The decoder keeps at most an unfinished head's URL or field, which its own limits bound, and
        // the read that arrived with it (64 KiB at most): twice the header budget is a safety net, not
        // a limit a client can reach first.
        let decoder = RequestDecoder(limits: decoderLimits, activity: activity)
        try pipeline.addHandler(
            ByteToMessageHandler(decoder, maximumBufferSize: 2 * limits.maximumHeaderBytes + (64 << 10)))
        try pipeline.addHandler(
            HTTPConnectionHandler<HTTP1Wire>(server: server, limits: limits, activity: activity, isSecure: isSecure))
    }

    /// The system's words for a failure to bind (`Address already in use`), without the call that failed.
    static func reason(_ error: any Error) -> String {
        if let ioError = error as? IOError { return String(cString: strerror(ioError.errnoCode)) }
        return String(describing: error)
    }
}

/// Failures to start serving.
///
/// ```swift
/// do { try await server.start(port: 8888) }
/// catch let error as MockServerError { print(error) }   // cannot listen on 127.0.0.1:8888: Address already in use
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
        case .cannotListen(let host, let port, let reason):
            host.contains(":") ? "cannot listen on [\(host)]:\(port): \(reason)" : "cannot listen on \(host):\(port): \(reason)"
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
    /// - Parameter limits: Timeouts and header limits for each connection.
    /// - Throws: ``MockServerError`` if already running or the address cannot be bound.
    ///
    /// `MockServer.stop()` stops listening, lets each connection finish the responses it owes, and
    /// returns when every connection is closed; responses still held back by simulated latency are sent
    /// at once. A stopped server can start again.
    @discardableResult
    public func start(
        host: String = "127.0.0.1", port: Int = 8888, limits: ConnectionLimits = ConnectionLimits()
    )
        async throws -> Int
    {
        try await lifecycle.start(self, host: host, port: port, limits: limits)
    }

    /// Starts serving HTTPS with `tls` (TLS 1.2 or later): the same server, behind TLS, speaking HTTP/2 to
    /// clients that offer it (ALPN) unless `tls.offersHTTP2` is off, and HTTP/1.1 to the others.
    ///
    /// ```swift
    /// let identity = try LocalCertificateAuthority.loadOrCreate().issue(for: ["localhost", "127.0.0.1"])
    /// let port = try await server.start(port: 0, tls: identity)   // https://127.0.0.1:PORT
    /// ```
    @discardableResult
    public func start(
        host: String = "127.0.0.1", port: Int = 8443, limits: ConnectionLimits = ConnectionLimits(), tls: TLSIdentity
    ) async throws -> Int {
        try await lifecycle.start(self, host: host, port: port, limits: limits, tls: tls)
    }

    /// The port the server listens on, while it runs.
    public var port: Int? {
        get async {
            guard let lifecycle = listener.withLock({ $0 }) as? ServerLifecycle else { return nil }
            return await lifecycle.port
        }
    }

    /// The URL its routes answer under while it listens: `http://127.0.0.1:54321`, with the base path if
    /// the server has one (`http://127.0.0.1:54321/api/v1`) and an IPv6 host in brackets. `nil` while it
    /// does not listen. A server listening on every address (`0.0.0.0`, `::`) is named by its loopback
    /// address, which a client on this machine can reach.
    ///
    /// ```swift
    /// try await server.start(port: 0)
    /// let client = RestClient(baseURL: try #require(await server.baseURL))
    /// ```
    public var baseURL: URL? {
        get async {
            guard let lifecycle = listener.withLock({ $0 }) as? ServerLifecycle,
                let (host, port, isTLS) = await lifecycle.address
            else { return nil }
            let reachable = host == "0.0.0.0" ? "127.0.0.1" : (host == "::" ? "::1" : host)
            let authority = reachable.contains(":") ? "[\(reachable)]:\(port)" : "\(reachable):\(port)"
            return URL(string: "\(isTLS ? "https" : "http")://\(authority)\(options.basePath ?? "")")
        }
    }

    /// The server's listener, made on first use; one per server, so a second `start` is refused.
    var lifecycle: ServerLifecycle {
        listener.withLock { listener in
            if let existing = listener as? ServerLifecycle { return existing }
            let made = ServerLifecycle()
            listener = made
            return made
        }
    }
}
