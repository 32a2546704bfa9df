import Foundation
import HTTPTypes
import HammockJSON
import Logging
import Synchronization

/// The admin API under a reserved prefix (`/__hammock` by default), outside the base path: the
/// journal, the resources and routes, reset, snapshots, latency and the version, as JSON, with
/// problem+json errors. Each call is also a Swift method of ``MockServer``; this only maps HTTP onto
/// them.
///
/// It is a family of routes like the resources, outside the base path, which only the end of the admin
/// API's chain asks (`MockRouter.respondAsAdmin`); its endpoints are the rows of a table (``Row``). The engine's own rows and those of
/// other modules (HammockOpenAPI's `openapi.json`, the console's files) are added through the same
/// ``add(_:)``. Its routes are of the kind ``MatchedRoute/Kind/admin``: the router answers `OPTIONS`,
/// 405 and `HEAD` for them as for any route, and the server's chain, assembled once for each kind,
/// gives them the log line, problem mapping and ``AdminGuardMiddleware`` but no journal entry, no
/// simulated latency, fault or override, no conditional answers and no CORS grant (``AdminGuard`` says
/// why), and none of your middleware.
final class AdminRoutes: MockRoutes {
    /// The prefix, normalized (`/__hammock`).
    let path: String
    /// Host, origin, content type and token: who may use the API.
    let guardian: AdminGuard
    /// The header fields whose values the journal's JSON hides unless asked (`?redact=false`).
    let redaction: Redaction
    /// Routes added over this API, which `DELETE <prefix>/routes` removes, with the bytes of the body
    /// that described each (what it holds in memory, roughly).
    let addedRoutes = Mutex<[(id: Int, bytes: Int)]>([])
    /// The table: the engine's rows in the order the index lists them, then those other modules added.
    private let rows = Mutex<[Row]>([])
    /// What a browser gets at the prefix itself (HammockConsole's page); JSON clients get the index.
    private let page = Mutex<Row?>(nil)
    /// The event streams open now, and what they hold unsent, all together.
    let feeds = FeedBudget()
    /// The server the handlers act on. Weak: the server holds the router, which holds this.
    private let owner = Mutex<Owner>(Owner())

    private struct Owner {
        weak var server: MockServer?
    }

    /// One endpoint: a path pattern under the prefix, the methods it allows and what answers them.
    struct Row: Sendable {
        /// The segments after the prefix, `:name` for a variable one (`["faults", ":name"]`); none for
        /// the prefix itself.
        var pattern: [String]
        /// The methods, as the index lists them; the router adds `HEAD` beside `GET`.
        var methods: [HTTPRequest.Method]
        /// False for files that hold no data (a page's script), which a browser loads without the token.
        var requiresToken = true
        /// Answers a request with one of ``methods`` (a `HEAD` arrives as `GET`).
        var handler: @Sendable (Call) async throws -> MockResponse

        /// `/faults/:name`.
        var patternText: String { pattern.isEmpty ? "" : "/" + pattern.joined(separator: "/") }

        /// The variable segments of `segments` in order, if the row's pattern fits them.
        func parameters(of segments: [Substring]) -> [String]? {
            guard segments.count == pattern.count else { return nil }
            var parameters: [String] = []
            for (segment, part) in zip(segments, pattern) {
                if part.hasPrefix(":") {
                    parameters.append(String(segment))
                } else if segment != part {
                    return nil
                }
            }
            return parameters
        }
    }

    /// What a row's handler gets.
    struct Call: Sendable {
        var request: MockRequest
        /// The variable segments of the row's pattern, in order (`["slow"]` for `/faults/slow`).
        var parameters: [String]
        var server: MockServer
        var admin: AdminRoutes
    }

    init(path: String, options: MockServer.Options) {
        self.path = path
        guardian = AdminGuard(allowedHosts: options.adminHosts, token: options.adminToken)
        redaction = Redaction(extraNames: options.redactedHeaders)
        for row in Self.engineRows + Self.authRows { _ = add(row) }
    }

    /// Ties the handlers to the server, once it is made.
    func attach(to server: MockServer) { owner.withLock { $0.server = server } }

    /// Adds a row; false when one with the same pattern is in the table.
    func add(_ row: Row) -> Bool {
        rows.withLock { rows in
            guard !rows.contains(where: { $0.pattern == row.pattern }) else { return false }
            rows.append(row)
            return true
        }
    }

