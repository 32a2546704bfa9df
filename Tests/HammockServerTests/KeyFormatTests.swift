import Foundation
import HTTPTypes
import HammockHTTPServer
import HammockJSON
import HammockServer
import HammockTestSupport
import Testing

/// String keys the server makes, as an API's own ids are made: a UUID, or the form a pattern gives.
@Suite("Key formats")
struct KeyFormatTests {
    static func orders(_ format: MockResource.KeyFormat) -> MockResource {
        var orders = MockResource("orders", fields: ["id": .string, "total": .integer], primaryKey: "id")
        orders.keyFormat = format
        return orders
    }

    static func matches(_ pattern: String, _ text: String) throws -> Bool { try ICUPattern.fullyMatches(pattern, text) }

    @Test("A create that leaves the key out gets one in the pattern's form, reachable at its Location; a key sent is kept")
    func patternKeys() async throws {
        let pattern = "^ord_[0-9a-f]{8}$"
        let server = try await MockServer(resources: [Self.orders(.pattern(pattern))])
        var made: Set<String> = []
        for total in 1...50 {
            let created = await server.respond(to: MockRequest(.post, "/orders", json: ["total": .integer(total)]))
            #expect(created.status == .created)
            let key = try #require(try created.json()["id"]?.stringValue)
            #expect(try Self.matches(pattern, key), "\(key)")
            #expect(created.headerFields[.location] == "/orders/\(key)")
            #expect(try await server.respond(to: MockRequest(.get, "/orders/\(key)")).json()["total"] == .integer(total))
            made.insert(key)
        }
        #expect(made.count == 50)
        // `null` asks for one too; a key the client chose is the client's.
        let nulled = await server.respond(to: MockRequest(.post, "/orders", json: ["id": nil, "total": 1]))
        #expect(try Self.matches(pattern, try #require(try nulled.json()["id"]?.stringValue)))
        let chosen = await server.respond(to: MockRequest(.post, "/orders", json: ["id": "mine", "total": 2]))
        #expect(chosen.status == .created)
        #expect(try chosen.json()["id"] == "mine")
        // Updates never make keys: the key stays what it is.
        let patched = await server.respond(to: MockRequest(.patch, "/orders/mine", json: ["total": 3]))
        #expect(try patched.json() == ["id": "mine", "total": 3])
    }

    @Test("A UUID key is a lowercase version 4 UUID, over HTTP as in process")
    func uuidKeys() async throws {
        let server = try await MockServer(resources: [Self.orders(.uuid)])
        let inProcess = try await server.respond(to: MockRequest(.post, "/orders", json: ["total": 1])).json()["id"]
        let port = try await server.start(host: "127.0.0.1", port: 0)
        let reply: LoopbackClient.Reply
        do {
            reply = try await LoopbackClient(port: port).send("POST", "/orders", json: ["total": 2])
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        #expect(reply.status == 201)
        let overHTTP = try JSON(parsing: reply.body)["id"]
        for key in [inProcess, overHTTP] {
            let text = try #require(key?.stringValue)
            #expect(UUID(uuidString: text) != nil && text == text.lowercased())
            #expect(Array(text)[14] == "4")
        }
    }

    @Test("A pattern with few strings is made again when the key is taken; with every one taken, a 409")
    func fewStrings() async throws {
        let server = try await MockServer(resources: [Self.orders(.pattern("^[ab]$"))])
        let first = try await server.respond(to: MockRequest(.post, "/orders", json: ["total": 1])).json()["id"]
        let second = try await server.respond(to: MockRequest(.post, "/orders", json: ["total": 2])).json()["id"]
        #expect(Set([first, second]) == Set<JSON?>(["a", "b"]))
        let full = await server.respond(to: MockRequest(.post, "/orders", json: ["total": 3]))
        #expect(full.status == .conflict)
        #expect(full.headerFields[.contentType] == "application/problem+json")
    }

    @Test("Creates at once on a pattern with two strings: two made, the rest 409, none lost or answered 500")
    func concurrentCreates() async throws {
        for _ in 0..<5 {
            let server = try await MockServer(resources: [Self.orders(.pattern("^[ab]$"))])
            let statuses = await withTaskGroup(of: Int.self) { group in
                for total in 0..<40 {
                    group.addTask {
                        await server.respond(to: MockRequest(.post, "/orders", json: ["total": .integer(total)])).status.code
                    }
                }
                return await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 201 }.count == 2)
            #expect(statuses.filter { $0 == 409 }.count == 38)
            let keys = try await server.respond(to: MockRequest(.get, "/orders")).json().arrayValue?.compactMap(\.["id"])
            #expect(Set(keys ?? []) == ["a", "b"])
        }
    }

