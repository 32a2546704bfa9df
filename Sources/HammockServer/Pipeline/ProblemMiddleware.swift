import Logging

/// Turns every error thrown further in into a response: an ``HTTPProblem`` answers as itself, a store
/// failure or anything else as a 500 problem, logged at `error`. Nothing is thrown past it.
struct ProblemMiddleware: MockMiddleware {
    let logger: Logger

    func handle(_ request: MockRequest, next: (MockRequest) async throws -> MockResponse) async throws -> MockResponse {
        do {
            return try await next(request)
        } catch let problem as HTTPProblem {
            return problem.response
        } catch let error as StoreError {
            logger.error("store failure: \(error)")
            return HTTPProblem(.internalServerError, detail: "The store failed: \(error.description)").response
        } catch {
            logger.error("request failed: \(error)")
            return HTTPProblem(.internalServerError, detail: String(describing: error)).response
        }
    }
}
