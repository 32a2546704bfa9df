import HTTPTypes
import Synchronization

/// Maps a request's path to an endpoint by asking each family of routes in turn, and answers what is
/// the same for every route: `OPTIONS` (204 with `Allow`), a method the route does not allow (405), a
/// path no family serves (404), and a request the transport already refused.
final class MockRouter: Sendable {
    private let families: Mutex<[any MockRoutes]>

    init(_ families: [any MockRoutes]) {
        self.families = Mutex(families)
    }

    /// Adds a family in front of the others (`first`) or behind them.
    func add(_ family: any MockRoutes, first: Bool) {
        families.withLock { families in
            if first { families.insert(family, at: 0) } else { families.append(family) }
        }
    }

    /// Every family's rows, in the order the router asks them.
    var routeTable: [RouteTableEntry] { families.withLock { $0 }.flatMap(\.routeTable) }

    @Sendable func respond(to request: MockRequest) async throws -> MockResponse {
        if let rejection = request.rejection { throw rejection.problem }
        let families = self.families.withLock { $0 }
        var found: MockEndpoint?
        for family in families {
            if let endpoint = try family.endpoint(for: request) {
                found = endpoint
                break
            }
        }
        guard let endpoint = found else { throw HTTPProblem.notFound("No route for '\(request.path)'") }
        if request.method == .options {
            var fields = HTTPFields()
            fields[.allow] = (endpoint.methods + [.options]).map(\.rawValue).joined(separator: ", ")
            return MockResponse(status: .noContent, headerFields: fields)
        }
        guard endpoint.methods.contains(request.method) else {
            throw HTTPProblem.methodNotAllowed(request.method, allowed: endpoint.methods)
        }
        return try await endpoint.handler(request)
    }
}
