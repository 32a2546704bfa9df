import Foundation
import HTTPTypes
import HammockJSON
import HammockStore
import Synchronization

/// Maps a request's path to an endpoint by asking each family of routes in turn, and answers what is
/// the same for every route: `OPTIONS` (204 with `Allow`), a method the route does not allow (405), a
/// path no family serves (404), and a request the transport already refused.
///
/// The admin API is a family too, asked on the whole path (it lives outside the base path) by the end
/// of the admin API's chain only; its routes are of their own kind, which faults and a request's own asks skip.
final class MockRouter: Sendable {
    private let families: Mutex<[any MockRoutes]>
    /// The admin API's family, if the server has one.
    let admin: AdminRoutes?

    /// The prefix every route is served under, if any.
    let basePath: String?
    /// The same, as what strips requests and resolves answers.
    let mount: MountPath?
    /// What decides and applies faults and a request's own asks.
    let interventions: Interventions?

    init(
        _ families: [any MockRoutes], admin: AdminRoutes? = nil, basePath: String? = nil, interventions: Interventions? = nil
    ) {
        self.families = Mutex(families)
        self.admin = admin
        self.basePath = basePath
        self.mount = basePath.map(MountPath.init(prefix:))
        self.interventions = interventions
    }

    /// Adds a family in front of the others (`first`) or behind them.
    func add(_ family: any MockRoutes, first: Bool) {
        families.withLock { families in
            if first { families.insert(family, at: 0) } else { families.append(family) }
        }
    }

    /// Every family's rows, in the order the router asks them.
    var routeTable: [RouteTableEntry] {
        let rows = families.withLock { $0 }.flatMap(\.routeTable)
        guard let basePath else { return rows }
        return rows.map { row in
            var row = row
            row.pattern = row.pattern == "/" ? basePath : basePath + row.pattern
            return row
        }
    }

    /// Whether the request goes to the admin API's family: the server's chain for that kind answers it.
    /// A request the transport refused goes to no route, whatever its path.
    func isAdmin(_ request: MockRequest) -> Bool {
        guard let admin, request.rejection == nil else { return false }
        return admin.owns(request.path)
    }

    /// Whether the endpoint that would answer `request` (its head: the body has not arrived) takes a body
    /// over the limit as a stream (``MockEndpoint/takesStreamedBody``). Asked by the transport only for a
    /// body that passes the limit, so a body within it reaches every route whole, as before. A request the
    /// API document describes is checked whole, so it never streams.
    func takesStreamedBody(_ request: MockRequest, runtime: ServerRuntime) -> Bool {
        guard !isAdmin(request), request.method != .options else { return false }
        let families = self.families.withLock { $0 }
        guard families.contains(where: \.mayTakeStreamedBodies) else { return false }
        var routed = request
        if let mount {
            guard let inner = mount.inner(request.path) else { return false }
            routed.path = inner
        }
        if let checks = runtime.settings.requestChecks, checks.operation(for: routed) != nil { return false }
        // The endpoint `dispatch` would pick. A family that throws (a key of the wrong form) answers with
        // its problem, and a path served without this method with a 405: neither needs the body.
        guard case .allowing(let endpoint)? = try? lookUp(routed, in: families) else { return false }
        return endpoint.takesStreamedBody
    }

    /// What the families say of a request, asked in order.
    enum Lookup {
        /// The first endpoint that allows the method (for `OPTIONS`, one that answers it itself: the router
        /// answers it for every other).
        case allowing(MockEndpoint)
        /// Every endpoint that serves the path but not the method, in the families' order: a 405 or an
        /// `OPTIONS` answer listing what they allow; none, a 404.
        case refusing([MockEndpoint])
    }

    /// The one walk of the families that ``dispatch(_:)`` answers from and ``takesStreamedBody(_:runtime:)``
    /// looks ahead with. A family that serves the path but not the method does not hide a later one that
    /// does; once one has refused the method, a later family's error (a key of the wrong form for a
    /// resource) does not replace that refusal: the path was served.
    func lookUp(_ request: MockRequest, in families: [any MockRoutes]) throws -> Lookup {
        var refusing: [MockEndpoint] = []
        for family in families {
            let found = refusing.isEmpty ? try family.endpoint(for: request) : try? family.endpoint(for: request)
            guard let endpoint = found else { continue }
            // The common case costs nothing more: the first endpoint found allows the method. An OPTIONS is
            // an endpoint's own only on a path no earlier family serves: where the mock answers a method of
            // the path, the preflight for it is the mock's too.
            let allows =
                request.method == .options
                ? endpoint.answersOptions && refusing.isEmpty : endpoint.methods.contains(request.method)
            if allows { return .allowing(endpoint) }
            refusing.append(endpoint)
        }
        return .refusing(refusing)
    }

