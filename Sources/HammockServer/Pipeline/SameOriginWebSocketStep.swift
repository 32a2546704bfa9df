import HTTPTypes

/// With cross-origin access off (`"cors": false`), refuses a WebSocket to a page of another origin
/// (403), as CORS keeps that page from reading the same data over HTTP.
///
/// Why a step of its own: a browser asks no CORS preflight before a WebSocket handshake and lets any
/// page read what the socket sends (RFC 6455 §10.2 leaves the `Origin` check to the server). Without
/// it, a page on another site could open a `feed` route and read every record written, which the same
/// page cannot read over HTTP when CORS is off. The handshake's answer is replaced before any session
/// runs, so the route's script or feed never starts.
///
/// A request with no `Origin` (a test, a command-line client, an app) is not a page's, and passes. The
/// origin matches when its host and port are the `Host` the request was sent to (a port serves one
/// scheme, so the scheme adds nothing).
struct SameOriginWebSocketStep: OutcomeStep {
    func finish(_ outcome: Result<MockResponse, any Error>, for request: MockRequest) -> Result<MockResponse, any Error> {
        guard case .success(let response) = outcome, response.webSocket != nil,
            let origin = request.headerFields[AdminGuard.originField]
        else { return outcome }
        if let source = Authority(origin: origin), let host = request.headerFields[AdminGuard.hostField],
            let target = Authority(hostField: host, scheme: source.scheme), source.name == target.name,
            source.port == target.port
        {
            return outcome
        }
        return .success(
            HTTPProblem(
                .forbidden,
                detail: "\(request.path) does not open WebSockets to other web pages: Origin '\(origin.prefix(100))' is not "
                    + "this server's, and cross-origin access is off (\"cors\": false)"
            ).response)
    }
}
