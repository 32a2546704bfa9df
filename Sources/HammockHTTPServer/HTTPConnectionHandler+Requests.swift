import HTTPTypes
import NIOHTTP1

extension HTTPConnectionHandler {
    /// The engine's request for a decoded head, or the 400 that explains why there is none.
    static func makeRequest(from head: HTTPRequestHead) -> Result<MockRequest, HTTPProblem> {
        guard let method = method(of: head.method) else {
            return .failure(.badRequest("'\(head.method.rawValue)' is not a method token"))
        }
        // One pass over the fields: converted, and the Host fields counted (no array of their values).
        var fields = HTTPFields()
        fields.reserveCapacity(head.headers.count)
        var hosts = 0
        var badName: String?
        for (name, value) in head.headers {
            guard let fieldName = HTTPField.Name(name) else {
                badName = badName ?? name
                continue
            }
            if fieldName.canonicalName == "host" { hosts += 1 }
            fields.append(HTTPField(name: fieldName, value: value))
        }
        // RFC 9112 §3.2: exactly one Host in an HTTP/1.1 request.
        if head.version == .http1_1 && hosts != 1 {
            return .failure(
                .badRequest(hosts == 0 ? "An HTTP/1.1 request needs a Host header" : "A request may have only one Host header"))
        }
        guard let target = originForm(of: head.uri) else {
            return .failure(.badRequest("The request target '\(head.uri.prefix(200))' is not a path"))
        }
        if let badName {
            return .failure(.badRequest("'\(badName.prefix(200))' is not a header field name"))
        }
        return .success(MockRequest(method, target, headerFields: fields))
    }

    /// The method, without parsing its name again for the usual ones.
    static func method(of method: NIOHTTP1.HTTPMethod) -> HTTPRequest.Method? {
        switch method {
        case .GET: .get
        case .POST: .post
        case .PUT: .put
        case .PATCH: .patch
        case .DELETE: .delete
        case .HEAD: .head
        case .OPTIONS: .options
        default: HTTPRequest.Method(method.rawValue)
        }
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

    /// `CONNECT` asks for a tunnel, which a mock REST server is not.
    static let connectRefused = HTTPProblem(
        .methodNotAllowed, detail: "CONNECT is not supported: this server answers requests, it is no proxy",
        headerFields: [.allow: "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"])

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
