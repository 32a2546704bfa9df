/// Records every request and its final answer in the server's ``RequestJournal``: the outermost step,
/// so the entry is what the client saw (latency, CORS, 304s and the transport's refusals included).
struct JournalMiddleware: OutcomeStep {
    let journal: RequestJournal

    func finish(_ outcome: Result<MockResponse, any Error>, for request: MockRequest) -> Result<MockResponse, any Error> {
        // An error here came from middleware of yours placed outside the server's own; `respond(to:)`
        // answers it with this 500.
        let context = request.context
        // The login's secrets stay out of the journal, which the admin API, the events stream and the
        // console show: a token request is kept with its password, client secret and refresh token
        // replaced.
        var request = request
        if context?.route?.kind == .auth, !request.body.isEmpty { request.body = AuthRoutes.redactedBody(of: request) }
        switch outcome {
        case .success(var response):
            journal.record(request: request, response: response, arrival: context?.arrival, route: context?.route)
            // A WebSocket's messages and end are journaled under its handshake.
            if let session = response.webSocket {
                response.webSocket = session.journaled(in: journal, request: request, route: context?.route)
                return .success(response)
            }
        case .failure:
            let response = MockServer.unmappedFailure(outcome)
            journal.record(request: request, response: response, arrival: context?.arrival, route: context?.route)
        }
        return outcome
    }
}
