import Foundation
import HTTPTypes
import HammockHTTPServer
import HammockJSON
import HammockProxy
import HammockServer
import HammockTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The mock in front of a real backend no one here wrote: httpbin (PyPI) on loopback. What the mock
/// answers stays the mock's; the rest goes to httpbin and comes back as httpbin gave it.
@Suite("Proxying what the mock does not answer", .timeLimit(.minutes(2)))
struct ProxyTests {
    /// A mock of `people` in front of httpbin, in process (its requests to httpbin are real HTTP), stopped
    /// after `body`, thrown or not.
    static func withProxy<T>(
        timeout: Duration = .seconds(30), _ body: (MockServer, URL) async throws -> T
    ) async throws -> T {
        try await withHTTPBin { upstream in
            let people = MockResource("people", fields: ["name": .string])
            return try await withServer(try await MockServer(resources: [people])) { server in
                server.addRoutes(try ProxyRoutes(upstream: upstream, timeout: timeout), first: false)
                return try await body(server, upstream)
            }
        }
    }

    /// The answer's body, streamed or not, as JSON.
    static func json(_ response: MockResponse) async throws -> JSON {
        let bytes = try await response.stream?.collect() ?? response.body
        return try JSON(parsing: bytes)
    }

    @Test(
        "A path and query with characters a URL escapes reach the upstream escaped once: a%20b beside | and [ ] stays a%20b (found by fuzz-proxy)"
    )
    func escapedOnce() async throws {
        try await Self.withProxy { server, _ in
            let got = await server.respond(to: MockRequest(.get, "/anything/a%20b/p|q?f[x]=a%20b&y={1}"))
            #expect(got.status == .ok)
            let echoed = try await Self.json(got)
            // Foundation's URL parser escaped the whole target again when one character needed it.
            #expect(echoed["args"] == ["f[x]": "a b", "y": "{1}"])
            let url = try #require(echoed["url"]?.stringValue)
            #expect(url.contains("/anything/a%20b/p") && !url.contains("%25"), "\(url)")
        }
    }

    @Test("Every method reaches the upstream with its path, query, body and headers; the answer comes back whole")
    func methods() async throws {
        try await Self.withProxy { server, upstream in
            let got = await server.respond(to: MockRequest(.get, "/get?a=1&b=two%20words"))
            #expect(got.status == .ok)
            let echoed = try await Self.json(got)
            #expect(echoed["args"] == ["a": "1", "b": "two words"])
            #expect(echoed["headers"]?["Host"] == .string("127.0.0.1:\(upstream.port ?? 0)"))
            for (method, path) in [(HTTPRequest.Method.post, "/post"), (.put, "/put"), (.patch, "/patch"), (.delete, "/delete")] {
                let response = await server.respond(to: MockRequest(method, path, json: ["n": 7, "s": "é"]))
                #expect(response.status == .ok, "\(method)")
                let body = try await Self.json(response)
                #expect(body["json"] == ["n": 7, "s": "é"], "\(method)")
                #expect(body["headers"]?["Content-Type"] == "application/json", "\(method)")
            }
            // What the mock answers stays the mock's.
            let created = await server.respond(to: MockRequest(.post, "/people", json: ["name": "Ada"]))
            #expect(created.status == .created && created.stream == nil)
            #expect(try await Self.json(server.respond(to: MockRequest(.get, "/people"))) == [["id": 1, "name": "Ada"]])
        }
    }

    @Test(
        "What a request asks of the mock (?_delay, Prefer: delay) is the mock's: the backend gets the rest of the query and Prefer; under strict all of it"
    )
    func asksStayWithTheMock() async throws {
        try await withHTTPBin { upstream in
            for strict in [false, true] {
                let server = try await MockServer(resources: [], options: MockServer.Options(allowsOverrides: !strict))
                server.addRoutes(try ProxyRoutes(upstream: upstream), first: false)
                var request = MockRequest(.get, "/get?keep=1&_delay=1&also=2")
                request.headerFields[HTTPField.Name("Prefer")!] = "return=minimal, delay=1"
                let got = await server.respond(to: request)
                let echoed = try await Self.json(got)
                if strict {
                    #expect(echoed["args"] == ["keep": "1", "_delay": "1", "also": "2"])
                    #expect(echoed["headers"]?["Prefer"] == "return=minimal, delay=1")
                    #expect(got.headerFields[HTTPField.Name("Preference-Applied")!] == nil)
                } else {
                    #expect(echoed["args"] == ["keep": "1", "also": "2"])
                    #expect(echoed["headers"]?["Prefer"] == "return=minimal")
                    #expect(got.headerFields[HTTPField.Name("Preference-Applied")!]?.contains("delay=1") == true)
                }
                // The journal keeps the request as the client sent it.
                let entry = try await server.journal.next(matching: RequestPattern(.get, "/get"), timeout: .seconds(5))
                #expect(entry.request.query == "keep=1&_delay=1&also=2")
                await server.stop()
            }
        }
    }

