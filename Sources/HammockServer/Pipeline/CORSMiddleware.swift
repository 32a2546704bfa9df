import HTTPTypes

/// Permissive CORS, so browser front ends on another origin can call the mock: every response may be
/// read from any origin, and a preflight (`OPTIONS`, answered by the router with the route's `Allow`)
/// is granted the route's own methods. An unknown route has no `Allow`, so its preflight fails. An answer
/// with its own `Access-Control-Allow-Origin` (a stub's headers, a recorded or proxied backend's grant) is
/// left as it was given.
struct CORSMiddleware: OutcomeStep {
    /// The response headers a browser script may read, besides the always-readable ones.
    static let exposedHeaders =
        "Location, ETag, Last-Modified, Link, X-Total-Count, X-Next-Cursor, X-Hammock-Ignored-Query"
    /// The two fields every response gets, built once (making a field checks its value byte by byte).
    static let allowAnyOrigin = HTTPField(name: .accessControlAllowOrigin, value: "*")
    static let exposeHeaders = HTTPField(name: .accessControlExposeHeaders, value: exposedHeaders)

    func finish(_ outcome: Result<MockResponse, any Error>, for request: MockRequest) -> Result<MockResponse, any Error> {
        mapResponse(outcome) { response in addHeaders(to: &response, for: request) }
    }

    func addHeaders(to response: inout MockResponse, for request: MockRequest) {
        // An answer that carries its own CORS grant keeps it whole: a backend's through the proxy, a stub's
        // written or recorded. `*` beside its `Access-Control-Allow-Credentials: true` is refused by every
        // browser (a recorded credentialed grant replayed so), and the headers it exposes are its own. An
        // answer without one gets the mock's, as the mock's routes do.
        if response.headerFields[.accessControlAllowOrigin] != nil { return }
        // Appended rather than assigned (the subscript's setter searches and rebuilds the fields).
        response.headerFields.append(Self.allowAnyOrigin)
        if response.headerFields[.accessControlExposeHeaders] == nil {
            response.headerFields.append(Self.exposeHeaders)
        } else {
            response.headerFields[.accessControlExposeHeaders] = Self.exposedHeaders
        }
        if request.method == .options {
            response.headerFields[.accessControlAllowMethods] = response.headerFields[.allow]
            response.headerFields[.accessControlAllowHeaders] =
                request.headerFields[.accessControlRequestHeaders] ?? "Content-Type"
            response.headerFields[.accessControlMaxAge] = "600"
        }
    }
}
