import Foundation
import HTTPTypes
import HammockJSON
import Logging
import Synchronization

/// The admin API under a reserved prefix (`/__hammock` by default), outside the base path: the
/// journal, the resources and routes, reset, snapshots, latency and the version, as JSON, with
/// problem+json errors. Each call is also a Swift method of ``MockServer``; this only maps HTTP onto
/// them. Its requests are not journaled and get no simulated latency and no CORS grant (``AdminGuard``
/// says why); they do get a log line.
final class AdminAPI: Sendable {
    /// The prefix, normalized (`/__hammock`).
    let path: String
    /// Host, origin, content type and token: who may use the API.
    let guardian: AdminGuard
    /// The header fields whose values the journal's JSON hides unless asked (`?redact=false`).
    let redaction: Redaction
    let logger: Logger
    /// Routes added over this API, which `DELETE <prefix>/routes` removes, with the bytes of the body
    /// that described each (what it holds in memory, roughly).
    let addedRoutes = Mutex<[(id: Int, bytes: Int)]>([])
    /// Endpoints other modules add (`openapi.json`), by their one path segment.
    let extraEndpoints = Mutex<[String: AdminEndpoint]>([:])
    /// What a browser gets at the prefix itself (HammockConsole's page); JSON clients get the index.
    let page = Mutex<AdminEndpoint?>(nil)
    /// The event streams open now, and what they hold unsent, all together.
    let feeds = FeedBudget()

    init(path: String, options: MockServer.Options, logger: Logger) {
        self.path = path
        guardian = AdminGuard(allowedHosts: options.adminHosts, token: options.adminToken)
        redaction = Redaction(extraNames: options.redactedHeaders)
        self.logger = logger
    }

    /// Whether `requestPath` is the prefix or under it: a plain byte comparison, since every request
    /// asks it.
    func owns(_ requestPath: String) -> Bool {
        guard requestPath.hasPrefix(path) else { return false }
        let rest = requestPath.utf8.dropFirst(path.utf8.count)
        return rest.isEmpty || rest.first == UInt8(ascii: "/")
    }

    /// One endpoint: the methods it allows and what answers them.
    struct Endpoint {
        var methods: [HTTPRequest.Method]
        /// False for files that hold no data (a page's script), which a browser loads without the token.
        var requiresToken = true
        var handler: (MockRequest) async throws -> MockResponse
    }

    func respond(to request: MockRequest, on server: MockServer) async -> MockResponse {
        var outcome: Result<MockResponse, any Error>
        do {
            outcome = .success(try await answer(request, on: server))
        } catch {
            outcome = .failure(error)
        }
        outcome = ProblemMiddleware(logger: logger).finish(outcome, for: request)
        outcome = FinalAnswerStep().finish(outcome, for: request)
        outcome = HeadMiddleware().finish(outcome, for: request)
        outcome = LogMiddleware(logger: logger).finish(outcome, for: request)
        return (try? outcome.get()) ?? MockServer.unmappedFailure(outcome)
    }