    /// Sets what a browser navigating to the prefix gets.
    func setPage(_ row: Row) { page.withLock { $0 = row } }

    /// Whether `requestPath` is the prefix or under it: a plain byte comparison, since every request
    /// asks it.
    func owns(_ requestPath: String) -> Bool {
        guard requestPath.hasPrefix(path) else { return false }
        let rest = requestPath.utf8.dropFirst(path.utf8.count)
        return rest.isEmpty || rest.first == UInt8(ascii: "/")
    }

    /// The row that answers `request` and its variable segments, if any.
    func row(for request: MockRequest) -> (row: Row, parameters: [String])? {
        guard owns(request.path) else { return nil }
        let segments = request.path.dropFirst(path.count).split(separator: "/")
        // A browser asking for the prefix gets the page, which asks for the token itself if one is set.
        if segments.isEmpty, request.method == .get || request.method == .head, Self.acceptsHTML(request),
            let page = page.withLock({ $0 })
        {
            return (page, [])
        }
        return rows.withLock { rows in
            for row in rows { if let parameters = row.parameters(of: segments) { return (row, parameters) } }
            return nil
        }
    }

    // MARK: MockRoutes

    func endpoint(for request: MockRequest) throws -> MockEndpoint? {
        guard owns(request.path) else { return nil }
        guard let (row, parameters) = row(for: request) else {
            throw HTTPProblem.notFound("No admin endpoint '\(request.path.prefix(200))'; see GET \(path) for the list")
        }
        let methods = row.methods.contains(.get) && !row.methods.contains(.head) ? row.methods + [.head] : row.methods
        let route = MatchedRoute(kind: .admin, pattern: path + row.patternText)
        return MockEndpoint(methods: methods, route: route) { request in
            guard let server = self.owner.withLock({ $0.server }) else {
                throw HTTPProblem(.serviceUnavailable, detail: "The server is gone")
            }
            var call = Call(request: request, parameters: parameters, server: server, admin: self)
            if request.method == .head { call.request.method = .get }
            return try await row.handler(call)
        }
    }

    /// The admin API's endpoints, under the prefix; the server's route table does not list them.
    var routeTable: [RouteTableEntry] {
        rows.withLock { $0 }.map { RouteTableEntry(methods: $0.methods, pattern: path + $0.patternText) }
    }

