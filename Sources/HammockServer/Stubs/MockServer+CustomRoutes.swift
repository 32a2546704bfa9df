public import HTTPTypes

extension MockServer {
    /// Adds a route of your own, answered by `handler`, before every other route (the resources' too).
    /// Routes of your own are tried in the order they were added.
    ///
    /// ```swift
    /// try server.route(.post, "/login") { request in
    ///     guard request.json?["password"] == "secret" else { throw HTTPProblem(.unauthorized, detail: "bad password") }
    ///     return MockResponse(json: ["token": "t-1"])
    /// }
    /// ```
    /// - Throws: ``StubError`` for a path that is not a pattern (`/users/:id/avatar` is).
    public func route(
        _ method: HTTPRequest.Method, _ path: String,
        _ handler: @escaping @Sendable (RouteRequest) async throws -> MockResponse
    ) throws(StubError) {
        let pattern: PathPattern
        do {
            pattern = try PathPattern(path)
        } catch {
            throw StubError(error.description)
        }
        customRoutes.add(.handler(method, pattern, handler))
    }

    /// Adds described routes (a configuration file's `routes`), after the routes of your own added so
    /// far; returns the number each was added under, for ``removeRoutes(_:)``.
    @discardableResult
    public func addStubs(_ stubs: [StubRoute]) -> [Int] {
        stubs.map { customRoutes.add(.stub($0)) }
    }

    /// Removes routes of your own (stubs, or closures added with ``route(_:_:_:)``) by the numbers they
    /// were added under; returns how many were removed.
    @discardableResult
    public func removeRoutes(_ ids: [Int]) -> Int { customRoutes.remove(Set(ids)) }
}
