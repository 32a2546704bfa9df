import Foundation
import HammockJSON
import HammockServer
import HammockServerTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A UI test, with a child process standing in for the app: the app finds the test's server in its
/// launch environment; the test verifies what it sent through the journal and switches its data through
/// the admin API while it runs.
@Suite("A UI test's app in a separate process", .timeLimit(.minutes(1)))
struct UITestStandInTests {
    static let people = MockResource("people", fields: ["name": .string])

    /// A request to the admin API, as a UI test makes it (it has no other way into the server).
    static func admin(_ mock: TestMock, _ method: String, _ path: String) async throws -> Int {
        var request = URLRequest(url: mock.url("__hammock/" + path))
        request.httpMethod = method
        let (_, response) = try await mock.session.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    /// Sends a command and returns the app's answer line.
    static func ask(_ app: HammockProcess, _ command: String) async throws -> String? {
        try app.send(command)
        return await app.firstLine { _ in true }
    }

    @Test(
        "The app reads HAMMOCK_BASE_URL, the test verifies its requests and switches its data mid-run",
        .mockServer(.loopback, resources: [people], data: ["people": [["name": "ada"]]]))
    func standIn() async throws {
        let mock = try #require(TestMock.current)
        #expect(try await Self.admin(mock, "PUT", "snapshots/seeded") == 201)
        let app = try HammockProcess([], executable: "hammock-ui-stand-in", environment: try mock.launchEnvironment)
        #expect(try await Self.ask(app, "list") == "people: ada")
        #expect(try await Self.ask(app, "add bob") == "created 2")
        #expect(try await Self.ask(app, "list") == "people: ada, bob")
        mock.verify(RequestPattern(.post, "/people", body: ["name": "bob"]), count: .once)
        mock.verify(RequestPattern(.get, "/people"), count: .exactly(2))

        // Mid-run, through the admin API: back to the seeded data, then the list fails.
        #expect(try await Self.admin(mock, "POST", "snapshots/seeded/restore") == 204)
        #expect(try await Self.ask(app, "list") == "people: ada")
        var fault = URLRequest(url: mock.url("__hammock/faults"))
        fault.httpMethod = "PUT"
        fault.setValue("application/json", forHTTPHeaderField: "Content-Type")
        fault.httpBody = Data(#"[{"route": "GET /people", "status": 503}]"#.utf8)
        let (_, faultResponse) = try await mock.session.data(for: fault)
        #expect((faultResponse as? HTTPURLResponse)?.statusCode == 200)
        #expect(try await Self.ask(app, "list") == "status: 503")
        app.closeInput()
        #expect(await app.exitStatus() == 0)
        mock.verify(RequestPattern(.get, "/people", status: 503), count: .once)
    }

    @Test("Without HAMMOCK_BASE_URL, or with one that is not an http URL, the app says so and stops")
    func missingOrInvalid() async throws {
        let missing = try HammockProcess([], executable: "hammock-ui-stand-in", environment: ["HAMMOCK_BASE_URL_UNUSED": "1"])
        #expect(await missing.exitStatus() == 2)
        #expect(missing.errorOutput.withLock { $0 }.contains("no HAMMOCK_BASE_URL"))
        let invalid = try HammockProcess(
            [], executable: "hammock-ui-stand-in", environment: ["HAMMOCK_BASE_URL": "localhost:8080"])
        #expect(await invalid.exitStatus() == 2)
        #expect(
            invalid.errorOutput.withLock { $0 }.contains(
                "HAMMOCK_BASE_URL is 'localhost:8080': not an http or https URL with a host"))
    }
}