    @Test("Loaded records without a key and generated records get keys in the format")
    func loadedAndGenerated() async throws {
        let pattern = "^ord_[0-9a-f]{8}$"
        let configuration = try ServerConfiguration(
            parsing: Array(
                #"""
                {"resources": [
                   {"name": "orders", "fields": {"id": "string", "total": "integer"}, "primaryKey": "id",
                    "keyFormat": {"pattern": "^ord_[0-9a-f]{8}$"}},
                   {"name": "refunds", "fields": {"id": "string", "amount": "integer"}, "primaryKey": "id", "keyFormat": "uuid"}],
                 "data": {"orders": [{"total": 5}, {"id": "ord_0000abcd", "total": 6}, {}]},
                 "generate": {"refunds": 20}}
                """#.utf8), file: "keys.json")
        let server = try await MockServer(configuration: configuration, store: MemoryStore())
        let report = try await server.loadData(from: configuration)
        try await server.generateData(try #require(configuration.generate), seed: 9)
        #expect(report.first { $0.resource == "orders" }?.report.loaded == 2)
        let orders = try #require(try await server.respond(to: MockRequest(.get, "/orders")).json().arrayValue)
        #expect(orders.compactMap { $0["id"]?.stringValue }.allSatisfy { (try? Self.matches(pattern, $0)) == true })
        #expect(orders.contains { $0["id"] == "ord_0000abcd" })
        let refunds = try #require(try await server.respond(to: MockRequest(.get, "/refunds?_limit=100")).json().arrayValue)
        #expect(refunds.count == 20)
        #expect(refunds.allSatisfy { UUID(uuidString: $0["id"]?.stringValue ?? "") != nil })
    }

    @Test(
        "A key format the server cannot keep is refused with the place and the reason",
        arguments: [
            (#""keyFormat": "uuid""#, #""primaryKey": "id", "fields": {"id": "integer"}"#, "makes string keys"),
            (#""keyFormat": "uuid""#, #""fields": {"name": "string"}"#, "declare the primary key 'id' as a string"),
            (#""keyFormat": {"pattern": "^(?=a)b$"}"#, #""primaryKey": "id", "fields": {"id": "string"}"#, "lookaround"),
            (#""keyFormat": {"pattern": "^$"}"#, #""primaryKey": "id", "fields": {"id": "string"}"#, "no key a URL can reach"),
            (#""keyFormat": {"pattern": "^[a-z]{3000}$"}"#, #""primaryKey": "id", "fields": {"id": "string"}"#, "no key a URL"),
            (#""keyFormat": "snowflake""#, #""primaryKey": "id", "fields": {"id": "string"}"#, "expected \"uuid\""),
        ])
    func refused(format: String, resource: String, reason: String) throws {
        let text = #"{"resources": [{"name": "orders", "# + resource + ", " + format + "}]}"
        let error = try #require(throws: ConfigurationError.self) {
            try ServerConfiguration(parsing: Array(text.utf8), file: "keys.json")
        }
        #expect(error.description.contains("resources[0].keyFormat"), "\(error)")
        #expect(error.description.contains(reason), "\(error)")
    }

    @Test("In Swift, a key format on a key that cannot take it is a SchemaError when the resource is added")
    func refusedInSwift() async throws {
        var generated = MockResource("orders", fields: ["total": .integer])
        generated.keyFormat = .uuid
        await #expect(throws: SchemaError.self) { try await MockServer(resources: [generated]) }
        await #expect(throws: SchemaError.self) { try await MockServer(resources: [Self.orders(.pattern("(a)\\1"))]) }
    }
}
