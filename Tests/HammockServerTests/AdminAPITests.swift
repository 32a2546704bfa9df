import Foundation
import HTTPTypes
import HammockHTTPServer
import HammockJSON
import HammockSQLite
import HammockServer
import HammockTestSupport
import Testing

/// The admin API under `/__hammock`: the journal over HTTP, resources and routes, reset, snapshots,
/// latency, runtime stubs, the version, and the token that guards it. In process and over loopback.
@Suite("Admin API")
struct AdminAPITests {
    func server(_ kind: StoreKind = .memory, options: MockServer.Options = MockServer.Options()) async throws -> MockServer {
        let server = try await Fixtures.server(kind, options: options)
        try await server.addData(["name": "ada", "numberOfKids": 2], for: "people")
        try await server.addData(["name": "bob"], for: "people")
        try await server.addData(["name": "mini", "person_id": 1], for: "cars")
        return server
    }

    @Test("GET /__hammock/requests lists the journal as JSON, filtered by method, path, status, since and after")
    func requestsOverHTTP() async throws {
        let server = try await server()
        _ = await server.send(.get, "/people")
        _ = await server.send(.post, "/people", json: ["name": "cy"])
        _ = await server.send(.get, "/people/9")
        let (all, allJSON) = await server.send(.get, "/__hammock/requests")
        #expect(all.status == .ok)
        #expect(all.headerFields[HTTPField.Name("X-Total-Count")!] == "3")
        let entries = try #require(allJSON?.arrayValue)
        #expect(entries.count == 3)
        let created = entries[1]
        #expect(created["id"] == 2)
        #expect(created["request"]?["method"] == "POST")
        #expect(created["request"]?["path"] == "/people")
        #expect(created["request"]?["body"] == ["name": "cy"])
        #expect(created["request"]?["bodyEncoding"] == "json")
        #expect(created["request"]?["headers"]?["content-type"] == "application/json")
        #expect(created["response"]?["status"] == 201)
        #expect(created["response"]?["headers"]?["location"] == "/people/3")
        #expect(created["response"]?["bodySize"]?.intValue ?? 0 > 0)
        #expect(created["route"] == ["kind": "resource", "pattern": "/people", "resource": "people"])
        #expect(created["durationMs"]?.doubleValue != nil)
        #expect(created["time"]?.stringValue.flatMap(JSONTime.parse) != nil)

        func ids(_ query: String) async -> [JSON] {
            (await server.send(.get, "/__hammock/requests?" + query).1?.arrayValue ?? []).map { $0["id"] ?? .null }
        }
        #expect(await ids("method=post") == [2])
        #expect(await ids("path=/people/*") == [3])
        #expect(await ids("status=404") == [3])
        #expect(await ids("after=1") == [2, 3])
        #expect(await ids("limit=1") == [3])
        #expect(await ids("since=2000-01-01T00:00:00Z") == [1, 2, 3])
        #expect(await ids("since=2999-01-01T00:00:00.000Z") == [])
        let one = await server.send(.get, "/__hammock/requests/2")
        #expect(one.1?["request"]?["method"] == "POST")
        #expect(await server.send(.get, "/__hammock/requests/99").0.status == .notFound)
        #expect(await ids("limit=9223372036854775807") == [1, 2, 3])
        #expect(await ids("after=18446744073709551615") == [])
        for bad in [
            "status=abc", "since=yesterday", "method=G%20T", "path=people", "color=red", "after=-1", "limit=-1",
            "after=18446744073709551616", "status=99999999999999999999", "since=" + String(repeating: "9", count: 10_000),
            "path=%FF",
        ] {
            let (response, problem) = await server.send(.get, "/__hammock/requests?" + bad)
            #expect(response.status == .badRequest, "\(bad)")
            #expect(response.headerFields[.contentType] == "application/problem+json", "\(bad)")
            #expect(problem?["detail"]?.stringValue?.isEmpty == false)
        }
        #expect(await server.send(.delete, "/__hammock/requests").0.status == .noContent)
        #expect(server.journal.entries.isEmpty)
    }

