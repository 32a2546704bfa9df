/// Records every request and its final answer in the server's ``RequestJournal``: the outermost step,
/// so the entry is what the client saw (latency, CORS, 304s and the transport's refusals included).
struct JournalMiddleware: OutcomeStep {
    let journal: RequestJournal

    func finish(_ outcome: Result<MockResponse, any Error>, for request: MockRequest) -> Result<MockResponse, any Error> {
        // An error here came from middleware of yours placed outside the server's own; `respond(to:)`
        // answers it with this 500.
        let response = (try? outcome.get()) ?? MockServer.unmappedFailure(outcome)
        let duration = request.context.map { ContinuousClock.now - $0.arrival } ?? .zero
        journal.record(
            request: request, response: response, route: request.context?.route, duration: duration,
            isRefused: request.rejection != nil)
        return outcome
    }
}
