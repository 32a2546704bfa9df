import Foundation
import HammockClient
import HammockHTTPServer
import HammockServer
import HammockTesting
import HammockURLSession
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The README's client example, kept compiling and true: the same declarations, against the mock server
/// on loopback through the default transport.
@Suite("README example: the declarative client", .timeLimit(.minutes(1)))
struct ReadmeClientExampleTests {
    struct Person: Codable, Equatable, Sendable {
        var id: Int? = nil
        var name: String
    }

    // From the README:
    @API
    protocol People: Sendable {
        @GET("/people/{id}")
        func person(id: Int) async throws -> Person

        @POST("/people")
        @Body("person")
        func create(person: Person) async throws -> Person
    }

    @Test("A generated client creates and reads a person")
    func declarativeClient() async throws {
        let server = try await MockServer(resources: [
            MockResource("people", fields: ["name": .string, "numberOfKids": .integer])
        ])
        try await server.whileServing { port in
            let baseURL = try #require(URL(string: "http://127.0.0.1:\(port)"))
            // From the README (the server's port instead of 8888):
            let people = PeopleClient(client: RestClient(baseURL: baseURL))
            let john = try await people.create(person: Person(name: "john"))
            // Checks:
            #expect(john.name == "john")
            let id = try #require(john.id)
            #expect(try await people.person(id: id) == john)
        }
    }
}

/// docs/testing.md's first example, kept compiling and true: the app's own URLSession code against the
/// mock in process.
@Suite("docs/testing.md example: URLSession in process")
struct TestingGuideExampleTests {
    // From docs/testing.md:
    struct Person: Decodable { var name: String }
    struct PeopleAPI {
        let session: URLSession
        let baseURL: URL
        func names() async throws -> [String] {
            let (data, _) = try await session.data(from: baseURL.appendingPathComponent("people"))
            return try JSONDecoder().decode([Person].self, from: data).map(\.name)
        }
    }

    @Test("The app's own URLSession code lists names from the mock in process")
    func listsNames() async throws {
        let people = MockResource("people", fields: ["name": .string])
        let server = try await MockServer(resources: [people])
        try await server.addData(["name": "ada"], for: "people")
        let api = PeopleAPI(session: URLSession(configuration: server.urlSessionConfiguration()), baseURL: server.inProcessURL)
        #expect(try await api.names() == ["ada"])
        try server.journal.verify(RequestPattern(.get, "/people"), count: .once)
    }
}