    @Test("Hop-by-hop fields stay behind, Via and Forwarded are added, the client's own Via is kept, a quote in Host is dropped")
    func headers() async throws {
        try await Self.withProxy { server, _ in
            // `show_env`: httpbin hides Via and the like from its answer otherwise.
            var request = MockRequest(.get, "/headers?show_env=1")
            request.headerFields[HTTPField.Name("Connection")!] = "X-Secret, close"
            request.headerFields[HTTPField.Name("X-Secret")!] = "hop"
            request.headerFields[HTTPField.Name("Keep-Alive")!] = "timeout=5"
            request.headerFields[HTTPField.Name("Proxy-Authorization")!] = "Basic cHJveHk="
            request.headerFields[HTTPField.Name("Via")!] = "1.0 corporate"
            request.headerFields[.authorization] = "Bearer end-to-end"
            // A quote in Host would end the Forwarded element's quoted host early: it is left out.
            request.headerFields[HTTPField.Name("Host")!] = "mock\".example:8080"
            let headers = try await Self.json(server.respond(to: request))["headers"]
            #expect(headers?["X-Secret"] == nil && headers?["Keep-Alive"] == nil && headers?["Proxy-Authorization"] == nil)
            #expect(headers?["Authorization"] == "Bearer end-to-end")
            // This hop by its pseudonym, `hammock-` and 8 hex digits: a request that comes back is known by it.
            #expect(headers?["Via"]?.stringValue?.wholeMatch(of: /1\.0 corporate, 1\.1 hammock-[0-9a-f]{8}/) != nil)
            #expect(headers?["Forwarded"] == "for=unknown;host=\"mock.example:8080\";proto=http")
        }
    }

    @Test("A proxied answer is the backend's: no ETag or 304 of the mock's; the backend's own tag and 304 pass through")
    func conditionalRequestsAreTheBackends() async throws {
        try await Self.withProxy { server, _ in
            // httpbin's /json sends no ETag: the mock adds none, so an app sees the caching it will meet.
            let plain = await server.respond(to: MockRequest(.get, "/json"))
            #expect(plain.status == .ok && plain.headerFields[.eTag] == nil)
            // `*` matches any tag the mock would have made; httpbin ignores it, and its 200 stands.
            var any = MockRequest(.get, "/json")
            any.headerFields[.ifNoneMatch] = "*"
            let answered = await server.respond(to: any)
            #expect(answered.status == .ok)
            let body = try await Self.json(answered)
            #expect(body["slideshow"] != nil)
            // A backend that tags its answers decides the 304 itself, from the fields sent on.
            let tagged = await server.respond(to: MockRequest(.get, "/etag/v7"))
            // As httpbin writes it, unquoted: passed on as given.
            #expect(tagged.status == .ok && tagged.headerFields[.eTag] == "v7")
            var again = MockRequest(.get, "/etag/v7")
            again.headerFields[.ifNoneMatch] = "\"v7\""
            #expect(await server.respond(to: again).status == .notModified)
            #expect(server.journal.entries.last?.route == MatchedRoute(kind: .proxy, pattern: "/**"))
            // The mock's own routes keep their validators.
            let created = await server.respond(to: MockRequest(.post, "/people", json: ["name": "Ada"]))
            #expect(created.status == .created)
            #expect(await server.respond(to: MockRequest(.get, "/people/1")).headerFields[.eTag] != nil)
        }
    }