    /// The end of the admin API's chain: only the admin API's family is asked.
    @Sendable func respondAsAdmin(to request: MockRequest) async throws -> MockResponse {
        if let rejection = request.rejection { throw rejection.problem }
        guard let admin, let endpoint = try admin.endpoint(for: request) else {
            throw HTTPProblem.notFound("No admin endpoint '\(request.path.prefix(200))'")
        }
        return try await answer(request, with: endpoint)
    }

    /// The end of the API's chain: the admin API's family is not asked (its requests take the admin
    /// chain, which ends in ``respondAsAdmin(to:)``).
    @Sendable func respond(to request: MockRequest) async throws -> MockResponse {
        if let rejection = request.rejection { throw rejection.problem }
        guard let mount else { return try await route(request) }
        // Under a base path: routes see the path inside it, and answers' paths from the root are resolved
        // against it (see MountPath).
        guard let inner = mount.inner(request.path) else {
            throw HTTPProblem.notFound("No route for '\(request.path)': every route is under \(mount.prefix)")
        }
        var routed = request
        routed.path = inner
        var response = try await route(routed)
        mount.resolve(&response)
        return response
    }

    func route(_ request: MockRequest) async throws -> MockResponse {
        // A request the API document describes is checked before any route answers it (one optional
        // read when the server has no document), and a problem it ends in is answered as the document
        // answers errors, where it says how.
        guard let checks = request.runtime?.settings.requestChecks, request.method != .options,
            !Self.isLoginEndpoint(request),
            let (operation, captures) = checks.operation(for: request)
        else { return try await dispatch(request) }
        do {
            try checks.check(request, operation: operation, captures: captures)
            // With a login, a documented bearer token must be one the mock issued and valid now, not only
            // well formed: the document says a token is needed, the login says which.
            if operation.acceptsBearer, let authority = request.runtime?.settings.authority {
                try await authority.checkDocumentedBearer(request, scopes: operation.bearerScopes)
            }
            var documented = request
            documented.isDocumented = true
            return try await dispatch(documented)
        } catch let error as any HTTPProblemConvertible {
            // A store's failure keeps its problem: ProblemMiddleware logs it.
            if let failure = error as? StoreError, failure.isFailure { throw error }
            guard let answer = checks.documentedAnswer(to: error.problem, for: operation) else { throw error }
            return answer
        }
    }

    /// Whether the request is for one of the login's own endpoints, which answer as OAuth 2.0 says
    /// whatever an API document (one the mock wrote, imported again) says of the same path.
    static func isLoginEndpoint(_ request: MockRequest) -> Bool {
        guard let authority = request.runtime?.settings.authority else { return false }
        return request.path == authority.settings.tokenPath || request.path == AuthSettings.jwksPath
            || request.path == AuthSettings.discoveryPath
    }

    /// The first family whose endpoint for the path allows the method answers. A family that serves the
    /// path but not the method does not hide a later one that does: a stub for `PUT /apps/:id/commands`
    /// beside a resource's `GET` of the same path, as an imported API document makes them, answers both.
    /// Only when no family allows the method is it a 405 (or an `OPTIONS` answer) listing every method
    /// the path's endpoints allow, in the order the families were asked.
    func dispatch(_ request: MockRequest) async throws -> MockResponse {
        let families = self.families.withLock { $0 }
        let refusing: [MockEndpoint]
        switch try lookUp(request, in: families) {
        case .allowing(let endpoint): return try await answer(request, with: endpoint)
        case .refusing(let endpoints): refusing = endpoints
        }
        guard var endpoint = refusing.first else { throw notFound(request, families: families) }
        if refusing.count > 1 {
            var methods: [HTTPRequest.Method] = []
            for method in refusing.lazy.flatMap(\.methods) where !methods.contains(method) { methods.append(method) }
            endpoint.methods = methods
        }
        return try await answer(request, with: endpoint)
    }

    /// `OPTIONS`, 405, the login's access rules, then the endpoint's handler, through a fault or a
    /// request's own ask if one applies (never to the admin API's routes).
    func answer(_ request: MockRequest, with endpoint: MockEndpoint) async throws -> MockResponse {
        let route = endpoint.route ?? MatchedRoute(kind: .custom, pattern: request.path)
        request.context?.match(route)
        if request.method == .options {
            // Before the login's rules and faults: a browser's preflight carries no credentials, and a
            // failed one shows as a CORS error, not as the fault.
            if endpoint.answersOptions { return try await endpoint.handler(request) }
            return .options(allowing: endpoint.methods)
        }
        guard endpoint.methods.contains(request.method) else {
            throw HTTPProblem.methodNotAllowed(request.method, allowed: endpoint.methods)
        }
        // A body streamed for a route that no longer takes one (the routes changed since its head arrived)
        // is what it was before streaming existed: over the limit.
        if request.bodyStream != nil, !endpoint.takesStreamedBody {
            throw HTTPProblem(
                .contentTooLarge,
                detail: "The body is larger than the server's limit, and the route that answers it takes no streamed body")
        }
        // The login's rules before faults: a client without a token meets the 401 a gateway would send
        // before any backend (which faults play) is asked.
        var request = request
        if route.kind != .admin, route.kind != .auth, let authority = request.runtime?.settings.authority {
            request.ownerScope = try await authority.admit(request, route: route)
        }
        guard route.kind != .admin, let interventions, let intervention = try interventions.decide(for: request, route: route)
        else { return try await endpoint.handler(request) }
        if case .fault(let fault) = intervention.origin { request.context?.noteFault(fault) }
        return try await interventions.apply(intervention, to: request, handler: endpoint.handler)
    }

