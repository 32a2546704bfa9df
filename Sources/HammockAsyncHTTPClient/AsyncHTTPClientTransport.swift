public import AsyncHTTPClient
public import HammockClient
import NIOCore
import NIOHTTP1

/// Sends requests with AsyncHTTPClient (SwiftNIO): the reliable choice on Linux servers.
///
/// ```swift
/// let client = RestClient(baseURL: url, transport: AsyncHTTPClientTransport())   // HTTPClient.shared
/// ```
/// Cancelling the calling task cancels the request. Response bodies larger than
/// `maximumResponseSize` fail instead of filling memory. `timeout` bounds the whole call, body
/// included: a server that sends its head and then trickles the body fails with
/// `HTTPClientError.deadlineExceeded` when the time is up. Redirects that leave the origin drop
/// `Authorization`, `Cookie` and `Proxy-Authorization` (AsyncHTTPClient's own rule).
public struct AsyncHTTPClientTransport: HTTPTransport {
    /// The HTTP client; `HTTPClient.shared` by default, which needs no shutdown.
    public let client: HTTPClient
    /// How long a whole request may take.
    public let timeout: Duration
    /// The largest response body accepted, in bytes.
    public let maximumResponseSize: Int

    /// A transport over `client`.
    public init(client: HTTPClient = .shared, timeout: Duration = .seconds(60), maximumResponseSize: Int = 16 << 20) {
        self.client = client
        self.timeout = timeout
        self.maximumResponseSize = maximumResponseSize
    }

    public func send(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8]) {
        guard let url = request.url else { throw HTTPClientError.invalidURL }
        var outgoing = HTTPClientRequest(url: url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.method.rawValue)
        for (name, value) in request.headerFields.http1Lines { outgoing.headers.add(name: name, value: value) }
        if let body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let deadline = ContinuousClock.now + timeout
        let nanoseconds = timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        let response = try await client.execute(outgoing, timeout: .nanoseconds(nanoseconds))
        // AsyncHTTPClient's timeout ends with the head; the rest of the budget bounds the body.
        let buffer = try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
            group.addTask { try await self.collect(response) }
            group.addTask {
                try await Task.sleep(until: deadline, clock: .continuous)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let buffer = first else { throw HTTPClientError.deadlineExceeded }
            return buffer
        }
        var fields = HTTPFields()
        for (name, value) in response.headers {
            if let fieldName = HTTPField.Name(name) { fields.append(HTTPField(name: fieldName, value: value)) }
        }
        let status = HTTPResponse.Status(code: Int(response.status.code), reasonPhrase: response.status.reasonPhrase)
        return (HTTPResponse(status: status, headerFields: fields), Array(buffer: buffer))
    }

    private func collect(_ response: HTTPClientResponse) async throws -> ByteBuffer {
        if TransferProgress.isObserved { return try await collectReportingProgress(response) }
        return try await response.body.collect(upTo: maximumResponseSize)
    }

    /// Reads the body chunk by chunk, telling ``TransferProgress`` about the head and each chunk.
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
