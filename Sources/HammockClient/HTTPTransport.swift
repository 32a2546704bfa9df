public import HTTPTypes

/// The one thing a client needs from the network: send a request, get a response.
///
/// ```swift
/// struct EchoTransport: HTTPTransport {
///     func send(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8]) {
///         (HTTPResponse(status: .ok), body ?? [])
///     }
/// }
/// let client = RestClient(baseURL: URL(string: "https://api.example.com")!, transport: EchoTransport())
/// ```
/// The request carries the full URL (scheme, authority, path and query). Implementations must stop
/// work when the calling task is cancelled, and must not follow redirects silently into another host.
public protocol HTTPTransport: Sendable {
    /// Sends `request` with `body` and returns the response head and its whole body.
    func send(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8])
}

/// A transport backed by a closure, for tests: inspect the request, answer what you like.
///
/// ```swift
/// let transport = MockTransport { request, body in
///     #expect(request.path == "/v1/users/octocat/repos")
///     return (HTTPResponse(status: .ok), Array("[]".utf8))
/// }
/// ```
public struct MockTransport: HTTPTransport {
    /// The closure that answers.
    public let handler: @Sendable (HTTPRequest, [UInt8]?) async throws -> (HTTPResponse, [UInt8])

    /// A transport answering with `handler`.
    public init(_ handler: @escaping @Sendable (HTTPRequest, [UInt8]?) async throws -> (HTTPResponse, [UInt8])) {
        self.handler = handler
    }

    public func send(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8]) {
        try await handler(request, body)
    }
}
