import HTTPTypes
import HammockJSON
import HammockServer
import Testing

/// The admin API as a family of routes (issue 40): the one router answers `OPTIONS`, 405 and `HEAD`
/// for its rows, whoever added them, and the steps made for the API's routes (journal, latency, faults,
/// overrides, CORS, your middleware) never see them.
@Suite("Admin API as a family of routes")
struct AdminRouteFamilyTests {
    @Test("An endpoint another module adds gets OPTIONS, 405, HEAD and the token like the engine's own")
    func addedEndpointIsAnOrdinaryRow() async throws {
        let server = try await MockServer(options: MockServer.Options(adminToken: "t0ken"))
        let added = server.addAdminEndpoint("status") { _ in MockResponse(json: ["up": true]) }
        #expect(added)
        // A second row with the same pattern, or one of the engine's names, is refused.
        #expect(!server.addAdminEndpoint("status") { _ in MockResponse(status: .noContent) })
        #expect(!server.addAdminEndpoint("version") { _ in MockResponse(status: .noContent) })
        #expect(!server.addAdminEndpoint(":name") { _ in MockResponse(status: .noContent) })

        let authorized: HTTPFields = [.authorization: "Bearer t0ken"]
        let options = await server.respond(to: MockRequest(.options, "/__hammock/status"))
        #expect(options.status == .noContent)
        #expect(options.headerFields[.allow] == "GET, HEAD, OPTIONS")
        #expect(options.headerFields[.accessControlAllowOrigin] == nil)

        let post = await server.respond(to: MockRequest(.post, "/__hammock/status", headerFields: authorized))
        #expect(post.status == .methodNotAllowed)
        #expect(post.headerFields[.allow] == "GET, HEAD")

        let get = await server.respond(to: MockRequest(.get, "/__hammock/status", headerFields: authorized))
        #expect(try JSON(parsing: get.body) == ["up": true])
        let head = await server.respond(to: MockRequest(.head, "/__hammock/status", headerFields: authorized))
        #expect(head.status == .ok && head.body.isEmpty)
        #expect(head.headerFields[.contentLength] == String(get.body.count))

        #expect(await server.respond(to: MockRequest(.get, "/__hammock/status")).status == .unauthorized)
        // The index lists it after the engine's own rows.
        let index = try JSON(parsing: await server.respond(to: MockRequest(.get, "/__hammock", headerFields: authorized)).body)
        let paths = index["endpoints"]?.arrayValue?.compactMap { $0["path"]?.stringValue } ?? []
        #expect(paths.first == "/__hammock/version" && paths.last == "/__hammock/status")
    }

    @Test("Faults, per-request overrides, CORS, the journal and your middleware skip the admin API's routes")
    func apiStepsSkipAdminRoutes() async throws {
        let inner = Shared<[String]>([])
        let outer = Shared<[String]>([])
        let server = try await MockServer(
            resources: [MockResource("people", fields: ["name": .string])],
            middleware: [PipelineTests.Recording(seen: inner)], outerMiddleware: [PipelineTests.Recording(seen: outer)])
        server.setFaults([try Fault("*", effect: .status(503))])

        // A fault on every route answers the API's, not the admin API's.
        #expect(await server.respond(to: MockRequest(.get, "/people")).status == .serviceUnavailable)
        let version = await server.respond(to: MockRequest(.get, "/__hammock/version"))
        #expect(version.status == .ok)
        #expect(version.headerFields[.accessControlAllowOrigin] == nil)
        #expect(version.headerFields[.eTag] == nil)

        // Asking for a status is an override the admin API does not take.
        server.setFaults([])
        let asked = await server.respond(
            to: MockRequest(.get, "/__hammock/version", headerFields: [HTTPField.Name("Prefer")!: "status=418"]))
        #expect(asked.status == .ok)

        #expect(inner.withLock { $0 } == ["GET /people"])
        #expect(outer.withLock { $0 } == ["GET /people"])
        #expect(server.journal.entries.map(\.request.path) == ["/people"])
    }

    @Test("Under a base path the admin API stays at its own prefix, and its 404 names no route of the API")
    func outsideTheBasePath() async throws {
        let server = try await MockServer(
            resources: [MockResource("people", fields: ["name": .string])], options: MockServer.Options(basePath: "/api"))
        #expect(await server.respond(to: MockRequest(.get, "/__hammock/version")).status == .ok)
        #expect(await server.respond(to: MockRequest(.get, "/api/__hammock/version")).status == .notFound)
        let unknown = await server.respond(to: MockRequest(.get, "/__hammock/peple"))
        #expect(unknown.status == .notFound)
        let problem = try JSON(parsing: unknown.body)
        #expect(problem["detail"]?.stringValue?.contains("No admin endpoint") == true)
        #expect(problem["nearMisses"] == nil)
        // The route table is the API's; the admin API lists its own rows at its index.
        #expect(!server.routeTable.contains { $0.pattern.hasPrefix("/__hammock") })
    }

    @Test("Clients adding faults at once cannot pass the admin API's limit together: the count and the add are one step")
    func faultLimitHoldsUnderConcurrentAdds() async throws {
        let server = try await MockServer()
        server.setFaults(try (0..<998).map { try Fault("/f\($0)", effect: .status(503)) })
        let statuses = await withTaskGroup(of: HTTPResponse.Status.self) { group in
            for index in 0..<10 {
                group.addTask {
                    let body: JSON = ["route": .string("/new\(index)"), "status": 503]
                    return await server.respond(to: MockRequest(.post, "/__hammock/faults", json: body)).status
                }
            }
            var statuses: [HTTPResponse.Status] = []
            for await status in group { statuses.append(status) }
            return statuses
        }
        #expect(statuses.filter { $0 == .created }.count == 2)
        #expect(statuses.filter { $0 == .conflict }.count == 8)
        #expect(server.faultsInForce.count == 1_000)
    }

    /// Rewrites every path to the admin API's journal, as a careless middleware might.
    struct RewriteToAdmin: MockMiddleware {
        func handle(_ request: MockRequest, next: (MockRequest) async throws -> MockResponse) async throws -> MockResponse {
            var request = request
            request.path = "/__hammock/requests"
            return try await next(request)
        }
    }

    @Test("A middleware of yours that rewrites a path under the admin prefix does not reach the admin API past its guard")
    func rewrittenPathsStayOutOfTheAdminAPI() async throws {
        let server = try await MockServer(
            options: MockServer.Options(adminToken: "t0ken"), middleware: [RewriteToAdmin()])
        let response = await server.respond(to: MockRequest(.get, "/anything"))
        #expect(response.status == .notFound)
        #expect(await server.respond(to: MockRequest(.get, "/__hammock/requests")).status == .unauthorized)
    }
}
