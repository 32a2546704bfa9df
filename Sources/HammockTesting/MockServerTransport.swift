public import HammockClient
public import HammockServer

/// A transport that hands requests straight to a `MockServer`, without a socket: the same routing,
/// validation, storage and latency as over HTTP, at the cost of a function call.
///
/// ```swift
/// let server = try await MockServer(resources: [people])
/// let client = RestClient(baseURL: URL(string: "http://mock")!, transport: MockServerTransport(server: server))
/// ```
public struct MockServerTransport: HTTPTransport {
    /// The server that answers.
    public let server: MockServer

    /// A transport to `server`.
    public init(server: MockServer) { self.server = server }

    public func send(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8]) {
        var mockRequest = MockRequest(request.method, request.path ?? "/", headerFields: request.headerFields, body: body ?? [])
        if body != nil, mockRequest.headerFields[.contentLength] == nil {
            mockRequest.headerFields[.contentLength] = String(body?.count ?? 0)
        }
        var response = await server.respond(to: mockRequest)
        // A streamed body is read whole, as a client that buffers bodies does (cancelling the call ends it).
        if let stream = response.stream { response.body = await stream.collect() }
        // As over a socket: a call cancelled while the server worked (or held its answer back for
        // simulated latency) ends in cancellation, not in the answer nobody waits for any more.
        try Task.checkCancellation()
        if TransferProgress.isObserved {
            TransferProgress.report(.responseHeadReceived(expectedBytes: response.body.count))
            TransferProgress.report(.responseBytesReceived(total: response.body.count))
        }
        return (HTTPResponse(status: response.status, headerFields: response.headerFields), response.body)
    }
}
