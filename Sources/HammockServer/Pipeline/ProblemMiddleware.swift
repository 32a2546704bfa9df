import Logging

/// Turns every error thrown further in into a response: an ``HTTPProblem`` answers as itself, a taken
/// key as 409, a missing parent as 422, a store failure or anything else as a 500 problem, logged at
/// `error`. Nothing is thrown past it.
struct ProblemMiddleware: OutcomeStep {
    let logger: Logger

    func finish(_ outcome: Result<MockResponse, any Error>, for request: MockRequest) -> Result<MockResponse, any Error> {
        switch outcome {
        case .success: return outcome
        case .failure(let problem as HTTPProblem): return .success(problem.response)
        case .failure(StoreError.duplicateKey(let key)):
            return .success(HTTPProblem(.conflict, detail: "The key \(key.serializedString()) is already taken").response)
        case .failure(StoreError.missingParent(let field, let parent, let key)):
            let detail = "No \(parent) with key \(key.serializedString())"
            return .success(HTTPProblem.invalidFields([FieldProblem(field: field, detail: detail)]).response)
        case .failure(let error as StoreError):
            logger.error("store failure: \(error)")
            return .success(HTTPProblem(.internalServerError, detail: "The store failed: \(error.description)").response)
        case .failure(let error):
            logger.error("request failed: \(error)")
            return .success(HTTPProblem(.internalServerError, detail: String(describing: error)).response)
        }
    }
}