    /// Whether the request's `Accept` names HTML, as a browser's navigation does (`fetch` and curl send `*/*`).
    static func acceptsHTML(_ request: MockRequest) -> Bool {
        guard let accept = request.headerFields[.accept] else { return false }
        return accept.split(separator: ",").contains { range in
            let parts = range.split(separator: ";")
            guard parts.first?.trimmingCharacters(in: .whitespaces).lowercased() == "text/html" else { return false }
            // `text/html;q=0` refuses it.
            let weight = parts.dropFirst().lazy.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                .first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) }
            return (weight ?? 1) > 0
        }
    }

    // MARK: The engine's rows

    /// Each endpoint of the engine's own, in the order the index lists them.
    static let engineRows: [Row] = [
        Row(pattern: [], methods: [.get]) { call in MockResponse(json: call.admin.index) },
        Row(pattern: ["version"], methods: [.get]) { _ in
            MockResponse(json: ["name": "Hammock", "version": .string(MockServer.version)])
        },
        // 200 while the store answers, 503 when it does not; the reason goes to the log only.
        Row(pattern: ["health"], methods: [.get]) { call in
            switch await call.server.store.health() {
            case .available:
                return MockResponse(json: ["status": "available"])
            case .unavailable(let reason):
                call.server.logger.error("store unavailable: \(reason)")
                var response = MockResponse(status: .serviceUnavailable, json: ["status": "unavailable"])
                response.headerFields[.retryAfter] = "1"
                return response
            }
        },
        Row(pattern: ["requests"], methods: [.get, .delete]) { call in
            if call.request.method == .delete {
                call.server.journal.clear()
                return MockResponse(status: .noContent)
            }
            return try call.admin.listRequests(call.request, journal: call.server.journal)
        },
        Row(pattern: ["requests", ":id"], methods: [.get]) { call in
            let name = call.parameters[0]
            let redaction = try call.admin.redaction(askedBy: call.request)
            guard let id = UInt64(name), let entry = call.server.journal.entries.first(where: { $0.id == id }) else {
                throw HTTPProblem.notFound("The journal holds no request #\(name.prefix(40))")
            }
            return MockResponse(json: JournalJSON.entry(entry, redacting: redaction))
        },
        Row(pattern: ["events"], methods: [.get]) { call in try call.admin.events(call.request, server: call.server) },
        Row(pattern: ["resources"], methods: [.get, .post]) { call in
            if call.request.method == .post { return try await call.admin.addResource(call.request, server: call.server) }
            return try await call.admin.listResources(call.server)
        },
        Row(pattern: ["resources", ":name"], methods: [.delete]) { call in
            try await call.server.removeResource(named: call.parameters[0])
            return MockResponse(status: .noContent)
        },
        Row(pattern: ["routes"], methods: [.get, .post, .delete]) { call in
            switch call.request.method {
            case .post: return try call.admin.addRoutes(call.request, server: call.server)
            case .delete:
                let ids = call.admin.addedRoutes.withLock { added in
                    defer { added.removeAll() }
                    return added.map(\.id)
                }
                let removed = call.server.removeRoutes(ids)
                return MockResponse(json: ["removed": .integer(removed)])
            default: return MockResponse(json: .array(call.server.routeTable.map(AdminRoutes.json)))
            }
        },
        Row(pattern: ["routes", ":id"], methods: [.delete]) { call in
            let name = call.parameters[0]
            guard let id = Int(name), call.server.removeRoutes([id]) == 1 else {
                throw HTTPProblem.notFound("No route of your own numbered \(name.prefix(40))")
            }
            call.admin.addedRoutes.withLock { $0.removeAll { $0.id == id } }
            return MockResponse(status: .noContent)
        },
        Row(pattern: ["reset"], methods: [.post]) { call in
            try await call.server.reset()
            return MockResponse(status: .noContent)
        },
        Row(pattern: ["snapshots"], methods: [.get]) { call in
            MockResponse(json: .array(call.server.snapshotNames.map(JSON.string)))
        },
        Row(pattern: ["snapshots", ":name"], methods: [.get, .put, .delete]) { call in try await AdminRoutes.snapshot(call) },
        Row(pattern: ["snapshots", ":name", "restore"], methods: [.post]) { call in
            try await call.server.restoreSnapshot(named: call.parameters[0])
            return MockResponse(status: .noContent)
        },
        Row(pattern: ["latency"], methods: [.get, .put, .delete]) { call in
            switch call.request.method {
            case .put: call.server.setLatency(try AdminRoutes.latency(from: call.request))
            case .delete: call.server.setLatency(nil)
            default: break
            }
            return MockResponse(json: AdminRoutes.json(call.server.latency))
        },
        Row(pattern: ["scenarios"], methods: [.get, .delete]) { call in
            if call.request.method == .delete { call.server.resetScenarios() }
            return MockResponse(json: AdminRoutes.json(call.server.scenarioStates))
        },
        Row(pattern: ["scenarios", ":name"], methods: [.put]) { call in try AdminRoutes.setScenario(call) },
        Row(pattern: ["faults"], methods: [.get, .post, .put, .delete]) { call in
            let server = call.server
            switch call.request.method {
            case .post:
                let fault = try AdminRoutes.fault(from: call.request, named: nil)
                let (name, _) = try AdminRoutes.addFault(fault, on: server)
                return AdminRoutes.faultAnswer(named: name, on: server, status: .created, prefix: call.admin.path)
            case .put: server.setFaults(try AdminRoutes.faults(from: call.request))
            case .delete: server.setFaults([])
            default: break
            }
            return MockResponse(json: .array(server.faultsInForce.map(\.json)))
        },
        Row(pattern: ["faults", ":name"], methods: [.get, .put, .delete]) { call in try AdminRoutes.fault(call) },
        Row(pattern: ["webhooks"], methods: [.get, .post, .put, .delete]) { call in try AdminRoutes.webhooks(call) },
        Row(pattern: ["webhooks", ":name"], methods: [.get, .put, .delete]) { call in try AdminRoutes.webhook(call) },
        Row(pattern: ["websockets"], methods: [.get, .delete]) { call in
            if call.request.method == .delete {
                return MockResponse(json: ["closed": .integer(try await call.server.closeWebSockets())])
            }
            return MockResponse(json: .array(call.server.openWebSockets.map(\.json)))
        },
        Row(pattern: ["websockets", "messages"], methods: [.post]) { call in try await AdminRoutes.pushWebSocketMessage(call) },
    ]

    /// `<prefix>/snapshots/{name}`.
    static func snapshot(_ call: Call) async throws -> MockResponse {
        let (server, name) = (call.server, call.parameters[0])
        switch call.request.method {
        case .put:
            let snapshot = try await server.saveSnapshot(named: name)
            return MockResponse(status: .created, json: ["name": .string(name), "records": .integer(snapshot.recordCount)])
        case .delete:
            guard server.deleteSnapshot(named: name) else {
                throw HTTPProblem.notFound("No snapshot named '\(name.prefix(100))'")
            }
            return MockResponse(status: .noContent)
        default:
            guard let snapshot = server.snapshots.withLock({ $0[name] }) else {
                throw HTTPProblem.notFound("No snapshot named '\(name.prefix(100))'")
            }
            var object = JSONObject()
            for resource in snapshot.resourceNames {
                object[resource] = .array(snapshot.records(of: resource).map(JSON.object))
            }
            return MockResponse(json: .object(object))
        }
    }

    /// `PUT <prefix>/scenarios/{name}`.
    static func setScenario(_ call: Call) throws -> MockResponse {
        let (server, name) = (call.server, call.parameters[0])
        guard case .object(let object) = try jsonBody(of: call.request), case .string(let state)? = object["state"] else {
            throw HTTPProblem.badRequest("Expected {\"state\": \"paid\"}")
        }
        // What a client names is kept: bounded, as snapshots and routes are.
        guard name.utf8.count <= 200, state.utf8.count <= 200 else {
            throw HTTPProblem.badRequest("A scenario's name and state are at most 200 bytes each")
        }
        guard server.scenarioStates[name] != nil || server.scenarioStates.count < 1_000 else {
            throw HTTPProblem(.conflict, detail: "The server keeps at most 1000 scenario states")
        }
        server.setScenario(name, to: state)
        return MockResponse(json: json(server.scenarioStates))
    }

    /// `<prefix>/faults/{name}`.
    static func fault(_ call: Call) throws -> MockResponse {
        let (server, name) = (call.server, call.parameters[0])
        switch call.request.method {
        case .put:
            let (_, isNew) = try addFault(fault(from: call.request, named: name), on: server)
            return faultAnswer(named: name, on: server, status: isNew ? .created : .ok, prefix: call.admin.path)
        case .delete:
            guard server.removeFault(named: name) != nil else {
                throw HTTPProblem.notFound("No fault named '\(name.prefix(64))'")
            }
            return MockResponse(status: .noContent)
        default:
            guard server.faultsInForce.contains(where: { $0.name == name }) else {
                throw HTTPProblem.notFound("No fault named '\(name.prefix(64))'")
            }
            return faultAnswer(named: name, on: server, status: .ok, prefix: call.admin.path)
        }
    }

    /// The most faults the admin API puts in force (a client cannot grow the server without bound, as with
    /// routes and snapshots).
    static let faultLimit = 1_000

    /// `PUT <prefix>/faults`: the configuration file's `faults` array, names unique.
    static func faults(from request: MockRequest) throws -> [Fault] {
        guard case .array(let elements) = try jsonBody(of: request) else {
            throw HTTPProblem.badRequest("Expected an array of faults: [{\"route\": \"GET /people/:id\", \"status\": 503}]")
        }
        guard elements.count <= faultLimit else {
            throw HTTPProblem(.conflict, detail: "The server keeps at most \(faultLimit) faults")
        }
        var faults: [Fault] = []
        for (index, element) in elements.enumerated() {
            do {
                let fault = try Fault(json: element)
                if let name = fault.name, faults.contains(where: { $0.name == name }) {
                    throw HTTPProblem.badRequest("[\(index)].name: '\(name)' names an earlier fault too; names are unique")
                }
                faults.append(fault)
            } catch let error as FaultError {
                throw HTTPProblem.badRequest("[\(index)].\(error.description)")
            }
        }
        return faults
    }

    /// `POST <prefix>/faults` and `PUT <prefix>/faults/{name}`: one fault; `named` is the path's name,
    /// which a `name` in the body must equal.
    static func fault(from request: MockRequest, named pathName: String?) throws -> Fault {
        var fault: Fault
        do {
            fault = try Fault(json: try jsonBody(of: request))
            if let pathName {
                try Fault.checkName(pathName)
                if let given = fault.name, given != pathName {
                    throw FaultError(key: "name", "'\(given)' differs from the path's '\(pathName)'")
                }
                fault.name = pathName
            }
        } catch let error as FaultError {
            throw HTTPProblem.badRequest(error.description)
        }
        return fault
    }

    /// Puts `fault` in force unless that would make more than ``faultLimit``: the count and the addition
    /// are one step of the server's runtime, so clients adding at once cannot pass the limit together.
    static func addFault(_ fault: Fault, on server: MockServer) throws(HTTPProblem) -> (name: String, isNew: Bool) {
        try server.runtimeCell.change { (settings) throws(HTTPProblem) -> (name: String, isNew: Bool) in
            let replaces = fault.name.map { name in settings.faults.contains { $0.name == name } } ?? false
            guard replaces || settings.faults.count < faultLimit else {
                throw HTTPProblem(.conflict, detail: "The server keeps at most \(faultLimit) faults; remove one first")
            }
            return (Interventions.put(fault, into: &settings.faults), !replaces)
        }
    }

    static func faultAnswer(
        named name: String, on server: MockServer, status: HTTPResponse.Status, prefix: String
    ) -> MockResponse {
        let fault = server.faultsInForce.first { $0.name == name }
        var response = MockResponse(status: status, json: fault?.json ?? .null)
        if status == .created { response.headerFields[.location] = "\(prefix)/faults/\(name)" }
        return response
    }

    static func json(_ states: [String: String]) -> JSON {
        var object = JSONObject()
        for (name, state) in states.sorted(by: { $0.key < $1.key }) { object[name] = .string(state) }
        return .object(object)
    }

    /// `GET <prefix>`: what the API offers, row by row.
    var index: JSON {
        let endpoints = rows.withLock { $0 }.filter { !$0.pattern.isEmpty }.map { row -> JSON in
            let pattern = row.pattern.map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : $0 }.joined(separator: "/")
            return [
                "methods": .string(row.methods.map(\.rawValue).joined(separator: ", ")), "path": .string(path + "/" + pattern),
            ]
        }
        return ["name": "Hammock admin API", "version": .string(MockServer.version), "endpoints": .array(endpoints)]
    }
}

