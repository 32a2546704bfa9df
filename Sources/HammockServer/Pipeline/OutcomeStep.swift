/// Built-in middleware that only looks at the outcome on its way out (a response, or an error): it
/// never answers instead of `next`, never changes the request and never waits.
///
/// Each middleware is an `async` call through a closure and an existential (a task-allocator frame
/// and an executor check per hop). ``MiddlewareChain`` runs a run of adjacent outcome steps in one
/// frame instead: with the default options (no latency) request logging, CORS, problem mapping, `HEAD`
/// and conditional requests cost one hop, not five. Order and behaviour are those of the same steps as
/// separate middleware.
protocol OutcomeStep: MockMiddleware {
    /// The outcome to pass outward, given what came from further in.
    func finish(_ outcome: Result<MockResponse, any Error>, for request: MockRequest) -> Result<MockResponse, any Error>
}

extension OutcomeStep {
    func handle(_ request: MockRequest, next: (MockRequest) async throws -> MockResponse) async throws -> MockResponse {
        let outcome: Result<MockResponse, any Error>
        do {
            outcome = .success(try await next(request))
        } catch {
            outcome = .failure(error)
        }
        return try finish(outcome, for: request).get()
    }

    /// `transform` applied to a response; errors pass through unchanged.
    func mapResponse(
        _ outcome: Result<MockResponse, any Error>, _ transform: (inout MockResponse) -> Void
    ) -> Result<MockResponse, any Error> {
        guard case .success(var response) = outcome else { return outcome }
        transform(&response)
        return .success(response)
    }
}
