public import Foundation
public import HTTPTypes

/// One request the server answered, as the client saw it, and its answer: what the journal keeps.
///
/// ```swift
/// let entry = try await server.journal.next(matching: RequestPattern(.post, "/orders"))
/// entry.request.headerFields[.authorization]   // "Bearer t-1"
/// try entry.request.json()["total"]            // 12
/// entry.status                                 // .created
/// ```
/// An entry keeps the request whole and of the answer its status, header fields and body size: a few
/// references, so that keeping thousands of them costs little (see docs/benchmarks.md). It is a class
/// with constant members: recording it, waking a waiter and handing it to a subscriber each pass one
/// reference instead of copying a dozen members (the journal cost about 2 of a GET's 24 µs of CPU over
/// HTTP; as a class, 0.3-0.6 less, inside the machine's noise: docs/benchmarks.md).
public final class JournalEntry: Sendable, Identifiable {
    /// Its place in the journal: 1 for the first answer recorded, each next one higher (answers are
    /// recorded as they finish, so a slow request gets a higher number than a quick one that arrived
    /// after it). Numbers go on across ``RequestJournal/clear()``.
    public let id: UInt64
    /// When the answer was ready (the server's wall clock).
    public let time: Date
    /// From the request's arrival to its answer, simulated latency included.
    public let duration: Duration
    /// The method.
    public let method: HTTPRequest.Method
    /// The path as sent (with the base path), percent-encoded.
    public let path: String
    /// The query after `?`, if any.
    public let query: String?
    /// The request's header fields.
    public let headerFields: HTTPFields
    /// The request's body. A request the transport refused (a body over the limit, a head that could
    /// not be parsed) has none, and `GET /` if nothing of it could be read.
    public let body: [UInt8]
    /// The status answered.
    public let status: HTTPResponse.Status
    /// The answer's header fields as they left (CORS, validators and `Location` included).
    public let responseHeaderFields: HTTPFields
    /// The size of the answer's body (0 for `HEAD`, 204 and 304).
    public let responseBodySize: Int
    /// The route that answered, if one did (`nil` for a 404, or a request the transport refused).
    public let route: MatchedRoute?
    /// The client's address and port over HTTP; `nil` in process.
    public let peer: String?
    /// Whether the transport refused the request before any route saw it.
    public let isRefused: Bool
    /// The fault injected into the answer (``Fault``, in its compact form), if any.
    public let fault: String?
    /// For an attempt to deliver a ``Webhook`` (a request the mock made, not one it answered): which one,
    /// the how-manyeth try, and what went wrong. `nil` for a request the server answered.
    public let webhook: WebhookAttempt?
    /// For a message a client sent on a WebSocket, or the socket's end (``WebSocketEvent``): the request
    /// is the handshake's, the body the message. `nil` for a request.
    public let webSocket: WebSocketEvent?
    /// What the entry costs the journal's byte budget: its body, header fields and target, plus a fixed
    /// part for the rest. Counted once.
    let weight: Int

    package init(
        id: UInt64, time: Date, duration: Duration, request: MockRequest, response: MockResponse, route: MatchedRoute?,
        isRefused: Bool, webhook: WebhookAttempt? = nil, webSocket: WebSocketEvent? = nil, peer: String? = nil
    ) {
        self.id = id
        self.time = time
        self.duration = duration
        method = request.method
        path = request.path
        query = request.query
        headerFields = request.headerFields
        body = request.body
        status = response.status
        responseHeaderFields = response.headerFields
        responseBodySize = response.body.count
        self.route = route
        self.peer = peer ?? request.context?.peer
        fault = request.context?.fault
        self.webhook = webhook
        self.webSocket = webSocket
        self.isRefused = isRefused
        // The client's fields are counted byte by byte (a hostile client sends 64 KiB heads); the
        // answer's are the server's own, estimated: iterating fields copies each one, which cost more
        // than the rest of the entry (perf, docs/benchmarks.md).
        var bytes = 192 + body.count + path.utf8.count + (query?.utf8.count ?? 0) + 64 * responseHeaderFields.count
        for field in headerFields { bytes += field.name.rawName.utf8.count + field.value.utf8.count }
        weight = bytes
    }

    /// The request as received.
    public var request: MockRequest {
        var request = MockRequest(method, path, headerFields: headerFields, body: body)
        request.query = query
        return request
    }

    /// `#4 POST /orders?x=1 → 201`.
    public var summary: String {
        let target = query.map { "\(path)?\($0)" } ?? path
        switch webSocket?.kind {
        case .message?: return "#\(id) WebSocket \(target.prefix(200)) ← \(body.count) bytes"
        case .closed?:
            return
                "#\(id) WebSocket \(target.prefix(200)) closed \(webSocket?.close.map { String($0.code) } ?? "without a close frame")"
        case nil: return "#\(id) \(method.rawValue) \(target.prefix(200)) → \(status.code)"
        }
    }
}
