import HammockHTTPServer
import HammockSQLite
import HammockServer
import Testing

/// The README's Swift example, kept compiling and true.
@Suite("README example")
struct ReadmeExampleTests {
    @Test("The mock server in Swift")
    func mockServerInSwift() async throws {
        let directory = TemporaryDirectory.make()
        // From the README:
        let people = MockResource("people", fields: ["name": .string, "numberOfKids": .integer])
        let cars = MockResource("cars", fields: ["name": .string, "color": .string], parents: ["people"])

        let server = try await MockServer(resources: [people, cars], store: SQLiteStore(path: directory + "db.sqlite"))
        let port = try await server.start(port: 0)
        let reply = await server.respond(to: MockRequest(.post, "/people", json: ["name": "john"]))
        // Checks:
        #expect(reply.status == .created)
        #expect(try await LoopbackClient(port: port).send("GET", "/people/1/cars").status == 200)
        await server.stop()
    }
}
