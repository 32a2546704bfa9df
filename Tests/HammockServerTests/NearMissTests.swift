import HTTPTypes
import HammockJSON
import HammockServer
import HammockTestSupport
import Testing

/// A request no route serves gets a 404 that names the routes it nearly matched and the first
/// difference from each (WireMock's near misses): a stub whose condition failed, a path one typo away.
@Suite("Near misses in a 404")
struct NearMissTests {
    func server(basePath: String? = nil) async throws -> MockServer {
        let options = MockServer.Options(basePath: basePath)
        let server = try await MockServer(
            resources: [MockResource("people", fields: ["name": .string])], options: options)
        server.addStubs([
            try StubRoute(
                .post, "/login", match: StubRoute.Match(headers: ["X-Env": "test"], body: ["password": "secret"]),
                body: ["token": "t"]),
            try StubRoute(.get, "/reports/:id", match: StubRoute.Match(query: ["format": "pdf"]), body: ["ok": true]),
        ])
        return server
    }

    func nearMisses(_ response: MockResponse) throws -> [JSON] {
        #expect(response.status == .notFound)
        #expect(response.headerFields[.contentType] == "application/problem+json")
        guard case .array(let misses)? = try response.json()["nearMisses"] else { return [] }
        return misses
    }

    @Test(
        "A stub whose condition failed is named with the first difference",
        arguments: [
            (
                MockRequest(.post, "/login", json: ["password": "secret"]), "POST /login",
                "header 'X-Env' is missing (wanted 'test')"
            ),
            (
                MockRequest(.post, "/login", headerFields: [HTTPField.Name("X-Env")!: "prod"], json: ["password": "secret"]),
                "POST /login", "header 'X-Env' is 'prod', not 'test'"
            ),
            (
                MockRequest(.post, "/login", headerFields: [HTTPField.Name("X-Env")!: "test"], json: ["password": "guess"]),
                "POST /login", #"body member 'password' is "guess", not "secret""#
            ),
            (MockRequest(.get, "/reports/7?format=csv"), "GET /reports/:id", "query parameter 'format' is 'csv', not 'pdf'"),
        ])
    func stubConditions(request: MockRequest, route: String, why: String) async throws {
        let server = try await server()
        let misses = try nearMisses(await server.respond(to: request))
        #expect(misses.first == ["route": .string(route), "why": .string(why)])
    }

    @Test("A path one typo from a route names it; a path far from every route gets a plain 404")
    func pathTypos() async throws {
        let server = try await server()
        let typo = try nearMisses(await server.respond(to: MockRequest(.get, "/peple/1")))
        #expect(typo.first?["why"] == "'peple' is not 'people'")
        #expect(typo.first?["route"]?.stringValue?.hasSuffix(" /people/:id") == true)
        let far = await server.respond(to: MockRequest(.get, "/invoices"))
        #expect(far.status == .notFound)
        #expect(try far.json()["nearMisses"] == nil)
        #expect(try far.json()["detail"] == "No route for '/invoices'")
    }

    @Test("Under a base path, near misses carry it")
    func basePath() async throws {
        let server = try await server(basePath: "/api")
        let misses = try nearMisses(await server.respond(to: MockRequest(.post, "/api/login", json: ["password": "secret"])))
        #expect(misses.first?["route"] == "POST /api/login")
    }

    @Test("A hostile path (segments of 10,000 characters, thousands of segments) gets its 404 without comparing them")
    func hostilePaths() async throws {
        let server = try await server()
        let long = await server.respond(to: MockRequest(.get, "/" + String(repeating: "p", count: 10_000)))
        #expect(long.status == .notFound)
        let many = await server.respond(to: MockRequest(.get, String(repeating: "/people", count: 3_000)))
        #expect(many.status == .notFound)
    }

    @Test("Requests that match still answer as before")
    func matches() async throws {
        let server = try await server()
        let login = await server.respond(
            to: MockRequest(.post, "/login", headerFields: [HTTPField.Name("X-Env")!: "test"], json: ["password": "secret"]))
        #expect(login.status == .ok)
        #expect(await server.respond(to: MockRequest(.get, "/people")).status == .ok)
    }
}
