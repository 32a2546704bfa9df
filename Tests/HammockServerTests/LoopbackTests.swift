import Foundation
import HammockHTTPServer
import HammockSQLite
import HammockServer
import HammockTestSupport
import Testing

/// The same server over a real socket on 127.0.0.1, port 0. Each test stops its server.
@Suite("Loopback HTTP")
struct LoopbackTests {
    /// Starts `server` on a free port, runs `body` with a client, and always stops the server.
    func withLiveServer<T>(_ server: MockServer, _ body: (LoopbackClient) async throws -> T) async throws -> T {
        let port = try await server.start(host: "127.0.0.1", port: 0)
        #expect(port > 0)
        #expect(await server.port == port)
        do {
            let result = try await body(LoopbackClient(port: port))
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    @Test("baseURL names the listening address with the base path, IPv6 in brackets; nil before start and after stop")
    func baseURL() async throws {
        let server = try await Fixtures.server(options: MockServer.Options(basePath: "/api/v1"))
        #expect(await server.baseURL == nil)
        let port = try await server.start(host: "127.0.0.1", port: 0)
        let base = try #require(await server.baseURL)
        #expect(base.absoluteString == "http://127.0.0.1:\(port)/api/v1")
        let client = LoopbackClient(baseURL: base.absoluteString)
        #expect(try await client.send("POST", "/people", json: ["name": "ada"]).status == 201)
        #expect(try await client.send("GET", "/people/1").json?["name"] == "ada")
        await server.stop()
        #expect(await server.baseURL == nil)

        // Every address: named by the loopback address a client here can reach.
        let everywhere = try await Fixtures.server()
        let anyPort = try await everywhere.start(host: "0.0.0.0", port: 0)
        #expect(await everywhere.baseURL?.absoluteString == "http://127.0.0.1:\(anyPort)")
        #expect(try await LoopbackClient(baseURL: "http://127.0.0.1:\(anyPort)").send("GET", "/people").status == 200)
        await everywhere.stop()
        if let ipv6Port = try? await everywhere.start(host: "::1", port: 0) {
            #expect(await everywhere.baseURL?.absoluteString == "http://[::1]:\(ipv6Port)")
            await everywhere.stop()
        }
    }

    @Test("The reference's curl session over HTTP, on SQLite")
    func referenceSession() async throws {
        let server = try await Fixtures.server(.sqlite)
        try await withLiveServer(server) { client in
            let empty = try await client.send("GET", "/people")
            #expect(empty.status == 200 && empty.json == [])
            let created = try await client.send("POST", "/people", json: ["name": "john", "numberOfKids": 1])
            #expect(created.status == 201)
            #expect(created.header("Location") == "/people/1")
            #expect(
                String(decoding: created.body, as: UTF8.self)
                    == #"{"id":1,"name":"john","numberOfKids":1,"kilometersWalked":null,"avatar":null}"#)
            #expect(try await client.send("GET", "/people").json == [created.json ?? nil])
            let updated = try await client.send("PUT", "/people/1", json: ["name": "jeff"])
            #expect(updated.status == 200 && updated.json?["name"] == "jeff" && updated.json?["numberOfKids"] == 1)
            let deleted = try await client.send("DELETE", "/people/1")
            #expect(deleted.status == 204 && deleted.body.isEmpty)
            #expect(try await client.send("GET", "/people/1").status == 404)
        }
    }

    @Test("Bad input over HTTP gets problem bodies")
    func badInput() async throws {
        let server = try await Fixtures.server(.memory, options: MockServer.Options(maximumBodySize: 64 * 1024))
        try await withLiveServer(server) { client in
            let malformed = try await client.send("POST", "/people", body: Array("{nope".utf8), contentType: "application/json")
            #expect(malformed.status == 400 && malformed.header("Content-Type") == "application/problem+json")
            #expect(malformed.json?["offset"] == 1)
            let typed = try await client.send("POST", "/people", json: ["numberOfKids": "two"])
            #expect(typed.status == 422 && typed.json?["errors"]?[0]?["field"] == "numberOfKids")
            let unknown = try await client.send("GET", "/unicorns")
            #expect(unknown.status == 404 && unknown.json?["title"] == "Not Found")
            let notAllowed = try await client.send("DELETE", "/people")
            #expect(notAllowed.status == 405 && notAllowed.header("Allow") == "GET, HEAD, POST")
            let media = try await client.send("POST", "/people", body: Array("x".utf8), contentType: "text/plain")
            #expect(media.status == 415)
            let huge = Array(#"{"name":""#.utf8) + Array(repeating: UInt8(ascii: "x"), count: 200_000) + Array(#""}"#.utf8)
            let tooLarge = try await client.send("POST", "/people", body: huge, contentType: "application/json")
            #expect(tooLarge.status == 413 && tooLarge.json?["limit"] == 65536)
            let form = try await client.send(
                "POST", "/people", body: Array("name=ada&numberOfKids=2".utf8), contentType: "application/x-www-form-urlencoded")
            #expect(form.status == 201 && form.json?["numberOfKids"] == 2)
            #expect(try await client.send("GET", "/people").json?.arrayValue?.count == 1)  // only the form request wrote
        }
    }

    @Test("Nested routes and a trailing slash over HTTP")
    func nested() async throws {
        let server = try await Fixtures.server(.sqlite)
        try await withLiveServer(server) { client in
            _ = try await client.send("POST", "/people/", json: ["name": "ada"])
            let car = try await client.send("POST", "/people/1/cars", json: ["name": "mini"])
            #expect(car.status == 201 && car.json?["person_id"] == 1)
            #expect(try await client.send("GET", "/people/1/cars/").json?[0]?["name"] == "mini")
            #expect(try await client.send("POST", "/people/2/cars", json: ["name": "x"]).status == 404)
        }
    }

    @Test("After a restart on SQLite every acknowledged write is there and ids keep counting up")
    func restart() async throws {
        let path = TemporaryDirectory.make() + "restart.sqlite"
        let firstStore = try SQLiteStore(path: path)
        let first = try await MockServer(resources: [Fixtures.people, Fixtures.cars], store: firstStore)
        let acknowledged = try await withLiveServer(first) { client in
            var bodies: [JSON] = []
            for index in 1...20 {
                let reply = try await client.send(
                    "POST", "/people", json: ["name": .string("p\(index)"), "numberOfKids": .integer(index)])
                #expect(reply.status == 201)
                bodies.append(reply.json ?? nil)
            }
            #expect(try await client.send("DELETE", "/people/20").status == 204)
            _ = try await client.send("PATCH", "/people/3", json: ["name": "changed"])
            _ = try await client.send("POST", "/people/3/cars", json: ["name": "mini"])
            return try await client.send("GET", "/people").json
        }
        try firstStore.close()
        let second = try await MockServer(resources: [Fixtures.people, Fixtures.cars], store: SQLiteStore(path: path))
        try await withLiveServer(second) { client in
            #expect(try await client.send("GET", "/people").json == acknowledged)
            #expect(try await client.send("GET", "/people/3").json?["name"] == "changed")
            #expect(try await client.send("GET", "/people/3/cars").json?.arrayValue?.count == 1)
            let next = try await client.send("POST", "/people", json: ["name": "after restart"])
            #expect(next.json?["id"] == 21)  // 20 was deleted and is not reused
        }
    }

    @Test("Starting twice fails; a taken port is reported; stop is idempotent")
    func lifecycle() async throws {
        let server = try await Fixtures.server()
        let port = try await server.start(port: 0)
        await #expect(throws: MockServerError.alreadyRunning) { try await server.start(port: 0) }
        let other = try await Fixtures.server()
        do {
            try await other.start(port: port)
            Issue.record("binding a taken port should fail")
            await other.stop()
        } catch let error as MockServerError {
            #expect(error.description.contains("cannot listen on 127.0.0.1:\(port)"))
        }
        await server.stop()
        await server.stop()
        #expect(await server.port == nil)
        let again = try await server.start(port: 0)
        #expect(try await LoopbackClient(port: again).send("GET", "/people").status == 200)
        await server.stop()
    }

    @Test("Every row of the route table answers over HTTP, and nothing else does")
    func routeTable() async throws {
        let server = try await Fixtures.server(.sqlite)
        let table = server.routeTable.map { "\($0.methodList) \($0.pattern)" }
        #expect(
            table == [
                "GET, HEAD, POST /people", "GET, HEAD, PUT, PATCH, DELETE /people/:id",
                "GET, HEAD, POST /cars", "GET, HEAD, PUT, PATCH, DELETE /cars/:id", "GET, HEAD, POST /people/:id/cars",
            ])
        try await withLiveServer(server) { client in
            let rows: [(String, String, JSON?, Int)] = [
                ("POST", "/people", ["name": "ada"], 201),
                ("GET", "/people", nil, 200),
                ("HEAD", "/people", nil, 200),
                ("GET", "/people/1", nil, 200),
                ("HEAD", "/people/1", nil, 200),
                ("PUT", "/people/1", ["name": "ada l."], 200),
                ("PATCH", "/people/1", ["numberOfKids": 2], 200),
                ("POST", "/cars", ["name": "beetle"], 201),
                ("GET", "/cars", nil, 200),
                ("GET", "/cars/1", nil, 200),
                ("PUT", "/cars/1", ["color": "red"], 200),
                ("PATCH", "/cars/1", ["person_id": 1], 200),
                ("POST", "/people/1/cars", ["name": "mini"], 201),
                ("GET", "/people/1/cars", nil, 200),
                ("HEAD", "/people/1/cars", nil, 200),
                ("DELETE", "/cars/2", nil, 204),
                ("DELETE", "/people/1", nil, 204),
                ("PUT", "/people", ["name": "x"], 405),
                ("POST", "/people/1", ["name": "x"], 405),
                ("DELETE", "/people/1/cars", nil, 405),
                ("GET", "/cars/1/people", nil, 404),
                ("GET", "/people/1/cars/1", nil, 404),
            ]
            for (method, path, body, status) in rows {
                let reply: LoopbackClient.Reply
                if let body {
                    reply = try await client.send(method, path, json: body)
                } else {
                    reply = try await client.send(method, path)
                }
                #expect(reply.status == status, "\(method) \(path)")
            }
            #expect(try await client.send("GET", "/cars/1").json?["person_id"] == .null)  // orphaned by the delete
        }
    }

    @Test("Stopping sends responses held back by latency instead of waiting out the delay", .timeLimit(.minutes(1)))
    func stopCutsLatencyShort() async throws {
        let clock = ManualClock()  // never advanced: only stopping can release the response
        let server = try await MockServer(
            resources: [Fixtures.people], options: MockServer.Options(latency: Latency(.seconds(600)...(.seconds(600)))),
            clock: clock)
        let port = try await server.start(port: 0)
        let call = Task { try await LoopbackClient(port: port).send("GET", "/people") }
        #expect(await clock.waitForSleepers(1))
        await server.stop()
        #expect(try await call.value.status == 200)
        #expect(clock.sleeperCount == 0)
    }
}
