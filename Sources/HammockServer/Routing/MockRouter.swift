import Foundation
import HTTPTypes
import Synchronization

/// Maps a request's path to an endpoint by asking each family of routes in turn, and answers what is
/// the same for every route: `OPTIONS` (204 with `Allow`), a method the route does not allow (405), a
/// path no family serves (404), and a request the transport already refused.
final class MockRouter: Sendable {
    private let families: Mutex<[any MockRoutes]>

    /// The prefix every route is served under, if any.
    let basePath: String?

    init(_ families: [any MockRoutes], basePath: String? = nil) {
        self.families = Mutex(families)
        self.basePath = basePath
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

    @Sendable func respond(to request: MockRequest) async throws -> MockResponse {
        if let rejection = request.rejection { throw rejection.problem }
        guard let basePath else { return try await route(request) }
        // Under a base path: routes see the path without it, and paths in the answer get it back.
        guard request.path.hasPrefix(basePath) else {
            throw HTTPProblem.notFound("No route for '\(request.path)': every route is under \(basePath)")
        }
        var inner = request
        inner.path = String(request.path.dropFirst(basePath.count))
        guard inner.path.isEmpty || inner.path.hasPrefix("/") else {
            throw HTTPProblem.notFound("No route for '\(request.path)': every route is under \(basePath)")
        }
        if inner.path.isEmpty { inner.path = "/" }
        var response = try await route(inner)
        if let location = response.headerFields[.location], location.hasPrefix("/") {
            response.headerFields[.location] = basePath + location
        }
        if let link = response.headerFields[.link] {
            response.headerFields[.link] = link.replacingOccurrences(of: "</", with: "<" + basePath + "/")
        }
        return response
    }

    func route(_ request: MockRequest) async throws -> MockResponse {
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
