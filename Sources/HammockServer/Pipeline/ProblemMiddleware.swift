import Logging

/// Turns every error thrown further in into a response: an ``HTTPProblem`` answers as itself, a store
/// failure or anything else as a 500 problem, logged at `error`. Nothing is thrown past it.
struct ProblemMiddleware: OutcomeStep {
    let logger: Logger

    func finish(_ outcome: Result<MockResponse, any Error>, for request: MockRequest) -> Result<MockResponse, any Error> {
        switch outcome {
        case .success: return outcome
        case .failure(let problem as HTTPProblem): return .success(problem.response)
        case .failure(let error as StoreError):
            logger.error("store failure: \(error)")
            return .success(HTTPProblem(.internalServerError, detail: "The store failed: \(error.description)").response)
        case .failure(let error):
            logger.error("request failed: \(error)")
            return .success(HTTPProblem(.internalServerError, detail: String(describing: error)).response)
        }
    }
}
