import Foundation
import HTTPTypes
public import HammockJSON
import HammockStore
import Synchronization

/// What a route of your own written in Swift receives: the request, the path's parameters, its query,
/// its JSON body, and the server's records.
///
/// ```swift
/// try server.route(.get, "/me") { request in
///     guard let person = try await request.records.find("people", key: 1) else { throw HTTPProblem.notFound("nobody") }
///     return MockResponse(json: .object(person))
/// }
/// ```
public struct RouteRequest: Sendable {
    /// The request as received.
    public var request: MockRequest
    /// The path's `:name` parameters, decoded.
    public var parameters: [String: String]
    /// The query's parameters, decoded, in order.
    public var query: [ListQuery.Item]
    /// The body parsed as JSON, when it is JSON.
    public var json: JSON?
    /// The server's records.
    public var records: RouteRecords
}

/// The server's records, by resource name, for routes of your own: read them, and change them as the
/// resources' routes would (fields checked, parents checked, `Last-Modified` moved on).
public struct RouteRecords: Sendable {
    let store: any MockStore
    let schema: @Sendable (String) -> ResourceSchema?
    /// The clock's second, which each write notes as its change date (for `Last-Modified`).
    let second: @Sendable () -> Int

    func schema(named name: String) throws(HTTPProblem) -> ResourceSchema {
        guard let schema = schema(name) else {
            throw HTTPProblem(.internalServerError, detail: "the route reads '\(name)', which is not a resource")
        }
        return schema
    }

    /// The record of `resource` with `key`, if any.
    public func find(_ resource: String, key: JSON) async throws -> JSONObject? {
        try await store.record(of: try schema(named: resource), withKey: key)
    }

    /// Every record of `resource`, in key order.
    public func list(_ resource: String) async throws -> [JSONObject] {
        try await store.records(of: try schema(named: resource))
    }

    /// The records of `resource` that answer `query` (from the store's indexes), and how many matched
    /// before its window:
    ///
    /// ```swift
    /// let (adults, total) = try await request.records.list("people", matching: ListQuery(
    ///     filters: [.init(field: "age", comparison: .greaterOrEqual, values: [18])], window: .page(number: 1, size: 5)))
    /// ```
    public func list(_ resource: String, matching query: ListQuery) async throws -> (records: [JSONObject], total: Int) {
        let (page, total) = try await store.storedRecords(of: try schema(named: resource), answering: query)
        return (page.map(\.fields), total)
    }

    /// Stores a new record of `resource` (its fields checked as a `POST` would) and returns it.
    public func create(_ resource: String, _ values: JSONObject) async throws -> JSONObject {
        let schema = try schema(named: resource)
        let values = try schema.validate(values, encoding: .json, mode: .create)
        guard
            let record = try await store.perform(StoreWrite(schema, .create([values]), changedAt: second())).value?.records.first
        else { throw StoreError.storageFailure("a create of \(schema.name) stored nothing") }
        return record
    }

    /// Merges `values` into the record of `resource` with `key` (checked as a `PATCH` would) and returns
    /// it; `nil` if there is none.
    public func update(_ resource: String, key: JSON, _ values: JSONObject) async throws -> JSONObject? {
        let schema = try schema(named: resource)
        let checked = try schema.validate(values, encoding: .json, mode: .update(key: key))
        let write = StoreWrite(schema, .update(key: key, values: checked), changedAt: second())
        return try await store.perform(write).value?.records.first
    }

    /// Throws a 404 unless each path parameter of `required` names a record of its resource (a stub's
    /// ``StubRoute/requiredRecords``), a path segment read as the resource's key type.
    func requireRecords(_ required: [String: String], named parameters: [String: String]) async throws {
        for (parameter, resource) in required.sorted(by: { $0.key < $1.key }) {
            let schema = try schema(named: resource)
            let segment = parameters[parameter] ?? ""
            guard let key = schema.key(fromPathSegment: segment), try await store.record(of: schema, withKey: key) != nil else {
                throw HTTPProblem.notFound(
                    "No \(schema.name) with \(schema.key.name) \(JSON.string(segment).serializedString())")
            }
        }
    }

    /// Deletes the record of `resource` with `key` (its children's foreign keys become `null`, as a
    /// `DELETE` does); `false` if there was none.
    public func delete(_ resource: String, key: JSON) async throws -> Bool {
        let schema = try schema(named: resource)
        return try await store.perform(StoreWrite(schema, .delete(key: key, dependents: []), changedAt: second())).value != nil
    }
}

/// The family of routes of your own: stubs from configuration and closures from Swift, tried in the
/// order they were added, before the resources' routes.
final class CustomRoutes: MockRoutes {
    enum Entry: Sendable {
        case stub(StubRoute)
        case handler(
            HTTPRequest.Method, PathPattern, summary: String?, @Sendable (RouteRequest) async throws -> MockResponse)

