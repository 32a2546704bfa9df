import Foundation
import HTTPTypes
import HammockHTTPServer
import HammockJSON
import HammockServer
import HammockTestSupport
import Synchronization
import Testing

/// The admin API against the web pages open on the developer's machine (docs/security.md, "The admin
/// API and web pages"): cross-site writes, reads of the journal, DNS rebinding, and the secrets the
/// journal holds; and what a client can make the server hold.
@Suite("The admin API against other web pages")
struct AdminSecurityTests {
    static let origin = HTTPField.Name("Origin")!
    static let host = HTTPField.Name("Host")!
    static let fetchSite = HTTPField.Name("Sec-Fetch-Site")!

    /// A server with one person, its baseline taken.
    func server(options: MockServer.Options = MockServer.Options()) async throws -> MockServer {
        let server = try await Fixtures.server(options: options)
        _ = await server.send(.post, "/people", json: ["name": "ada"])
        return server
    }

    func request(
        _ method: HTTPRequest.Method, _ path: String, _ fields: [HTTPField.Name: String] = [:], body: String? = nil
    ) -> MockRequest {
        var headerFields = HTTPFields()
        for (name, value) in fields { headerFields[name] = value }
        return MockRequest(method, path, headerFields: headerFields, body: body.map { Array($0.utf8) } ?? [])
    }