    /// The 404 for a path no family serves, naming the routes it nearly matched and why each missed: a
    /// stub whose condition failed, or a pattern one segment away (a typo of up to two characters).
    func notFound(_ request: MockRequest, families: [any MockRoutes]) -> HTTPProblem {
        var misses: [NearMiss] = []
        for case let custom as CustomRoutes in families { misses += custom.nearMisses(for: request) }
        misses += NearMiss.paths(near: request.path, in: families.flatMap(\.routeTable))
        let shown = misses.prefix(NearMiss.maximumShown).map { $0.under(basePath) }
        let path = (basePath ?? "") + request.path
        guard let first = shown.first else { return HTTPProblem.notFound("No route for '\(path)'") }
        return HTTPProblem(
            .notFound, detail: "No route for '\(path)'; nearest: \(first.route) (\(first.why))",
            extensions: ["nearMisses": .array(shown.map(\.json))])
    }
}

/// A route a request nearly matched, and why it did not: what a 404 says, as WireMock's near misses do.
struct NearMiss: Sendable, Hashable {
    /// `POST /login`, or the pattern of a route table row.
    var route: String
    /// The first difference, in words.
    var why: String

    /// The most near misses one 404 lists.
    static let maximumShown = 5
    /// Longer path segments are not compared: a typo is short, and a hostile path must not cost much.
    static let longestComparedSegment = 64

    var json: JSON { ["route": .string(route), "why": .string(why)] }

    /// The same miss with its pattern under `basePath` (`GET /people` → `GET /api/people`).
    func under(_ basePath: String?) -> NearMiss {
        guard let basePath, let space = route.firstIndex(of: " ") else { return self }
        let pattern = route[route.index(after: space)...]
        return NearMiss(route: route[..<space] + " " + (pattern == "/" ? basePath : basePath + pattern), why: why)
    }

    /// Route table rows whose pattern differs from `path` in exactly one literal segment, by at most two
    /// edits (`/peple` and `/people`), or whose pattern is `path` with a trailing segment more or less.
    static func paths(near path: String, in rows: [RouteTableEntry]) -> [NearMiss] {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard segments.allSatisfy({ $0.utf8.count <= longestComparedSegment }) else { return [] }
        var misses: [NearMiss] = []
        for row in rows {
            let pattern = row.pattern.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            guard pattern.count == segments.count, !pattern.contains("**") else { continue }
            var differing: (sent: Substring, wanted: Substring)?
            var fits = true
            for (sent, wanted) in zip(segments, pattern) where !wanted.hasPrefix(":") && wanted != "*" && sent != wanted {
                guard differing == nil, editDistance(sent, wanted, atMost: 2) != nil else {
                    fits = false
                    break
                }
                differing = (sent, wanted)
            }
            guard fits, let differing else { continue }
            let methods = row.methods.map(\.rawValue).joined(separator: ", ")
            misses.append(NearMiss(route: "\(methods) \(row.pattern)", why: "'\(differing.sent)' is not '\(differing.wanted)'"))
        }
        return misses
    }

    /// The Levenshtein distance between two short strings if it is at most `limit`, else `nil`.
    static func editDistance(_ a: Substring, _ b: Substring, atMost limit: Int) -> Int? {
        let a = Array(a.utf8)
        let b = Array(b.utf8)
        guard abs(a.count - b.count) <= limit else { return nil }
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(b.count, 1) where !b.isEmpty {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        let distance = previous[b.count]
        return distance <= limit ? distance : nil
    }
}

extension MockResponse {
    /// The router's own answer to `OPTIONS`: `204` with `Allow` listing `methods` and `OPTIONS` (the CORS
    /// step turns it into a preflight's grant).
    package static func options(allowing methods: [HTTPRequest.Method]) -> MockResponse {
        var fields = HTTPFields()
        fields[.allow] = (methods + [.options]).map(\.rawValue).joined(separator: ", ")
        return MockResponse(status: .noContent, headerFields: fields)
    }
}