        var method: HTTPRequest.Method {
            switch self {
            case .stub(let stub): stub.method
            case .handler(let method, _, _, _): method
            }
        }

        var path: PathPattern {
            switch self {
            case .stub(let stub): stub.path
            case .handler(_, let path, _, _): path
            }
        }

        /// Lower first (``StubRoute/priority``); a Swift route has the default.
        var priority: Int {
            switch self {
            case .stub(let stub): stub.priority
            case .handler: StubRoute.defaultPriority
            }
        }

        /// How a request's context names this route.
        var matchedRoute: MatchedRoute {
            switch self {
            case .stub(let stub): MatchedRoute(kind: .stub, pattern: stub.path.description)
            case .handler(_, let path, _, _): MatchedRoute(kind: .swift, pattern: path.description)
            }
        }
    }

    /// The server's runtime, whose ``ServerRuntime/Settings/routes`` are these routes: a request reads
    /// them from the runtime it carries, everything else from the one in force.
    let runtime: RuntimeCell
    /// What stubs remember between requests: each scenario's state, and the next answer of each stub
    /// that answers in turn. One lock, so a stub's check of its scenario and its move are one step.
    let memory = Mutex(StubMemory())
    private let lastID = Atomic<Int>(0)
    let records: RouteRecords
    let timer: LatencyTimer
    let random: @Sendable () -> Double
    /// The wall clock, for `{{now}}`.
    let now: @Sendable () -> Date
    /// Whether a request may ask for an alternative answer (`--strict` says no).
    let allowsAsking: Bool
    /// Where WebSocket routes' live feeds listen.
    let changes: ResourceChanges

    init(
        records: RouteRecords, timer: LatencyTimer, random: @escaping @Sendable () -> Double,
        now: @escaping @Sendable () -> Date, allowsAsking: Bool = true, runtime: RuntimeCell, changes: ResourceChanges
    ) {
        self.changes = changes
        self.allowsAsking = allowsAsking
        self.runtime = runtime
        self.records = records
        self.timer = timer
        self.random = random
        self.now = now
    }

    /// `routes` in the order they are tried: by priority, then as added (a stable sort; with no priority
    /// given, the order they were added).
    static func ordered(_ routes: [(id: Int, entry: Entry)]) -> [(id: Int, entry: Entry)] {
        guard routes.contains(where: { $0.entry.priority != StubRoute.defaultPriority }) else { return routes }
        return routes.enumerated().sorted { left, right in
            left.element.entry.priority != right.element.entry.priority
                ? left.element.entry.priority < right.element.entry.priority : left.offset < right.offset
        }.map(\.element)
    }

    /// What a request's `Prefer` asks of a stub's alternatives: `code=404`, `example=cat`; `nil` for
    /// neither.
    static func preference(in request: MockRequest) -> (code: Int?, example: String?, applied: String)? {
        guard let value = request.headerFields[RequestOverrides.prefer] else { return nil }
        var code: Int?
        var example: String?
        var applied: [String] = []
        for preference in value.split(separator: ",") {
            let parts = preference.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2 else { continue }
            let text =
                parts[1].hasPrefix("\"") && parts[1].hasSuffix("\"") && parts[1].count >= 2
                ? String(parts[1].dropFirst().dropLast()) : parts[1]
            switch parts[0].lowercased() {
            case "code":
                guard let number = Int(text) else { continue }
                code = number
                applied.append("code=\(number)")
            case "example":
                example = text
                applied.append("example=\(text)")
            default: continue
            }
        }
        guard code != nil || example != nil else { return nil }
        return (code, example, applied.joined(separator: ", "))
    }

    /// The number of the next route added.
    func nextID() -> Int { lastID.add(1, ordering: .relaxed).newValue }

    /// The routes in force, in the order tried.
    var entries: [(id: Int, entry: Entry)] { runtime.runtime.settings.routes }

    /// The routes a request meets: those of the runtime it carries.
    static func entries(for request: MockRequest, in runtime: RuntimeCell) -> [(id: Int, entry: Entry)] {
        request.runtime?.settings.routes ?? runtime.runtime.settings.routes
    }

    var routeTable: [RouteTableEntry] {
        var rows: [RouteTableEntry] = []
        for (_, entry) in entries {
            let methods = Self.methods(entry.method)
            if let index = rows.firstIndex(where: { $0.pattern == entry.path.description }) {
                rows[index].methods += methods.filter { !rows[index].methods.contains($0) }
            } else {
                rows.append(RouteTableEntry(methods: methods, pattern: entry.path.description))
            }
        }
        return rows
    }

