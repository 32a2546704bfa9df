public import HTTPTypes
public import HammockJSON
import HammockStore

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
    /// What a request must carry for the stub to answer it: values it must equal, and ``Condition``s
    /// beyond equality (a regular expression, a bound, absence, a member deep in the body, and their
    /// combinations). Every one listed must hold.
    public struct Match: Sendable, Hashable {
        /// Query parameters, by name, as decoded.
        public var query: [String: String]
        /// Header fields, by name (any case).
        public var headers: [String: String]
        /// Members of the JSON body's top-level object.
        public var body: JSONObject
        /// Conditions beyond equality, tested in order after the values above.
        public var conditions: [Condition]

        /// Creates conditions; none by default.
        public init(
            query: [String: String] = [:], headers: [String: String] = [:], body: JSONObject = [:], conditions: [Condition] = []
        ) {
            self.query = query
            self.headers = headers
            self.body = body
            self.conditions = conditions
        }

        var isEmpty: Bool { query.isEmpty && headers.isEmpty && body.isEmpty && conditions.isEmpty }

        /// Whether a query parameter of this name is one the stub looks at.
        func reads(queryParameter name: String) -> Bool {
            query[name] != nil || conditions.contains { $0.place == .query(name) }
        }
    }

    /// What a stub does once it has given its last answer.
    public enum AfterLast: String, Sendable, Hashable, CaseIterable {
        /// Gives the last answer again (the default).
        case repeatLast
        /// Starts over from the first.
        case cycle
        /// Stops answering: the request goes on to the next route, and finally a 404.
        case notFound
    }

    /// The order of a stub's answers.
    public enum Order: String, Sendable, Hashable, CaseIterable {
        /// One after the other, as listed (the default).
        case inTurn
        /// Any of them, drawn by the server's random numbers (seeded with `hammock serve --seed`).
        case random
    }

    /// A state machine a stub belongs to, as WireMock's scenarios are: the stub answers only while its
    /// scenario is in `whenState` and moves it to `setState` when it answers. Every scenario starts in
    /// ``started``; ``MockServer/reset()`` and ``MockServer/resetScenarios()`` put them back.
    public struct Scenario: Sendable, Hashable {
        /// The state every scenario starts in.
        public static let started = "started"
        /// The scenario's name.
        public var name: String
        /// The state it must be in for the stub to answer; any state when `nil`.
        public var whenState: String?
        /// The state it moves to when the stub answers; unchanged when `nil`.
        public var setState: String?

        /// Names a scenario and the stub's place in it.
        public init(_ name: String, whenState: String? = nil, setState: String? = nil) {
            self.name = name
            self.whenState = whenState
            self.setState = setState
        }
    }

    /// A record a stub creates before it answers, as a `POST` to the resource would (fields and parents
    /// checked): `POST /checkout` can create the order that `GET /orders` then lists. The values may
    /// hold placeholders; the answer reads the record as `{{created.id}}`.
    public struct Creation: Sendable, Hashable {
        /// The resource.
        public var resource: String
        /// The values, with placeholders.
        public var values: JSONObject

        /// Describes a record to create.
        /// - Throws: ``StubError`` for a placeholder that names nothing it could read.
        public init(_ resource: String, values: JSONObject) throws(StubError) {
            try StubTemplate.validate(.object(values))
            self.resource = resource
            self.values = values
        }
    }

    /// The method answered (`GET` also answers `HEAD`).
    public var method: HTTPRequest.Method
    /// The path, with `:name` parameters and `*` / `**` wildcards.
    public var path: PathPattern
    /// The conditions on the request.
    public var match: Match
    /// The answers, given in ``order``; one for most stubs, never none.
    public private(set) var answers: [StubAnswer]
    /// What happens after the last answer (for answers given in turn).
    public var afterLast: AfterLast
    /// The order of the answers.
    public var order: Order
    /// The scenario the stub belongs to, if any.
    public var scenario: Scenario?
    /// A delay before the answer, if any.
    public var latency: Latency?
    /// Records created before each answer, in order.
    public var creates: [Creation]
    /// Other answers a request may ask for by `Prefer: code=404` or `Prefer: example=NAME` (Prism's
    /// convention): an imported API document's other documented statuses and named examples. Not given
    /// in turn; `--strict` ignores the asking.
    public var alternatives: [Alternative] = []

    /// An answer given only when asked for, by its status or its name.
    public struct Alternative: Sendable {
        /// The name `Prefer: example=NAME` asks for, if any.
        public var name: String?
        /// The answer.
        public var answer: StubAnswer

        /// An alternative answer.
        public init(name: String? = nil, answer: StubAnswer) {
            self.name = name
            self.answer = answer
        }
    }

    /// The answer `Prefer` asks for: `code` (a status) and `example` (a name), either or both; the first
    /// alternative (or the stub's first answer) that has them.
    /// - Throws: 400 ``HTTPProblem`` naming what the stub has, when it has no such answer.
    func preferredAnswer(code: Int?, example: String?) throws(HTTPProblem) -> StubAnswer {
        let candidates = answers.map { Alternative(answer: $0) } + alternatives
        if let found = candidates.first(where: { candidate in
            code.map { candidate.answer.status.code == $0 } != false && example.map { candidate.name == $0 } != false
        }) {
            return found.answer
        }
        var codes: [Int] = []
        for candidate in candidates where !codes.contains(candidate.answer.status.code) {
            codes.append(candidate.answer.status.code)
        }
        let names = alternatives.compactMap(\.name)
        let asked = [code.map { "code=\($0)" }, example.map { "example=\($0.prefix(100))" }].compactMap { $0 }.joined(
            separator: ", ")
        throw HTTPProblem(
            .badRequest,
            detail:
                "\(method.rawValue) \(path) has no answer for 'Prefer: \(asked)'; it has the codes \(codes.map(String.init).joined(separator: ", "))\(names.isEmpty ? "" : " and the examples " + names.joined(separator: ", "))",
            extensions: ["codes": .array(codes.map { .integer($0) }), "examples": .array(names.map { .string($0) })])
    }

    /// Where the stub stands among those whose method and path fit the same request: a lower number is
    /// tried first, stubs of one priority in the order they were added. 5 by default (WireMock's
    /// convention: 1 is the first), so a catch-all can go last with 10 and an override first with 1.
    public var priority = StubRoute.defaultPriority

    /// The priority of a stub that names none.
    public static let defaultPriority = 5

    /// Records the path names that must exist for the stub to answer, each a path parameter with the
    /// resource whose key it is: `["channelId": "channels"]` on `PUT /channels/:channelId/topic` answers
    /// 404 for a channel there is none of (deleted, or never made), as the API would, and not 200. Empty
    /// by default; an imported document's operations under a resource's record get it.
    public var requiredRecords: [String: String] = [:]

    /// The first answer's status.
    public var status: HTTPResponse.Status {
        get { answers[0].status }
        set { answers[0].status = newValue }
    }
    /// The first answer's header fields.
    public var headers: [(name: HTTPField.Name, value: String)] {
        get { answers[0].headers }
        set { answers[0].headers = newValue }
    }
    /// The first answer's body, when it is JSON.
    public var body: JSON? {
        get {
            guard case .json(let json)? = answers[0].body else { return nil }
            return json
        }
        set { answers[0].body = newValue.map(StubAnswer.Body.json) }
    }

    /// Creates a stub with one answer.
    /// - Throws: ``StubError`` for a bad path, a placeholder that names nothing it could read, a 1xx
    ///   status, or a body with a status that forbids one (204, 304).
    public init(
        _ method: HTTPRequest.Method, _ path: String, match: Match = Match(), status: HTTPResponse.Status = .ok,
        headers: [(name: HTTPField.Name, value: String)] = [], body: JSON? = nil, latency: Latency? = nil
    ) throws(StubError) {
        let answer = try StubAnswer(
            status: status.code,
            reasonPhrase: status.reasonPhrase == HTTPResponse.Status(code: status.code).reasonPhrase
                ? nil : status.reasonPhrase,
            headers: headers, body: body.map(StubAnswer.Body.json))
        try self.init(method, path, match: match, answers: [answer], latency: latency)
    }

    /// Creates a stub that gives `answers` in turn (or at random), optionally as a step of a scenario.
    ///
    /// ```swift
    /// let polling = try StubRoute(.get, "/jobs/7", answers: [
    ///     try StubAnswer(body: .json(["state": "queued"])), try StubAnswer(body: .json(["state": "done"])),
    /// ])                                    // queued, then done for ever after
    /// let pay = try StubRoute(.post, "/checkout", answers: [try StubAnswer(status: 201)],
    ///                         scenario: .init("checkout", whenState: "started", setState: "paid"))
    /// ```
    /// - Throws: ``StubError`` for a bad path or no answers.
    public init(
        _ method: HTTPRequest.Method, _ path: String, match: Match = Match(), answers: [StubAnswer],
        afterLast: AfterLast = .repeatLast, order: Order = .inTurn, scenario: Scenario? = nil, latency: Latency? = nil,
        creates: [Creation] = []
    ) throws(StubError) {
        do {
            self.path = try PathPattern(path)
        } catch {
            throw StubError(error.description)
        }
        guard !answers.isEmpty else { throw StubError("a stub needs at least one answer") }
        if method != .get, answers.contains(where: { if case .webSocket? = $0.body { true } else { false } }) {
            throw StubError("a WebSocket route is opened with GET, not \(method.rawValue)")
        }
        self.method = method
        self.match = match
        self.answers = answers
        self.afterLast = afterLast
        self.order = order
        self.scenario = scenario
        self.latency = latency
        self.creates = creates
    }

    /// Whether the request carries every value of ``match``.
    func accepts(_ context: StubTemplate.Context) -> Bool { mismatch(in: context) == nil }

    /// The first value of ``match`` the request does not carry, in words (`header 'X-Env' is missing`),
    /// or `nil` if it carries them all: what a 404 says about a near miss. Conditions are checked in a
    /// fixed order (query, headers, body; names sorted) so the answer is the same every time.
    func mismatch(in context: StubTemplate.Context) -> String? {
        for (name, value) in match.query.sorted(by: { $0.key < $1.key }) {
            if let why = Mismatch.query(name, wanted: value, in: context.query) { return why }
        }
        for (name, value) in match.headers.sorted(by: { $0.key < $1.key }) {
            if let why = Mismatch.header(name, wanted: value, in: context.headers) { return why }
        }
        if !match.body.isEmpty {
            guard case .object(let body) = context.body else { return "the body is not a JSON object" }
            for (key, value) in match.body.sorted(by: { $0.key < $1.key }) where body[key] != value {
                guard let sent = body[key] else { return "body member '\(key)' is missing" }
                return "body member '\(key)' is \(Mismatch.short(sent)), not \(Mismatch.short(value))"
            }
        }
        for condition in match.conditions {
            if let why = condition.mismatch(in: context) { return why }
        }
        return nil
    }
}

