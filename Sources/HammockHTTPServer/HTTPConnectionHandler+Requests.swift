import HTTPTypes
import NIOHTTP1

extension HTTPConnectionHandler {
    /// The engine's request for a decoded head, or the 400 that explains why there is none.
    static func makeRequest(from head: HTTPRequestHead) -> Result<MockRequest, HTTPProblem> {
        guard let method = method(of: head.method) else {
            return .failure(.badRequest("'\(head.method.rawValue)' is not a method token"))
        }
        // The body comes later, with its own Content-Length or chunks: none is supplied here.
        let request = MockRequest.arriving(
            method, target: head.uri, fields: head.headers.lazy.map { (name: $0.name, value: $0.value) }, body: nil,
            requiringOneHost: head.version == .http1_1)
        if let rejection = request.rejection { return .failure(rejection.problem) }
        return .success(request)
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
