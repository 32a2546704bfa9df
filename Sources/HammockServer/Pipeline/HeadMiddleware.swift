import HTTPTypes

/// `HEAD` is answered like `GET` without the body: handlers produce the full representation (so its
/// `ETag` is the `GET`'s), and this takes the body off, keeping its length in `Content-Length`.
struct HeadMiddleware: MockMiddleware {
    func handle(_ request: MockRequest, next: (MockRequest) async throws -> MockResponse) async throws -> MockResponse {
        var response = try await next(request)
        guard request.method == .head else { return response }
        response.headerFields[.contentLength] = String(response.body.count)
        response.body = []
        return response
    }
}
