public import HTTPTypes
public import HammockJSON
import HammockStore

/// Which recorded requests a test means: a method, a path pattern, query parameters, header fields,
/// members of the JSON body, the status answered. Every condition given must hold; none given
/// matches every request.
///
/// ```swift
/// let order = RequestPattern(.post, "/orders", headers: ["Authorization": "Bearer t-1"], body: ["items[0].sku": "A-1"])
/// try server.journal.verify(order, count: .once)
/// RequestPattern(.get, "/people/*")           // any one segment; `**` takes the rest of the path
/// ```
public struct RequestPattern: Sendable, CustomStringConvertible {
    /// The method, if it matters (`GET` does not match `HEAD`).
    public var method: HTTPRequest.Method?
    /// The path as the client sent it (base path included), as a pattern: literal segments, `:name` or
    /// `*` for any one segment, `**` at the end for the rest. A pattern that cannot be parsed matches
    /// nothing, and every failure names it.
    public var path: String? {
        didSet { parsedPath = Self.parse(path) }
    }
    /// Query parameters that must be present with these values (decoded).
    public var query: [String: String]
    /// Header fields that must be present with these values (names in any case).
    public var headers: [String: String]
    /// Members of the JSON body, by JSON path (`customer.name`, `items[0].sku`), that must equal these
    /// values. A path that cannot be parsed matches nothing.
    public var body: [String: JSON]
    /// The status the server answered with.
    public var status: Int?
    /// Whether the pattern is about messages clients sent on WebSockets (``WebSocketEvent``), matched by
    /// the socket's path, query and header fields and the message as the body, instead of requests.
    public var isWebSocketMessage = false

    private var parsedPath: Result<PathPattern, PathPatternError>?

    /// Creates a pattern; every condition is optional.
    public init(
        _ method: HTTPRequest.Method? = nil, _ path: String? = nil, query: [String: String] = [:],
        headers: [String: String] = [:], body: [String: JSON] = [:], status: Int? = nil
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.status = status
        parsedPath = Self.parse(path)
    }

    /// Every request.
    public static let any = RequestPattern()

    /// A message a client sent on a WebSocket opened on `path`: its JSON `body` members, the handshake's
    /// `query` and `headers`.
    ///
    /// ```swift
    /// let join = try await server.journal.next(matching: .webSocketMessage("/ws/chat", body: ["type": "join"]))
    /// ```
    public static func webSocketMessage(
        _ path: String? = nil, query: [String: String] = [:], headers: [String: String] = [:], body: [String: JSON] = [:]
    ) -> RequestPattern {
        var pattern = RequestPattern(nil, path, query: query, headers: headers, body: body)
        pattern.isWebSocketMessage = true
        return pattern
    }

    private static func parse(_ path: String?) -> Result<PathPattern, PathPatternError>? {
        path.map { text in Result { () throws(PathPatternError) in try PathPattern(text) } }
    }

    /// Whether `entry` meets every condition.
    public func matches(_ entry: JournalEntry) -> Bool { differences(from: entry, stoppingAtFirst: true).isEmpty }

    /// Each condition `entry` does not meet, in words, in a fixed order (method, path, status, query,
    /// headers, body; names sorted): `method is GET, not POST`. Empty when it matches.
    public func differences(from entry: JournalEntry) -> [String] { differences(from: entry, stoppingAtFirst: false) }