    func answer(_ request: MockRequest, on server: MockServer) async throws -> MockResponse {
        let rest = request.path.dropFirst(path.count)
        let segments = rest.split(separator: "/").map(String.init)
        // A browser asking for the prefix gets the page, which asks for the token itself if one is set.
        if segments.isEmpty, request.method == .get || request.method == .head, Self.acceptsHTML(request),
            let page = page.withLock({ $0 })
        {
            try guardian.checkSite(of: request, holdsData: false)
            return try await page.handler(request)
        }
        guard let endpoint = endpoint(for: segments, on: server) else {
            // Before the 404: a page re-pointed here must not learn which paths exist.
            try guardian.checkSite(of: request, holdsData: true)
            throw HTTPProblem.notFound(
                "No admin endpoint '\(request.path.prefix(200))'; see GET \(path) for the list")
        }
        try guardian.checkSite(of: request, holdsData: endpoint.requiresToken)
        let method = request.method == .head ? HTTPRequest.Method.get : request.method
        if request.method == .options {
            // A preflight carries no credentials, so it is answered before the token is checked; it grants
            // no other origin anything (no CORS fields), and another origin's was refused above.
            var fields = HTTPFields()
            fields[.allow] = (endpoint.methods + (endpoint.methods.contains(.get) ? [.head] : []) + [.options])
                .map(\.rawValue).joined(separator: ", ")
            return MockResponse(status: .noContent, headerFields: fields)
        }
        if endpoint.requiresToken { try guardian.authorize(request) }
        guard endpoint.methods.contains(method) else {
            throw HTTPProblem.methodNotAllowed(request.method, allowed: endpoint.methods)
        }
        try guardian.checkContentType(of: request)
        var inner = request
        inner.method = method
        return try await endpoint.handler(inner)
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

    /// The endpoint a path names, if any.
    func endpoint(for segments: [String], on server: MockServer) -> Endpoint? {
        switch segments.count {
        case 0:
            return Endpoint(methods: [.get]) { _ in MockResponse(json: self.index) }
        case 1:
            switch segments[0] {
            case "version":
                return Endpoint(methods: [.get]) { _ in
                    MockResponse(json: ["name": "Hammock", "version": .string(MockServer.version)])
                }
            case "health":
                // 200 while the store answers, 503 when it does not; the reason goes to the log only.
                return Endpoint(methods: [.get]) { _ in
                    switch await server.store.health() {
                    case .available:
                        return MockResponse(json: ["status": "available"])
                    case .unavailable(let reason):
                        server.logger.error("store unavailable: \(reason)")
                        var response = MockResponse(status: .serviceUnavailable, json: ["status": "unavailable"])
                        response.headerFields[.retryAfter] = "1"
                        return response
                    }
                }
            case "requests":
                return Endpoint(methods: [.get, .delete]) { request in
                    if request.method == .delete {
                        server.journal.clear()
                        return MockResponse(status: .noContent)
                    }
                    return try self.listRequests(request, journal: server.journal)
                }
            case "events":
                return Endpoint(methods: [.get]) { request in try self.events(request, server: server) }
            case "resources":
                return Endpoint(methods: [.get, .post]) { request in
                    if request.method == .post { return try await self.addResource(request, server: server) }
                    return try await self.listResources(server)
                }
            case "routes":
                return Endpoint(methods: [.get, .post, .delete]) { request in
                    switch request.method {
                    case .post: return try self.addRoutes(request, server: server)
                    case .delete:
                        let ids = self.addedRoutes.withLock { added in
                            defer { added.removeAll() }
                            return added.map(\.id)
                        }
                        let removed = server.removeRoutes(ids)
                        return MockResponse(json: ["removed": .integer(removed)])
                    default: return MockResponse(json: .array(server.routeTable.map(Self.json)))
                    }
                }
            case "reset":
                return Endpoint(methods: [.post]) { _ in
                    try await server.reset()
                    return MockResponse(status: .noContent)
                }
            case "snapshots":
                return Endpoint(methods: [.get]) { _ in MockResponse(json: .array(server.snapshotNames.map(JSON.string))) }
            case "faults":
                return Endpoint(methods: [.get, .post, .put, .delete]) { request in
                    switch request.method {
                    case .post:
                        let fault = try Self.fault(from: request, named: nil)
                        try Self.checkRoomForFault(named: fault.name, on: server)
                        let name = server.addFault(fault)
                        return Self.faultAnswer(named: name, on: server, status: .created, prefix: self.path)
                    case .put: server.setFaults(try Self.faults(from: request))
                    case .delete: server.setFaults([])
                    default: break
                    }
                    return MockResponse(json: .array(server.faultsInForce.map(\.json)))
                }
            case "scenarios":
                return Endpoint(methods: [.get, .delete]) { request in
                    if request.method == .delete { server.resetScenarios() }
                    return MockResponse(json: Self.json(server.scenarioStates))
                }
            case "latency":
                return Endpoint(methods: [.get, .put, .delete]) { request in
                    switch request.method {
                    case .put: server.setLatency(try Self.latency(from: request))
                    case .delete: server.setLatency(nil)
                    default: break
                    }
                    return MockResponse(json: Self.json(server.latency))
                }
            default:
                guard let added = extraEndpoints.withLock({ $0[segments[0]] }) else { return nil }
                return Endpoint(methods: added.methods, requiresToken: added.requiresToken) { request in
                    try await added.handler(request)
                }
            }
        case 2:
            let name = segments[1]
            switch segments[0] {
            case "requests":
                return Endpoint(methods: [.get]) { request in
                    let redaction = try self.redaction(askedBy: request)
                    guard let id = UInt64(name), let entry = server.journal.entries.first(where: { $0.id == id }) else {
                        throw HTTPProblem.notFound("The journal holds no request #\(name.prefix(40))")
                    }
                    return MockResponse(json: JournalJSON.entry(entry, redacting: redaction))
                }
            case "resources":
                return Endpoint(methods: [.delete]) { _ in
                    try await server.removeResource(named: name)
                    return MockResponse(status: .noContent)
                }
            case "scenarios":
                return Endpoint(methods: [.put]) { request in
                    guard case .object(let object) = try Self.jsonBody(of: request), case .string(let state)? = object["state"]
                    else {
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
                    return MockResponse(json: Self.json(server.scenarioStates))
                }
            case "faults":
                return Endpoint(methods: [.get, .put, .delete]) { request in
                    switch request.method {
                    case .put:
                        let fault = try Self.fault(from: request, named: name)
                        let isNew = !server.faultsInForce.contains { $0.name == name }
                        if isNew { try Self.checkRoomForFault(named: name, on: server) }
                        server.addFault(fault)
                        return Self.faultAnswer(named: name, on: server, status: isNew ? .created : .ok, prefix: self.path)
                    case .delete:
                        guard server.removeFault(named: name) != nil else {
                            throw HTTPProblem.notFound("No fault named '\(name.prefix(64))'")
                        }
                        return MockResponse(status: .noContent)
                    default:
                        guard server.faultsInForce.contains(where: { $0.name == name }) else {
                            throw HTTPProblem.notFound("No fault named '\(name.prefix(64))'")
                        }
                        return Self.faultAnswer(named: name, on: server, status: .ok, prefix: self.path)
                    }
                }
            case "routes":
                return Endpoint(methods: [.delete]) { _ in
                    guard let id = Int(name), server.removeRoutes([id]) == 1 else {
                        throw HTTPProblem.notFound("No route of your own numbered \(name.prefix(40))")
                    }
                    self.addedRoutes.withLock { $0.removeAll { $0.id == id } }
                    return MockResponse(status: .noContent)
                }
            case "snapshots":
                return Endpoint(methods: [.get, .put, .delete]) { request in
                    switch request.method {
                    case .put:
                        let snapshot = try await server.saveSnapshot(named: name)
                        return MockResponse(
                            status: .created, json: ["name": .string(name), "records": .integer(snapshot.recordCount)])
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
            default: return nil
            }
        case 3 where segments[0] == "snapshots" && segments[2] == "restore":
            return Endpoint(methods: [.post]) { _ in
                try await server.restoreSnapshot(named: segments[1])
                return MockResponse(status: .noContent)
            }
        default:
            return nil
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

    static func checkRoomForFault(named name: String?, on server: MockServer) throws {
        let faults = server.faultsInForce
        guard faults.count < faultLimit || faults.contains(where: { $0.name != nil && $0.name == name }) else {
            throw HTTPProblem(.conflict, detail: "The server keeps at most \(faultLimit) faults; remove one first")
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

    /// `GET <prefix>`: what the API offers.
    var index: JSON {
        let endpoints: [(String, String)] = [
            ("GET", "/version"), ("GET", "/health"), ("GET, DELETE", "/requests"), ("GET", "/requests/{id}"), ("GET", "/events"),
            ("GET, POST", "/resources"), ("DELETE", "/resources/{name}"),
            ("GET, POST, DELETE", "/routes"), ("DELETE", "/routes/{id}"), ("POST", "/reset"), ("GET", "/snapshots"),
            ("GET, PUT, DELETE", "/snapshots/{name}"), ("POST", "/snapshots/{name}/restore"), ("GET, PUT, DELETE", "/latency"),
            ("GET, DELETE", "/scenarios"), ("PUT", "/scenarios/{name}"), ("GET, POST, PUT, DELETE", "/faults"),
            ("GET, PUT, DELETE", "/faults/{name}"),
        ]
        let extra = extraEndpoints.withLock { $0 }.sorted { $0.key < $1.key }.map { name, endpoint in
            (endpoint.methods.map(\.rawValue).joined(separator: ", "), "/" + name)
        }
        return [
            "name": "Hammock admin API", "version": .string(MockServer.version),
            "endpoints": .array((endpoints + extra).map { ["methods": .string($0.0), "path": .string(path + $0.1)] }),
        ]
    }
}

/// An admin endpoint another module adds (``MockServer/addAdminEndpoint(_:methods:requiresToken:_:)``).
struct AdminEndpoint: Sendable {
    var methods: [HTTPRequest.Method]
    var requiresToken = true
    var handler: @Sendable (MockRequest) async throws -> MockResponse
}

extension MockServer {
    /// Adds an endpoint to the admin API at `<admin path>/NAME` (one path segment), behind the same
    /// token, site checks (`Host`, `Origin`, no CORS grant) and problem mapping as the others; for what
    /// another module serves about the server
    /// (HammockOpenAPI's `openapi.json`). An endpoint of the admin API's own keeps its name.
    /// `requiresToken: false` serves it without the admin token: only for files that hold no data (a
    /// page's script and style sheet), which a browser loads before it can send a token.
    /// - Returns: Whether it was added: false without an admin API, for a name the admin API has, or a
    ///   name with a `/`.
    @discardableResult
    public func addAdminEndpoint(
        _ name: String, methods: [HTTPRequest.Method] = [.get], requiresToken: Bool = true,
        _ handler: @escaping @Sendable (MockRequest) async throws -> MockResponse
    ) -> Bool {
        guard let admin, !name.isEmpty, !name.contains("/"), admin.endpoint(for: [name], on: self) == nil else { return false }
        admin.extraEndpoints.withLock {
            $0[name] = AdminEndpoint(methods: methods, requiresToken: requiresToken, handler: handler)
        }
        return true
    }

    /// Sets what a browser gets at the admin path itself (a `GET` whose `Accept` names `text/html`):
    /// HammockConsole's page. It is served without the token (it holds no data; it asks for the token and
    /// sends it with its own calls); every other client still gets the JSON index there.
    /// - Returns: Whether it was set: false without an admin API.
    @discardableResult
    public func setAdminPage(_ handler: @escaping @Sendable (MockRequest) async throws -> MockResponse) -> Bool {
        guard let admin else { return false }
        admin.page.withLock { $0 = AdminEndpoint(methods: [.get], requiresToken: false, handler: handler) }
        return true
    }
}

extension MockServer {
    /// The bytes of journal entries that the admin API's event streams hold unsent, all together (at
    /// most ``FeedBudget/total``, plus one entry per stream).
    package var eventStreamBytes: Int { admin?.feeds.heldBytes ?? 0 }
}
