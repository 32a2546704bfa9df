public import HTTPTypes
import Synchronization

extension MockServer {
    /// Adds a route of your own, answered by `handler`, before every other route (the resources' too).
    /// Routes of your own are tried in the order they were added (stubs with a ``StubRoute/priority``
    /// other than 5 move before or after the rest).
    ///
    /// ```swift
    /// try server.route(.post, "/login") { request in
    ///     guard request.json?["password"] == "secret" else { throw HTTPProblem(.unauthorized, detail: "bad password") }
    ///     return MockResponse(json: ["token": "t-1"])
    /// }
    /// ```
    /// - Parameter description: What the route does, in a sentence, for the OpenAPI document
    ///   (`hammock openapi`, `/__hammock/openapi.json`).
    /// - Throws: ``StubError`` for a path that is not a pattern (`/users/:id/avatar` is).
    public func route(
        _ method: HTTPRequest.Method, _ path: String, description: String? = nil,
        _ handler: @escaping @Sendable (RouteRequest) async throws -> MockResponse
    ) throws(StubError) {
        let pattern: PathPattern
        do {
            pattern = try PathPattern(path)
        } catch {
            throw StubError(error.description)
        }
        let id = customRoutes.nextID()
        runtimeCell.change {
            $0.routes.append((id, .handler(method, pattern, summary: description, handler)))
            $0.routes = CustomRoutes.ordered($0.routes)
        }
    }

    /// Adds described routes (a configuration file's `routes`), after the routes of your own added so
    /// far of the same ``StubRoute/priority`` (before those of a higher number); returns the number each was added under, for ``removeRoutes(_:)``.
    @discardableResult
    public func addStubs(_ stubs: [StubRoute]) -> [Int] {
        let added = stubs.map { (id: customRoutes.nextID(), entry: CustomRoutes.Entry.stub($0)) }
        runtimeCell.change { $0.routes = CustomRoutes.ordered($0.routes + added) }
        return added.map(\.id)
    }

    /// Removes routes of your own (stubs, or closures added with ``route(_:_:_:)``) by the numbers they
    /// were added under; returns how many were removed.
    @discardableResult
    public func removeRoutes(_ ids: [Int]) -> Int {
        let ids = Set(ids)
        return runtimeCell.change { settings in
            let before = settings.routes.count
            settings.routes.removeAll { ids.contains($0.id) }
            return before - settings.routes.count
        }
    }
}

/// A route of your own as the server holds it: a stub, or a Swift closure with its description.
public struct AddedRoute: Sendable {
    /// The number it was added under (``MockServer/removeRoutes(_:)``).
    public var id: Int
    /// The method it answers (`GET` answers `HEAD` too).
    public var method: HTTPRequest.Method
    /// Its path pattern.
    public var path: PathPattern
    /// The stub, for a described route; `nil` for a Swift closure.
    public var stub: StubRoute?
    /// A Swift closure's description, if it was given one.
    public var summary: String?
}

extension MockServer {
    /// The routes of your own, in the order they are tried.
    public var addedRoutes: [AddedRoute] {
        customRoutes.entries.map { id, entry in
            switch entry {
            case .stub(let stub): AddedRoute(id: id, method: stub.method, path: stub.path, stub: stub)
            case .handler(let method, let path, let summary, _):
                AddedRoute(id: id, method: method, path: path, summary: summary)
            }
        }
    }
}
