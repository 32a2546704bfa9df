import HTTPTypes

/// `HEAD` is answered like `GET` without the body: handlers produce the full representation (so its
/// `ETag` is the `GET`'s), and this takes the body off, keeping its length in `Content-Length`.
struct HeadMiddleware: OutcomeStep {
    func finish(_ outcome: Result<MockResponse, any Error>, for request: MockRequest) -> Result<MockResponse, any Error> {
        guard request.method == .head else { return outcome }
        return mapResponse(outcome) { response in
            // A streamed body's length is not known before it is sent.
            if response.stream == nil { response.headerFields[.contentLength] = String(response.body.count) }
            response.body = []
            response.stream = nil
        }
    }
}
