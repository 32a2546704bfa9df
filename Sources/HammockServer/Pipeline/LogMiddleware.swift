import Logging

/// One line per request at `info`, once its response is ready to go: `GET /people 200`.
struct LogMiddleware: OutcomeStep {
    let logger: Logger

    func finish(_ outcome: Result<MockResponse, any Error>, for request: MockRequest) -> Result<MockResponse, any Error> {
        guard case .success(let response) = outcome else { return outcome }
        if request.rejection?.isUnreadable == true {
            logger.info("(unparsable request) \(response.status.code)")
        } else {
            logger.info("\(request.method.rawValue) \(request.path) \(response.status.code)")
        }
        return outcome
    }
}
