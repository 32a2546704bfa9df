public import AsyncHTTPClient
import Foundation
public import HammockClient
import HammockWire
import NIOCore
import NIOHTTP1

/// Sends requests with AsyncHTTPClient (SwiftNIO): the reliable choice on Linux servers.
///
/// ```swift
/// let client = RestClient(baseURL: url, transport: AsyncHTTPClientTransport())
/// ```
/// Cancelling the calling task cancels the request. Response bodies larger than
/// `maximumResponseSize` fail instead of filling memory. `timeout` bounds the whole call, redirects and
/// body included: a server that sends its head and then trickles the body fails with
/// `HTTPClientError.deadlineExceeded` when the time is up.
///
/// The transport follows redirects itself, under `RedirectRule` (HammockClient): one that leaves the origin keeps
/// only content-negotiation fields and `User-Agent`, so no token, cookie or API key follows it. The
/// default client is `HTTPClient.shared`'s configuration with AsyncHTTPClient's own redirect following
/// turned off. A client you pass should be configured with `redirectConfiguration: .disallow` too: one
/// that follows redirects itself strips only `Authorization`, `Cookie`, `Proxy-Authorization` and
/// `Origin` (AsyncHTTPClient's rule), and the transport never sees the redirect.
public struct AsyncHTTPClientTransport: HTTPTransport {
    /// The HTTP client.
    public let client: HTTPClient
    /// How long a whole request may take (applied between a millisecond and a year).
    public let timeout: Duration
    /// The largest response body accepted, in bytes.
    public let maximumResponseSize: Int
    /// Which redirects it follows.
    public let redirects: RedirectPolicy

    /// The client used when none is given: `HTTPClient.shared`'s configuration and event loops, with
    /// redirects left to the transport. Like `HTTPClient.shared`, it lives as long as the process and
    /// is never shut down: a `static let` is never released, so AsyncHTTPClient's check that a client
    /// is shut down before it is released never runs.
    public static let defaultClient: HTTPClient = {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// A transport over `client` (``defaultClient`` when `nil`), following `redirects`.
    public init(
        client: HTTPClient? = nil, timeout: Duration = .seconds(60), maximumResponseSize: Int = 16 << 20,
        redirects: RedirectPolicy = .follow
    ) {
        self.redirects = redirects
        self.client = client ?? Self.defaultClient
        self.timeout = Self.clampedTimeout(timeout)
        self.maximumResponseSize = max(0, maximumResponseSize)
    }

    /// Sends `request`. Its timeouts (the deadline, and AsyncHTTPClient's connect, read, write and
    /// handshake timeouts) come out as ``TransportTimedOut``, so a `RestClient` reports them as
    /// `RestError.Reason.timedOut`, as it does URLSession's.
    public func send(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8]) {
        do {
            return try await exchange(request, body: body)
        } catch let error as HTTPClientError where Self.timeouts.contains(error) {
            throw TransportTimedOut(error)
        }
    }

    /// AsyncHTTPClient's errors that mean it gave up waiting.
    static let timeouts: [HTTPClientError] = [
        .deadlineExceeded, .readTimeout, .writeTimeout, .connectTimeout, .socksHandshakeTimeout,
        .httpProxyHandshakeTimeout, .tlsHandshakeTimeout,
    ]

    /// Sends `request`, following redirects under `RedirectRule`, and returns the final response with
    /// its body unread. AsyncHTTPClient's deadline ends with the head.
    func head(
        for request: HTTPRequest, body: HTTPClientRequest.Body?, resendable: Bool = true, deadline: ContinuousClock.Instant
    ) async throws -> HTTPClientResponse {
        guard var url = request.url else { throw HTTPClientError.invalidURL }
        let remaining = max(deadline - ContinuousClock.now, .zero)
        let nanoseconds = remaining.components.seconds * 1_000_000_000 + remaining.components.attoseconds / 1_000_000_000
        let nioDeadline = NIODeadline.now() + .nanoseconds(nanoseconds)
        var method = request.method
        var fields = request.headerFields
        var body = body
        var redirects = 0
        var response: HTTPClientResponse
        while true {
            var outgoing = HTTPClientRequest(url: url.absoluteString)
            outgoing.method = HTTPMethod(rawValue: method.rawValue)
            for (name, value) in fields.http1Lines { outgoing.headers.add(name: name, value: value) }
            if let body { outgoing.body = body }
            response = try await client.execute(outgoing, deadline: nioDeadline)
            guard RedirectRule.follows(Int(response.status.code)),
                let location = response.headers.first(name: "location"),
                let target = URL(string: PercentEncoding.encodeURLText(location), relativeTo: url)?.absoluteURL,
                target.scheme?.lowercased() == "http" || target.scheme?.lowercased() == "https",
                self.redirects.follows(from: url, to: target)
            else { return response }
            // A streamed body was read by the first attempt: a redirect that would send it again is
            // the caller's answer.
            if !resendable, body != nil, RedirectRule.method(after: Int(response.status.code), from: method).keepsBody {
                return response
            }
            guard redirects < RedirectRule.maximumRedirects else { throw HTTPClientError.redirectLimitReached }
            redirects += 1
            // Within the same deadline as everything else: AsyncHTTPClient's ends with the head, and a
            // redirect's body trickled a byte a minute held a call with a 60 s timeout for hours.
            let redirect = response
            _ = try await Self.beforeDeadline(deadline) {
                try await Self.discard(redirect)
                return ByteBuffer()
            }
            let next = RedirectRule.method(after: Int(response.status.code), from: method)
            fields = RedirectRule.fields(fields, from: url, to: target, keepsBody: next.keepsBody)
            method = next.method
            if !next.keepsBody { body = nil }
            url = target
        }
    }