    @Test("Bodies that are not JSON are recorded as text, or as base64 when they are not UTF-8")
    func bodyEncodings() async throws {
        let server = try await server()
        var text = HTTPFields()
        text[.contentType] = "text/plain"
        _ = await server.respond(to: MockRequest(.post, "/people", headerFields: text, body: Array("hello".utf8)))
        _ = await server.respond(to: MockRequest(.post, "/people", headerFields: text, body: [0xFF, 0xFE, 0x00]))
        let entries = try #require(await server.send(.get, "/__hammock/requests").1?.arrayValue)
        #expect(entries[0]["request"]?["body"] == "hello" && entries[0]["request"]?["bodyEncoding"] == "text")
        #expect(entries[1]["request"]?["body"] == "//4A" && entries[1]["request"]?["bodyEncoding"] == "base64")
        #expect(entries[1]["request"]?["bodySize"] == 3)
    }

    @Test("Resources and routes are listed; stubs added at runtime answer at once and can be removed")
    func resourcesAndRoutes() async throws {
        let server = try await server()
        let resources = try #require(await server.send(.get, "/__hammock/resources").1?.arrayValue)
        #expect(resources.map { $0["name"] } == ["people", "cars"])
        #expect(resources[0]["count"] == 2 && resources[1]["count"] == 1)
        #expect(resources[1]["parents"] == [["resource": "people", "foreignKey": "person_id", "onDelete": "setNull"]])
        #expect(resources[0]["fields"]?["name"] == "string")

        let added = await server.send(
            .post, "/__hammock/routes",
            json: [
                ["method": "GET", "path": "/health", "body": ["ok": true]], ["method": "POST", "path": "/login", "status": 401],
            ])
        #expect(added.0.status == .created)
        let ids = try #require(added.1?["ids"]?.arrayValue)
        #expect(ids.count == 2)
        #expect(await server.send(.get, "/health").1 == ["ok": true])
        #expect(await server.send(.post, "/login").0.status == .unauthorized)
        let routes = try #require(await server.send(.get, "/__hammock/routes").1?.arrayValue)
        #expect(routes.first?["pattern"] == "/health")
        #expect(routes.contains { $0["pattern"] == "/people/:id" && $0["resource"] == "people" })

        let first = try #require(ids.first?.intValue)
        #expect(await server.send(.delete, "/__hammock/routes/\(first)").0.status == .noContent)
        #expect(await server.send(.get, "/health").0.status == .notFound)
        #expect(await server.send(.delete, "/__hammock/routes/\(first)").0.status == .notFound)
        let removed = await server.send(.delete, "/__hammock/routes")
        #expect(removed.1 == ["removed": 1])
        #expect(await server.send(.post, "/login").0.status == .notFound)

        let bad = await server.send(.post, "/__hammock/routes", json: ["method": "GET"])
        #expect(bad.0.status == .badRequest)
        #expect(bad.1?["detail"]?.stringValue?.contains("route.path") == true)
        let notJSON = await server.respond(
            to: MockRequest(.post, "/__hammock/routes", headerFields: [.contentType: "application/json"], body: Array("{".utf8)))
        #expect(notJSON.status == .badRequest)
    }

    @Test(
        "Reset puts back the data the server started with, restarts generated keys, clears the journal",
        arguments: StoreKind.allCases)
    func reset(kind: StoreKind) async throws {
        let server = try await server(kind)
        #expect(await server.send(.post, "/people", json: ["name": "cy"]).1?["id"] == 3)
        #expect(await server.send(.delete, "/people/1").0.status == .noContent)
        #expect(await server.send(.get, "/cars/1").1?["person_id"] == .null)
        #expect(await server.send(.post, "/__hammock/reset").0.status == .noContent)
        #expect(await server.send(.get, "/people").1?.arrayValue?.map { $0["name"] } == ["ada", "bob"])
        #expect(await server.send(.get, "/cars/1").1?["person_id"] == 1)
        // The same key as the first time: a test that creates after a reset sees the same data every run.
        #expect(await server.send(.post, "/people", json: ["name": "cy"]).1?["id"] == 3)
        // The journal starts again from the reset.
        #expect(server.journal.entries.map(\.request.path) == ["/people", "/cars/1", "/people"])
        try await server.reset()
        #expect(await server.send(.get, "/people/3").0.status == .notFound)
    }