    func differences(from entry: JournalEntry, stoppingAtFirst: Bool) -> [String] {
        var found: [String] = []
        func differ(_ text: String) -> Bool {
            found.append(text)
            return stoppingAtFirst
        }
        // A pattern with a condition is about requests the server answered: a webhook it sent to the same
        // path is not one. The pattern with none (`any`) takes every entry, the journal's listing.
        let hasCondition =
            method != nil || parsedPath != nil || !query.isEmpty || !headers.isEmpty || !body.isEmpty || status != nil
        if hasCondition, entry.webhook != nil, differ("a webhook the server sent, not a request it answered") {
            return found
        }
        if isWebSocketMessage {
            if entry.webSocket?.kind != .message, differ("not a message a client sent on a WebSocket") { return found }
        } else if hasCondition, let event = entry.webSocket {
            let what = event.kind == .message ? "a message on a WebSocket" : "the end of a WebSocket"
            if differ("\(what), not a request") { return found }
        }
        if let method, entry.method != method, differ("method is \(entry.method.rawValue), not \(method.rawValue)") {
            return found
        }
        switch parsedPath {
        case .failure(let error)?: if differ("\(error.description), so no path matches it") { return found }
        case .success(let pattern)?:
            if pattern.match(entry.path) == nil, differ("path '\(entry.path.prefix(200))' is not \(pattern.description)") {
                return found
            }
        case nil: break
        }
        if let status, entry.status.code != status,
            differ("status is \(entry.status.code), not \(status)")
        {
            return found
        }
        if !query.isEmpty {
            let items = entry.query.flatMap { try? ListQuery.items(of: $0) } ?? []
            for (name, value) in query.sorted(by: { $0.key < $1.key }) {
                if let why = Mismatch.query(name, wanted: value, in: items), differ(why) { return found }
            }
        }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            if let why = Mismatch.header(name, wanted: value, in: entry.headerFields), differ(why) { return found }
        }
        if !body.isEmpty {
            guard let json = try? JSON(parsing: entry.body) else {
                _ = differ(entry.body.isEmpty ? "the body is empty, not JSON" : "the body is not JSON")
                return found
            }
            for (key, wanted) in body.sorted(by: { $0.key < $1.key }) {
                let path: JSONPath
                do {
                    path = try JSONPath(parsing: key)
                } catch {
                    if differ("'\(key)' is not a JSON path (\(error)), so no body matches it") { return found }
                    continue
                }
                let sent = json[path]
                guard sent != wanted else { continue }
                let text =
                    sent.map { "body member '\(key)' is \(Mismatch.short($0)), not \(Mismatch.short(wanted))" }
                    ?? "body member '\(key)' is missing (wanted \(Mismatch.short(wanted)))"
                if differ(text) { return found }
            }
        }
        return found
    }

    /// `POST /orders {header Authorization: Bearer t-1, body items[0].sku = "A-1"}`, or `any request`.
    public var description: String {
        var head: [String] = []
        if let method { head.append(method.rawValue) }
        if let path { head.append(path) }
        var conditions: [String] = []
        if let status { conditions.append("status \(status)") }
        for (name, value) in query.sorted(by: { $0.key < $1.key }) { conditions.append("query \(name)=\(value)") }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { conditions.append("header \(name): \(value)") }
        for (key, value) in body.sorted(by: { $0.key < $1.key }) { conditions.append("body \(key) = \(Mismatch.short(value))") }
        if isWebSocketMessage { head.insert("WebSocket message on", at: 0) }
        var text = head.isEmpty ? "any request" : head.joined(separator: " ")
        if !conditions.isEmpty { text += " {" + conditions.joined(separator: ", ") + "}" }
        return text
    }
}

/// How many requests a verification expects.
///
/// ```swift
/// try server.journal.verify(RequestPattern(.delete, "/people/1"), count: .never)
/// try server.journal.verify(RequestPattern(.get, "/people"), count: .atLeast(2))
/// ```
public struct RequestCount: Sendable, Hashable, CustomStringConvertible {
    /// The counts that pass.
    public let range: ClosedRange<Int>

    /// Exactly `count` requests (a negative count is read as 0).
    public static func exactly(_ count: Int) -> RequestCount { RequestCount(range: max(count, 0)...max(count, 0)) }
    /// `count` requests or more.
    public static func atLeast(_ count: Int) -> RequestCount { RequestCount(range: max(count, 0)...Int.max) }
    /// At most `count` requests.
    public static func atMost(_ count: Int) -> RequestCount { RequestCount(range: 0...max(count, 0)) }
    /// Exactly one.
    public static let once = exactly(1)
    /// None.
    public static let never = exactly(0)

    /// Whether `count` passes.
    public func contains(_ count: Int) -> Bool { range.contains(count) }

    /// `exactly 1`, `at least 2`, `at most 3`, `none`.
    public var description: String {
        if range.upperBound == 0 { return "none" }
        if range.lowerBound == range.upperBound { return "exactly \(range.lowerBound)" }
        if range.upperBound == Int.max { return "at least \(range.lowerBound)" }
        if range.lowerBound == 0 { return "at most \(range.upperBound)" }
        return "\(range.lowerBound) to \(range.upperBound)"
    }
}
