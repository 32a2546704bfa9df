public import HammockServer

extension MockServer {
    /// Serves on a free loopback port for the duration of `body`, and stops, whether `body` returns or
    /// throws: a test that fails leaves no server behind.
    ///
    /// ```swift
    /// try await server.whileServing { port in
    ///     let client = RestClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!)
    ///     …
    /// }
    /// ```
    nonisolated(nonsending) public func whileServing<T>(
        limits: ConnectionLimits = ConnectionLimits(), _ body: (_ port: Int) async throws -> T
    ) async throws -> T {
        let port = try await start(host: "127.0.0.1", port: 0, limits: limits)
        do {
            let result = try await body(port)
            await stop()
            return result
        } catch {
            await stop()
            throw error
        }
    }
}
