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
/// `maximumResponseSize` fail instead of filling memory.
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
        for field in request.headerFields { outgoing.headers.add(name: field.name.rawName, value: field.value) }
        if let body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let nanoseconds = timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        let response = try await client.execute(outgoing, timeout: .nanoseconds(nanoseconds))
        let buffer: ByteBuffer
        if TransferProgress.isObserved {
            buffer = try await collectReportingProgress(response)
        } else {
            buffer = try await response.body.collect(upTo: maximumResponseSize)
        }
        var fields = HTTPFields()
        for (name, value) in response.headers {
            if let fieldName = HTTPField.Name(name) { fields.append(HTTPField(name: fieldName, value: value)) }
        }
        let status = HTTPResponse.Status(code: Int(response.status.code), reasonPhrase: response.status.reasonPhrase)
        return (HTTPResponse(status: status, headerFields: fields), Array(buffer: buffer))
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
