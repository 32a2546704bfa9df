import HTTPTypes
import HammockJSON
import HammockServer
import HammockTestSupport
import Testing

/// What a request may ask for itself (`_delay`, `Prefer: delay`, `Prefer: status`), `--strict`, and the
/// one list of `_` parameters.
@Suite("Per-request overrides and _ parameters")
struct OverrideTests {
    func server(clock: ManualClock = ManualClock(), strict: Bool = false) async throws -> MockServer {
        let server = try await MockServer(
            resources: [Fixtures.people, Fixtures.cars], options: MockServer.Options(allowsOverrides: !strict), clock: clock)
        server.addStubs([try StubRoute(.get, "/health", body: ["ok": true])])
        try await server.addData(["name": "ada"], for: "people")
        return server
    }

    func request(_ method: HTTPRequest.Method, _ target: String, prefer: String? = nil) -> MockRequest {
        var fields = HTTPFields()
        if let prefer { fields[HTTPField.Name("Prefer")!] = prefer }
        return MockRequest(method, target, headerFields: fields)
    }

    @Test(
        "?_delay and Prefer: delay hold the answer on the server's clock, on resources and stubs alike",
        arguments: [
            ("/people/1?_delay=1500", nil), ("/people?_delay=1500", nil), ("/health?_delay=1500", nil),
            ("/people/1", "delay=1500"), ("/people?name=x__dela&_page=1&_delay=1500", nil),
            ("/people?name=a__delay&_delay=1500", nil),
        ])
    func delay(target: String, prefer: String?) async throws {
        let clock = ManualClock()
        let server = try await server(clock: clock)
        let answer = Task { await server.respond(to: request(.get, target, prefer: prefer)) }
        #expect(await eventually { clock.sleeperCount == 1 })
        clock.advance(by: .milliseconds(1499))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .milliseconds(1))
        let response = await answer.value
        #expect(response.status == .ok)
        #expect(response.headerFields[HTTPField.Name("Preference-Applied")!] == "delay=1500")
    }

    @Test("Prefer: status answers that status at once without running the route, so nothing changes")
    func status() async throws {
        let server = try await server()
        let refused = await server.respond(to: request(.delete, "/people/1", prefer: "status=503"))
        #expect(refused.status == .serviceUnavailable)
        #expect(refused.headerFields[.contentType] == "application/problem+json")
        #expect(refused.headerFields[HTTPField.Name("Preference-Applied")!] == "status=503")
        #expect(await server.send(.get, "/people/1").0.status == .ok)  // not deleted
        let empty = await server.respond(to: request(.post, "/people", prefer: "status=202, respond-async"))
        #expect(empty.status == .accepted && empty.body.isEmpty)
        #expect(try await server.store.count(of: #require(server.schema(named: "people"))) == 1)
        // Unknown paths stay 404: an override applies only once a route matched.
        #expect(await server.respond(to: request(.get, "/nowhere", prefer: "status=200")).status == .notFound)
        // Unknown preferences are ignored (RFC 7240).
        #expect(await server.respond(to: request(.get, "/people", prefer: "return=minimal")).status == .ok)
    }

    @Test(
        "Bad override values are 400 naming the parameter",
        arguments: [
            ("/people?_delay=soon", nil), ("/people?_delay=-1", nil), ("/people?_delay=600001", nil),
            ("/people", "delay=abc"), ("/people", "status=42"), ("/people", "status=700"),
            ("/people?_delay=9223372036854775808", nil), ("/people?_delay=", nil), ("/people", "delay="),
            ("/people", "status=-503"),
        ])
    func badValues(target: String, prefer: String?) async throws {
        let server = try await server()
        let response = await server.respond(to: request(.get, target, prefer: prefer))
        #expect(response.status == .badRequest)
        #expect(response.headerFields[.contentType] == "application/problem+json")
    }

    @Test("--strict ignores overrides")
    func strict() async throws {
        let server = try await server(strict: true)
        let response = await server.respond(to: request(.get, "/people/1?_delay=100000", prefer: "status=503"))
        #expect(response.status == .ok)
        #expect(response.headerFields[HTTPField.Name("Preference-Applied")!] == nil)
    }

    @Test(
        "One list of _ parameters: unknown ones are 400 on lists, records and stubs; known ones sent elsewhere say where they apply",
        arguments: [
            ("/people?_sortt=name", "is not an option"), ("/people/1?_sortt=name", "is not an option"),
            ("/health?_sortt=name", "is not an option"), ("/people/1?_page=2", "applies to lists, not to a record"),
            ("/health?_embed=cars", "applies to lists and records, not to a stub"),
        ])
    func underscoreParameters(target: String, message: String) async throws {
        let server = try await server()
        let (response, problem) = await server.send(.get, target)
        #expect(response.status == .badRequest)
        #expect(problem?["detail"]?.stringValue?.contains(message) == true, "\(problem?["detail"] ?? nil)")
        #expect(problem?["parameter"] != nil)
    }

    @Test("The cache-buster _ and a stub's own _ condition are accepted; a record's DELETE takes _dependent only")
    func acceptedUnderscores() async throws {
        let server = try await server()
        server.addStubs([try StubRoute(.get, "/legacy", match: StubRoute.Match(query: ["_format": "json"]), body: ["v": 1])])
        #expect(await server.send(.get, "/people/1?_=123").0.status == .ok)
        #expect(await server.send(.get, "/health?_=123").0.status == .ok)
        #expect(await server.send(.get, "/legacy?_format=json").1 == ["v": 1])
        #expect(await server.send(.delete, "/people/1?_embed=cars").0.status == .badRequest)
        #expect(await server.send(.delete, "/people/1?_dependent=cars").0.status == .noContent)
    }
}
