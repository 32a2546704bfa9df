import HTTPTypes

/// Every answer leaves the engine as a final one, framed as its status says, whatever a route or a
/// middleware built: a 1xx (but a WebSocket's 101) becomes a 500 problem (it is no final answer, and a client would wait for
/// one that never comes), and a status that forbids a body (204, 205, 304) loses the body it was
/// given. Over HTTP/1.1 such a body has no frame: the client reads it as the start of the next
/// response, and every answer after it on the connection is out of step.
struct FinalAnswerStep: OutcomeStep {
    /// Fields of one connection's framing, never an answer's own: HTTP/1.1 frames by `Transfer-Encoding`
    /// before `Content-Length`, and HTTP/2 forbids them all (RFC 9113 §8.2.2; NIO drops them there).
    static let connectionFields: [HTTPField.Name] = [
        .transferEncoding, HTTPField.Name("Keep-Alive"), HTTPField.Name("Proxy-Connection"),
    ].compactMap { $0 }

    func finish(_ outcome: Result<MockResponse, any Error>, for request: MockRequest) -> Result<MockResponse, any Error> {
        guard case .success(var response) = outcome else { return outcome }
        // A 101 that carries a WebSocket session is final for HTTP: the connection speaks WebSocket after it.
        if response.status.kind == .informational, !(response.status == .switchingProtocols && response.webSocket != nil) {
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
        // The transport frames the body, not the answer's fields: a configuration's stub that says
        // `Content-Length: 2` beside a 24-byte body, or `Transfer-Encoding: chunked` beside a plain one, had the
        // client read 2 bytes and the rest as the next answer. A HEAD's length is the HEAD step's to keep.
        // The resources' and the admin API's answers are the engine's own, built without such fields: they
        // are not searched (four lookups on the hottest path).
        let kind = request.context?.route?.kind
        if kind != .resource, kind != .admin, !response.headerFields.isEmpty {
            for name in Self.connectionFields where response.headerFields[name] != nil { response.headerFields[name] = nil }
            if request.method != .head, response.stream == nil, response.headerFields[.contentLength] != nil,
                MockResponse.framing(for: response.status) == .body
            {
                response.headerFields[.contentLength] = nil
            }
        }
        return .success(response)
    }
}

extension MockResponse {
    /// How an answer is framed on the wire, decided by its status alone (RFC 9110 6.4.1, 8.6, 15), in one
    /// place: the engine takes a forbidden body off by it, and every transport writes the head by it.
    public enum Framing: Sendable, Hashable {
        /// A body, with its `Content-Length` (or chunked when its length is unknown); none for `HEAD`.
        case body
        /// No body and no `Content-Length`: a 1xx or a 204 (9110 8.6: a server must not send one).
        case none
        /// No body, and `Content-Length: 0`, whatever the answer said: a 205, which must say its content is
        /// empty (9110 15.3.6) or a client on a kept-alive connection cannot tell where it ends.
        case empty
        /// No body; a `Content-Length` the answer gives is the representation's and is kept, none is
        /// added: a 304.
        case representationLength
    }

    /// The framing of an answer with `status`.
    public static func framing(for status: HTTPResponse.Status) -> Framing {
        switch status.code {
        case ..<200, 204: .none
        case 205: .empty
        case 304: .representationLength
        default: .body
        }
    }

    /// Whether a response with `status` may carry a body (RFC 9110 15): not a 1xx, 204, 205 or 304.
    public static func allowsBody(_ status: HTTPResponse.Status) -> Bool { framing(for: status) == .body }
}
