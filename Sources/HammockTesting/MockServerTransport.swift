public import Foundation
public import HammockClient
public import HammockServer
import HammockURLSession
import HammockWire
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A transport that hands requests straight to a `MockServer`, without a socket: the same routing,
/// validation, storage, latency and faults as over HTTP, at the cost of a function call.
///
/// ```swift
/// let server = try await MockServer(resources: [people])
/// let client = RestClient(baseURL: URL(string: "http://mock")!, transport: MockServerTransport(server: server))
/// ```
/// It behaves as `URLSessionTransport` does over a socket: a redirect is followed under `RedirectRule`
/// (a `Location` on another origin keeps no token, cookie or API key; one outside this server fails,
/// since no network is reached from here); a body past ``maximumResponseSize`` fails as it arrives, and a
/// streamed body that does not end within ``timeout`` fails `timedOut` (a repeating event stream, read
/// whole as this transport reads bodies, would otherwise grow for ever). A connection fault is thrown as
/// the `URLError` that `URLSessionTransport` meets over a socket (``urlError(for:)``); a throttled body
/// takes its time; a timeout fault waits for ``timeout`` on the server's clock, then throws
/// `URLError(.timedOut)`.
public struct MockServerTransport: HTTPTransport {
    /// The server that answers.
    public let server: MockServer
    /// How long a call may take: a server that never answers (a timeout fault) on the server's clock, a
    /// body that does not end in time. Held between a millisecond and a year.
    public let timeout: Duration
    /// The largest response body accepted, in bytes (16 MiB by default, as the other transports).
    public let maximumResponseSize: Int
    /// Which redirects it follows (those outside the server fail under `.follow`: they would need a network).
    public let redirects: RedirectPolicy

    /// A transport to `server`.
    public init(
        server: MockServer, timeout: Duration = .seconds(60), maximumResponseSize: Int = 16 << 20,
        redirects: RedirectPolicy = .follow
    ) {
        self.redirects = redirects
        self.server = server
        self.timeout = Self.clampedTimeout(timeout)
        self.maximumResponseSize = max(0, maximumResponseSize)
    }

