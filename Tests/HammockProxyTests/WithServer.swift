import HammockServer

/// `server` for `body`, stopped after it, thrown or not: a replay's sockets and held answers end with the
/// test, however it ends.
func withServer<T>(_ server: MockServer, _ body: (MockServer) async throws -> T) async throws -> T {
    do {
        let result = try await body(server)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}