    @Test("Snapshots save and restore the data by name; unknown and bad names are problems", arguments: StoreKind.allCases)
    func snapshots(kind: StoreKind) async throws {
        let server = try await server(kind)
        _ = await server.send(.post, "/people", json: ["name": "cy"])
        let saved = await server.send(.put, "/__hammock/snapshots/three-people")
        #expect(saved.0.status == .created)
        #expect(saved.1 == ["name": "three-people", "records": 4])
        _ = await server.send(.delete, "/people/1")
        _ = await server.send(.post, "/people", json: ["name": "dee"])
        #expect(await server.send(.post, "/__hammock/snapshots/three-people/restore").0.status == .noContent)
        #expect(await server.send(.get, "/people").1?.arrayValue?.map { $0["name"] } == ["ada", "bob", "cy"])
        #expect(await server.send(.get, "/cars/1").1?["person_id"] == 1)
        #expect(await server.send(.post, "/people", json: ["name": "dee"]).1?["id"] == 4)
        #expect(await server.send(.get, "/__hammock/snapshots").1 == ["three-people"])
        let contents = await server.send(.get, "/__hammock/snapshots/three-people").1
        #expect(contents?["people"]?.arrayValue?.count == 3)
        #expect(await server.send(.post, "/__hammock/snapshots/nope/restore").0.status == .notFound)
        #expect(await server.send(.put, "/__hammock/snapshots/bad%20name").0.status == .badRequest)
        #expect(await server.send(.delete, "/__hammock/snapshots/three-people").0.status == .noContent)
        #expect(await server.send(.delete, "/__hammock/snapshots/three-people").0.status == .notFound)
        #expect(server.snapshotNames.isEmpty)
    }

    @Test("A client cannot hold memory without end: snapshots and added routes are bounded, with a 409 that says so")
    func bounded() async throws {
        let server = try await server()
        for index in 0..<MockServer.maximumSnapshots {
            #expect(await server.send(.put, "/__hammock/snapshots/s\(index)").0.status == .created)
        }
        let refused = await server.send(.put, "/__hammock/snapshots/one-more")
        #expect(refused.0.status == .conflict)
        #expect(refused.1?["detail"]?.stringValue?.contains("at most 100 snapshots") == true)
        #expect(await server.send(.put, "/__hammock/snapshots/s0").0.status == .created)  // replacing is fine
        let many = JSON.array((0...1_000).map { ["method": "GET", "path": .string("/r\($0)")] })
        #expect(await server.send(.post, "/__hammock/routes", json: many).0.status == .conflict)
        #expect(server.routeTable.count == Fixtures.serverRouteCount)
    }

