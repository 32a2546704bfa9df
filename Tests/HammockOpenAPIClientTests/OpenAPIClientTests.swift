import Foundation
import HTTPTypes
import HammockJSON
import HammockServer
import HammockServerTesting
import OpenAPIRuntime
import OpenAPIURLSession
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// swift-openapi-generator's client for `openapi.yaml` (committed in Generated/), on
/// swift-openapi-urlsession's transport, against the mock: code no one here wrote, calling every
/// operation, in process and over loopback with the same lines.
@Suite("The OpenAPI generator's client against the mock")
struct OpenAPIClientTests {
    static let people = MockResource("people", fields: ["name": .string, "numberOfKids": .integer])

    static func client(_ mock: TestMock) -> Client {
        Client(serverURL: mock.baseURL, transport: URLSessionTransport(configuration: .init(session: mock.session)))
    }

    @Test(
        "Every operation: list with queries and X-Total-Count, create with Location, read with ETag, update, delete, 404 as problem+json",
        arguments: [TestMock.Reach.inProcess, .loopback])
    func everyOperation(reach: TestMock.Reach) async throws {
        let mock = try await TestMock.start(
            reach, resources: [Self.people],
            data: ["people": [["name": "Amy", "numberOfKids": 2], ["name": "Bea", "numberOfKids": 0], ["name": "Cal"]]])
        let client = Self.client(mock)

        let created = try await client.createPerson(body: .json(.init(name: "Dee", numberOfKids: 1))).created
        #expect(created.headers.Location == "/people/4")
        #expect(try created.body.json == .init(id: 4, name: "Dee", numberOfKids: 1))

        let page = try await client.listPeople(query: .init(_sort: "numberOfKids", _order: .desc, _page: 1, _per_page: 2)).ok
        #expect(page.headers.X_hyphen_Total_hyphen_Count == 4)
        #expect(try page.body.json.map(\.name) == ["Amy", "Dee"])
        let like = try await client.listPeople(query: .init(name_like: "E")).ok
        #expect(try like.body.json.map(\.name) == ["Bea", "Dee"])

        let read = try await client.getPerson(path: .init(id: 3)).ok
        #expect(try read.body.json == .init(id: 3, name: "Cal", numberOfKids: nil))
        #expect(read.headers.ETag?.hasPrefix("\"") == true)

        let updated = try await client.updatePerson(path: .init(id: 3), body: .json(.init(numberOfKids: 5))).ok
        #expect(try updated.body.json == .init(id: 3, name: "Cal", numberOfKids: 5))

        _ = try await client.deletePerson(path: .init(id: 3)).noContent
        let missing = try await client.getPerson(path: .init(id: 3))
        guard case .notFound(let problem) = missing else {
            Issue.record("expected a 404, got \(missing)")
            return
        }
        #expect(try problem.body.application_problem_plus_json.status == 404)
        await mock.stop()
        mock.verify(RequestPattern(.patch, "/people/3", body: ["numberOfKids": 5]), count: .once)
        mock.verify(RequestPattern(.get, "/people", query: ["_sort": "numberOfKids", "_per_page": "2"]), count: .once)
    }

    @Test(
        "Faults reach generated code as a network would show them: an undocumented 503, a connection reset",
        .mockServer(resources: [people], data: ["people": [["name": "Amy"]]]))
    func faults() async throws {
        let mock = try #require(TestMock.current)
        let client = Self.client(mock)
        mock.server.setFaults([try Fault("GET /people/:id", effect: .status(503, retryAfter: 2))])
        let answer = try await client.getPerson(path: .init(id: 1))
        guard case .undocumented(let status, _) = answer else {
            Issue.record("expected an undocumented 503, got \(answer)")
            return
        }
        #expect(status == 503)
        mock.server.setFaults([try Fault("GET /people/:id", effect: .connection(.reset))])
        let error = await #expect(throws: ClientError.self) { _ = try await client.getPerson(path: .init(id: 1)) }
        #expect((error?.underlyingError as? URLError)?.code == .networkConnectionLost)
        #expect(error?.operationID == "getPerson")
    }
}
