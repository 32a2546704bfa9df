public import Foundation
public import HTTPTypes

/// One request the server answered, as the client saw it, and its answer: what the journal keeps.
///
/// ```swift
/// let entry = try await server.journal.next(matching: RequestPattern(.post, "/orders"))
/// entry.request.headerFields[.authorization]   // "Bearer t-1"
/// try entry.request.json()["total"]            // 12
/// entry.response.status                        // .created
/// ```
public struct JournalEntry: Sendable, Identifiable {
    /// Its place in the journal: 1 for the first answer recorded, each next one higher (answers are
    /// recorded as they finish, so a slow request gets a higher number than a quick one that arrived
    /// after it). Numbers go on across ``RequestJournal/clear()``.
    public let id: UInt64
    /// When the answer was ready (the server's wall clock).
    public let time: Date
    /// From the request's arrival to its answer, simulated latency included.
    public let duration: Duration
    /// The request: method, path (with the base path), query, header fields and body, as received.
    /// A request the transport refused (a body over the limit, a head that could not be parsed) has
    /// what could be read of it: no body, and `GET /` if nothing could be read.
    public let request: MockRequest
    /// The answer, as it left: status, header fields (CORS and validators included) and body (none for
    /// `HEAD`, 304 and 204).
    public let response: MockResponse
    /// The route that answered, if one did (`nil` for a 404, or a request the transport refused).
    public let route: MatchedRoute?
    /// The client's address and port over HTTP; `nil` in process.
    public var peer: String? { request.context?.peer }
    /// Whether the transport refused the request before any route saw it.
    public let isRefused: Bool
    /// What the entry costs the journal's byte budget: its bodies, header fields and target, plus a
    /// fixed part for the rest. Counted once (`utf8.count` of a native string is stored, so it is cheap).
    let weight: Int

    package init(
        id: UInt64, time: Date, duration: Duration, request: MockRequest, response: MockResponse, route: MatchedRoute?,
        isRefused: Bool
    ) {
        self.id = id
        self.time = time
        self.duration = duration
        self.request = request
        self.response = response
        self.route = route
        self.isRefused = isRefused
        var bytes = 256 + request.body.count + response.body.count + request.path.utf8.count + (request.query?.utf8.count ?? 0)
        for field in request.headerFields { bytes += field.name.rawName.utf8.count + field.value.utf8.count }
        for field in response.headerFields { bytes += field.name.rawName.utf8.count + field.value.utf8.count }
        weight = bytes
    }

    /// `#4 POST /orders?x=1 → 201`.
    public var summary: String {
        let target = request.query.map { "\(request.path)?\($0)" } ?? request.path
        return "#\(id) \(request.method.rawValue) \(target.prefix(200)) → \(response.status.code)"
    }
}
