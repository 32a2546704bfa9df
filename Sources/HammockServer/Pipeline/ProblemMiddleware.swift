import HammockStore
import Logging

/// Turns every error thrown further in into a response, in one place: an ``HTTPProblemConvertible``
/// (an ``HTTPProblem``, a `StoreError`) answers with its problem; any other error is a 500 problem,
/// logged at `error`, as store failures are. Nothing is thrown past it.
struct ProblemMiddleware: OutcomeStep {
    let logger: Logger

    func finish(_ outcome: Result<MockResponse, any Error>, for request: MockRequest) -> Result<MockResponse, any Error> {
        switch outcome {
        case .success: return outcome
        case .failure(let error as any HTTPProblemConvertible):
            if let error = error as? StoreError, error.isFailure { logger.error("store failure: \(error)") }
            return .success(error.problem.response)
        case .failure(let error):
            logger.error("request failed: \(error)")
            return .success(HTTPProblem(.internalServerError, detail: String(describing: error)).response)
        }
    }

    /// Seconds a client is told to wait before trying a store that is unavailable again.
    static let storeRetryAfter = 1
}

/// An error that knows its answer: ``HTTPProblem`` is one, and so is `StoreError`. The server turns
/// every error into a response in one place, which answers these with their ``problem`` (and any other
/// error with a 500 whose cause goes to the log). An error of your own thrown from a controller or a
/// route can adopt it too.
public protocol HTTPProblemConvertible: Error {
    /// The answer to send.
    var problem: HTTPProblem { get }
}

extension HTTPProblem: HTTPProblemConvertible {
    public var problem: HTTPProblem { self }
}

extension StoreError: HTTPProblemConvertible {
    /// The answer to a store error, in the server's words: a taken key 409, a missing parent 422 naming
    /// the field, a store unavailable or slow 503 with `Retry-After`, a constraint or a colliding write
    /// 409, any other failure 500. The store's own words (a driver's message, a path) never reach it.
    public var problem: HTTPProblem {
        switch self {
        case .unavailable:
            HTTPProblem(
                .serviceUnavailable, detail: "The store is unavailable; try again",
                headerFields: [.retryAfter: String(ProblemMiddleware.storeRetryAfter)])
        case .timedOut:
            HTTPProblem(
                .serviceUnavailable, detail: "The store did not answer in time; try again",
                headerFields: [.retryAfter: String(ProblemMiddleware.storeRetryAfter)])
        case .constraint:
            HTTPProblem(.conflict, detail: "The store refused the write: it breaks one of the store's constraints")
        case .conflict:
            HTTPProblem(.conflict, detail: "The write collided with another; try again")
        case .duplicateKey(let key):
            HTTPProblem(.conflict, detail: "The key \(key.serializedString()) is already taken")
        case .missingParent(let field, let parent, let key):
            HTTPProblem.invalidFields([FieldProblem(field: field, detail: "No \(parent) with key \(key.serializedString())")])
        case .unknownResource, .storageFailure, .fileInUse, .schemaChanged, .unknownScheme, .relationsChanged:
            HTTPProblem(.internalServerError, detail: "The store failed; the server's log has the cause")
        }
    }

    /// Whether the server's log should have it: everything but a client's mistake (a taken key, a
    /// missing parent).
    var isFailure: Bool {
        switch self {
        case .duplicateKey, .missingParent: false
        default: true
        }
    }
}

extension QueryError: HTTPProblemConvertible {
    /// 400, problem+json, naming the parameter.
    public var problem: HTTPProblem { HTTPProblem.badQuery(parameter, message, extensions: extensions) }
}

extension HTTPProblem {
    /// 400 for one query parameter: `detail` reads "Query parameter 'name' \(what)".
    static func badQuery(_ parameter: String, _ what: String, extensions: JSONObject = [:]) -> HTTPProblem {
        var members = extensions
        members["parameter"] = .string(parameter)
        return HTTPProblem(.badRequest, detail: "Query parameter '\(parameter)' \(what)", extensions: members)
    }
}
