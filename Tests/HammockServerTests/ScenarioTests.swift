import Foundation
import HTTPTypes
import HammockHTTPServer
import HammockJSON
import HammockServer
import HammockTestSupport
import Synchronization
import Testing

/// Stubs that change between calls: answers in turn or at random, scenarios with states, bodies that are
/// not JSON, and reason phrases.
@Suite("Stub sequences and scenarios")
struct ScenarioTests {
    func server(_ routes: String) async throws -> MockServer {
        let configuration = try ServerConfiguration(parsing: Array(#"{"routes": \#(routes)}"#.utf8), file: "mock.json")
        let server = try await MockServer(configuration: configuration, store: MemoryStore())
        return server
    }

    @Test(
        "Answers in turn, then the last again, from the start again, or a 404",
        arguments: [
            ("repeatLast", [1, 2, 3, 3, 3]), ("cycle", [1, 2, 3, 1, 2]), ("notFound", [1, 2, 3, 0, 0]),
        ])
    func sequence(afterLast: String, expected: [Int]) async throws {
        let server = try await server(
            #"[{"method": "GET", "path": "/job", "afterLast": "\#(afterLast)", "responses": [{"body": {"n": 1}}, {"body": {"n": 2}}, {"status": 201, "body": {"n": 3}}]}]"#
        )
        var seen: [Int] = []
        for _ in 0..<5 {
            let (response, json) = await server.send(.get, "/job")
            seen.append(response.status == .notFound ? 0 : json?["n"]?.intValue ?? -1)
        }
        #expect(seen == expected)
        if afterLast == "notFound" {
            let (_, problem) = await server.send(.get, "/job")
            #expect(problem?["nearMisses"]?[0]?["why"] == "it gave all its 3 answers")
        }
        // A reset starts every sequence over.
        try await server.reset()
        #expect(await server.send(.get, "/job").1?["n"] == 1)
    }

    @Test("Random order draws every answer under the server's random numbers")
    func randomOrder() async throws {
        let units = [0.0, 0.5, 0.99, 0.4]
        let index = AtomicCounter()
        let configuration = try ServerConfiguration(
            parsing: Array(
                #"{"routes": [{"method": "GET", "path": "/coin", "order": "random", "responses": [{"text": "heads"}, {"text": "tails"}]}]}"#
                    .utf8), file: "mock.json")
        let server = try await MockServer(
            resources: [], routes: [], clock: ContinuousClock(), random: { units[index.next() % units.count] })
        server.addStubs(configuration.routes)
        var seen: [String] = []
        for _ in 0..<4 { seen.append(String(decoding: await server.respond(to: MockRequest(.get, "/coin")).body, as: UTF8.self)) }
        #expect(seen == ["heads", "tails", "tails", "heads"])
    }

    @Test("The same seed draws the same random answers (hammock serve --seed)")
    func seeded() async throws {
        let text =
            #"{"routes": [{"method": "GET", "path": "/d6", "order": "random", "responses": [{"text": "1"}, {"text": "2"}, {"text": "3"}, {"text": "4"}, {"text": "5"}, {"text": "6"}]}]}"#
        func rolls(seed: UInt64) async throws -> String {
            let configuration = try ServerConfiguration(parsing: Array(text.utf8), file: "mock.json")
            let server = try await MockServer(
                configuration: configuration, store: MemoryStore(), random: MockServer.seededRandom(seed))
            var rolled = ""
            for _ in 0..<30 { rolled += String(decoding: await server.respond(to: MockRequest(.get, "/d6")).body, as: UTF8.self) }
            return rolled
        }
        let first = try await rolls(seed: 7)
        #expect(try await rolls(seed: 7) == first)
        #expect(try await rolls(seed: 8) != first)
        #expect(Set(first) == Set("123456"))
        let draw = MockServer.seededRandom(1)
        for _ in 0..<1_000 {
            let unit = draw()
            #expect(unit >= 0 && unit < 1)
        }
    }

    @Test("A scenario moves from state to state as its stubs answer; reset and the admin API put it back")
    func checkoutScenario() async throws {
        let server = try await server(
            #"""
            [{"method": "GET", "path": "/order", "scenario": "checkout", "whenState": "started", "body": {"state": "cart"}},
             {"method": "POST", "path": "/pay", "scenario": "checkout", "whenState": "started", "setState": "paid", "status": 201},
             {"method": "GET", "path": "/order", "scenario": "checkout", "whenState": "paid", "setState": "shipped", "body": {"state": "paid"}},
             {"method": "GET", "path": "/order", "scenario": "checkout", "whenState": "shipped", "body": {"state": "shipped"}}]
            """#)
        #expect(await server.send(.get, "/order").1 == ["state": "cart"])
        #expect(await server.send(.get, "/order").1 == ["state": "cart"])
        #expect(await server.send(.post, "/pay").0.status == .created)
        let (again, problem) = await server.send(.post, "/pay")
        #expect(again.status == .notFound)
        #expect(problem?["detail"]?.stringValue?.contains("scenario 'checkout' is in state 'paid', not 'started'") == true)
        #expect(await server.send(.get, "/order").1 == ["state": "paid"])
        #expect(await server.send(.get, "/order").1 == ["state": "shipped"])
        #expect(await server.send(.get, "/__hammock/scenarios").1 == ["checkout": "shipped"])
        #expect(await server.send(.put, "/__hammock/scenarios/checkout", json: ["state": "paid"]).0.status == .ok)
        #expect(await server.send(.get, "/order").1 == ["state": "paid"])
        #expect(await server.send(.delete, "/__hammock/scenarios").1 == [:])
        #expect(await server.send(.get, "/order").1 == ["state": "cart"])
        _ = await server.send(.post, "/pay")
        #expect(await server.send(.post, "/__hammock/reset").0.status == .noContent)
        #expect(await server.send(.get, "/order").1 == ["state": "cart"])
    }

    @Test("Concurrent requests each move a scenario once: one payment succeeds, the rest miss")
    func scenarioRace() async throws {
        let server = try await server(
            #"[{"method": "POST", "path": "/pay", "scenario": "checkout", "whenState": "started", "setState": "paid", "status": 201}]"#
        )
        let statuses = await withBusyMachine {
            await withTaskGroup(of: Int.self) { group in
                for _ in 0..<50 { group.addTask { await server.respond(to: MockRequest(.post, "/pay")).status.code } }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
        #expect(statuses.filter { $0 == 201 }.count == 1)
        #expect(statuses.filter { $0 == 404 }.count == 49)
    }

    @Test("Bodies as text, base64 and files, with their content types; a reason phrase in the status line")
    func bodiesAndReasons() async throws {
        let directory = TemporaryFiles.directory("stub")
        try Data([0x89, 0x50, 0x4E, 0x47]).write(to: URL(fileURLWithPath: directory + "logo.png"))
        let text = #"""
            {"routes": [
              {"method": "GET", "path": "/hello/:name", "text": "hello {{path.name}}"},
              {"method": "GET", "path": "/blob", "base64": "AAEC/w=="},
              {"method": "GET", "path": "/logo", "file": "logo.png", "headers": {"Content-Type": "image/png"}},
              {"method": "POST", "path": "/pay", "status": 402, "reason": "Card Declined", "body": {"error": "declined"}}
            ]}
            """#
        try Data(text.utf8).write(to: URL(fileURLWithPath: directory + "mock.json"))
        let configuration = try ServerConfiguration(contentsOfFile: directory + "mock.json")
        let server = try await MockServer(configuration: configuration, store: MemoryStore())
        let hello = await server.respond(to: MockRequest(.get, "/hello/ada"))
        #expect(String(decoding: hello.body, as: UTF8.self) == "hello ada")
        #expect(hello.headerFields[.contentType] == "text/plain; charset=utf-8")
        let blob = await server.respond(to: MockRequest(.get, "/blob"))
        #expect(blob.body == [0, 1, 2, 255] && blob.headerFields[.contentType] == "application/octet-stream")
        // A file is streamed from disk: in process the caller reads it.
        let logo = await server.respond(to: MockRequest(.get, "/logo"))
        #expect(try await logo.stream?.collect() == [0x89, 0x50, 0x4E, 0x47] && logo.headerFields[.contentType] == "image/png")
        #expect(logo.stream?.length == 4)
        try await server.whileServing { port in
            let connection = try RawConnection(port: port)
            await connection.send("POST /pay HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n")
            let reply = await connection.read(until: "declined")
            #expect(reply.hasPrefix("HTTP/1.1 402 Card Declined\r\n"))
        }
    }

    @Test(
        "Mistakes in sequences, scenarios and bodies name the key",
        arguments: [
            (#"[{"method": "GET", "path": "/a", "responses": []}]"#, "routes[0].responses: expected a non-empty array"),
            (
                #"[{"method": "GET", "path": "/a", "status": 200, "responses": [{}]}]"#,
                "routes[0].status: give it inside each of responses"
            ),
            (#"[{"method": "GET", "path": "/a", "responses": [{"colour": 1}]}]"#, "routes[0].responses[0].colour: unknown key"),
            (
                #"[{"method": "GET", "path": "/a", "afterLast": "loop", "body": 1}]"#,
                "routes[0].afterLast: expected one of repeatLast, cycle, notFound"
            ),
            (#"[{"method": "GET", "path": "/a", "whenState": "x"}]"#, "routes[0].whenState: belongs to a scenario"),
            (
                #"[{"method": "GET", "path": "/a", "text": "a", "body": 1}]"#,
                "routes[0].text: give one of body, text, base64, file, events and websocket"
            ),
            (#"[{"method": "GET", "path": "/a", "base64": "***"}]"#, "routes[0].base64: not base64"),
            (#"[{"method": "GET", "path": "/a", "file": "missing.bin"}]"#, "routes[0].file: cannot read"),
            (#"[{"method": "GET", "path": "/a", "reason": "Bad\r\nX: y"}]"#, "routes[0].reason: the reason phrase"),
            (
                #"[{"method": "GET", "path": "/a", "responses": [{"status": 204, "text": "x"}]}]"#,
                "routes[0].responses[0].text: a 204 answer has no body"
            ),
        ])
    func mistakes(routes: String, message: String) throws {
        let error = #expect(throws: ConfigurationError.self) {
            try ServerConfiguration(parsing: Array(#"{"routes": \#(routes)}"#.utf8), file: "mock.json")
        }
        #expect(error?.description.hasPrefix("mock.json: " + message) == true, "\(error?.description ?? "accepted")")
    }
}

/// A counter for closures that must be Sendable.
final class AtomicCounter: Sendable {
    private let value = Synchronization.Atomic<Int>(0)
    func next() -> Int { value.add(1, ordering: .relaxed).oldValue }
}

/// Routes of your own that write resource data.
@Suite("Routes that write data")
struct RouteWriteTests {
    @Test("A stub's create stores a record the resource's routes then list, and its answer reads it")
    func stubCreates() async throws {
        let text = #"""
            {"resources": [{"name": "orders", "fields": {"total": "integer", "status": "string"}}],
             "routes": [{"method": "POST", "path": "/checkout", "status": 201,
                         "create": {"resource": "orders", "values": {"total": "{{body.total}}", "status": "new"}},
                         "headers": {"Location": "/orders/{{created.id}}"},
                         "body": {"order": "{{created.id}}", "total": "{{created.total}}"}}]}
            """#
        let configuration = try ServerConfiguration(parsing: Array(text.utf8), file: "mock.json")
        let server = try await MockServer(configuration: configuration, store: MemoryStore())
        let before = await server.respond(to: MockRequest(.get, "/orders"))
        let (created, json) = await server.send(.post, "/checkout", json: ["total": 12])
        #expect(created.status == .created)
        #expect(json == ["order": 1, "total": 12])
        #expect(created.headerFields[.location] == "/orders/1")
        #expect(await server.send(.get, "/orders").1 == [["id": 1, "total": 12, "status": "new"]])
        // The list's validators moved on: a client revalidating its copy gets the new list.
        var conditional = HTTPFields()
        conditional[.ifNoneMatch] = before.headerFields[.eTag]
        #expect(await server.respond(to: MockRequest(.get, "/orders", headerFields: conditional)).status == .ok)
        // Values the resource refuses are the 422 a POST would get, and nothing is stored.
        let refused = await server.send(.post, "/checkout", json: ["total": "twelve"])
        #expect(refused.0.status == .unprocessableContent)
        #expect(await server.send(.get, "/orders").1?.arrayValue?.count == 1)
    }

    @Test("A stub's create naming no resource is a configuration error")
    func unknownResource() throws {
        let text = #"{"routes": [{"method": "POST", "path": "/x", "create": {"resource": "nope", "values": {}}}]}"#
        let error = #expect(throws: ConfigurationError.self) {
            try ServerConfiguration(parsing: Array(text.utf8), file: "mock.json")
        }
        #expect(error?.description == "mock.json: routes[0].create.resource: no resource is named 'nope'")
    }

    @Test("Swift routes update and delete records as PATCH and DELETE would")
    func swiftWrites() async throws {
        let server = try await Fixtures.server()
        try await server.addData([["name": "ada"], ["name": "bob"]], for: "people")
        try await server.addData(["name": "mini", "person_id": 2], for: "cars")
        try server.route(.post, "/people/:id/rename") { request in
            let key = JSON.integer(Int(request.parameters["id"] ?? "") ?? 0)
            guard let updated = try await request.records.update("people", key: key, ["name": request.json?["name"] ?? nil])
            else { throw HTTPProblem.notFound("nobody") }
            return MockResponse(json: .object(updated))
        }
        try server.route(.post, "/people/:id/forget") { request in
            let key = JSON.integer(Int(request.parameters["id"] ?? "") ?? 0)
            return MockResponse(json: ["deleted": .bool(try await request.records.delete("people", key: key))])
        }
        #expect(await server.send(.post, "/people/1/rename", json: ["name": "ada l."]).1?["name"] == "ada l.")
        #expect(await server.send(.get, "/people/1").1?["name"] == "ada l.")
        #expect(await server.send(.post, "/people/9/rename", json: ["name": "x"]).0.status == .notFound)
        #expect(await server.send(.post, "/people/1/rename", json: ["name": 5]).0.status == .unprocessableContent)
        #expect(await server.send(.post, "/people/2/forget").1 == ["deleted": true])
        #expect(await server.send(.post, "/people/2/forget").1 == ["deleted": false])
        #expect(await server.send(.get, "/cars/1").1?["person_id"] == .null)
    }
}
