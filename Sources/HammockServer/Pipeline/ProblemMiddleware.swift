import Logging

/// Turns every error thrown further in into a response: an ``HTTPProblem`` answers as itself, a taken
/// key as 409, a missing parent as 422, a store that is unavailable or slow as 503 with `Retry-After`,
/// a constraint or a colliding write as 409, any other store failure or error as a 500 problem, logged
/// at `error`. A store's own words (a driver's message, a path) go to the log only, never into a
/// response. Nothing is thrown past it.
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
            return .success(Self.problem(for: error).response)
        case .failure(let error):
            logger.error("request failed: \(error)")
            return .success(HTTPProblem(.internalServerError, detail: String(describing: error)).response)
        }
    }

    /// Seconds a client is told to wait before trying a store that is unavailable again.
    static let storeRetryAfter = 1

    /// The answer to a store error, in the server's words.
    static func problem(for error: StoreError) -> HTTPProblem {
        switch error {
        case .unavailable:
            HTTPProblem(
                .serviceUnavailable, detail: "The store is unavailable; try again",
                headerFields: [.retryAfter: String(storeRetryAfter)])
        case .timedOut:
            HTTPProblem(
                .serviceUnavailable, detail: "The store did not answer in time; try again",
                headerFields: [.retryAfter: String(storeRetryAfter)])
        case .constraint:
            HTTPProblem(.conflict, detail: "The store refused the write: it breaks one of the store's constraints")
        case .conflict:
            HTTPProblem(.conflict, detail: "The write collided with another; try again")
        case .duplicateKey(let key):
            HTTPProblem(.conflict, detail: "The key \(key.serializedString()) is already taken")
        case .missingParent, .unknownResource, .storageFailure, .fileInUse, .schemaChanged, .unknownScheme, .relationsChanged:
            HTTPProblem(.internalServerError, detail: "The store failed; the server's log has the cause")
        }
    }
}
