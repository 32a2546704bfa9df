import HTTPTypes

/// Every answer leaves the engine as a final one, framed as its status says, whatever a route or a
/// middleware built: a 1xx becomes a 500 problem (it is no final answer, and a client would wait for
/// one that never comes), and a status that forbids a body (204, 205, 304) loses the body it was
/// given. Over HTTP/1.1 such a body has no frame: the client reads it as the start of the next
/// response, and every answer after it on the connection is out of step.
struct FinalAnswerStep: OutcomeStep {
    func finish(_ outcome: Result<MockResponse, any Error>, for request: MockRequest) -> Result<MockResponse, any Error> {
        guard case .success(var response) = outcome else { return outcome }
        if response.status.kind == .informational {
            return .failure(
                HTTPProblem(
                    .internalServerError,
                    detail: "The route answered \(response.status.code), an informational status, not a final answer"))
        }
        if !MockResponse.allowsBody(response.status), !response.body.isEmpty || response.stream != nil {
            response.body = []
            response.stream = nil
            response.headerFields[.contentType] = nil
        }
        return .success(response)
    }
}

extension MockResponse {
    /// Whether a response with `status` may carry a body (RFC 9110 §15): not a 1xx, 204, 205 or 304.
    public static func allowsBody(_ status: HTTPResponse.Status) -> Bool {
        status.code >= 200 && status.code != 204 && status.code != 205 && status.code != 304
    }
}
