import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// Adapts Hummingbird requests to ``MockServer/respond(to:)``. The engine never sees Hummingbird types.
struct HummingbirdResponder: HTTPResponder {
    typealias Context = BasicRequestContext
    let server: MockServer

    func respond(to request: Request, context: BasicRequestContext) async throws -> Response {
        let limit = server.options.maximumBodySize
        var mockRequest = MockRequest(request.method, "/", headerFields: request.headers)
        mockRequest.path = request.uri.path
        mockRequest.query = request.uri.query
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            return Self.response(from: tooLarge(mockRequest, limit: limit))
        }
        var body: [UInt8] = []
        for try await buffer in request.body {
            // Stop reading as soon as the limit is passed: never buffer more than the limit.
            guard body.count + buffer.readableBytes <= limit else {
                return Self.response(from: tooLarge(mockRequest, limit: limit))
            }
            body.append(contentsOf: buffer.readableBytesView)
        }
        mockRequest.body = body
        return Self.response(from: await server.respond(to: mockRequest))
    }

    func tooLarge(_ request: MockRequest, limit: Int) -> MockResponse {
        var response = HTTPProblem.contentTooLarge(limit: limit).response
        response.headerFields[.connection] = "close"
        if server.options.allowsCrossOrigin { MockServer.addCrossOriginFields(to: &response, for: request) }
        server.logger.info("\(request.method.rawValue) \(request.path) 413")
        return response
    }

    static func response(from response: MockResponse) -> Response {
        Response(
            status: response.status, headers: response.headerFields,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: response.body)))
    }
}