    @Test("A page's simple POST (text/plain, a form, no type with a body) is 415 and changes nothing")
    func simpleWritesAreRefused() async throws {
        let server = try await server()
        for type in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", nil] {
            var fields: [HTTPField.Name: String] = [Self.host: "127.0.0.1:8888"]
            if let type { fields[.contentType] = type }
            let reset = await server.respond(to: request(.post, "/__hammock/reset", fields, body: "{}"))
            #expect(reset.status == .unsupportedMediaType, "\(type ?? "no type")")
            #expect(reset.headerFields[.contentType] == "application/problem+json")
            let route = await server.respond(
                to: request(.post, "/__hammock/routes", fields, body: #"{"method": "GET", "path": "/owned"}"#))
            #expect(route.status == .unsupportedMediaType)
        }
        // Nothing changed: the person is there, no route was added.
        #expect(await server.send(.get, "/people").1?.arrayValue?.count == 1)
        #expect(await server.send(.get, "/owned").0.status == .notFound)
        // JSON, or a write with no body at all (curl -X POST), is the admin API's own.
        #expect(await server.respond(to: request(.post, "/__hammock/reset")).status == .noContent)
        #expect(await server.send(.get, "/people").1?.arrayValue?.isEmpty == true)
    }

    @Test("A request from another origin's page is 403 on every admin path; the server's own origin is let in")
    func otherOriginsAreRefused() async throws {
        let server = try await server()
        for origin in ["http://evil.example", "https://127.0.0.1:8888", "http://127.0.0.1:3000", "null", "http://localhost:8888"]
        {
            for (method, path) in [
                (HTTPRequest.Method.post, "/__hammock/reset"), (.get, "/__hammock/requests"), (.get, "/__hammock/events"),
                (.options, "/__hammock/reset"), (.get, "/__hammock/nothing"),
            ] {
                let answer = await server.respond(
                    to: request(
                        method, path, [Self.host: "127.0.0.1:8888", Self.origin: origin, .contentType: "application/json"]))
                #expect(answer.status == .forbidden, "\(origin) \(method) \(path)")
                #expect(answer.headerFields[.accessControlAllowOrigin] == nil)
            }
        }
        // The browser's mark, when a page sends no Origin (a GET it cannot read anyway).
        for site in ["cross-site", "same-site"] {
            let read = await server.respond(to: request(.get, "/__hammock/requests", [Self.fetchSite: site]))
            #expect(read.status == .forbidden, "\(site)")
        }
        #expect(await server.send(.get, "/people").1?.arrayValue?.count == 1)
        // The console, on the server's own origin, writes as it always did.
        let own = await server.respond(
            to: request(
                .put, "/__hammock/latency",
                [
                    Self.host: "127.0.0.1:8888", Self.origin: "http://127.0.0.1:8888", .contentType: "application/json",
                    Self.fetchSite: "same-origin",
                ],
                body: #"{"min": 0, "max": 0}"#))
        #expect(own.status == .ok)
        let ownIPv6 = await server.respond(
            to: request(.post, "/__hammock/reset", [Self.host: "[::1]:8888", Self.origin: "http://[::1]:8888"]))
        #expect(ownIPv6.status == .noContent)
    }

    @Test("No admin answer grants CORS, though the resources' answers still do")
    func noCORSGrant() async throws {
        let server = try await server()
        for path in ["/__hammock", "/__hammock/requests", "/__hammock/version", "/__hammock/nothing"] {
            let answer = await server.respond(to: request(.get, path, [Self.host: "localhost:8888"]))
            #expect(answer.headerFields[.accessControlAllowOrigin] == nil, "\(path)")
            #expect(answer.headerFields[.accessControlExposeHeaders] == nil, "\(path)")
        }
        let people = await server.respond(to: request(.get, "/people", [Self.origin: "http://localhost:3000"]))
        #expect(people.headerFields[.accessControlAllowOrigin] == "*")
    }

    @Test("A re-pointed name (DNS rebinding) is refused on every admin path; this machine's names and configured ones are not")
    func hostAllowlist() async throws {
        let server = try await server(options: MockServer.Options(adminHosts: ["mock.test"]))
        var browser = HTTPFields()
        browser[.accept] = "text/html"
        for host in [
            "attacker.example:8888", "attacker.example", "127.0.0.1.attacker.example", "localhost.evil:8888", "[evil.com]",
            "mock.test.evil",
        ] {
            for path in ["/__hammock/requests", "/__hammock/nothing", "/__hammock/reset"] {
                let answer = await server.respond(to: request(.get, path, [Self.host: host]))
                #expect(answer.status == .forbidden, "\(host) \(path)")
                #expect(String(decoding: answer.body, as: UTF8.self).contains("--allow-host"))
            }
        }
        for host in [
            "localhost", "localhost:8888", "LOCALHOST.:8888", "app.localhost:8888", "127.0.0.1:8888", "10.0.0.7", "[::1]:8888",
            "mock.test:8888", "Mock.Test", "3f0c.hammock.invalid",
        ] {
            let answer = await server.respond(to: request(.get, "/__hammock/requests", [Self.host: host]))
            #expect(answer.status == .ok, "\(host)")
        }
        // The rest of the API keeps answering any name (a front end's own dev proxy may use one).
        #expect(await server.respond(to: request(.get, "/people", [Self.host: "attacker.example"])).status == .ok)
    }

    @Test("Credentials in the journal are redacted where the admin API serves it, unless asked; Swift keeps them")
    func redaction() async throws {
        let server = try await server(options: MockServer.Options(redactedHeaders: ["X-Session"]))
        server.journal.clear()
        _ = await server.respond(
            to: request(
                .get, "/people",
                [
                    .authorization: "Bearer s3cret-token", .cookie: "sid=abc123; theme=dark", HTTPField.Name("X-Session")!: "xyz",
                    HTTPField.Name("X-Api-Key")!: "k-42", .accept: "application/json",
                ]))
        let listed = try #require(await server.send(.get, "/__hammock/requests").1?.arrayValue?.last)
        let headers = try #require(listed["request"]?["headers"])
        #expect(headers["authorization"] == "Bearer [redacted]")
        // HTTPFields keeps each cookie of a `Cookie` line as a field of its own (as HTTP/2 does).
        #expect(headers["cookie"] == ["sid=[redacted]", "theme=[redacted]"])
        #expect(headers["x-session"] == "[redacted]")
        #expect(headers["x-api-key"] == "[redacted]")
        #expect(headers["accept"] == "application/json")
        let text = String(decoding: await server.send(.get, "/__hammock/requests").0.body, as: UTF8.self)
        for secret in ["s3cret-token", "abc123", "xyz", "k-42", "dark"] { #expect(!text.contains(secret), "\(secret)") }
        let id = try #require(listed["id"]?.intValue)
        let one = await server.send(.get, "/__hammock/requests/\(id)").1
        #expect(one?["request"]?["headers"]?["authorization"] == "Bearer [redacted]")
        // Asked for: the values as sent.
        let revealed = try #require(await server.send(.get, "/__hammock/requests?redact=false").1?.arrayValue?.last)
        #expect(revealed["request"]?["headers"]?["authorization"] == "Bearer s3cret-token")
        #expect(await server.send(.get, "/__hammock/requests?redact=maybe").0.status == .badRequest)
        // The events stream's replay is redacted too.
        var fields = HTTPFields()
        fields[HTTPField.Name("Last-Event-ID")!] = "0"
        let events = await server.respond(to: MockRequest(.get, "/__hammock/events?after=0", headerFields: fields))
        let stream = try #require(events.stream)
        let opening = try await stream.collect(upTo: 1)
        #expect(String(decoding: opening, as: UTF8.self).contains("Bearer [redacted]"))
        #expect(!String(decoding: opening, as: UTF8.self).contains("s3cret-token"))
        // The test's own process reads what was sent.
        #expect(server.journal.entries.last?.headerFields[.authorization] == "Bearer s3cret-token")
    }

    @Test(
        "Set-Cookie keeps its name and attributes and hides its value",
        arguments: [
            ("sid=abc; Path=/; HttpOnly", "sid=[redacted]; Path=/; HttpOnly"), ("bare", "[redacted]"),
        ])
    func setCookieRedaction(value: String, shown: String) async throws {
        let server = try await server()
        let route = try StubRoute(.get, "/login", headers: [(HTTPField.Name.setCookie, value)])
        _ = server.addStubs([route])
        server.journal.clear()
        _ = await server.respond(to: MockRequest(.get, "/login"))
        let listed = try #require(await server.send(.get, "/__hammock/requests").1?.arrayValue?.last)
        #expect(listed["response"]?["headers"]?["set-cookie"] == .string(shown))
    }

    @Test("An empty or blank admin token, or one a header cannot carry, is refused when the server is made")
    func emptyToken() async throws {
        for token in ["", " ", "\t", "two words", "tab\there", "line\nbreak", "émoji"] {
            await #expect(throws: ConfigurationError.self, "\(token.debugDescription)") {
                _ = try await MockServer(options: MockServer.Options(adminToken: token))
            }
        }
        // Before: an empty token compared equal to a request that sent none.
        let guarded = try await MockServer(options: MockServer.Options(adminToken: "t0k3n"))
        #expect(await guarded.respond(to: MockRequest(.get, "/__hammock/requests")).status == .unauthorized)
    }

    @Test("An events reader that stops reading is dropped with a last event once it falls 8 MiB behind; nothing more is held")
    func slowEventsReader() async throws {
        let options = MockServer.Options(maximumBodySize: 2 << 20)
        let server = try await MockServer(options: options)
        _ = server.addStubs([try StubRoute(.post, "/upload", status: .noContent)])
        let events = await server.respond(to: MockRequest(.get, "/__hammock/events"))
        let stream = try #require(events.stream)
        // A reader that takes the first chunk and then stops reading until the gate opens.
        let gate = StoreGate()
        gate.close()
        let received = Mutex<[UInt8]>([])
        let reader = Task {
            try await stream.write(
                to: BodyWriter { chunk in
                    received.withLock { $0 += chunk }
                    await gate.pass()
                })
        }
        await gate.arrived()
        let megabyte = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20)
        for _ in 0..<24 {
            _ = await server.respond(to: MockRequest(.post, "/upload", body: megabyte))
            // What waits never passes the reader's bound by more than one entry.
            #expect(server.eventStreamBytes <= 8 << 20 + 1 << 20 + 4096)
        }
        // Past the bound, what waited was let go.
        #expect(server.eventStreamBytes == 0)
        gate.open()
        try await reader.value
        let text = String(decoding: received.withLock { $0 }, as: UTF8.self)
        #expect(text.contains("event: dropped"))
        #expect(text.contains("fell"))
        #expect(server.journal.subscriberCount == 0)
    }

    @Test("Routes added over the admin API are bounded in bytes as well as in number, and give their room back")
    func addedRouteBytes() async throws {
        let server = try await server()
        let big = String(repeating: "y", count: 1_000_000)
        var ids: [Int] = []
        for index in 0..<16 {
            let added = await server.send(
                .post, "/__hammock/routes", json: ["method": "GET", "path": .string("/big/\(index)"), "body": .string(big)])
            #expect(added.0.status == .created, "\(index)")
            ids += added.1?["ids"]?.arrayValue?.compactMap(\.intValue) ?? []
        }
        let refused = await server.send(
            .post, "/__hammock/routes", json: ["method": "GET", "path": "/big/16", "body": .string(big)])
        #expect(refused.0.status == .conflict)
        #expect(refused.1?["detail"]?.stringValue?.contains("bytes") == true)
        #expect(await server.send(.get, "/big/16").0.status == .notFound)
        let first = try #require(ids.first)
        #expect(await server.send(.delete, "/__hammock/routes/\(first)").0.status == .noContent)
        let again = await server.send(
            .post, "/__hammock/routes", json: ["method": "GET", "path": "/big/16", "body": .string(big)])
        #expect(again.0.status == .created)
    }
}

@Suite("The admin API against other web pages, over loopback")
struct AdminSecurityLoopbackTests {
    @Test("Over HTTP a rebinding Host, another Origin and a text/plain POST are refused before anything changes")
    func overHTTP() async throws {
        let server = try await Fixtures.server()
        _ = await server.send(.post, "/people", json: ["name": "ada"])
        try await server.whileServing { port in
            let client = LoopbackClient(port: port)
            let csrf = try await client.send("POST", "/__hammock/reset", body: Array("x".utf8), contentType: "text/plain")
            #expect(csrf.status == 415)
            let foreign = try await client.send(
                "POST", "/__hammock/reset", headers: ["Origin": "http://evil.example", "Content-Type": "application/json"])
            #expect(foreign.status == 403)
            let rebinding = try RawConnection(port: port)
            await rebinding.send("GET /__hammock/requests HTTP/1.1\r\nHost: evil.example:\(port)\r\nConnection: close\r\n\r\n")
            let (reply, _) = await rebinding.readUntilClosed()
            #expect(String(decoding: reply, as: UTF8.self).hasPrefix("HTTP/1.1 403"))
            #expect(try await client.send("GET", "/people").json?.arrayValue?.count == 1)
            let journal = try await client.send("GET", "/__hammock/requests")
            #expect(journal.status == 200 && journal.header("Access-Control-Allow-Origin") == nil)
        }
    }
}
