public import HTTPTypes
public import HammockJSON

/// A route of your own, answered from a description: `POST /login` with a status, headers and a body
/// whose placeholders read the request, optionally only when the request carries given values.
///
/// ```swift
/// let login = try StubRoute(
///     .post, "/login", match: StubRoute.Match(body: ["password": "secret"]),
///     body: ["token": "t-{{request.body.username}}"])
/// let denied = try StubRoute(.post, "/login", status: 401, body: ["error": "bad password"])
/// server.addStubs([login, denied])      // tried in order: the first whose match holds answers
/// ```
/// In a configuration file they are the `routes` array (see `docs/server.md`).
public struct StubRoute: Sendable {
    /// Values a request must carry for the stub to answer it; every one listed must be equal.
    public struct Match: Sendable, Hashable {
        /// Query parameters, by name, as decoded.
        public var query: [String: String]
        /// Header fields, by name (any case).
        public var headers: [String: String]
        /// Members of the JSON body's top-level object.
        public var body: JSONObject

        /// Creates conditions; none by default.
        public init(query: [String: String] = [:], headers: [String: String] = [:], body: JSONObject = [:]) {
            self.query = query
            self.headers = headers
            self.body = body
        }

        var isEmpty: Bool { query.isEmpty && headers.isEmpty && body.isEmpty }
    }

    /// The method answered (`GET` also answers `HEAD`).
    public var method: HTTPRequest.Method
    /// The path, with `:name` parameters.
    public var path: PathPattern
    /// The conditions on the request.
    public var match: Match
    /// The status.
    public var status: HTTPResponse.Status
    /// Header fields; values may hold placeholders.
    public var headers: [(name: HTTPField.Name, value: String)] {
        didSet { fixedHeaders = Self.fixedFields(headers) }
    }
    /// The JSON body, if any; strings may hold placeholders.
    public var body: JSON? {
        didSet { fixedBody = Self.fixedBytes(body) }
    }
    /// The header fields, made once, when no value has a placeholder.
    private var fixedHeaders: HTTPFields?
    /// The body's bytes, serialized once, when it has no placeholder: most stubs answer the same bytes
    /// every time, and walking the body for placeholders cost more than the rest of the answer.
    private var fixedBody: [UInt8]?
    /// A delay before the answer, if any.
    public var latency: Latency?

    /// Creates a stub.
    /// - Throws: ``StubError`` for a bad path, a placeholder that names nothing it could read, a 1xx
    ///   status, or a body with a status that forbids one (204, 304).
    public init(
        _ method: HTTPRequest.Method, _ path: String, match: Match = Match(), status: HTTPResponse.Status = .ok,
        headers: [(name: HTTPField.Name, value: String)] = [], body: JSON? = nil, latency: Latency? = nil
    ) throws(StubError) {
        do {
            self.path = try PathPattern(path)
        } catch {
            throw StubError(error.description)
        }
        self.method = method
        self.match = match
        self.status = status
        self.headers = headers
        self.body = body
        self.latency = latency
        if status.kind == .informational {
            throw StubError("the status \(status.code) is informational, not a final answer; a stub answers 200 to 599")
        }
        if body != nil, !MockResponse.allowsBody(status) {
            throw StubError("a \(status.code) answer has no body (RFC 9110); remove the body or choose another status")
        }
        if let body { try StubTemplate.validate(body) }
        for header in headers { _ = try StubTemplate.pieces(of: header.value) }
        fixedHeaders = Self.fixedFields(headers)
        fixedBody = Self.fixedBytes(body)
    }

    static func fixedFields(_ headers: [(name: HTTPField.Name, value: String)]) -> HTTPFields? {
        guard !headers.contains(where: { StubTemplate.mayHavePlaceholder($0.value) }) else { return nil }
        var fields = HTTPFields()
        for header in headers { fields.append(HTTPField(name: header.name, value: header.value)) }
        return fields
    }

    static func fixedBytes(_ body: JSON?) -> [UInt8]? {
        guard let body, !StubTemplate.hasPlaceholder(body) else { return nil }
        return body.serialized()
    }

    /// Whether the request carries every value of ``match``.
    func accepts(_ context: StubTemplate.Context) -> Bool { mismatch(in: context) == nil }

    /// The first value of ``match`` the request does not carry, in words (`header 'X-Env' is missing`),
    /// or `nil` if it carries them all: what a 404 says about a near miss. Conditions are checked in a
    /// fixed order (query, headers, body; names sorted) so the answer is the same every time.
    func mismatch(in context: StubTemplate.Context) -> String? {
        for (name, value) in match.query.sorted(by: { $0.key < $1.key })
        where !context.query.contains(where: { $0.name == name && $0.value == value }) {
            let sent = context.query.filter { $0.name == name }.map(\.value)
            return sent.isEmpty
                ? "query parameter '\(name)' is missing (wanted '\(value)')"
                : "query parameter '\(name)' is '\(sent.joined(separator: "', '"))', not '\(value)'"
        }
        for (name, value) in match.headers.sorted(by: { $0.key < $1.key }) {
            let sent = HTTPField.Name(name).map { context.headers[values: $0] } ?? []
            guard !sent.contains(value) else { continue }
            return sent.isEmpty
                ? "header '\(name)' is missing (wanted '\(value)')"
                : "header '\(name)' is '\(sent.joined(separator: "', '"))', not '\(value)'"
        }
        if !match.body.isEmpty {
            guard case .object(let body) = context.body else { return "the body is not a JSON object" }
            for (key, value) in match.body.sorted(by: { $0.key < $1.key }) where body[key] != value {
                guard let sent = body[key] else { return "body member '\(key)' is missing" }
                return
                    "body member '\(key)' is \(String(decoding: sent.serialized(), as: UTF8.self).prefix(100)), not \(String(decoding: value.serialized(), as: UTF8.self).prefix(100))"
            }
        }
        return nil
    }

    /// The answer to a request the stub accepted.
    func response(in context: StubTemplate.Context) -> MockResponse {
        var fields: HTTPFields
        if let fixedHeaders {
            fields = fixedHeaders
        } else {
            fields = HTTPFields()
            for header in headers {
                fields.append(HTTPField(name: header.name, value: StubTemplate.renderText(header.value, context)))
            }
        }
        guard let body else { return MockResponse(status: status, headerFields: fields) }
        if fields[.contentType] == nil { fields.append(MockResponse.jsonContentType) }
        return MockResponse(
            status: status, headerFields: fields, body: fixedBody ?? StubTemplate.render(body, context).serialized())
    }
}
