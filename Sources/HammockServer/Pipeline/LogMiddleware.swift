public import Logging

/// One line per request at `info`, once its response is ready to go: `GET /people 200`.
struct LogMiddleware: OutcomeStep {
    let logger: Logger
    /// The handler, when it takes request lines directly and `info` is enabled: the line then skips the
    /// interpolated `Logger.Message` and swift-log's event.
    let requestLines: (any RequestLineLogHandler)?

    init(logger: Logger) {
        self.logger = logger
        requestLines = logger.logLevel <= .info ? logger.handler as? any RequestLineLogHandler : nil
    }

    func finish(_ outcome: Result<MockResponse, any Error>, for request: MockRequest) -> Result<MockResponse, any Error> {
        guard case .success(let response) = outcome else { return outcome }
        if request.rejection?.isUnreadable == true {
            logger.info("(unparsable request) \(response.status.code)")
        } else if let requestLines {
            requestLines.logRequest(method: request.method.rawValue, path: request.path, status: response.status.code)
        } else {
            logger.info("\(request.method.rawValue) \(request.path) \(response.status.code)")
        }
        return outcome
    }
}

/// A log handler that takes the server's line per request as its parts, so that nothing is formatted
/// on the request's path that the handler would only copy: ``MockServer`` calls it instead of
/// `logger.info("GET /people/1 200")` when the logger's handler conforms and `info` is enabled.
///
/// The line must read as that `info` message would, from the source `HammockServer`.
public protocol RequestLineLogHandler: LogHandler {
    /// Logs `method path status` at `info`.
    func logRequest(method: String, path: String, status: Int)
}