    static func methods(_ method: HTTPRequest.Method) -> [HTTPRequest.Method] { method == .get ? [.get, .head] : [method] }

    /// The entries in the order they are asked: as given, but for `HEAD`, where a stub made for `HEAD`
    /// itself (a recorded one) answers before a `GET`'s, which answers it too.
    static func entries(asking request: MockRequest, in runtime: RuntimeCell) -> [(id: Int, entry: Entry)] {
        let entries = entries(for: request, in: runtime)
        guard request.method == .head, entries.contains(where: { $0.entry.method == .head }) else { return entries }
        return entries.filter { $0.entry.method == .head } + entries.filter { $0.entry.method != .head }
    }

    /// Whether `entry`, a route for `method`, answers `request`: its method, or `GET` for a `HEAD`.
    static func answers(_ method: HTTPRequest.Method, _ request: MockRequest) -> Bool {
        method == request.method || (request.method == .head && method == .get)
    }

    func endpoint(for request: MockRequest) throws -> MockEndpoint? {
        let entries = Self.entries(asking: request, in: runtime)
        var methods: [HTTPRequest.Method] = []
        var context: StubTemplate.Context?
        var firstOnPath: Entry?
        for (id, entry) in entries {
            guard let parameters = entry.path.match(request.path) else { continue }
            firstOnPath = firstOnPath ?? entry
            for method in Self.methods(entry.method) where !methods.contains(method) { methods.append(method) }
            guard Self.answers(entry.method, request) else { continue }
            var current = try context ?? Self.context(of: request)
            current.parameters = parameters
            context = current
            switch entry {
            case .stub(let stub):
                guard stub.accepts(current) else { continue }
                // `Prefer: code=404` or `example=NAME` picks a documented alternative, without moving the
                // stub's turn or scenario; with nothing to pick from, the stub answers as it would.
                let preferred = allowsAsking && !stub.alternatives.isEmpty ? Self.preference(in: request) : nil
                let taken: (StubAnswer, count: Int)?
                if let preferred {
                    do {
                        taken = (try stub.preferredAnswer(code: preferred.code, example: preferred.example), count: 0)
                    } catch {
                        return MockEndpoint(methods: methods, route: entry.matchedRoute) { _ in throw error }
                    }
                } else {
                    taken = take(stub, id: id)
                }
                guard let (answer, count) = taken else { continue }
                // The server's `_` parameters are one list for every route: an unknown one is a typo.
                for item in current.query where !request.isDocumented && !stub.match.reads(queryParameter: item.name) {
                    if let problem = ReservedParameters.problem(for: item.name, sentTo: "a stub", accepting: []) {
                        return MockEndpoint(methods: methods, route: entry.matchedRoute) { _ in throw problem }
                    }
                }
                let latency = stub.latency.map { ($0, timer.markArrival()) }
                let random = self.random
                var helped = current
                // The helpers' values: the moment, the count, and a seed from the server's random numbers
                // (drawn only where an answer has placeholders: a seeded run's other draws stay as they were).
                if answer.hasPlaceholders || stub.creates.contains(where: { StubTemplate.hasPlaceholder(.object($0.values)) }) {
                    helped.now = now()
                    helped.counter = count
                    helped.draws = StubTemplate.Draws(seed: UInt64(random() * 9_007_199_254_740_992))
                }
                let accepted = helped
                let records = self.records
                let eventTimer = self.timer
                let changes = self.changes
                var route = entry.matchedRoute
                route.answersAsGiven = answer.isVerbatim
                var endpoint = MockEndpoint(methods: methods, route: route) { _ in
                    if let (latency, wait) = latency { await wait(latency.delay(forUnit: random())) }
                    try await records.requireRecords(stub.requiredRecords, named: accepted.parameters)
                    var context = accepted
                    for creation in stub.creates {
                        guard case .object(let values) = StubTemplate.render(.object(creation.values), context) else { continue }
                        context.created = .object(try await records.create(creation.resource, values))
                    }
                    if case .webSocket(let script)? = answer.body {
                        return answer.webSocketResponse(
                            script, request: request, context: context, timer: eventTimer, changes: changes)
                    }
                    var response = try answer.response(in: context, timer: eventTimer)
                    if let preferred {
                        response.headerFields[RequestOverrides.preferenceApplied] = preferred.applied
                    }
                    return response
                }
                // A route written for `OPTIONS` answers it (a recorded backend's own answer), not the router.
                endpoint.answersOptions = entry.method == .options
                return endpoint
            case .handler(_, _, _, let handler):
                let routeRequest = RouteRequest(
                    request: request, parameters: parameters, query: current.query, json: current.body, records: records)
                var endpoint = MockEndpoint(methods: methods, route: entry.matchedRoute) { _ in
                    try await handler(routeRequest)
                }
                endpoint.answersOptions = entry.method == .options
                return endpoint
            }
        }
        // A path of ours with no route for the method: the router answers 405 with these methods. A
        // route whose conditions failed lets the resources' routes have the request.
        guard !methods.isEmpty, !methods.contains(request.method) else { return nil }
        let allowed = methods
        return MockEndpoint(methods: allowed, route: firstOnPath?.matchedRoute) { _ in
            throw HTTPProblem.methodNotAllowed(request.method, allowed: allowed)
        }
    }

