import HTTPTypes

/// With cross-origin access off (`"cors": false`), refuses a WebSocket to a page of another origin
/// (403), as CORS keeps that page from reading the same data over HTTP.
///
/// Why a step of its own: a browser asks no CORS preflight before a WebSocket handshake and lets any
/// page read what the socket sends (RFC 6455 §10.2 leaves the `Origin` check to the server). Without
/// it, a page on another site could open a `feed` route and read every record written, which the same
/// page cannot read over HTTP when CORS is off. The handshake is refused before any route runs, so the
/// route's script or feed never starts and a proxied backend is never asked.
///
/// A request with no `Origin` (a test, a command-line client, an app) is not a page's, and passes. The
/// origin matches when its host and port are the `Host` the request was sent to (a port serves one
/// scheme, so the scheme adds nothing).
struct SameOriginWebSocketStep: MockMiddleware {
    func handle(_ request: MockRequest, next: (MockRequest) async throws -> MockResponse) async throws -> MockResponse {
        // Decided on the request, before any route runs: a proxied handshake would otherwise have opened the
        // backend's socket before its answer was replaced, and a route's own side effects would have run.
        guard let origin = request.headerFields[AdminGuard.originField], request.asksForWebSocket else {
            return try await next(request)
        }
        if let source = Authority(origin: origin), let host = request.headerFields[AdminGuard.hostField],
            let target = Authority(hostField: host, scheme: source.scheme), source.name == target.name,
            source.port == target.port
        {
            return try await next(request)
        }
        return HTTPProblem(
            .forbidden,
            detail: "\(request.path) does not open WebSockets to other web pages: Origin '\(origin.prefix(100))' is not "
                + "this server's, and cross-origin access is off (\"cors\": false)"
        ).response
    }
}