    @Test("Concurrent first requests on a busy machine all wait for one baseline: a reset removes every one of their writes")
    func baselineRace() async throws {
        let server = try await server()
        await withBusyMachine {
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<40 {
                    group.addTask { _ = await server.send(.post, "/people", json: ["name": .string("p\(index)")]) }
                }
            }
        }
        #expect(await server.send(.get, "/people").1?.arrayValue?.count == 42)
        try await server.reset()
        #expect(await server.send(.get, "/people").1?.arrayValue?.map { $0["name"] } == ["ada", "bob"])
    }

    @Test("Scenario names and states a client sets are bounded")
    func scenarioBounds() async throws {
        let server = try await server()
        let long = String(repeating: "x", count: 201)
        #expect(await server.send(.put, "/__hammock/scenarios/\(long)", json: ["state": "a"]).0.status == .badRequest)
        #expect(await server.send(.put, "/__hammock/scenarios/a", json: ["state": .string(long)]).0.status == .badRequest)
        #expect(await server.send(.put, "/__hammock/scenarios/a", json: ["state": 1]).0.status == .badRequest)
        for index in 0..<1_000 { server.setScenario("s\(index)", to: "on") }
        #expect(await server.send(.put, "/__hammock/scenarios/one-more", json: ["state": "a"]).0.status == .conflict)
        #expect(await server.send(.put, "/__hammock/scenarios/s1", json: ["state": "off"]).0.status == .ok)
    }

    @Test("A snapshot taken before a resource was added empties it on restore, and orphans nothing")
    func snapshotOfFewerResources() async throws {
        let server = try await server()
        try await server.saveSnapshot(named: "before")
        try await server.addResource(MockResource("pets", fields: ["name": .string], parents: ["people"]))
        _ = await server.send(.post, "/pets", json: ["name": "rex", "person_id": 2])
        try await server.restoreSnapshot(named: "before")
        #expect(await server.send(.get, "/pets").1 == [])
        #expect(await server.send(.post, "/pets", json: ["name": "rex", "person_id": 2]).0.status == .created)
    }

    @Test("Latency is read, set and removed at runtime; reset puts the configured one back")
    func latency() async throws {
        let server = try await server()
        #expect(await server.send(.get, "/__hammock/latency").1 == .null)
        let set = await server.send(.put, "/__hammock/latency", json: ["min": 0.25, "max": 0.5])
        #expect(set.1 == ["min": 0.25, "max": 0.5])
        #expect(server.latency == Latency(.milliseconds(250)...(.milliseconds(500))))
        let bad = await server.send(.put, "/__hammock/latency", json: ["min": 2, "max": 1])
        #expect(bad.0.status == .badRequest)
        #expect(bad.1?["detail"]?.stringValue?.contains("greater than max") == true)
        #expect(await server.send(.delete, "/__hammock/latency").1 == .null)
        server.setLatency(Latency(.milliseconds(1)...(.milliseconds(2))))
        try await server.reset()
        #expect(server.latency == nil)
    }

    @Test("Set at runtime, latency holds the next answer on the server's clock")
    func latencyApplies() async throws {
        let clock = ManualClock()
        let server = try await MockServer(resources: [Fixtures.people], clock: clock)
        server.setLatency(Latency(.seconds(1)...(.seconds(1))))
        let answer = Task { await server.respond(to: MockRequest(.get, "/people")) }
        #expect(await eventually { clock.sleeperCount == 1 })
        clock.advance(by: .seconds(1))
        #expect(await answer.value.status == .ok)
        // Admin requests are never delayed.
        #expect(await server.respond(to: MockRequest(.get, "/__hammock/version")).status == .ok)
    }

    @Test("The index lists the endpoints, the version names Hammock; unknown paths and methods are problems")
    func indexAndErrors() async throws {
        let server = try await server()
        let index = await server.send(.get, "/__hammock")
        #expect(index.1?["endpoints"]?.arrayValue?.isEmpty == false)
        #expect(await server.send(.get, "/__hammock/version").1 == ["name": "Hammock", "version": .string(MockServer.version)])
        let unknown = await server.send(.get, "/__hammock/nothing")
        #expect(unknown.0.status == .notFound && unknown.0.headerFields[.contentType] == "application/problem+json")
        let wrong = await server.send(.post, "/__hammock/version")
        #expect(wrong.0.status == .methodNotAllowed && wrong.0.headerFields[.allow] == "GET, HEAD")
        let options = await server.respond(to: MockRequest(.options, "/__hammock/reset"))
        #expect(options.status == .noContent && options.headerFields[.allow] == "POST, OPTIONS")
        // No admin answer grants another origin anything, whatever the resources' CORS setting.
        #expect(options.headerFields[.accessControlAllowOrigin] == nil)
        // A path that merely starts with the prefix's letters is the API's own business, not the admin's.
        #expect(await server.send(.get, "/__hammockish").0.status == .notFound)
        #expect(server.journal.entries.map(\.request.path) == ["/__hammockish"])
    }

    @Test("With a token the admin API needs it, compared whole; the rest of the API does not")
    func token() async throws {
        let server = try await server(options: MockServer.Options(adminToken: "s3cret"))
        func admin(_ authorization: String?) async -> HTTPResponse.Status {
            var fields = HTTPFields()
            if let authorization { fields[.authorization] = authorization }
            return await server.respond(to: MockRequest(.get, "/__hammock/requests", headerFields: fields)).status
        }
        #expect(await admin(nil) == .unauthorized)
        #expect(await admin("Bearer wrong") == .unauthorized)
        #expect(await admin("Bearer s3cre") == .unauthorized)
        #expect(await admin("Bearer s3cret2") == .unauthorized)
        #expect(await admin("Basic s3cret") == .unauthorized)
        #expect(await admin("Bearer s3cret") == .ok)
        #expect(await admin("bearer  s3cret ") == .ok)
        let refused = await server.respond(to: MockRequest(.post, "/__hammock/reset"))
        #expect(refused.headerFields[.wwwAuthenticate] == "Bearer realm=\"hammock-admin\"")
        #expect(await server.send(.get, "/people").0.status == .ok)
        // A preflight carries no credentials: it is answered without the token.
        #expect(await server.respond(to: MockRequest(.options, "/__hammock/reset")).status == .noContent)
    }

    @Test("Off, or under another prefix, the admin paths belong to the API")
    func prefix() async throws {
        let off = try await server(options: MockServer.Options(adminPath: nil))
        #expect(await off.send(.get, "/__hammock/version").0.status == .notFound)
        let moved = try await server(options: MockServer.Options(basePath: "/api", adminPath: "/_admin"))
        #expect(await moved.send(.get, "/_admin/version").0.status == .ok)
        #expect(await moved.send(.get, "/api/people").0.status == .ok)
        #expect(await moved.send(.get, "/__hammock/version").0.status == .notFound)
    }

    @Test("A configuration with a resource, route or base path under the admin prefix names the file and key")
    func configurationUnderAdmin() throws {
        func error(_ text: String) -> String? {
            do {
                _ = try ServerConfiguration(parsing: Array(text.utf8), file: "mock.json")
                return nil
            } catch {
                return error.description
            }
        }
        #expect(
            error(
                #"{"resources": [{"name": "people", "fields": {"a": "string"}}, {"name": "__hammock", "fields": {"a": "string"}}]}"#
            )?
            .hasPrefix("mock.json: resources[1].name: lies under /__hammock") == true)
        #expect(
            error(#"{"resources": [], "routes": [{"method": "GET", "path": "/__hammock/x"}]}"#)?
                .hasPrefix("mock.json: routes[0].path: lies under /__hammock") == true)
        #expect(
            error(#"{"resources": [{"name": "a", "fields": {"a": "string"}}], "basePath": "/__hammock/api"}"#)?.hasPrefix(
                "mock.json: basePath:") == true)
        #expect(
            error(#"{"resources": [], "adminPath": "/_admin", "routes": [{"method": "GET", "path": "/_admin"}]}"#)?
                .hasPrefix("mock.json: routes[0].path: lies under /_admin") == true)
        #expect(
            error(#"{"resources": [{"name": "a", "fields": {"a": "string"}}], "adminPath": "nope"}"#)?.hasPrefix(
                "mock.json: adminPath:") == true)
        #expect(error(#"{"resources": [{"name": "hammock", "fields": {"a": "string"}}]}"#) == nil)
    }

    @Test("Over loopback: the journal, a reset and the token work through a real socket")
    func overLoopback() async throws {
        let server = try await server(.sqlite, options: MockServer.Options(adminToken: "t"))
        try await server.whileServing { port in
            let client = LoopbackClient(port: port)
            #expect(try await client.send("POST", "/people", json: ["name": "cy"]).status == 201)
            #expect(try await client.send("GET", "/__hammock/requests").status == 401)
            let listed = try await client.send("GET", "/__hammock/requests", headers: ["Authorization": "Bearer t"])
            #expect(listed.status == 200)
            let entries = try #require(listed.json?.arrayValue)
            #expect(entries.count == 1)
            #expect(entries.first?["peer"]?.stringValue?.hasPrefix("127.0.0.1:") == true)
            #expect(try await client.send("POST", "/__hammock/reset", headers: ["Authorization": "Bearer t"]).status == 204)
            #expect(try await client.send("GET", "/people").json?.arrayValue?.count == 2)
        }
    }
}

/// ISO 8601 times as the journal writes them.
enum JSONTime {
    static func parse(_ text: String) -> Date? {
        try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)
    }
}

@Suite("Snapshots on SQLite")
struct SQLiteSnapshotTests {
    @Test("A reset on SQLite is written to the file: a restarted server has the data and the key counter it put back")
    func resetIsDurable() async throws {
        let path = TemporaryDirectory.make() + "reset.sqlite"
        let firstStore = try SQLiteStore(path: path)
        let first = try await MockServer(resources: [Fixtures.people], store: firstStore)
        try await first.addData(["name": "ada"], for: "people")
        _ = await first.send(.post, "/people", json: ["name": "bob"])
        _ = await first.send(.post, "/people", json: ["name": "cy"])
        try await first.reset()
        try firstStore.close()
        let second = try await MockServer(resources: [Fixtures.people], store: SQLiteStore(path: path))
        #expect(await second.send(.get, "/people").1?.arrayValue?.map { $0["name"] } == ["ada"])
        #expect(await second.send(.post, "/people", json: ["name": "dee"]).1?["id"] == 2)
    }
}
