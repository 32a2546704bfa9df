import HTTPTypes
import NIOHTTP1

extension HTTPRequestHead {
    /// The engine's request for a decoded head (HTTP/1.x, or HTTP/2 through NIO's codec, which turns
    /// `:authority` into `Host`), or the 400 that explains why there is none.
    func mockRequest() -> Result<MockRequest, HTTPProblem> {
        guard let method = Self.method(of: method) else {
            return .failure(.badRequest("'\(method.rawValue)' is not a method token"))
        }
        // The body comes later, with its own Content-Length, chunks or DATA frames: none is supplied here.
        let request = MockRequest.arriving(
            method, target: uri, fields: headers.lazy.map { (name: $0.name, value: $0.value) }, body: nil,
            requiringOneHost: version == .http1_1)
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

}

extension HTTPProblem {
    /// `CONNECT` asks for a tunnel, which a mock REST server is not.
    static let connectRefused = HTTPProblem(
        .methodNotAllowed, detail: "CONNECT is not supported: this server answers requests, it is no proxy",
        headerFields: [.allow: "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"])

}

extension HTTPParserError {
    /// What to answer a request the decoder rejected: 431 for header limits, 400 for the rest.
    var problem: HTTPProblem {
        switch self {
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
