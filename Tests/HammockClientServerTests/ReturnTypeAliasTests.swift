import Foundation
import HammockClient
import HammockServer
import HammockTesting
import Testing

typealias People = [Person]
typealias MaybePerson = Person?
typealias PersonResponse = Response<Person>
typealias Nothing = Void
typealias Bytes = Data

/// Return types spelled through typealiases: the macro no longer reads the spelling, the overloads of
/// `RestClient.result(of:)` decide.
@API
protocol AliasedPeopleAPI: Sendable {
    @GET("/people")
    func people() async throws -> People

    @GET("/people/{id}")
    func maybe(id: Int) async throws -> MaybePerson

    @GET("/people/{id}")
    func withResponse(id: Int) async throws -> PersonResponse

    @GET("/people/{id}")
    func bytes(id: Int) async throws -> Bytes

    @DELETE("/people/{id}")
    func delete(id: Int) async throws -> Nothing

    @DELETE("/people/{id}")
    func deleteOptional(id: Int) async throws -> MaybePerson
}

@Suite("Return types behind typealiases")
struct ReturnTypeAliasTests {
    @Test("Aliases of arrays, optionals, Response, Data and Void decode as their plain spellings do")
    func aliases() async throws {
        let people = MockResource("people", fields: ["name": .string])
        let server = try await MockServer(resources: [people])
        _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": "ada"]))
        let api = AliasedPeopleAPIClient(
            client: RestClient(baseURL: try #require(URL(string: "http://mock")), transport: MockServerTransport(server: server)))

        #expect(try await api.people().map(\.name) == ["ada"])
        let response = try await api.withResponse(id: 1)
        #expect(response.status == .ok && response.value.name == "ada")
        #expect(try JSONDecoder().decode(Person.self, from: try await api.bytes(id: 1)).name == "ada")
        #expect(try await api.maybe(id: 1)?.name == "ada")
        // A 204 is nil for an optional, whichever way it is spelled, and nothing for Void.
        #expect(try await api.deleteOptional(id: 1) == nil)
        _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": "grace"]))
        try await api.delete(id: 2)
        #expect(try await api.people() == [])
    }
}
