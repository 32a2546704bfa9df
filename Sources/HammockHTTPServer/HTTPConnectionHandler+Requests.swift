import HTTPTypes
import NIOHTTP1

extension HTTPConnectionHandler {
    /// The engine's request for a decoded head, or the 400 that explains why there is none.
    static func makeRequest(from head: HTTPRequestHead) -> Result<MockRequest, HTTPProblem> {
        guard let method = HTTPRequest.Method(head.method.rawValue) else {
            return .failure(.badRequest("'\(head.method.rawValue)' is not a method token"))
        }
        // RFC 9112 §3.2: exactly one Host in an HTTP/1.1 request.
        if head.version == .http1_1 {
            let hosts = head.headers["host"]
            guard hosts.count == 1 else {
                return .failure(
                    .badRequest(
                        hosts.isEmpty ? "An HTTP/1.1 request needs a Host header" : "A request may have only one Host header"))
            }
        }
        guard let target = originForm(of: head.uri) else {
            return .failure(.badRequest("The request target '\(head.uri.prefix(200))' is not a path"))
        }
        var fields = HTTPFields()
        fields.reserveCapacity(head.headers.count)
        for (name, value) in head.headers {
            guard let fieldName = HTTPField.Name(name) else {
                return .failure(.badRequest("'\(name.prefix(200))' is not a header field name"))
            }
            fields.append(HTTPField(name: fieldName, value: value))
        }
        return .success(MockRequest(method, target, headerFields: fields))
    }

    /// The path and query of a request target: origin form (`/people?x=1`) as is, absolute form
    /// (`http://host/people`) without its scheme and authority; `nil` for anything else (`*`, `host:port`).
    static func originForm(of uri: String) -> String? {
        if uri.hasPrefix("/") { return uri }
        for scheme in ["http://", "https://"] where uri.lowercased().hasPrefix(scheme) {
            let afterScheme = uri.dropFirst(scheme.count)
            guard let slash = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
            let rest = afterScheme[slash...]
            return rest.hasPrefix("/") ? String(rest) : "/" + rest
        }
        return nil
    }

    /// What to answer a request the decoder rejected: 431 for header limits, 400 for the rest.
    static func problem(for error: HTTPParserError) -> HTTPProblem {
        switch error {
        case .headerOverflow:
            return HTTPProblem(
                .requestHeaderFieldsTooLarge,
                detail: "The request's header fields are too many or too large")
        case .invalidMethod: return .badRequest("The request method is not a valid token")
        case .invalidURL: return .badRequest("The request target is not a valid URL path")
        case .invalidVersion: return .badRequest("The HTTP version is not HTTP/1.0 or HTTP/1.1")
        case .invalidHeaderToken, .invalidCharactersUsed:
            return .badRequest("A header field has characters that HTTP does not allow")
        case .invalidContentLength, .unexpectedContentLength:
            return .badRequest("The Content-Length header is invalid or contradicts Transfer-Encoding")
        case .invalidChunkSize: return .badRequest("The chunked body has an invalid chunk size")
        case .lfExpected, .invalidConstant, .strictModeAssertion:
            return .badRequest("The request does not follow HTTP/1.1's syntax")
        default:
            return .badRequest("The request could not be parsed as HTTP/1.1")
        }
    }
}