    /// The stubs whose path and method fit `request` but whose conditions did not, each with the first
    /// condition that failed: what a 404 tells the client.
    func nearMisses(for request: MockRequest) -> [NearMiss] {
        let entries = Self.entries(asking: request, in: runtime)
        var context: StubTemplate.Context?
        var misses: [NearMiss] = []
        for (id, entry) in entries {
            guard case .stub(let stub) = entry, Self.answers(stub.method, request), let parameters = stub.path.match(request.path)
            else {
                continue
            }
            guard var current = context ?? (try? Self.context(of: request)) else { return misses }
            current.parameters = parameters
            context = current
            let route = "\(stub.method.rawValue) \(stub.path.description)"
            if let why = stub.mismatch(in: current) {
                misses.append(NearMiss(route: route, why: why))
            } else if let why = memory.withLock({ $0.whyNot(stub, id: id) }) {
                misses.append(NearMiss(route: route, why: why))
            }
        }
        return misses
    }

    /// The answer `stub` gives now, moving its scenario and its turn; `nil` if its scenario is in
    /// another state, or it has given its last answer and then stops.
    func take(_ stub: StubRoute, id: Int) -> (StubAnswer, count: Int)? {
        // Drawn outside the lock: the server's random numbers may take their own.
        let unit = stub.order == .random ? random() : 0
        return memory.withLock { $0.take(stub, id: id, unit: unit) }
    }

    /// Every scenario back to its start and every stub back to its first answer.
    func resetMemory() { memory.withLock { $0 = StubMemory() } }

    static func context(of request: MockRequest) throws(HTTPProblem) -> StubTemplate.Context {
        let query = request.query.map { text in (try? ListQuery.items(of: text)) ?? [] } ?? []
        var body: JSON?
        if !request.body.isEmpty, request.headerFields[.contentType]?.lowercased().contains("json") ?? true {
            body = try? JSON(parsing: request.body)
        }
        var context = StubTemplate.Context(parameters: [:], query: query, headers: request.headerFields, body: body)
        context.method = request.method
        return context
    }
}

/// Each scenario's state and each in-turn stub's next answer.
struct StubMemory: Sendable {
    var states: [String: String] = [:]
    var turns: [Int: Int] = [:]
    /// How many times each stub has answered, for `{{counter}}`.
    var counts: [Int: Int] = [:]

    func state(of scenario: String) -> String { states[scenario] ?? StubRoute.Scenario.started }

    mutating func take(_ stub: StubRoute, id: Int, unit: Double) -> (StubAnswer, count: Int)? {
        if let scenario = stub.scenario, let wanted = scenario.whenState, state(of: scenario.name) != wanted { return nil }
        let answers = stub.answers
        let answer: StubAnswer
        switch stub.order {
        case .random:
            answer = answers[min(Int(min(max(unit, 0), 1) * Double(answers.count)), answers.count - 1)]
        case .inTurn:
            let turn = turns[id] ?? 0
            if turn < answers.count {
                answer = answers[turn]
                turns[id] = turn + 1
            } else {
                switch stub.afterLast {
                case .repeatLast: answer = answers[answers.count - 1]
                case .cycle:
                    // `turn` stays between count and twice count, so it never grows past a bound.
                    answer = answers[turn % answers.count]
                    turns[id] = turn + 1 >= 2 * answers.count ? answers.count : turn + 1
                case .notFound: return nil
                }
            }
        }
        if let scenario = stub.scenario, let next = scenario.setState { states[scenario.name] = next }
        let count = (counts[id] ?? 0) &+ 1
        counts[id] = count
        return (answer, count)
    }

    /// Why `stub`, whose conditions hold, would not answer now, for a 404's near misses.
    func whyNot(_ stub: StubRoute, id: Int) -> String? {
        if let scenario = stub.scenario, let wanted = scenario.whenState, state(of: scenario.name) != wanted {
            return "scenario '\(scenario.name)' is in state '\(state(of: scenario.name))', not '\(wanted)'"
        }
        if stub.order == .inTurn, stub.afterLast == .notFound, (turns[id] ?? 0) >= stub.answers.count {
            return "it gave all its \(stub.answers.count) answers"
        }
        return nil
    }
}
