import Logging

/// One line per request at `info`, once its response is ready to go: `GET /people 200`.
struct LogMiddleware: MockMiddleware {
    let logger: Logger

    func handle(_ request: MockRequest, next: (MockRequest) async throws -> MockResponse) async throws -> MockResponse {
        let response = try await next(request)
        if request.rejection?.isUnreadable == true {
            logger.info("(unparsable request) \(response.status.code)")
        } else {
            logger.info("\(request.method.rawValue) \(request.path) \(response.status.code)")
        }
        return response
    }
}
