public import Foundation
public import HammockClient
public import HammockServer
import HammockURLSession

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
/// A connection fault is thrown as the `URLError` that `URLSessionTransport` meets over a socket
/// (``urlError(for:)``); a throttled body takes its time; a timeout fault waits for ``timeout`` on the
/// server's clock, as `URLSessionTransport` waits for its own, then throws `URLError(.timedOut)`.
public struct MockServerTransport: HTTPTransport {
    /// The server that answers.
    public let server: MockServer
    /// How long a call waits for a server that never answers (a timeout fault) before `timedOut`.
    public let timeout: Duration

    /// A transport to `server`.
    public init(server: MockServer, timeout: Duration = .seconds(60)) {
        self.server = server
        self.timeout = timeout
    }

    public func send(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8]) {
        var mockRequest = MockRequest(request.method, request.path ?? "/", headerFields: request.headerFields, body: body ?? [])
        if body != nil, mockRequest.headerFields[.contentLength] == nil {
            mockRequest.headerFields[.contentLength] = String(body?.count ?? 0)
        }
        let response: MockResponse
        do {
            // A streamed body is read whole, as a client that buffers bodies does (cancelling the call ends it).
            response = try await server.exchange(mockRequest, timeout: timeout)
        } catch let error as ConnectionFaultError {
            throw Self.urlError(for: error.fault)
        }
        // As over a socket: a call cancelled while the server worked (or held its answer back for
        // simulated latency) ends in cancellation, not in the answer nobody waits for any more.
        try Task.checkCancellation()
        if TransferProgress.isObserved {
            TransferProgress.report(.responseHeadReceived(expectedBytes: response.body.count))
            TransferProgress.report(.responseBytesReceived(total: response.body.count))
        }
        return (HTTPResponse(status: response.status, headerFields: response.headerFields), response.body)
    }

    /// The error a URLSession client meets for `fault` over a socket (`InProcessNetwork.urlError(for:)`,
    /// shared with `HammockURLProtocol`).
    public static func urlError(for fault: ConnectionFault) -> URLError { InProcessNetwork.urlError(for: fault) }
}
