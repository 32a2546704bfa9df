import HTTPTypes
import HammockJSON
import HammockServer
import Testing

/// A list read under an API's own names for the query language's parameters (`queryNames`): what an
/// imported document's `limit`, `offset`, `page` and `sort` become.
@Suite("Documented query names")
struct QueryNameTests {
    static func server(_ names: String) async throws -> MockServer {
        let text = """
            {"resources": [{"name": "pets", "fields": {"name": "string", "age": "integer"}, "queryNames": \(names)}],
             "data": {"pets": [{"name": "Ada", "age": 3}, {"name": "Bo", "age": 1}, {"name": "Cy", "age": 2},
                               {"name": "Di", "age": 5}, {"name": "Ed", "age": 4}]}}
            """
        return try await MockServer.inMemory(try ServerConfiguration(parsing: Array(text.utf8), file: "pets.json"))
    }

    static func names(_ response: MockResponse) throws -> [String] {
        try response.json().arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
    }

    @Test("limit, offset, sort and order are read as _limit, _start, _sort and _order; Link keeps the API's names")
    func rangeNames() async throws {
        let server = try await Self.server(#"{"limit": "_limit", "offset": "_start", "sort": "_sort", "order": "_order"}"#)
        let page = await server.respond(to: MockRequest(.get, "/pets?sort=age&order=desc&limit=2&offset=1"))
        #expect(try Self.names(page) == ["Ed", "Ada"])
        #expect(page.headerFields[.totalCount] == "5")
        let link = try #require(page.headerFields[.link])
        #expect(link.contains("</pets?sort=age&order=desc&offset=3&limit=2>; rel=\"next\""), "\(link)")
        #expect(!link.contains("_start") && !link.contains("_limit"))
        #expect(page.headerFields[.ignoredQuery] == nil)
        // The query language's own names still work.
        #expect(try Self.names(await server.respond(to: MockRequest(.get, "/pets?_sort=name&_limit=1"))) == ["Ada"])
    }

    @Test("page and per_page are read as _page and _per_page")
    func pageNames() async throws {
        let server = try await Self.server(#"{"page": "_page", "pageSize": "_per_page", "min_age": "age_gte"}"#)
        let page = await server.respond(to: MockRequest(.get, "/pets?page=2&pageSize=2&min_age=2"))
        #expect(try Self.names(page) == ["Di", "Ed"])
        #expect(page.headerFields[.link]?.contains("</pets?min_age=2&page=1&pageSize=2>; rel=\"first\"") == true)
    }

    @Test("A value the query language cannot use under an API's name is ignored and said so, not refused")
    func unusableValues() async throws {
        let server = try await Self.server(#"{"limit": "_limit", "sort": "_sort"}"#)
        let answer = await server.respond(to: MockRequest(.get, "/pets?limit=-3&sort=relevance"))
        #expect(answer.status == .ok)
        #expect(try Self.names(answer).count == 5)
        #expect(answer.headerFields[.ignoredQuery] == "limit, sort")
        // `order` without a sort to apply it to is ignored under the API's name (a 400 under `_order`).
        let aliased = try await Self.server(#"{"order": "_order"}"#)
        let unsorted = await aliased.respond(to: MockRequest(.get, "/pets?order=desc"))
        #expect(unsorted.status == .ok)
        #expect(unsorted.headerFields[.ignoredQuery] == "order")
        #expect(await aliased.respond(to: MockRequest(.get, "/pets?_order=desc")).status == .badRequest)
        // Under the query language's own name the same value is still a 400.
        #expect(await server.respond(to: MockRequest(.get, "/pets?_limit=-3")).status == .badRequest)
    }

    @Test("A name standing for no list parameter is refused where it is written")
    func mistakes() {
        for target in ["_nope", "colour", "age_between"] {
            let text = #"{"resources": [{"name": "pets", "fields": {"age": "integer"}, "queryNames": {"x": "\#(target)"}}]}"#
            let error = #expect(throws: ConfigurationError.self) {
                try ServerConfiguration(parsing: Array(text.utf8), file: "bad.json")
            }
            #expect(error?.keyPath == "resources[0].queryNames.x", "\(target)")
        }
    }
}
