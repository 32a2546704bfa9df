import HTTPTypes

/// Permissive CORS, so browser front ends on another origin can call the mock: every response may be
/// read from any origin, and a preflight (`OPTIONS`, answered by the router with the route's `Allow`)
/// is granted the route's own methods. An unknown route has no `Allow`, so its preflight fails.
struct CORSMiddleware: MockMiddleware {
    func handle(_ request: MockRequest, next: (MockRequest) async throws -> MockResponse) async throws -> MockResponse {
        var response = try await next(request)
        response.headerFields[.accessControlAllowOrigin] = "*"
        response.headerFields[.accessControlExposeHeaders] = "Location, ETag, Last-Modified"
        if request.method == .options {
            response.headerFields[.accessControlAllowMethods] = response.headerFields[.allow]
            response.headerFields[.accessControlAllowHeaders] =
                request.headerFields[.accessControlRequestHeaders] ?? "Content-Type"
            response.headerFields[.accessControlMaxAge] = "600"
        }
        return response
    }
}
