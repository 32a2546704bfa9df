import HTTPTypes
import HammockHTTPServer
import HammockJSON
import HammockServer
import HammockTestSupport
import Testing

/// Routes of your own next to the resources: described in a configuration file, or written in Swift.
@Suite("Custom routes")
struct CustomRouteTests {
    static let configuration = #"""
        {
          "resources": [{"name": "people", "fields": {"name": "string"}}],
          "data": {"people": [{"name": "ada"}, {"name": "bob"}]},
          "routes": [
            {"method": "POST", "path": "/login", "match": {"body": {"username": "ada", "password": "secret"}},
             "headers": {"X-User": "{{request.body.username}}"},
             "body": {"token": "t-{{request.body.username}}", "user": "{{request.body.username}}", "remember": "{{body.remember}}"}},
            {"method": "POST", "path": "/login", "status": 401, "body": {"error": "bad credentials"}},
            {"method": "GET", "path": "/users/:id/avatar", "headers": {"Content-Type": "image/png", "X-Id": "{{path.id}}"}},
            {"method": "GET", "path": "/search", "match": {"query": {"page": "2"}, "headers": {"x-tenant": "acme"}},
             "body": {"page": "{{request.query.page}}", "tenant": "{{request.headers.x-tenant}}", "missing": "{{query.nope}}"}},
            {"method": "GET", "path": "/people/me", "body": {"id": 0, "name": "me"}}
          ]
        }
        """#

    static func server() async throws -> MockServer {
        let configuration = try ServerConfiguration(parsing: Array(configuration.utf8), file: "stubs.json")
        let server = try await MockServer(configuration: configuration, store: MemoryStore())
        _ = try await server.loadData(from: configuration)
        return server
    }

    @Test("A stub answers with its status, headers and a body whose placeholders read the request")
    func templates() async throws {
        let server = try await Self.server()
        let (ok, body) = await server.send(
            .post, "/login", json: ["username": "ada", "password": "secret", "remember": true])
        #expect(ok.status == .ok)
        #expect(body == ["token": "t-ada", "user": "ada", "remember": true])
        #expect(ok.headerFields[HTTPField.Name("X-User")!] == "ada")
        let (denied, problem) = await server.send(.post, "/login", json: ["username": "ada", "password": "wrong"])
        #expect(denied.status == .unauthorized && problem == ["error": "bad credentials"])
        let avatar = await server.respond(to: MockRequest(.get, "/users/a%20b/avatar"))
        #expect(avatar.status == .ok && avatar.body.isEmpty)
        #expect(avatar.headerFields[.contentType] == "image/png" && avatar.headerFields[HTTPField.Name("X-Id")!] == "a b")
    }

    @Test("A stub without placeholders answers its bytes; one changed after it was made answers the new body and headers")
    func fixedAndChangedStubs() async throws {
        var stub = try StubRoute(
            .get, "/fixed", headers: [(HTTPField.Name("X-Kind")!, "fixed")],
            body: ["n": 1, "deep": [["a": "{not a placeholder}"]]])
        let first = try await Self.server()
        first.addStubs([stub])
        let once = await first.respond(to: MockRequest(.get, "/fixed"))
        let twice = await first.respond(to: MockRequest(.get, "/fixed"))
        #expect(try once.json() == ["n": 1, "deep": [["a": "{not a placeholder}"]]])
        #expect(once.body == twice.body && once.headerFields[HTTPField.Name("X-Kind")!] == "fixed")
        #expect(once.headerFields[.contentType] == "application/json; charset=utf-8")

        // A placeholder deep in the body, and one in a header, added after the stub was made.
        stub.body = ["n": 2, "deep": [["kind": "{{query.kind}}"]]]
        stub.headers = [(HTTPField.Name("X-Kind")!, "{{query.kind}}")]
        let second = try await Self.server()
        second.addStubs([stub])
        let changed = await second.respond(to: MockRequest(.get, "/fixed?kind=templated"))
        #expect(try changed.json() == ["n": 2, "deep": [["kind": "templated"]]])
        #expect(changed.headerFields[HTTPField.Name("X-Kind")!] == "templated")

        // And back to fixed values.
        stub.body = ["n": 3]
        stub.headers = []
        let third = try await Self.server()
        third.addStubs([stub])
        #expect(try await third.respond(to: MockRequest(.get, "/fixed?kind=x")).json() == ["n": 3])
    }

    @Test("Stub paths take wildcards: * is any one segment, ** at the end the rest of the path, none included")
    func wildcards() async throws {
        let server = try await MockServer()
        server.addStubs([
            try StubRoute(.get, "/files/*/raw", body: ["one": true]),
            try StubRoute(.get, "/assets/**", body: ["rest": true]),
        ])
        #expect(await server.send(.get, "/files/a.txt/raw").1 == ["one": true])
        #expect(await server.send(.get, "/files/a/b/raw").0.status == .notFound)
        #expect(await server.send(.get, "/assets").1 == ["rest": true])
        #expect(await server.send(.get, "/assets/css/site.css").1 == ["rest": true])
        #expect(await server.send(.get, "/assetsx/a").0.status == .notFound)
        #expect(throws: StubError.self) { try StubRoute(.get, "/assets/**/raw") }
        #expect(try PathPattern("/a/*/c").match("/a/b/c") == [:])
        #expect(try PathPattern("/a/:id/**").match("/a/7/x/y") == ["id": "7"])
    }

    @Test(
        "A stub for HEAD answers HEAD with the length it declares, before a GET stub of the path; a GET stub alone answers HEAD")
    func headStubs() async throws {
        let server = try await MockServer()
        server.addStubs([
            try StubRoute(.get, "/files/report", body: ["pages": 12]),
            try StubRoute(.head, "/files/report", headers: [(.contentLength, "1234"), (.eTag, "\"r1\"")]),
            try StubRoute(.get, "/files/plain", body: ["pages": 3]),
        ])
        // The HEAD stub was unreachable: a HEAD was matched against GET stubs only, and 404'd without one.
        let head = await server.respond(to: MockRequest(.head, "/files/report"))
        #expect(head.status == .ok && head.body.isEmpty)
        #expect(head.headerFields[.contentLength] == "1234" && head.headerFields[.eTag] == "\"r1\"")
        // The GET stub still answers GET, and its turn was not taken by the HEAD.
        #expect(await server.send(.get, "/files/report").1 == ["pages": 12])
        let plain = await server.respond(to: MockRequest(.head, "/files/plain"))
        #expect(plain.status == .ok && plain.headerFields[.contentLength] == String(#"{"pages":3}"#.utf8.count))
        // A declared length that is no count of bytes is not trusted: the empty body's 0 is said instead.
        for (index, declared) in ["lots", "-1", "", "+5", "99999999999999999999999", "1 2"].enumerated() {
            server.addStubs([try StubRoute(.head, "/files/odd\(index)", headers: [(.contentLength, declared)])])
            let odd = await server.respond(to: MockRequest(.head, "/files/odd\(index)"))
            #expect(odd.headerFields[.contentLength] == "0", "\(declared)")
        }
    }

    @Test("A stub's own CORS grant is sent as written (a credentialed one to one origin); a stub without one gets the mock's")
    func stubsKeepTheirCORSGrant() async throws {
        let server = try await MockServer()
        server.addStubs([
            try StubRoute(
                .get, "/me",
                headers: [
                    (.accessControlAllowOrigin, "https://app.example"), (.accessControlAllowCredentials, "true"),
                    (.accessControlExposeHeaders, "X-Request-Id"),
                ], body: ["name": "Ada"]),
            try StubRoute(.get, "/open", body: ["name": "Grace"]),
        ])
        var request = MockRequest(.get, "/me")
        request.headerFields[.origin] = "https://app.example"
        let granted = await server.respond(to: request)
        // `*` beside Allow-Credentials, what the mock wrote before, is refused by every browser.
        #expect(granted.headerFields[.accessControlAllowOrigin] == "https://app.example")
        #expect(granted.headerFields[.accessControlAllowCredentials] == "true")
        #expect(granted.headerFields[.accessControlExposeHeaders] == "X-Request-Id")
        let open = await server.respond(to: MockRequest(.get, "/open"))
        #expect(open.headerFields[.accessControlAllowOrigin] == "*")
        #expect(open.headerFields[.accessControlExposeHeaders]?.contains("ETag") == true)
    }

    @Test("Query and header conditions must all hold; otherwise the next route, or a 404")
    func matching() async throws {
        let server = try await Self.server()
        var headers = HTTPFields()
        headers[HTTPField.Name("X-Tenant")!] = "acme"
        let matched = await server.respond(to: MockRequest(.get, "/search?page=2&q=x", headerFields: headers))
        #expect(try matched.json() == ["page": "2", "tenant": "acme", "missing": nil])
        #expect(await server.respond(to: MockRequest(.get, "/search?page=3", headerFields: headers)).status == .notFound)
        #expect(await server.respond(to: MockRequest(.get, "/search?page=2")).status == .notFound)
    }

    @Test("Custom routes win over the resources' routes, whose other paths still answer; other methods are 405")
    func precedence() async throws {
        let server = try await Self.server()
        #expect(await server.send(.get, "/people/me").1 == ["id": 0, "name": "me"])
        #expect(await server.send(.get, "/people/2").1?["name"] == "bob")
        let wrongMethod = await server.respond(to: MockRequest(.delete, "/login"))
        #expect(wrongMethod.status == .methodNotAllowed && wrongMethod.headerFields[.allow] == "POST")
        let table = server.routeTable.map(\.pattern)
        #expect(Array(table.prefix(4)) == ["/login", "/users/:id/avatar", "/search", "/people/me"])
        #expect(table.contains("/people/:id"))
    }

    @Test(
        "A route that serves a path but not the method does not hide a later one that allows it; a 405 names every method of the path"
    )
    func methodFallsThrough() async throws {
        // As an imported API document makes them: the resource answers GET and POST /people, a stub the
        // documented bulk PUT of the same path, and one GET /people/:id/badge beside nothing else.
        let configuration = try ServerConfiguration(
            parsing: Array(
                #"""
                {"resources": [{"name": "people", "fields": {"name": "string"}}],
                 "routes": [{"method": "PUT", "path": "/people", "status": 202, "body": {"replaced": true}},
                            {"method": "GET", "path": "/people/new", "body": {"form": true}}]}
                """#.utf8), file: "mixed.json")
        let server = try await MockServer(configuration: configuration, store: MemoryStore())
        #expect(await server.respond(to: MockRequest(.post, "/people", json: ["name": "ada"])).status == .created)
        #expect(await server.respond(to: MockRequest(.get, "/people")).status == .ok)
        #expect(try await server.respond(to: MockRequest(.put, "/people", json: [])).json() == ["replaced": true])

        let refused = await server.respond(to: MockRequest(.delete, "/people"))
        #expect(refused.status == .methodNotAllowed)
        #expect(refused.headerFields[.allow] == "PUT, GET, HEAD, POST")
        let options = await server.respond(to: MockRequest(.options, "/people"))
        #expect(options.status == .noContent && options.headerFields[.allow] == "PUT, GET, HEAD, POST, OPTIONS")
        // The resource would call `new` a key of the wrong form (a 404); the stub that serves the path
        // keeps its 405 instead.
        let wrongKey = await server.respond(to: MockRequest(.post, "/people/new"))
        #expect(wrongKey.status == .methodNotAllowed && wrongKey.headerFields[.allow] == "GET, HEAD")

        let client = LoopbackClient(port: try await server.start(host: "127.0.0.1", port: 0))
        do {
            #expect(try await client.send("POST", "/people", json: ["name": "bob"]).status == 201)
            #expect(try await client.send("PUT", "/people", json: []).status == 202)
            let reply = try await client.send("PATCH", "/people")
            #expect(reply.status == 405 && reply.header("Allow") == "PUT, GET, HEAD, POST")
            #expect(reply.header("Content-Type") == "application/problem+json")
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test("Routes written in Swift read the path, the body and the store, and come before the resources'")
    func swiftRoutes() async throws {
        let server = try await Self.server()
        try server.route(.get, "/people/:id/greeting") { request in
            let key = Int(request.parameters["id"] ?? "") ?? 0
            guard let person = try await request.records.find("people", key: .integer(key)) else {
                throw HTTPProblem.notFound("nobody with id \(key)")
            }
            return MockResponse(json: ["greeting": .string("hello \(person["name"]?.stringValue ?? "")")])
        }
        try server.route(.post, "/people/import") { request in
            let created = try await request.records.create("people", request.json?.objectValue ?? [:])
            return MockResponse(status: .created, json: .object(created))
        }
        try server.route(.get, "/people/named/:prefix") { request in
            let query = ListQuery(
                filters: [.init(field: "name", comparison: .like, values: [.string((request.parameters["prefix"] ?? "") + "%")])],
                sort: [.init(field: "name", isDescending: true)], window: .page(number: 1, size: 1))
            let (people, total) = try await request.records.list("people", matching: query)
            return MockResponse(json: ["first": .array(people.map(JSON.object)), "total": .integer(total)])
        }
        #expect(await server.send(.get, "/people/named/b").1 == ["first": [["id": 2, "name": "bob"]], "total": 1])
        #expect(await server.send(.get, "/people/named/z").1 == ["first": [], "total": 0])
        #expect(await server.send(.get, "/people/1/greeting").1 == ["greeting": "hello ada"])
        #expect(await server.send(.get, "/people/9/greeting").0.status == .notFound)
        let (created, record) = await server.send(.post, "/people/import", json: ["name": "cy"])
        #expect(created.status == .created && record?["id"] == 3)
        // The store's checks hold here too: an unknown field is a 422.
        #expect(await server.send(.post, "/people/import", json: ["age": 3]).0.status == .unprocessableContent)
        #expect(throws: StubError.self) { try server.route(.get, "no-slash") { _ in MockResponse(status: .ok) } }
    }

    @Test("A stub's latency holds its answer on the server's clock, from the request's arrival")
    func stubLatency() async throws {
        let clock = ManualClock()
        let server = try await MockServer(resources: [Fixtures.people], clock: clock, random: { 0.5 })
        server.addStubs([try StubRoute(.get, "/slow", body: ["ok": true], latency: Latency(.seconds(1)...(.seconds(3))))])
        #expect(await clock.expectAnswerHeld(MockRequest(.get, "/slow"), by: server, for: .seconds(2)) == .ok)
    }

    @Test(
        "Configuration errors name the file, the route's index and the key",
        arguments: [
            (#"{"method": "FETCH?", "path": "/a"}"#, "routes[0].method"),
            (#"{"path": "/a"}"#, "routes[0].method"),
            (#"{"method": "GET"}"#, "routes[0].path"),
            (#"{"method": "GET", "path": "a"}"#, "routes[0].path"),
            (#"{"method": "GET", "path": "/a/:id/:id"}"#, "routes[0].path"),
            (#"{"method": "GET", "path": "/a", "status": 700}"#, "routes[0].status"),
            (#"{"method": "GET", "path": "/a", "body": {"x": "{{cookies.a}}"}}"#, "routes[0].body"),
            (#"{"method": "GET", "path": "/a", "body": "{{path.id"}"#, "routes[0].body"),
            (#"{"method": "GET", "path": "/a", "match": {"cookies": {}}}"#, "routes[0].match.cookies"),
            (#"{"method": "GET", "path": "/a", "headers": {"X": 1}}"#, "routes[0].headers.X"),
            (#"{"method": "GET", "path": "/a", "headers": {"X": "{{cookie}}"}}"#, "routes[0].headers.X"),
            (#"{"method": "GET", "path": "/a", "delay": 1}"#, "routes[0].delay"),
            // A status that forbids a body, with one; a 1xx, which is no final answer.
            (#"{"method": "GET", "path": "/a", "status": 204, "body": {"x": 1}}"#, "routes[0].body"),
            (#"{"method": "GET", "path": "/a", "status": 304, "body": "not modified"}"#, "routes[0].body"),
            (#"{"method": "GET", "path": "/a", "status": 101}"#, "routes[0].status"),
            (#"{"method": "GET", "path": "/a", "status": 199}"#, "routes[0].status"),
        ])
    func configurationErrors(route: String, keyPath: String) throws {
        let text = #"{"resources": [{"name": "people", "fields": {"name": "string"}}], "routes": [\#(route)]}"#
        let error = try #require(throws: ConfigurationError.self) {
            _ = try ServerConfiguration(parsing: Array(text.utf8), file: "mock.json")
        }
        #expect(error.file == "mock.json")
        #expect(error.keyPath == keyPath, "\(error)")
    }
}

@Suite("A base path")
struct BasePathTests {
    @Test("Every route is served under the base path, and paths in the answer carry it")
    func prefixed() async throws {
        let text = #"""
            {"basePath": "/api/v1/", "resources": [{"name": "people", "fields": {"name": "string"}}],
             "routes": [{"method": "GET", "path": "/health", "body": {"ok": true}}]}
            """#
        let configuration = try ServerConfiguration(parsing: Array(text.utf8), file: "mock.json")
        #expect(configuration.basePath == "/api/v1")
        let server = try await MockServer(configuration: configuration, store: MemoryStore())
        let (created, _) = await server.send(.post, "/api/v1/people", json: ["name": "ada"])
        #expect(created.status == .created && created.headerFields[.location] == "/api/v1/people/1")
        #expect(await server.send(.get, "/api/v1/people/1").1?["name"] == "ada")
        #expect(await server.send(.get, "/api/v1/health").1 == ["ok": true])
        let (paged, _) = await server.send(.get, "/api/v1/people?_page=1&_per_page=1")
        #expect(paged.headerFields[.link]?.hasPrefix("</api/v1/people?_page=1&_per_page=1>") == true)
        for outside in ["/people", "/api/v1people", "/api", "/health"] {
            #expect(await server.send(.get, outside).0.status == .notFound, "\(outside)")
        }
        #expect(server.routeTable.map(\.pattern).contains("/api/v1/people/:id"))
        #expect(server.routeTable.first?.pattern == "/api/v1/health")
    }

    @Test("A base path that is not a path is refused; the root means none", arguments: ["api", "/a?b", "/a//b", "/a b"])
    func refused(text: String) throws {
        #expect(!MockServer.Options.isValidBasePath(text))
        let file = #"{"basePath": "\#(text)", "resources": [{"name": "people", "fields": {"name": "string"}}]}"#
        let error = try #require(throws: ConfigurationError.self) {
            _ = try ServerConfiguration(parsing: Array(file.utf8), file: "mock.json")
        }
        #expect(error.keyPath == "basePath")
        #expect(MockServer.Options(basePath: "/").basePath == nil)
    }
}
