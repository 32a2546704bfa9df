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
///
/// A transport hands bodies over whole (``send(_:body:)``) or as they arrive
/// (``stream(_:body:)``). Every transport of this package streams natively; one that implements only
/// `send` streams through it, the body arriving as one chunk once it is whole.
public protocol HTTPTransport: Sendable {
    /// Sends `request` with `body` and returns the response head and its whole body.
    func send(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8])

    /// Sends `request` with `body`, and returns once the response head has arrived, with its body to
    /// read as it arrives.
    ///
    /// The transport's timeout bounds the wait for the head, not the body (an event stream may last for
    /// ever): cancel the reading task, or drop the stream, to end it. The transport's size limit does not
    /// apply: the reader decides what it keeps.
    func stream(_ request: HTTPRequest, body: BodyStream?) async throws -> (HTTPResponse, BodyStream)
}

extension HTTPTransport {
    /// Streams through ``send(_:body:)``: the request body is read whole first (up to 1 GiB), and the
    /// response body arrives as one chunk once it is whole.
    public func stream(_ request: HTTPRequest, body: BodyStream?) async throws -> (HTTPResponse, BodyStream) {
        let bytes = try await body?.collect(upTo: 1 << 30)
        let (response, responseBody) = try await send(request, body: bytes)
        return (response, BodyStream(responseBody))
    }
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