extension MockServer {
    /// Adds an endpoint to the admin API at `<admin path>/NAME` (one path segment): a row of its table,
    /// added through the same call as the engine's own, so it gets the same token, site checks (`Host`,
    /// `Origin`, no CORS grant), `OPTIONS`, 405, `HEAD` and problem mapping as the others; for what
    /// another module serves about the server (HammockOpenAPI's `openapi.json`). An endpoint of the admin
    /// API's own keeps its name. `requiresToken: false` serves it without the admin token: only for files
    /// that hold no data (a page's script and style sheet), which a browser loads before it can send a
    /// token.
    /// - Returns: Whether it was added: false without an admin API, for a name the admin API has, or a
    ///   name with a `/` or starting with `:`.
    @discardableResult
    public func addAdminEndpoint(
        _ name: String, methods: [HTTPRequest.Method] = [.get], requiresToken: Bool = true,
        _ handler: @escaping @Sendable (MockRequest) async throws -> MockResponse
    ) -> Bool {
        guard let admin, !name.isEmpty, !name.contains("/"), !name.hasPrefix(":") else { return false }
        return admin.add(
            AdminRoutes.Row(pattern: [name], methods: methods, requiresToken: requiresToken) { call in
                try await handler(call.request)
            })
    }

    /// Sets what a browser gets at the admin path itself (a `GET` whose `Accept` names `text/html`):
    /// HammockConsole's page. It is served without the token (it holds no data; it asks for the token and
    /// sends it with its own calls); every other client still gets the JSON index there.
    /// - Returns: Whether it was set: false without an admin API.
    @discardableResult
    public func setAdminPage(_ handler: @escaping @Sendable (MockRequest) async throws -> MockResponse) -> Bool {
        guard let admin else { return false }
        admin.setPage(
            AdminRoutes.Row(pattern: [], methods: [.get], requiresToken: false) { call in try await handler(call.request) })
        return true
    }
}

extension MockServer {
    /// The bytes of journal entries that the admin API's event streams hold unsent, all together (at
    /// most ``FeedBudget/total``, plus one entry per stream).
    package var eventStreamBytes: Int { admin?.feeds.heldBytes ?? 0 }
}
