import Foundation
import HammockClient
import HammockHTTPServer
import HammockServer
import Testing

/// The list queries of the mock server, called through a generated client over loopback.
@API
@ErrorBody(Problem.self)
protocol PeopleQueryAPI: Sendable {
    @GET("/people")
    func people(
        numberOfKids_gte: Int?, q: String?, _sort: String?, _page: Int?, _per_page: Int?
    ) async throws -> Response<[Person]>

    @GET("/people")
    func named(name: [String]) async throws -> [Person]
}

@Suite("Queries through a generated client")
struct QueryClientTests {
    @Test("Filters, search, order and pages over loopback, with the total and links in the response")
    func queries() async throws {
        let people = MockResource("people", fields: ["name": .string, "numberOfKids": .integer])
        let server = try await MockServer(resources: [people])
        for (name, kids) in [("amy", 2), ("bob", 0), ("amanda", 3), ("carl", 1), ("dora", 2)] {
            _ = await server.respond(
                to: MockRequest(.post, "/people", json: ["name": .string(name), "numberOfKids": .integer(kids)]))
        }
        try await server.whileServing { port in
            let api = PeopleQueryAPIClient(client: RestClient(baseURL: try #require(URL(string: "http://127.0.0.1:\(port)"))))
            let page = try await api.people(numberOfKids_gte: 1, q: nil, _sort: "-numberOfKids,name", _page: 1, _per_page: 2)
            #expect(page.value.map(\.name) == ["amanda", "amy"])
            #expect(page.headerFields[HTTPField.Name("X-Total-Count")!] == "4")
            #expect(page.headerFields[HTTPField.Name("Link")!]?.contains("_page=2&_per_page=2>; rel=\"next\"") == true)
            let all = try await api.people(numberOfKids_gte: nil, q: "AM", _sort: nil, _page: nil, _per_page: nil)
            #expect(all.value.map(\.name) == ["amy", "amanda"])
            #expect(all.headerFields[HTTPField.Name("X-Total-Count")!] == nil)
            #expect(try await api.named(name: ["bob", "dora"]).map(\.id) == [2, 5])
            let error = try await #require(throws: RestError.self) {
                _ = try await api.people(numberOfKids_gte: nil, q: nil, _sort: "height", _page: nil, _per_page: nil)
            }
            #expect(error.status == .badRequest)
            #expect(error.errorBody(as: Problem.self)?.detail?.contains("'_sort'") == true)
        }
    }
}
