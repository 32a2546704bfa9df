import Foundation
import HammockClient
import HammockHTTPServer
import HammockServer
import HammockTesting
import Testing

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
