import HTTPTypes
import HammockJSON
import HammockServer
import HammockTestSupport
import Testing

/// Stub conditions beyond equality: regular expressions, bounds, absence, members deep in the body,
/// their combinations, and priorities; each failure named in a near miss.
@Suite("Stub matchers")
struct StubMatcherTests {
    /// Orders: a create for large totals of known customers, one for everything else, a search whose
    /// page is bounded, and a user lookup by a numeric id.
    static let configuration = """
        {
          "routes": [
            {"method": "POST", "path": "/orders", "priority": 10, "status": 201, "body": {"review": false}},
            {"method": "POST", "path": "/orders", "status": 202,
             "match": {"body": {"/customer/id": {"matches": "^C[0-9]{4}$"}, "total": {"greaterThan": 1000},
                                "/items": {"not": {"equals": []}}, "coupon": {"absent": true}},
                       "headers": {"X-Channel": {"anyOf": ["web", "app"]}}},
             "body": {"review": true}},
            {"method": "GET", "path": "/search", "match": {"query": {"page": {"atLeast": 1, "atMost": 50},
                                                                      "q": {"contains": "hammock"}}},
             "body": {"hits": 3}},
            {"method": "GET", "path": "/users/:id", "match": {"path": {"id": {"matches": "^[0-9]+$"}}}, "body": {"found": true}}
          ]
        }
        """

    static func server() async throws -> MockServer {
        try await MockServer(
            configuration: try ServerConfiguration(parsing: Array(Self.configuration.utf8), file: "orders.json"),
            store: MemoryStore())
    }

    static let web: HTTPFields = [HTTPField.Name("X-Channel")!: "web"]

    @Test("A request meeting every matcher is answered by that stub, though a catch-all with a lower priority came first")
    func matching() async throws {
        let server = try await Self.server()
        let order: JSON = ["customer": ["id": "C1234"], "total": 1500, "items": [["sku": "h-1"]]]
        let review = await server.respond(to: MockRequest(.post, "/orders", headerFields: Self.web, json: order))
        #expect(review.status == .accepted)
        #expect(try review.json() == ["review": true])
        // Each condition broken alone falls through to the catch-all.
        var small = order
        small["total"] = 999
        var coupon = order
        coupon["coupon"] = "SPRING"
        var empty = order
        empty["items"] = []
        var stranger = order
        stranger["customer"] = ["id": "X1"]
        for body in [small, coupon, empty, stranger] {
            #expect(
                await server.respond(to: MockRequest(.post, "/orders", headerFields: Self.web, json: body)).status == .created)
        }
        let phone: HTTPFields = [HTTPField.Name("X-Channel")!: "phone"]
        #expect(await server.respond(to: MockRequest(.post, "/orders", headerFields: phone, json: order)).status == .created)
        #expect(try await server.respond(to: MockRequest(.get, "/search?q=red+hammock&page=3")).json() == ["hits": 3])
        #expect(try await server.respond(to: MockRequest(.get, "/users/42")).json() == ["found": true])
    }

    @Test(
        "A failed matcher is named in the near miss with what was sent and what was wanted",
        arguments: [
            ("/search?q=hammock&page=0", "query parameter 'page' is '0', not at least 1 and at most 50"),
            ("/search?q=tent&page=2", "query parameter 'q' is 'tent', not containing \"hammock\""),
            ("/search?page=2", "query parameter 'q' is missing (wanted containing \"hammock\")"),
            ("/users/ada", "path parameter 'id' is 'ada', not matching /^[0-9]+$/"),
        ])
    func nearMisses(target: String, why: String) async throws {
        let server = try await Self.server()
        let response = await server.respond(to: MockRequest(.get, target))
        #expect(response.status == .notFound)
        #expect(try response.json()["nearMisses"]?[0]?["why"] == .string(why))
    }

    @Test("In Swift: conditions on the body by pointer, a header by regular expression, and a priority")
    func inSwift() async throws {
        let server = try await MockServer(resources: [])
        var fallback = try StubRoute(.post, "/pay", status: .forbidden)
        fallback.priority = 9
        let approved = try StubRoute(
            .post, "/pay",
            match: StubRoute.Match(conditions: [
                try StubRoute.Condition(.header("Authorization"), .matches("^Bearer [a-z0-9]+$")),
                try StubRoute.Condition(.body("/card/last4"), .not(.equals("0000"))),
                try StubRoute.Condition(.body("/amount"), .allOf([.greaterThan(0), .lessThan(10_000)])),
            ]), body: ["paid": true])
        server.addStubs([fallback, approved])
        let card: JSON = ["card": ["last4": "4242"], "amount": 12.5]
        let paid = await server.respond(to: MockRequest(.post, "/pay", headerFields: [.authorization: "Bearer abc1"], json: card))
        #expect(try paid.json() == ["paid": true])
        let declined = await server.respond(
            to: MockRequest(
                .post, "/pay", headerFields: [.authorization: "Bearer abc1"], json: ["card": ["last4": "0000"], "amount": 5]))
        #expect(declined.status == .forbidden)
        #expect(
            await server.respond(to: MockRequest(.post, "/pay", headerFields: [.authorization: "Basic x"], json: card)).status
                == .forbidden)
    }

    @Test("A matcher the server cannot use is refused at load, naming its key: a bad operator value, a lookaround, a pointer")
    func mistakes() {
        func keyPath(_ match: String) -> String? {
            let text = #"{"routes": [{"method": "GET", "path": "/x", "match": \#(match)}]}"#
            let error = #expect(throws: ConfigurationError.self) {
                try ServerConfiguration(parsing: Array(text.utf8), file: "bad.json")
            }
            return error?.keyPath
        }
        #expect(keyPath(#"{"query": {"n": {"atLeast": "one"}}}"#) == "routes[0].match.query.n")
        #expect(keyPath(#"{"headers": {"X": {"matches": "(?<=a)b"}}}"#) == "routes[0].match.headers.X")
        #expect(keyPath(#"{"body": {"total": {"anyOf": []}}}"#) == "routes[0].match.body.total")
        #expect(keyPath(#"{"cookies": {}}"#) == "routes[0].match.cookies")
        let priority = #"{"routes": [{"method": "GET", "path": "/x", "priority": 0}]}"#
        let error = #expect(throws: ConfigurationError.self) {
            try ServerConfiguration(parsing: Array(priority.utf8), file: "bad.json")
        }
        #expect(error?.keyPath == "routes[0].priority")
        // An object of other keys is a literal to compare with, as before.
        let literal = #"{"routes": [{"method": "POST", "path": "/x", "match": {"body": {"filter": {"colour": "red"}}}}]}"#
        #expect(throws: Never.self) { try ServerConfiguration(parsing: Array(literal.utf8), file: "ok.json") }
    }

    @Test("A regular expression from a file is matched in linear time: a catastrophic pattern against a long header answers")
    func hostilePattern() async throws {
        let server = try await MockServer(resources: [])
        server.addStubs([
            try StubRoute(
                .get, "/x", match: StubRoute.Match(conditions: [try StubRoute.Condition(.header("X-Long"), .matches("^(a+)+$"))]),
                body: ["ok": true])
        ])
        let text = String(repeating: "a", count: 5_000) + "!"
        let response = await server.respond(to: MockRequest(.get, "/x", headerFields: [HTTPField.Name("X-Long")!: text]))
        #expect(response.status == .notFound)
    }
}