    public func send(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8]) {
        let deadline = ContinuousClock.now + timeout
        let (head, exchanged) = try await exchange(request, body: body)
        let responseBody = try await collect(exchanged, deadline: deadline)
        if TransferProgress.isObserved {
            TransferProgress.report(.responseHeadReceived(expectedBytes: responseBody.count))
            TransferProgress.report(.responseBytesReceived(total: responseBody.count))
        }
        return (head, responseBody)
    }

    /// Streams: returns with the head; a body the server writes as it goes (events, a throttled or
    /// file body) is handed over chunk by chunk as it is written, the server's writer waiting while the
    /// reader is more than `BodyStream.defaultBufferSize` behind, as a socket would make it wait. The
    /// body ends when the server's does, when the server stops, or when the reader goes; a truncate
    /// fault ends it with the `URLError` a socket would give. ``maximumResponseSize`` and the timeout's
    /// bound on the body do not apply (the reader decides).
    public func stream(_ request: HTTPRequest, body: BodyStream?) async throws -> (HTTPResponse, BodyStream) {
        let bytes = try await body?.collect(upTo: 1 << 30)
        let (head, exchanged) = try await exchange(request, body: bytes)
        guard let producer = exchanged.body else { return (head, BodyStream(exchanged.head.body)) }
        let task = TaskBox()
        let (stream, writer) = BodyStream.makeStream(expectedLength: producer.length, onTermination: { task.cancel() })
        let server = self.server
        let truncated = exchanged.isTruncated
        task.start {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        try await producer.write(to: BodyWriter { chunk in try await writer.write(chunk) })
                        writer.finish(throwing: truncated ? Self.urlError(for: .truncate) : nil)
                    } catch {
                        // A producer that fails ends the body early: over a socket, a cut connection.
                        writer.finish(throwing: Self.urlError(for: .truncate))
                    }
                }
                group.addTask {
                    await server.untilStopped()
                    writer.finish(throwing: Self.urlError(for: .truncate))
                }
                await group.next()
                group.cancelAll()
            }
        }
        return (head, stream)
    }

    /// Sends `request` to the server, following redirects, and returns the final head and exchange.
    private func exchange(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, MockServer.StreamedExchange) {
        var request = request
        var body = body
        var followed = 0
        while true {
            // Read as the server reads a request off a socket (an `HTTPRequest` cannot hold a bad field name).
            let fields = request.headerFields.lazy.map { (name: $0.name.rawName, value: $0.value) }
            let mockRequest = MockRequest.arriving(request.method, target: request.path ?? "/", fields: fields, body: body)
            let exchanged: MockServer.StreamedExchange
            do {
                exchanged = try await server.exchangeStreaming(mockRequest, timeout: timeout)
            } catch let error as ConnectionFaultError {
                throw Self.urlError(for: error.fault)
            }
            // As over a socket: a call cancelled while the server worked (or held its answer back for
            // simulated latency) ends in cancellation, not in the answer nobody waits for any more.
            try Task.checkCancellation()
            if let next = try Self.redirect(after: exchanged.head, from: request, policy: self.redirects) {
                followed += 1
                guard followed <= RedirectRule.maximumRedirects else { throw URLError(.httpTooManyRedirects) }
                let rule = RedirectRule.method(after: exchanged.head.status.code, from: request.method)
                if !rule.keepsBody { body = nil }
                request = next
                continue
            }
            return (HTTPResponse(status: exchanged.head.status, headerFields: exchanged.head.headerFields), exchanged)
        }
    }

    /// The request a redirect answer asks for, under ``RedirectRule``: `nil` when the answer is none to
    /// follow.
    /// - Throws: `URLError(.unsupportedURL)` for a `Location` outside this server's origin (it would
    ///   need a network).
    static func redirect(
        after response: MockResponse, from request: HTTPRequest, policy: RedirectPolicy = .follow
    ) throws -> HTTPRequest? {
        guard RedirectRule.follows(response.status.code), let location = response.headerFields[.location],
            let current = request.url,
            let target = URL(string: PercentEncoding.encodeURLText(location), relativeTo: current)?.absoluteURL,
            policy.follows(from: current, to: target)
        else { return nil }
        guard !RedirectRule.leavesOrigin(from: current, to: target) else {
            throw URLError(
                .unsupportedURL,
                userInfo: [
                    NSLocalizedDescriptionKey:
                        "MockServerTransport follows redirects within its server only; \(target.absoluteString.prefix(200)) "
                        + "is elsewhere (serve the mock on loopback to follow it over the network)"
                ])
        }
        let rule = RedirectRule.method(after: response.status.code, from: request.method)
        var next = request
        next.method = rule.method
        next.headerFields = RedirectRule.fields(request.headerFields, from: current, to: target, keepsBody: rule.keepsBody)
        var path = target.path.isEmpty ? "/" : target.path
        if let query = URLComponents(url: target, resolvingAgainstBaseURL: false)?.percentEncodedQuery { path += "?" + query }
        next.path = path
        return next
    }

    /// The body, read as it is written, up to ``maximumResponseSize`` and `deadline`.
    private func collect(_ exchanged: MockServer.StreamedExchange, deadline: ContinuousClock.Instant) async throws -> [UInt8] {
        let limit = maximumResponseSize
        guard let stream = exchanged.body else {
            guard exchanged.head.body.count <= limit else { throw DataTransfer.tooLarge(limit) }
            return exchanged.head.body
        }
        let bytes = try await withThrowingTaskGroup(of: [UInt8]?.self) { group in
            group.addTask {
                let collected = try await stream.collect(upTo: limit + 1)
                guard collected.count <= limit else { throw DataTransfer.tooLarge(limit) }
                return collected
            }
            group.addTask {
                try await Task.sleep(until: deadline, clock: .continuous)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let bytes = first else { throw URLError(.timedOut) }
            return bytes
        }
        if exchanged.isTruncated { throw Self.urlError(for: .truncate) }
        return bytes
    }

    /// The error a URLSession client meets for `fault` over a socket (`InProcessNetwork.urlError(for:)`,
    /// shared with `HammockURLProtocol`).
    public static func urlError(for fault: ConnectionFault) -> URLError { InProcessNetwork.urlError(for: fault) }
}

/// The task producing one streamed body, so the reader's going away can cancel it, whichever comes first.
final class TaskBox: Sendable {
    private let state = Mutex<(task: Task<Void, Never>?, cancelled: Bool)>((nil, false))

    func start(_ work: @escaping @Sendable () async -> Void) {
        let task = Task { await work() }
        let cancelled = state.withLock { state in
            state.task = task
            return state.cancelled
        }
        if cancelled { task.cancel() }
    }

    func cancel() {
        let task = state.withLock { state in
            state.cancelled = true
            return state.task
        }
        task?.cancel()
    }
}