/// How a near miss says what differed: the same words for a stub's conditions and a journal pattern.
enum Mismatch {
    /// Why `items` lack `name=wanted`, or `nil` if they have it.
    static func query(_ name: String, wanted: String, in items: [ListQuery.Item]) -> String? {
        guard !items.contains(where: { $0.name == name && $0.value == wanted }) else { return nil }
        let sent = items.filter { $0.name == name }.map(\.value)
        return sent.isEmpty
            ? "query parameter '\(name)' is missing (wanted '\(wanted)')"
            : "query parameter '\(name)' is '\(sent.joined(separator: "', '").prefix(200))', not '\(wanted)'"
    }

    /// Why `fields` lack `name: wanted`, or `nil` if they have it.
    static func header(_ name: String, wanted: String, in fields: HTTPFields) -> String? {
        let sent = HTTPField.Name(name).map { fields[values: $0] } ?? []
        guard !sent.contains(wanted) else { return nil }
        return sent.isEmpty
            ? "header '\(name)' is missing (wanted '\(wanted)')"
            : "header '\(name)' is '\(sent.joined(separator: "', '").prefix(200))', not '\(wanted)'"
    }

    /// A JSON value for a message, cut at 100 characters.
    static func short(_ value: JSON) -> String {
        let text = value.serializedString()
        return text.count > 100 ? text.prefix(100) + "…" : text
    }
}
