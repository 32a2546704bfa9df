public import HTTPTypes
import Synchronization

/// A transport with interceptors around it: what every request of a ``RestClient`` (and of an
/// observable resource's service) passes through, with no notion of a base URL. It is itself an
/// ``HTTPTransport``, so it can go wherever one goes.
///
/// ```swift
/// let chain = InterceptedTransport(URLSessionTransport(), interceptors: [BearerAuthentication { token }])
/// let head = HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: "/profile")
/// let (response, body) = try await chain.send(head, body: nil)
/// ```
/// Interceptors run in the order given: the first sees the request first and the response last.
public struct InterceptedTransport: HTTPTransport {
    /// The transport at the end of the chain.
    public let transport: any HTTPTransport
    /// The interceptors, outermost first.
    public let interceptors: [any ClientInterceptor]
    private let chain: ClientInterceptor.Next

    /// Wraps `transport` in `interceptors` (composed once, here).
    public init(_ transport: any HTTPTransport, interceptors: [any ClientInterceptor] = []) {
        self.transport = transport
        self.interceptors = interceptors
        chain = Self.compose(transport, interceptors, observing: nil)
    }

    static func compose(
        _ transport: any HTTPTransport, _ interceptors: [any ClientInterceptor],
        observing observe: (@Sendable (HTTPRequest) -> Void)?
    ) -> ClientInterceptor.Next {
        var next: ClientInterceptor.Next = { request, body in
            observe?(request)
            return try await transport.send(request, body: body)
        }
        for interceptor in interceptors.reversed() {
            let inner = next
            next = { request, body in try await interceptor.intercept(request, body: body, next: inner) }
        }
        return next
    }

    /// Sends like ``send(_:body:)``, telling `observe` the head as it goes to the transport (after every
    /// interceptor), once per attempt: what a cache needs to know of the request that was answered.
    package func send(
        _ request: HTTPRequest, body: [UInt8]?, observingSentHead observe: @escaping @Sendable (HTTPRequest) -> Void
    ) async throws -> (HTTPResponse, [UInt8]) {
        try await Self.compose(transport, interceptors, observing: observe)(request, body)
    }

    /// Sends a finished request head through the interceptors and the transport, and returns what came
    /// back, whatever the status.
    public func send(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8]) {
        // Without interceptors, straight to the transport: the chain's closure is one more async frame
        // to allocate per call (scripts/bench client, in process).
        if interceptors.isEmpty { return try await transport.send(request, body: body) }
        return try await chain(request, body)
    }
}

extension InterceptedTransport {
    /// Streams `request` through the interceptors and the transport.
    ///
    /// Interceptors see a streamed call as any other, with one difference: a 2xx answer reaches them
    /// with an empty body (its body is the stream this returns, read by the caller as it arrives);
    /// other answers reach them whole (up to ``streamedErrorBodyLimit``), so a retry or a token refresh
    /// decides on them as usual. A request body made from bytes is sent again by a retry; one streamed
    /// from elsewhere is sent once (a second attempt fails with ``BodyStreamError/alreadyRead``).
    public func stream(_ request: HTTPRequest, body: BodyStream?) async throws -> (HTTPResponse, BodyStream) {
        if interceptors.isEmpty { return try await transport.stream(request, body: body) }
        let slot = StreamSlot()
        let transport = self.transport
        let innermost: ClientInterceptor.Next = { request, _ in
            let (response, stream) = try await transport.stream(request, body: body)
            guard (200...299).contains(response.status.code) else {
                return (response, try await Self.prefix(of: stream, upTo: Self.streamedErrorBodyLimit))
            }
            slot.hold(stream, for: response)
            return (response, [])
        }
        var next = innermost
        for interceptor in interceptors.reversed() {
            let inner = next
            next = { request, body in try await interceptor.intercept(request, body: body, next: inner) }
        }
        let (response, bytes) = try await next(request, nil)
        // The stream of the answer the interceptors returned; an interceptor that answered by itself
        // (or changed the status) gets its own bytes through.
        return (response, slot.take(for: response) ?? BodyStream(bytes))
    }

    /// How much of a non-2xx answer to a streamed call the interceptors (and the error) see: 1 MiB.
    public static var streamedErrorBodyLimit: Int { 1 << 20 }

    /// The first `limit` bytes of `stream` (the rest is dropped, which ends the transfer).
    static func prefix(of stream: BodyStream, upTo limit: Int) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in stream {
            bytes += chunk.prefix(limit - bytes.count)
            if bytes.count >= limit { break }
        }
        return bytes
    }
}

/// The stream of the last 2xx answer of one streamed call, kept beside the interceptor chain.
final class StreamSlot: Sendable {
    private let held = Mutex<(HTTPResponse, BodyStream)?>(nil)

    func hold(_ stream: BodyStream, for response: HTTPResponse) { held.withLock { $0 = (response, stream) } }

    func take(for response: HTTPResponse) -> BodyStream? {
        held.withLock { held in
            defer { held = nil }
            guard let (kept, stream) = held, kept.status == response.status else { return nil }
            return stream
        }
    }
}
