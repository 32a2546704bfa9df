public import HTTPTypes

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
        try await chain(request, body)
    }
}