    func exchange(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8]) {
        let deadline = ContinuousClock.now + Self.clampedTimeout(timeout)
        let response = try await head(for: request, body: body.map { .bytes(ByteBuffer(bytes: $0)) }, deadline: deadline)
        // AsyncHTTPClient's deadline ends with the head; the rest of the budget bounds the body.
        let answered = response
        let buffer = try await Self.beforeDeadline(deadline) { try await self.collect(answered) }
        // On a machine busy enough to hold back the sleeping child, the body may win a race it had lost:
        // whatever the scheduling, a call that ends after its deadline is a timeout.
        guard ContinuousClock.now <= deadline else { throw HTTPClientError.deadlineExceeded }
        return (Self.head(of: response), Array(buffer: buffer))
    }

    /// The status and header fields of `response`.
    static func head(of response: HTTPClientResponse) -> HTTPResponse {
        var fields = HTTPFields()
        for (name, value) in response.headers {
            if let fieldName = HTTPField.Name(name) { fields.append(HTTPField(name: fieldName, value: value)) }
        }
        let status = HTTPResponse.Status(code: Int(response.status.code), reasonPhrase: response.status.reasonPhrase)
        return HTTPResponse(status: status, headerFields: fields)
    }

    /// Streams: returns with the head, the body read from AsyncHTTPClient as the reader asks for it
    /// (its own backpressure: a slow reader slows the socket). The timeout bounds the head; a request
    /// body that is not plain bytes is streamed too (it cannot be sent again, so a 307 or 308 after it
    /// is returned, not followed).
    public func stream(_ request: HTTPRequest, body: BodyStream?) async throws -> (HTTPResponse, BodyStream) {
        do {
            let deadline = ContinuousClock.now + Self.clampedTimeout(timeout)
            let outgoing: HTTPClientRequest.Body? = body.map { body in
                if let bytes = body.bytes { return .bytes(ByteBuffer(bytes: bytes)) }
                let length: HTTPClientRequest.Body.Length = body.expectedLength.map { .known(Int64($0)) } ?? .unknown
                return .stream(ByteBufferChunks(body: body), length: length)
            }
            let response = try await head(
                for: request, body: outgoing, resendable: body?.isRepeatable ?? true, deadline: deadline)
            let expected = response.headers.first(name: "content-length").flatMap(Int.init)
            let chunks = BodyStream(ResponseChunks(body: response.body), expectedLength: expected)
            return (Self.head(of: response), chunks.mapError(Self.classify))
        } catch {
            throw Self.classify(error)
        }
    }

    /// AsyncHTTPClient's timeouts as ``TransportTimedOut``; other errors as they are.
    @Sendable static func classify(_ error: any Error) -> any Error {
        if let error = error as? HTTPClientError, timeouts.contains(error) { return TransportTimedOut(error) }
        return error
    }

    /// `work`'s result, or `HTTPClientError.deadlineExceeded` once `deadline` passes (the work is then
    /// cancelled).
    static func beforeDeadline(
        _ deadline: ContinuousClock.Instant, _ work: @escaping @Sendable () async throws -> ByteBuffer
    ) async throws -> ByteBuffer {
        try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
            group.addTask { try await work() }
            group.addTask {
                try await Task.sleep(until: deadline, clock: .continuous)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let buffer = first else { throw HTTPClientError.deadlineExceeded }
            return buffer
        }
    }

    /// Reads and drops a redirect's body (at most 64 KiB of it: a longer one ends its connection instead).
    static func discard(_ response: HTTPClientResponse) async throws {
        var total = 0
        for try await chunk in response.body {
            total += chunk.readableBytes
            if total > 64 << 10 { return }
        }
    }

    private func collect(_ response: HTTPClientResponse) async throws -> ByteBuffer {
        if TransferProgress.isObserved { return try await collectReportingProgress(response) }
        return try await response.body.collect(upTo: maximumResponseSize)
    }

    /// Reads the body chunk by chunk, telling `TransferProgress` about the head and each chunk.
    private func collectReportingProgress(_ response: HTTPClientResponse) async throws -> ByteBuffer {
        let expected = response.headers.first(name: "content-length").flatMap(Int.init)
        TransferProgress.report(.responseHeadReceived(expectedBytes: expected))
        var buffer = ByteBuffer()
        for try await chunk in response.body {
            guard buffer.readableBytes + chunk.readableBytes <= maximumResponseSize else {
                throw NIOTooManyBytesError(maxBytes: maximumResponseSize)
            }
            var chunk = chunk
            buffer.writeBuffer(&chunk)
            TransferProgress.report(.responseBytesReceived(total: buffer.readableBytes))
        }
        return buffer
    }
}

/// A response body's buffers as byte arrays.
struct ResponseChunks: AsyncSequence, Sendable {
    typealias Element = [UInt8]
    let body: HTTPClientResponse.Body

    func makeAsyncIterator() -> Iterator { Iterator(base: body.makeAsyncIterator()) }

    struct Iterator: AsyncIteratorProtocol {
        var base: HTTPClientResponse.Body.AsyncIterator
        mutating func next() async throws -> [UInt8]? {
            guard let buffer = try await base.next() else { return nil }
            return Array(buffer: buffer)
        }
    }
}

/// A request body's chunks as buffers.
struct ByteBufferChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let body: BodyStream

    func makeAsyncIterator() -> Iterator { Iterator(base: body.makeAsyncIterator()) }

    struct Iterator: AsyncIteratorProtocol {
        var base: BodyStream.Iterator
        mutating func next() async throws -> ByteBuffer? {
            guard let chunk = try await base.next() else { return nil }
            return ByteBuffer(bytes: chunk)
        }
    }
}