/// Answers a request asks a stub for with `Prefer: code=N` or `Prefer: example=NAME`, as Prism does.
@Suite("Preferred answers")
struct PreferredAnswerTests {
    static let configuration = """
        {"routes": [{"method": "GET", "path": "/pets/:id", "responses": [{"body": {"name": "Rex"}}, {"body": {"name": "Rex again"}}],
                     "alternatives": [{"name": "cat", "body": {"name": "Tom", "kind": "cat"}},
                                      {"name": "dog", "body": {"name": "Rex", "kind": "dog"}},
                                      {"status": 404, "body": {"message": "no such pet"}},
                                      {"name": "gone", "status": 410, "text": "gone for good"}]}]}
        """

    static func server(strict: Bool = false) async throws -> MockServer {
        let text =
            strict ? Self.configuration.replacing("{\"routes\"", with: "{\"strict\": true, \"routes\"") : Self.configuration
        return try await MockServer(
            configuration: try ServerConfiguration(parsing: Array(text.utf8), file: "pets.json"), store: MemoryStore())
    }

    static func ask(_ server: MockServer, _ preference: String) async -> MockResponse {
        await server.respond(to: MockRequest(.get, "/pets/1", headerFields: [HTTPField.Name("Prefer")!: preference]))
    }

    @Test("A code, a name or both pick the alternative, say so in Preference-Applied, and leave the stub's turn where it was")
    func picking() async throws {
        let server = try await Self.server()
        let missing = await Self.ask(server, "code=404")
        #expect(missing.status == .notFound)
        #expect(try missing.json() == ["message": "no such pet"])
        #expect(missing.headerFields[HTTPField.Name("Preference-Applied")!] == "code=404")
        #expect(try await Self.ask(server, "example=cat").json()["kind"] == "cat")
        #expect(try await Self.ask(server, #"example="dog", code=200"#).json()["kind"] == "dog")
        let gone = await Self.ask(server, "example=gone")
        #expect(gone.status.code == 410 && String(decoding: gone.body, as: UTF8.self) == "gone for good")
        // The stub's own answers are still first, then second.
        #expect(try await server.respond(to: MockRequest(.get, "/pets/1")).json()["name"] == "Rex")
        #expect(try await server.respond(to: MockRequest(.get, "/pets/1")).json()["name"] == "Rex again")
        // A code of the stub's own answers is answered from the first that has it.
        #expect(try await Self.ask(server, "code=200").json()["name"] == "Rex")
    }

    @Test("Asking for what the stub does not have is a 400 listing its codes and examples; --strict ignores the asking")
    func unknownAndStrict() async throws {
        let server = try await Self.server()
        let unknown = await Self.ask(server, "example=parrot")
        #expect(unknown.status == .badRequest)
        #expect(try unknown.json()["examples"] == ["cat", "dog", "gone"])
        #expect(try unknown.json()["codes"] == [200, 404, 410])
        #expect(await Self.ask(server, "code=404, example=cat").status == .badRequest)
        let strict = try await Self.server(strict: true)
        let ignored = await Self.ask(strict, "code=404")
        #expect(ignored.status == .ok)
        #expect(ignored.headerFields[HTTPField.Name("Preference-Applied")!] == nil)
    }
}
