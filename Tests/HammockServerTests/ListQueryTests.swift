import HTTPTypes
import HammockHTTPServer
import HammockJSON
import HammockServer
import HammockTestSupport
import Testing

/// Filters, search, order and pages on list routes, on both stores.
@Suite("List queries")
struct ListQueryTests {
    /// Six people and some cars; ids 1...6 in this order.
    static func seeded(_ kind: StoreKind) async throws -> MockServer {
        let server = try await Fixtures.server(kind)
        let people: [JSON] = [
            ["name": "Amy", "numberOfKids": 2, "kilometersWalked": 1.5],
            ["name": "bob", "numberOfKids": 0, "kilometersWalked": 10],
            ["name": "Amanda", "numberOfKids": 2, "kilometersWalked": nil],
            ["name": "carl", "numberOfKids": 3, "kilometersWalked": 7.25],
            ["name": "dora", "numberOfKids": nil, "kilometersWalked": 2],
            ["name": "amy", "numberOfKids": 1, "kilometersWalked": 1.5],
        ]
        for person in people { #expect(await server.send(.post, "/people", json: person).0.status == .created) }
        let cars: [JSON] = [
            ["name": "mini", "color": "red", "person_id": 1], ["name": "beetle", "color": "blue", "person_id": 1],
            ["name": "golf", "color": "red", "person_id": 1], ["name": "panda", "color": "red", "person_id": 2],
        ]
        for car in cars { #expect(await server.send(.post, "/cars", json: car).0.status == .created) }
        return server
    }

    /// The ids of the records a list answered, in order.
    static func ids(_ server: MockServer, _ target: String) async -> [Int] {
        let (response, body) = await server.send(.get, target)
        #expect(response.status == .ok, "\(target): \(String(decoding: response.body, as: UTF8.self))")
        return body?.arrayValue?.compactMap { $0["id"]?.intValue } ?? []
    }

    @Test("Filters match values typed by their field: integers, numbers, strings and null", arguments: StoreKind.allCases)
    func typedFilters(kind: StoreKind) async throws {
        let server = try await Self.seeded(kind)
        #expect(await Self.ids(server, "/people?numberOfKids=2") == [1, 3])
        #expect(await Self.ids(server, "/people?kilometersWalked=1.5") == [1, 6])
        #expect(await Self.ids(server, "/people?kilometersWalked=10") == [2])
        #expect(await Self.ids(server, "/people?name=amy") == [6])
        #expect(await Self.ids(server, "/people?numberOfKids=null") == [5])
        #expect(await Self.ids(server, "/people?id=4") == [4])
        #expect(await Self.ids(server, "/cars?person_id=1") == [1, 2, 3])
    }

    @Test("Booleans, dates and string keys filter too", arguments: StoreKind.allCases)
    func otherTypes(kind: StoreKind) async throws {
        let server = try await Fixtures.server(kind, resources: [Fixtures.categories, Fixtures.products])
        _ = await server.send(.post, "/categories", json: ["slug": "tools", "title": "Tools"])
        _ = await server.send(.post, "/categories", json: ["slug": "toys", "title": "Toys"])
        let products: [JSON] = [
            ["name": "saw", "inStock": true, "releasedOn": "2024-03-01", "category_id": "tools"],
            ["name": "drill", "inStock": false, "releasedOn": "2025-01-15", "category_id": "tools"],
            ["name": "ball", "inStock": true, "releasedOn": "2023-07-30", "category_id": "toys"],
        ]
        for product in products { #expect(await server.send(.post, "/products", json: product).0.status == .created) }
        #expect(await Self.ids(server, "/products?inStock=true") == [1, 3])
        #expect(await Self.ids(server, "/products?inStock=false") == [2])
        #expect(await Self.ids(server, "/products?releasedOn_gte=2024-01-01") == [1, 2])
        #expect(await Self.ids(server, "/products?category_id=toys") == [3])
        #expect(await Self.ids(server, "/categories/tools/products?inStock=true") == [1])
        let (_, slugs) = await server.send(.get, "/categories?slug_ne=tools")
        #expect(slugs == [["slug": "toys", "title": "Toys"]])
    }

    @Test("A repeated parameter is an alternative; different fields must all match", arguments: StoreKind.allCases)
    func alternatives(kind: StoreKind) async throws {
        let server = try await Self.seeded(kind)
        #expect(await Self.ids(server, "/cars?color=red&color=blue") == [1, 2, 3, 4])
        #expect(await Self.ids(server, "/people?numberOfKids=0&numberOfKids=3") == [2, 4])
        #expect(await Self.ids(server, "/cars?color=red&person_id=1") == [1, 3])
        #expect(await Self.ids(server, "/cars?color_ne=red&color_ne=blue").isEmpty)
    }

    @Test("Operators compare, exclude, match text and test for null", arguments: StoreKind.allCases)
    func operators(kind: StoreKind) async throws {
        let server = try await Self.seeded(kind)
        #expect(await Self.ids(server, "/people?numberOfKids_gt=1") == [1, 3, 4])
        #expect(await Self.ids(server, "/people?numberOfKids_gte=1&numberOfKids_lt=3") == [1, 3, 6])
        #expect(await Self.ids(server, "/people?kilometersWalked_lte=2") == [1, 5, 6])
        #expect(await Self.ids(server, "/people?numberOfKids_ne=2") == [2, 4, 5, 6])
        #expect(await Self.ids(server, "/people?name_ne=null") == [1, 2, 3, 4, 5, 6])
        #expect(await Self.ids(server, "/people?name_gt=carl") == [5])
        // `_like`: a substring ignoring case, or a whole-value pattern where % is any run.
        #expect(await Self.ids(server, "/people?name_like=AM") == [1, 3, 6])
        #expect(await Self.ids(server, "/people?name_like=a%25a") == [3])
        #expect(await Self.ids(server, "/people?name_like=%25y") == [1, 6])
        #expect(await Self.ids(server, "/people?name_like=b%25&name_like=c%25") == [2, 4])
        #expect(await Self.ids(server, "/people?kilometersWalked_null=true") == [3])
        #expect(await Self.ids(server, "/people?numberOfKids_null=false&kilometersWalked_null=false") == [1, 2, 4, 6])
    }

    @Test("q finds the text in any string field, ignoring case", arguments: StoreKind.allCases)
    func search(kind: StoreKind) async throws {
        let server = try await Self.seeded(kind)
        #expect(await Self.ids(server, "/people?q=AMY") == [1, 6])
        #expect(await Self.ids(server, "/people?q=a") == [1, 3, 4, 5, 6])
        #expect(await Self.ids(server, "/cars?q=BEE") == [2])
        #expect(await Self.ids(server, "/cars?q=e") == [1, 2, 3, 4])
        #expect(await Self.ids(server, "/people?q=zzz").isEmpty)
        #expect(await Self.ids(server, "/people?q=am&numberOfKids=2") == [1, 3])
    }

    @Test("_sort orders by several keys, - for descending, null first; the key breaks ties", arguments: StoreKind.allCases)
    func sorting(kind: StoreKind) async throws {
        let server = try await Self.seeded(kind)
        #expect(await Self.ids(server, "/people?_sort=numberOfKids") == [5, 2, 6, 1, 3, 4])
        #expect(await Self.ids(server, "/people?_sort=-numberOfKids") == [4, 1, 3, 6, 2, 5])
        #expect(await Self.ids(server, "/people?_sort=-numberOfKids,name") == [4, 3, 1, 6, 2, 5])
        #expect(await Self.ids(server, "/people?_sort=kilometersWalked,-id") == [3, 6, 1, 5, 4, 2])
        // Strings by their bytes: capitals before lowercase.
        #expect(await Self.ids(server, "/people?_sort=name") == [3, 1, 6, 2, 4, 5])
        #expect(await Self.ids(server, "/people?_sort=name&_order=desc") == [5, 4, 2, 6, 1, 3])
        #expect(await Self.ids(server, "/people?_sort=numberOfKids,name&_order=desc,asc") == [4, 3, 1, 6, 2, 5])
    }

    @Test(
        "Pages carry the total and links that keep the other parameters; the body stays an array", arguments: StoreKind.allCases)
    func pages(kind: StoreKind) async throws {
        let server = try await Self.seeded(kind)
        let (response, body) = await server.send(.get, "/people?name_like=a&_page=2&_per_page=2&_sort=name")
        #expect(response.status == .ok)
        // Matching, by name: Amanda (3), Amy (1), amy (6), carl (4), dora (5).
        #expect(body?.arrayValue?.compactMap { $0["id"]?.intValue } == [6, 4])
        #expect(response.headerFields[.totalCount] == "5")
        #expect(
            response.headerFields[.link]
                == [
                    #"</people?name_like=a&_sort=name&_page=1&_per_page=2>; rel="first""#,
                    #"</people?name_like=a&_sort=name&_page=1&_per_page=2>; rel="prev""#,
                    #"</people?name_like=a&_sort=name&_page=3&_per_page=2>; rel="next""#,
                    #"</people?name_like=a&_sort=name&_page=3&_per_page=2>; rel="last""#,
                ].joined(separator: ", "))
        // Ten per page by default; a page past the end is empty, with links back.
        #expect(await Self.ids(server, "/people?_page=1") == [1, 2, 3, 4, 5, 6])
        let (past, pastBody) = await server.send(.get, "/people?_page=9&_per_page=4")
        #expect(pastBody == [] && past.headerFields[.totalCount] == "6")
        #expect(past.headerFields[.link]?.contains(#"_page=2&_per_page=4>; rel="prev""#) == true)
        #expect(past.headerFields[.link]?.contains(#"rel="next""#) == false)
        // A whole list has no paging headers.
        #expect(await server.send(.get, "/people").0.headerFields[.totalCount] == nil)
    }

    @Test("_start with _end or _limit cuts a range, and links keep the form used", arguments: StoreKind.allCases)
    func ranges(kind: StoreKind) async throws {
        let server = try await Self.seeded(kind)
        #expect(await Self.ids(server, "/people?_start=1&_end=3") == [2, 3])
        #expect(await Self.ids(server, "/people?_start=4&_limit=10") == [5, 6])
        #expect(await Self.ids(server, "/people?_limit=2") == [1, 2])
        #expect(await Self.ids(server, "/people?_start=6").isEmpty)
        let (response, _) = await server.send(.get, "/people?_start=2&_limit=2")
        #expect(response.headerFields[.totalCount] == "6")
        #expect(
            response.headerFields[.link]
                == [
                    #"</people?_start=0&_limit=2>; rel="first""#, #"</people?_start=0&_limit=2>; rel="prev""#,
                    #"</people?_start=4&_limit=2>; rel="next""#, #"</people?_start=4&_limit=2>; rel="last""#,
                ].joined(separator: ", "))
        let (ended, _) = await server.send(.get, "/people?_start=0&_end=4")
        #expect(ended.headerFields[.link]?.hasPrefix(#"</people?_start=0&_end=4>; rel="first""#) == true)
    }

    @Test("Nested lists take the same queries", arguments: StoreKind.allCases)
    func nested(kind: StoreKind) async throws {
        let server = try await Self.seeded(kind)
        #expect(await Self.ids(server, "/people/1/cars?color=red") == [1, 3])
        #expect(await Self.ids(server, "/people/1/cars?_sort=name&_page=1&_per_page=2") == [2, 3])
        let (response, _) = await server.send(.get, "/people/1/cars?_per_page=1")
        #expect(response.headerFields[.link]?.contains("</people/1/cars?_page=3&_per_page=1>; rel=\"last\"") == true)
        #expect(await server.send(.get, "/people/99/cars?color=red").0.status == .notFound)
    }

    @Test(
        "A bad query is a 400 problem naming the parameter",
        arguments: [
            ("/people?numberOfKids=two", "numberOfKids"),
            ("/people?kilometersWalked_gt=far", "kilometersWalked_gt"),
            ("/people?numberOfKids_between=1", "numberOfKids_between"),
            ("/people?_sort=height", "_sort"),
            ("/people?_sort=name,", "_sort"),
            ("/people?_page=0", "_page"),
            ("/people?_per_page=-1", "_per_page"),
            ("/people?_page=1&_start=2", "_page"),
            ("/people?_start=5&_end=2", "_end"),
            ("/people?_limit=2&_end=2", "_limit"),
            ("/people?_order=desc", "_order"),
            ("/people?_sort=name&_order=up", "_order"),
            ("/people?_embedded=cars", "_embedded"),
            ("/people?avatar_gt=AAAA", "avatar_gt"),
            ("/people?numberOfKids_like=2", "numberOfKids_like"),
            ("/people?name_null=maybe", "name_null"),
            ("/people?q=a&q=b", "q"),
            ("/people?name=%ZZ", "name"),
            ("/people/1/cars?color_gte=", "color_gte"),
        ])
    func badQueries(target: String, parameter: String) async throws {
        let server = try await Self.seeded(.memory)
        let (response, problem) = await server.send(.get, target)
        if target.hasSuffix("color_gte=") {
            // An empty bound is a string like any other on a string field: no error.
            #expect(response.status == .ok)
            return
        }
        #expect(response.status == .badRequest)
        #expect(response.headerFields[.contentType] == "application/problem+json")
        #expect(problem?["parameter"] == .string(parameter))
        #expect(problem?["detail"]?.stringValue?.contains("'\(parameter)'") == true)
    }

    @Test("An unknown sort field's problem lists the fields that exist")
    func unknownFieldListsFields() async throws {
        let server = try await Self.seeded(.memory)
        let (_, problem) = await server.send(.get, "/people?_sort=height")
        #expect(problem?["fields"] == ["id", "name", "numberOfKids", "kilometersWalked", "avatar"])
    }

    @Test("Parameters that name no field are ignored, and a header lists them", arguments: StoreKind.allCases)
    func ignoredParameters(kind: StoreKind) async throws {
        let server = try await Self.seeded(kind)
        let (response, body) = await server.send(.get, "/people?apiKey=secret&_=1712345&numberOfKids=0")
        #expect(body?.arrayValue?.count == 1)
        #expect(response.headerFields[.ignoredQuery] == "apiKey, _")
        let (plain, all) = await server.send(.get, "/people?v=2")
        #expect(all?.arrayValue?.count == 6 && plain.headerFields[.ignoredQuery] == "v")
    }

    @Test("Form-encoded values decode: + is a space, %2B a plus")
    func formEncoding() async throws {
        let server = try await Fixtures.server()
        _ = await server.send(.post, "/people", json: ["name": "amy smith"])
        _ = await server.send(.post, "/people", json: ["name": "c+d"])
        #expect(await Self.ids(server, "/people?name=amy+smith") == [1])
        #expect(await Self.ids(server, "/people?name=c%2Bd") == [2])
    }

    @Test("_embed adds each record's children, _expand each child's parent, on lists and records", arguments: StoreKind.allCases)
    func embedAndExpand(kind: StoreKind) async throws {
        let server = try await Self.seeded(kind)
        _ = await server.send(.post, "/cars", json: ["name": "orphan"])
        let (_, people) = await server.send(.get, "/people?_embed=cars&_page=1&_per_page=2")
        #expect(people?[0]?["cars"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["mini", "beetle", "golf"])
        #expect(people?[1]?["cars"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["panda"])
        #expect(people?[0]?.objectValue?.keys == ["id", "name", "numberOfKids", "kilometersWalked", "avatar", "cars"])
        let (_, one) = await server.send(.get, "/people/3?_embed=cars")
        #expect(one?["cars"] == [] && one?["name"] == "Amanda")
        let (_, cars) = await server.send(.get, "/cars?_expand=person&_sort=-id")
        #expect(cars?[0]?["name"] == "orphan" && cars?[0]?["person"] == .null)
        #expect(cars?[1]?["person"]?["name"] == "bob")
        let (_, car) = await server.send(.get, "/cars/2?_expand=people")
        #expect(car?["people"]?["name"] == "Amy")
        #expect(await server.send(.get, "/people/1/cars?_expand=person").1?[0]?["person"]?["id"] == 1)
        // Unknown relations are 400s that list what may be named; nothing is answered half-done.
        let (bad, problem) = await server.send(.get, "/people?_embed=houses")
        #expect(bad.status == .badRequest && problem?["parameter"] == "_embed" && problem?["resources"] == ["cars"])
        let (badExpand, expandProblem) = await server.send(.get, "/people/1?_expand=cars")
        #expect(badExpand.status == .badRequest && expandProblem?["resources"] == [])
        #expect(await server.send(.get, "/cars?_embed=").0.status == .badRequest)
        #expect(await server.send(.get, "/people/99?_embed=cars").0.status == .notFound)
    }

    @Test("DELETE with _dependent deletes the children; without it they stay, their key nulled", arguments: StoreKind.allCases)
    func dependentDelete(kind: StoreKind) async throws {
        let server = try await Self.seeded(kind)
        #expect(await server.send(.delete, "/people/1?_dependent=cars").0.status == .noContent)
        #expect(await Self.ids(server, "/cars") == [4])
        #expect(await server.send(.delete, "/people/2").0.status == .noContent)
        #expect(await server.send(.get, "/cars/4").1?["person_id"] == .null)
    }

    @Test("A bad or pointless _dependent deletes nothing", arguments: StoreKind.allCases)
    func dependentRefusals(kind: StoreKind) async throws {
        let server = try await Self.seeded(kind)
        let (bad, problem) = await server.send(.delete, "/people/1?_dependent=houses")
        #expect(bad.status == .badRequest && problem?["parameter"] == "_dependent" && problem?["resources"] == ["cars"])
        #expect(await server.send(.delete, "/people/99?_dependent=cars").0.status == .notFound)
        #expect(await Self.ids(server, "/cars") == [1, 2, 3, 4])
        #expect(await server.send(.get, "/people/1").0.status == .ok)
        // `_dependent` only means something on DELETE; on a list it is an unknown option.
        #expect(await server.send(.get, "/people?_dependent=cars").0.status == .badRequest)
    }

    @Test("Over HTTP, a paged query answers with headers a browser script may read")
    func overLoopback() async throws {
        let server = try await Self.seeded(.sqlite)
        // whileServing stops the server however the body ends.
        try await server.whileServing { port in
            let client = LoopbackClient(port: port)
            let reply = try await client.send("GET", "/people?numberOfKids_gte=1&_sort=-numberOfKids&_per_page=2")
            #expect(reply.status == 200)
            #expect(reply.json?.arrayValue?.compactMap { $0["id"]?.intValue } == [4, 1])
            #expect(reply.header("X-Total-Count") == "4")
            #expect(
                reply.header("Link")?.contains(
                    #"</people?numberOfKids_gte=1&_sort=-numberOfKids&_page=2&_per_page=2>; rel="next""#) == true)
            #expect(reply.header("Access-Control-Expose-Headers")?.contains("X-Total-Count") == true)
            let bad = try await client.send("GET", "/people?numberOfKids=two")
            #expect(bad.status == 400 && bad.json?["parameter"] == "numberOfKids")
        }
    }
}

/// Lists paged by an opaque cursor, as APIs that hand out a token for the next page do.
@Suite("Cursor pages")
struct CursorPageTests {
    /// Follows `X-Next-Cursor` from an empty cursor to the last page: the ids of each page.
    static func walk(_ server: MockServer, _ query: String) async -> [[Int]] {
        var pages: [[Int]] = []
        var cursor = ""
        while pages.count < 20 {
            let (response, body) = await server.send(.get, "/people?\(query)&_cursor=\(cursor)")
            #expect(response.status == .ok, "\(String(decoding: response.body, as: UTF8.self))")
            pages.append(body?.arrayValue?.compactMap { $0["id"]?.intValue } ?? [])
            guard let next = response.headerFields[.nextCursor] else { break }
            #expect(response.headerFields[.link]?.contains("_cursor=\(next)") == true)
            #expect(response.headerFields[.link]?.contains(#"rel="next""#) == true)
            cursor = next
        }
        return pages
    }

    @Test("A cursor walk answers every matching record once, in the query's order, and ends", arguments: StoreKind.allCases)
    func walkEnds(kind: StoreKind) async throws {
        let server = try await ListQueryTests.seeded(kind)
        #expect(await Self.walk(server, "_limit=4") == [[1, 2, 3, 4], [5, 6]])
        #expect(await Self.walk(server, "_limit=2&_sort=-numberOfKids") == [[4, 1], [3, 6], [2, 5]])
        #expect(await Self.walk(server, "numberOfKids=2&_limit=1") == [[1], [3]])
        // Exactly a page's worth: the last page names no next one.
        #expect(await Self.walk(server, "_limit=3") == [[1, 2, 3], [4, 5, 6]])
        let (first, _) = await server.send(.get, "/people?_cursor=&_limit=2")
        #expect(first.headerFields[.totalCount] == "6")
        // No `_limit`: the default size, 10.
        #expect(await Self.walk(server, "q=a") == [[1, 3, 4, 5, 6]])
    }

    @Test("A cursor the server did not make, a second cursor or a cursor beside _page is a 400 naming _cursor")
    func refused() async throws {
        let server = try await ListQueryTests.seeded(.memory)
        for query in [
            "_cursor=abc", "_cursor=MjA", "_cursor=aGFtbW9jazotMQ", "_cursor=&_cursor=", "_cursor=&_page=2",
            "_cursor=&_start=2", "_cursor=" + String(repeating: "A", count: 70),
        ] {
            let (response, body) = await server.send(.get, "/people?\(query)")
            #expect(response.status == .badRequest, "\(query)")
            #expect(body?["parameter"] == "_cursor", "\(query)")
            #expect(response.headerFields[.contentType] == "application/problem+json")
        }
    }

    @Test("An envelope with a nextCursor member answers the cursor there, null on the last page and on other pages")
    func envelope() async throws {
        let configuration = """
            {"resources": [{"name": "channels", "fields": {"name": "string"},
              "listEnvelope": {"items": "data", "hasMore": "has_more", "nextCursor": "next_cursor"}}],
             "data": {"channels": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}}
            """
        let server = try await MockServer.inMemory(
            try ServerConfiguration(parsing: Array(configuration.utf8), file: "chat.json"))
        let first = try await server.respond(to: MockRequest(.get, "/channels?_cursor=&_limit=2")).json()
        #expect(first["data"]?.arrayValue?.map { $0["name"] } == ["a", "b"])
        #expect(first["has_more"] == true)
        let cursor = try #require(first["next_cursor"]?.stringValue)
        let last = try await server.respond(to: MockRequest(.get, "/channels?_cursor=\(cursor)&_limit=2")).json()
        #expect(last["data"]?.arrayValue?.map { $0["name"] } == ["c"])
        #expect(last["next_cursor"] == .null && last["has_more"] == false)
        // A page asked for otherwise has no cursor to give.
        #expect(try await server.respond(to: MockRequest(.get, "/channels?_limit=1")).json()["next_cursor"] == .null)
        // The configuration keeps the member through the admin API's export of the resource.
        let exported = try #require(await server.send(.get, "/__hammock/resources").1?.arrayValue)
        #expect(exported.first?["listEnvelope"]?["nextCursor"] == "next_cursor")
    }

    @Test("Over HTTP, a browser script may read the next cursor")
    func overLoopback() async throws {
        let server = try await ListQueryTests.seeded(.memory)
        try await server.whileServing { port in
            let reply = try await LoopbackClient(port: port).send("GET", "/people?_cursor=&_limit=5")
            #expect(reply.status == 200 && reply.json?.arrayValue?.count == 5)
            #expect(reply.header("X-Next-Cursor") != nil)
            #expect(reply.header("Access-Control-Expose-Headers")?.contains("X-Next-Cursor") == true)
        }
    }
}