    @Test(
        "A backend's own CORS grant and preflight reach the browser as the backend gave them; a backend without one gets the mock's"
    )
    func corsOfTheBackend() async throws {
        try await Self.withProxy { server, _ in
            // httpbin grants the asking origin with credentials: `*` there would be refused by a browser.
            var request = MockRequest(.get, "/get")
            request.headerFields[.origin] = "http://app.local"
            let granted = await server.respond(to: request)
            #expect(granted.headerFields[.accessControlAllowOrigin] == "http://app.local")
            #expect(granted.headerFields[.accessControlAllowCredentials] == "true")
            #expect(granted.headerFields[.accessControlExposeHeaders] == nil)
            // Its preflight too: the browser asks before a credentialed POST, and must meet the same grant.
            var preflight = MockRequest(.options, "/post")
            preflight.headerFields[.origin] = "http://app.local"
            preflight.headerFields[.accessControlRequestMethod] = "POST"
            preflight.headerFields[.accessControlRequestHeaders] = "content-type"
            let answer = await server.respond(to: preflight)
            #expect(answer.status == .ok)
            #expect(answer.headerFields[.accessControlAllowOrigin] == "http://app.local")
            #expect(answer.headerFields[.accessControlAllowCredentials] == "true")
            #expect(answer.headerFields[.accessControlMaxAge] == "3600", "httpbin's, not the mock's 600")
            // An OPTIONS that is no preflight is the backend's to answer.
            let options = await server.respond(to: MockRequest(.options, "/get"))
            // werkzeug lists them in no fixed order; the mock's own answer would list every proxied method.
            let allowed = Set(
                (options.headerFields[.allow] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            #expect(allowed == ["HEAD", "GET", "OPTIONS"])
            #expect(server.journal.entries.last?.route?.kind == .proxy)
            // A path the mock serves keeps the mock's preflight, whatever the backend would say of it.
            var ours = MockRequest(.options, "/people")
            ours.headerFields[.origin] = "http://app.local"
            ours.headerFields[.accessControlRequestMethod] = "GET"
            let mine = await server.respond(to: ours)
            #expect(mine.status == .noContent && mine.headerFields[.accessControlAllowOrigin] == "*")
            #expect(mine.headerFields[.accessControlMaxAge] == "600")
        }
        // A backend that grants nothing (a mock with cross-origin access off): the proxy's answers get the
        // mock's grant, so a front end on another origin can still call it.
        let backend = try await MockServer(
            resources: [MockResource("people", fields: ["name": .string])],
            options: MockServer.Options(allowsCrossOrigin: false))
        try await backend.whileServing { port in
            let url = try #require(URL(string: "http://127.0.0.1:\(port)"))
            let server = try await MockServer(resources: [])
            server.addRoutes(try ProxyRoutes(upstream: url), first: false)
            var request = MockRequest(.get, "/people")
            request.headerFields[.origin] = "http://app.local"
            let proxied = await server.respond(to: request)
            #expect(proxied.status == .ok)
            #expect(proxied.headerFields[.accessControlAllowOrigin] == "*")
            #expect(proxied.headerFields[.accessControlExposeHeaders] != nil)
            // Its preflight: the backend grants nothing, so the mock answers it, and the POST can follow.
            var preflight = MockRequest(.options, "/people")
            preflight.headerFields[.origin] = "http://app.local"
            preflight.headerFields[.accessControlRequestMethod] = "POST"
            let answer = await server.respond(to: preflight)
            #expect(answer.status == .noContent)
            #expect(answer.headerFields[.accessControlAllowOrigin] == "*")
            #expect(answer.headerFields[.accessControlAllowMethods]?.contains("POST") == true)
        }
    }

    @Test("A proxied HEAD says the length the backend says a GET would bring, in process and over HTTP")
    func headKeepsTheLength() async throws {
        try await Self.withProxy { server, _ in
            let got = await server.respond(to: MockRequest(.get, "/json"))
            // Under 64 KiB with a length: read whole, so its bytes are the length.
            let length = got.body.count
            #expect(got.stream == nil && length > 0)
            let head = await server.respond(to: MockRequest(.head, "/json"))
            #expect(head.status == .ok && head.body.isEmpty && head.stream == nil)
            #expect(head.headerFields[.contentLength] == String(length))
            try await server.whileServing { port in
                let url = try #require(URL(string: "http://127.0.0.1:\(port)/json"))
                var request = URLRequest(url: url)
                request.httpMethod = "HEAD"
                let (data, response) = try await URLSession.shared.data(for: request)
                let http = try #require(response as? HTTPURLResponse)
                #expect(http.statusCode == 200 && data.isEmpty)
                #expect(http.value(forHTTPHeaderField: "Content-Length") == String(length))
            }
        }
    }

    @Test("A backend's redirect to its own absolute URL comes back through the mock; one elsewhere is left as it is")
    func redirectsToTheBackendStayOnTheMock() async throws {
        try await Self.withProxy { server, upstream in
            let port = try #require(upstream.port)
            let own = "http%3A%2F%2F127.0.0.1%3A\(port)%2Fget%3Fx%3D1"
            let redirect = await server.respond(to: MockRequest(.get, "/redirect-to?url=\(own)&status_code=303"))
            #expect(redirect.status.code == 303)
            #expect(redirect.headerFields[.location] == "/get?x=1")
            let away = await server.respond(to: MockRequest(.get, "/redirect-to?url=https%3A%2F%2Fexample.test%2Fget"))
            #expect(away.headerFields[.location] == "https://example.test/get")
        }
    }

    @Test("Statuses, header fields and redirects come back as the upstream gave them; nothing is followed")
    func answers() async throws {
        try await Self.withProxy { server, _ in
            #expect(await server.respond(to: MockRequest(.get, "/status/418")).status.code == 418)
            let redirect = await server.respond(to: MockRequest(.get, "/redirect-to?url=/get&status_code=302"))
            #expect(redirect.status.code == 302)
            #expect(redirect.headerFields[.location] == "/get")
            let fields = await server.respond(to: MockRequest(.get, "/response-headers?X-Answer=42"))
            #expect(fields.headerFields[HTTPField.Name("X-Answer")!] == "42")
            #expect(await server.respond(to: MockRequest(.get, "/status/204")).stream == nil)
        }
    }

    // httpbin makes at most 100 KiB of random bytes.
    @Test("A large answer streams through with its length; a chunked one without")
    func streamed() async throws {
        try await Self.withProxy { server, _ in
            let sized = await server.respond(to: MockRequest(.get, "/bytes/90000?seed=3"))
            #expect(sized.status == .ok, "\(String(decoding: sized.body, as: UTF8.self))")
            #expect(sized.stream?.length == 90_000)
            let sizedBytes = try await sized.stream?.collect()
            #expect(sizedBytes?.count == 90_000)
            let chunked = await server.respond(to: MockRequest(.get, "/stream-bytes/80000?chunk_size=4096&seed=3"))
            #expect(chunked.status == .ok, "\(String(decoding: chunked.body, as: UTF8.self))")
            #expect(chunked.stream?.length == nil)
            let chunkedBytes = try await chunked.stream?.collect()
            #expect(chunkedBytes?.count == 80_000)
        }
    }

    @Test("Over HTTP: the client gets the upstream's bytes, and the journal has the exchange with the route it took")
    func overHTTP() async throws {
        try await Self.withProxy { server, _ in
            let port = try await server.start(host: "127.0.0.1", port: 0)
            do {
                let session = URLSession(configuration: .ephemeral)
                let url = try #require(URL(string: "http://127.0.0.1:\(port)/stream-bytes/100000?chunk_size=1000&seed=9"))
                let (data, response) = try await session.data(from: url)
                #expect((response as? HTTPURLResponse)?.statusCode == 200)
                #expect(data.count == 100_000)
                var upload = URLRequest(url: try #require(URL(string: "http://127.0.0.1:\(port)/anything/deep/path")))
                upload.httpMethod = "POST"
                upload.httpBody = Data(repeating: 0x61, count: 100_000)
                upload.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
                let (echo, _) = try await session.data(for: upload)
                let echoed = try JSON(parsing: [UInt8](echo))
                #expect(echoed["data"]?.stringValue?.count == 100_000)
                #expect(echoed["url"]?.stringValue?.hasSuffix("/anything/deep/path") == true)
                let entry = try #require(server.journal.entries.last)
                #expect(entry.path == "/anything/deep/path" && entry.status == .ok && entry.method == .post)
                await server.stop()
            } catch {
                await server.stop()
                throw error
            }
        }
    }

    @Test("An upstream that cannot be reached is a 502, one that does not answer in time a 504, each naming it")
    func failures() async throws {
        // A port nothing listens on: bound, then closed.
        let closed = try await MockServer(resources: [])
        let port = try await closed.start(host: "127.0.0.1", port: 0)
        await closed.stop()
        let unreachable = try await MockServer(resources: [])
        unreachable.addRoutes(try ProxyRoutes(upstream: try #require(URL(string: "http://127.0.0.1:\(port)/api"))), first: false)
        let refused = await unreachable.respond(to: MockRequest(.get, "/anything"))
        #expect(refused.status == .badGateway)
        #expect(refused.headerFields[.contentType] == "application/problem+json")
        #expect(try refused.json()["upstream"] == .string("http://127.0.0.1:\(port)"))
        try await Self.withProxy(timeout: .milliseconds(500)) { server, _ in
            let slow = await server.respond(to: MockRequest(.get, "/delay/3"))
            #expect(slow.status == .gatewayTimeout)
            let detail = try slow.json()["detail"]?.stringValue
            #expect(detail?.contains("did not answer within") == true)
        }
    }

    @Test("An upstream that is not an http(s) URL with a host, or that has a query, is refused")
    func configuration() throws {
        for text in ["ftp://example.com", "http:///path", "http://example.com/api?key=1", "file:///tmp/x"] {
            let url = try #require(URL(string: text))
            #expect(throws: ProxyRoutes.ConfigurationError.self, "\(text)") { try ProxyRoutes(upstream: url) }
        }
        let prefixed = try ProxyRoutes(upstream: try #require(URL(string: "https://api.example.com:8443/v2/")))
        #expect(prefixed.routeTable.first?.pattern == "/**")
    }

    @Test("A rule forwards only the paths and methods it names; the rest is the mock's 404 or 405")
    func rules() async throws {
        try await withHTTPBin { upstream in
            let server = try await MockServer(resources: [MockResource("people", fields: ["name": .string])])
            let rule = ProxyRule(path: try PathPattern("/anything/**"), methods: [.get, .post], upstream: upstream)
            server.addRoutes(try ProxyRoutes(rule), first: false)
            let got = await server.respond(to: MockRequest(.get, "/anything/deep/path?q=1"))
            #expect(got.status == .ok)
            #expect(try await Self.json(got)["url"]?.stringValue?.hasSuffix("/anything/deep/path?q=1") == true)
            #expect(await server.respond(to: MockRequest(.post, "/anything/x", json: ["a": 1])).status == .ok)
            #expect(await server.respond(to: MockRequest(.delete, "/anything/x")).status == .methodNotAllowed)
            #expect(await server.respond(to: MockRequest(.get, "/get")).status == .notFound)
            #expect(server.routeTable.contains { $0.pattern == "/anything/**" && $0.methods == [.get, .post] })
        }
    }

    @Test("A configuration's proxy rules are read with their paths, methods and upstreams; mistakes name the key")
    func configurationRules() throws {
        let good =
            #"{"proxy": [{"path": "/invoices/**", "to": "http://127.0.0.1:8080/api"}, {"methods": ["post"], "to": "https://api.example.test"}]}"#
        let configuration = try ServerConfiguration(parsing: Array(good.utf8), file: "c.json")
        #expect(configuration.proxies.count == 2)
        #expect(configuration.proxies[0].forwards(.delete, "/invoices/7") && !configuration.proxies[0].forwards(.get, "/people"))
        #expect(configuration.proxies[1].forwards(.post, "/x") && !configuration.proxies[1].forwards(.get, "/x"))
        for (text, key) in [
            (#"{"proxy": [{"path": "/x"}]}"#, "proxy[0].to"),
            (#"{"proxy": [{"to": "ftp://h"}]}"#, "proxy[0].to"),
            (#"{"proxy": [{"to": "http://h/?q=1"}]}"#, "proxy[0].to"),
            (#"{"proxy": [{"to": "http://h", "path": "x"}]}"#, "proxy[0].path"),
            (#"{"proxy": [{"to": "http://h", "methods": []}]}"#, "proxy[0].methods"),
            (#"{"proxy": [{"to": "http://h", "host": "y"}]}"#, "proxy[0].host"),
            (#"{"proxy": {"to": "http://h"}}"#, "proxy"),
        ] {
            let error = #expect(throws: ConfigurationError.self) {
                try ServerConfiguration(parsing: Array(text.utf8), file: "c.json")
            }
            #expect(error?.keyPath == key, "\(text)")
        }
        #expect(ProxyRule.isLoopback("127.0.0.1") && ProxyRule.isLoopback("[::1]") && ProxyRule.isLoopback("LOCALHOST"))
        #expect(!ProxyRule.isLoopback("128.0.0.1") && !ProxyRule.isLoopback("api.example.test"))
        // Names that start like a loopback address are names, resolved anywhere.
        #expect(!ProxyRule.isLoopback("127.0.0.1.example.test") && !ProxyRule.isLoopback("127.example.test"))
        #expect(!ProxyRule.isLoopback("127.0.0.256") && ProxyRule.isLoopback("127.1.2.3"))
    }
}
