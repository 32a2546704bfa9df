import Foundation
import HTTPTypes
import HammockHTTPServer
import HammockJSON
import HammockProxy
import HammockServer
import HammockTestSupport
import Synchronization
import Testing

/// Webhooks: requests the mock makes of its own after it answers. In process through a scripted
/// transport (what would be sent, on a clock the test moves), and over loopback through AsyncHTTPClient
/// to a second mock that receives them.
@Suite("Webhooks: sent after an answer, tried again, journaled, kept on this machine", .timeLimit(.minutes(2)))
struct WebhookTests {
    /// Keeps what it is asked to send, and answers from a script: a status, or `nil` for no answer (the
    /// last one repeats).
    final class ScriptedTransport: WebhookTransport {
        let sent = Mutex<[WebhookRequest]>([])
        let script: Mutex<[Int?]>

        init(_ script: [Int?] = [204]) { self.script = Mutex(script) }

        struct NoAnswer: Error {}

        func send(_ request: WebhookRequest) async throws -> WebhookAnswer {
            sent.withLock { $0.append(request) }
            let next = script.withLock { script in script.count > 1 ? script.removeFirst() : script.first ?? 204 }
            guard let status = next else { throw NoAnswer() }
            return WebhookAnswer(status: HTTPResponse.Status(code: status), body: Array("ok".utf8))
        }
    }

    static func people(clock: ManualClock? = nil) async throws -> MockServer {
        let resources = [MockResource("people", fields: ["name": .string])]
        if let clock { return try await MockServer(resources: resources, clock: clock) }
        return try await MockServer(resources: resources)
    }

    /// The journal's webhook attempts, once there are `count` of them (or what there is after 20 s, which
    /// the test's expectations then report).
    static func attempts(_ server: MockServer, count: Int) async -> [JournalEntry] {
        for _ in 0..<4_000 {
            let found = server.journal.entries.filter { $0.webhook != nil }
            if found.count >= count { return found }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return server.journal.entries.filter { $0.webhook != nil }
    }

    static func create(_ server: MockServer, _ name: String) async -> MockResponse {
        await server.respond(to: MockRequest(.post, "/people", json: ["name": .string(name)]))
    }

    @Test("A webhook follows its route's 2xx answer, its URL, headers and body filled from the request and the answer")
    func follows() async throws {
        let server = try await Self.people()
        let transport = ScriptedTransport()
        server.setWebhookTransport(transport)
        try server.setWebhooks([
            try Webhook(
                "created", on: "POST /people", url: "http://127.0.0.1:9/hooks/{{response.body.id}}?event=created",
                headers: ["X-Event": "person.created", "X-Request": "{{request.headers.x-trace}}"],
                body: ["name": "{{request.body.name}}", "id": "{{response.body.id}}", "status": "{{response.status}}"])
        ])
        var request = MockRequest(.post, "/people", json: ["name": "Ada"])
        request.headerFields[HTTPField.Name("X-Trace")!] = "t-1"
        #expect(await server.respond(to: request).status == .created)
        let attempt = try #require(await Self.attempts(server, count: 1).first)
        let sent = try #require(transport.sent.withLock { $0.first })
        #expect(sent.method == .post)
        #expect(sent.url.absoluteString == "http://127.0.0.1:9/hooks/1?event=created")
        #expect(sent.headerFields[HTTPField.Name("X-Event")!] == "person.created")
        #expect(sent.headerFields[HTTPField.Name("X-Request")!] == "t-1")
        #expect(sent.headerFields[.contentType] == "application/json")
        // A placeholder alone keeps the value's type: the id is a number, the status too.
        #expect(try JSON(parsing: sent.body) == ["name": "Ada", "id": 1, "status": 201])
        // The attempt is journaled after the answer it follows, with the receiver's answer.
        #expect(attempt.webhook == WebhookAttempt(name: "created", attempt: 1, url: sent.url.absoluteString, error: nil))
        #expect(attempt.status.code == 204 && attempt.path == "/hooks/1" && attempt.query == "event=created")
        let created = try #require(server.journal.entries.first { $0.webhook == nil && $0.method == .post })
        #expect(created.id < attempt.id)
        // A pattern with conditions is about requests the server answered: the attempt is not one.
        #expect(server.journal.count(matching: RequestPattern(.post, "/hooks/1")) == 0)
        #expect(server.journal.count(matching: .any) == 2)
    }

    @Test(
        "A webhook URL whose rendered value holds what a URL cannot (a | or a space) keeps the template's escapes: %20 is not sent as %2520"
    )
    func renderedURLEscapedOnce() async throws {
        let server = try await Self.people()
        let transport = ScriptedTransport()
        server.setWebhookTransport(transport)
        try server.setWebhooks([
            try Webhook("created", on: "POST /people", url: "http://127.0.0.1:9/hooks/a%20b?name={{request.body.name}}&x=%41")
        ])
        #expect(await server.respond(to: MockRequest(.post, "/people", json: ["name": "Ada|Lovelace Byron"])).status == .created)
        _ = await Self.attempts(server, count: 1)
        let sent = try #require(transport.sent.withLock { $0.first })
        #expect(sent.url.absoluteString == "http://127.0.0.1:9/hooks/a%20b?name=Ada%7CLovelace%20Byron&x=%41")
    }

    @Test("An answer the webhook does not follow sends nothing: another route, a 4xx, a status outside its range")
    func doesNotFollow() async throws {
        let server = try await Self.people()
        let transport = ScriptedTransport()
        server.setWebhookTransport(transport)
        try server.setWebhooks([
            try Webhook("created", on: "POST /people", url: "http://127.0.0.1:9/hooks"),
            try Webhook("deleted", on: "DELETE /people/:id", url: "http://127.0.0.1:9/gone/{{path.id}}", statuses: 204...204),
        ])
        _ = await server.respond(to: MockRequest(.get, "/people"))
        // A name that is no string: 422, not 2xx.
        #expect(await server.respond(to: MockRequest(.post, "/people", json: ["name": 5])).status == .unprocessableContent)
        #expect(await server.respond(to: MockRequest(.delete, "/people/7")).status == .notFound)
        // Deliveries are registered before the answer leaves: none were started.
        #expect(server.pendingWebhookDeliveries == 0)
        #expect(transport.sent.withLock { $0.isEmpty })
        // The delete of a record that exists: its own id in the URL.
        _ = await Self.create(server, "Ada")
        #expect(await server.respond(to: MockRequest(.delete, "/people/1")).status == .noContent)
        let attempts = await Self.attempts(server, count: 2)
        #expect(Set(attempts.map { $0.webhook?.url }) == ["http://127.0.0.1:9/hooks", "http://127.0.0.1:9/gone/1"])
    }

    @Test("Under a base path, a webhook's route is written as the router's: a literal in a parameter's place is one record")
    func basePath() async throws {
        let server = try await MockServer(
            resources: [MockResource("people", fields: ["name": .string])], options: MockServer.Options(basePath: "/api"))
        let transport = ScriptedTransport()
        server.setWebhookTransport(transport)
        try server.setWebhooks([try Webhook("second", on: "PATCH /people/2", url: "http://127.0.0.1:9/{{path.id}}")])
        for name in ["Ada", "Eve"] {
            _ = await server.respond(to: MockRequest(.post, "/api/people", json: ["name": .string(name)]))
        }
        #expect(await server.respond(to: MockRequest(.patch, "/api/people/1", json: ["name": "A"])).status == .ok)
        #expect(server.pendingWebhookDeliveries == 0)
        #expect(await server.respond(to: MockRequest(.patch, "/api/people/2", json: ["name": "E"])).status == .ok)
        let attempt = try #require(await Self.attempts(server, count: 1).first)
        #expect(attempt.webhook?.url == "http://127.0.0.1:9/2")
    }

    @Test("A failed delivery is tried again after doubling waits on the server's clock, each attempt journaled")
    func retries() async throws {
        let clock = ManualClock()
        let server = try await Self.people(clock: clock)
        // No answer, then a 503, then a 200.
        let transport = ScriptedTransport([nil, 503, 200])
        server.setWebhookTransport(transport)
        try server.setWebhooks([
            try Webhook(
                "created", on: "POST /people", url: "http://localhost:9/hooks", delay: .seconds(2), retries: 5,
                backoff: .seconds(1))
        ])
        _ = await Self.create(server, "Ada")
        // The delay: nothing is sent until the clock passes it.
        #expect(await clock.waitForSleepers(1))
        #expect(transport.sent.withLock { $0.isEmpty })
        clock.advance(by: .seconds(2))
        // The first attempt had no answer; the retry waits 1 s, the next 2 s.
        #expect(await clock.waitForSleepers(1))
        #expect(transport.sent.withLock { $0.count } == 1)
        clock.advance(by: .seconds(1))
        #expect(await clock.waitForSleepers(1))
        #expect(transport.sent.withLock { $0.count } == 2)
        clock.advance(by: .milliseconds(1999))
        #expect(transport.sent.withLock { $0.count } == 2)
        clock.advance(by: .milliseconds(1))
        let attempts = await Self.attempts(server, count: 3)
        #expect(attempts.map { $0.webhook?.attempt } == [1, 2, 3])
        #expect(attempts.map(\.status.code) == [0, 503, 200])
        #expect(attempts[0].webhook?.error?.hasPrefix("no answer") == true)
        #expect(attempts[1].webhook?.error == "answered 503")
        #expect(attempts[2].webhook?.error == nil)
        // A success ends it: no fourth attempt waits.
        while server.pendingWebhookDeliveries > 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(clock.sleeperCount == 0)
    }

    @Test("A webhook goes only to this machine unless its host is allowed; a refused one is journaled, not retried")
    func keptOnThisMachine() async throws {
        let server = try await Self.people()
        let transport = ScriptedTransport()
        server.setWebhookTransport(transport)
        try server.setWebhooks([
            try Webhook("out", on: "POST /people", url: "https://hooks.example.com/{{request.body.name}}", retries: 3),
            // A URL made from the request: the client chooses the host, which must not be let out either.
            try Webhook("callback", on: "POST /people", url: "{{request.body.callback}}"),
        ])
        _ = await server.respond(
            to: MockRequest(.post, "/people", json: ["name": "ada", "callback": "http://169.254.169.254/latest/meta-data"]))
        let refused = await Self.attempts(server, count: 2)
        #expect(transport.sent.withLock { $0.isEmpty })
        for entry in refused {
            #expect(entry.status.code == 0)
            #expect(entry.webhook?.error?.contains("is not this machine; allow it with --allow-upstream") == true)
        }
        #expect(server.pendingWebhookDeliveries == 0)  // no retry of a refusal
        server.allowWebhookHosts(["HOOKS.example.com"])
        _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": "eve", "callback": "not a url"]))
        let all = await Self.attempts(server, count: 4)
        #expect(transport.sent.withLock { $0.map(\.url.absoluteString) } == ["https://hooks.example.com/eve"])
        #expect(all.contains { $0.webhook?.error == "'not a url' is not an http or https URL" })
    }

    @Test("Deliveries waiting at once are bounded: past the bound an attempt is journaled as not sent")
    func bounded() async throws {
        let clock = ManualClock()
        let server = try await Self.people(clock: clock)
        server.setWebhookTransport(ScriptedTransport())
        try server.setWebhooks([try Webhook("later", on: "POST /people", url: "http://127.0.0.1:9/h", delay: .seconds(60))])
        for index in 0..<1_010 { _ = await Self.create(server, "P\(index)") }
        #expect(server.pendingWebhookDeliveries == 1_000)
        let refused = server.journal.entries.filter { $0.webhook != nil }
        #expect(refused.count == 10)
        #expect(refused.allSatisfy { $0.webhook?.error == "not sent: 1000 deliveries are already waiting" })
        await server.stop()
        #expect(server.pendingWebhookDeliveries == 0)
    }

    @Test("The admin API lists, adds, replaces and removes webhooks, with problem+json for a bad one and a name in force")
    func adminAPI() async throws {
        let server = try await Self.people()
        let transport = ScriptedTransport()
        server.setWebhookTransport(transport)
        func call(_ method: HTTPRequest.Method, _ path: String, _ body: JSON? = nil) async -> MockResponse {
            await server.respond(
                to: body.map { MockRequest(method, "/__hammock" + path, json: $0) } ?? MockRequest(method, "/__hammock" + path))
        }
        let hook: JSON = ["name": "created", "on": "POST /people", "url": "http://127.0.0.1:9/h", "retries": 2]
        let added = await call(.post, "/webhooks", hook)
        #expect(added.status == .created && added.headerFields[.location] == "/__hammock/webhooks/created")
        #expect(try added.json()["retries"] == 2)
        #expect(try added.json()["statuses"] == [200, 299])
        // The same name again: 409; a bad one: 400 naming the key.
        #expect(await call(.post, "/webhooks", hook).status == .conflict)
        let bad = await call(.post, "/webhooks", ["name": "x", "on": "POST /people", "url": "gopher://h/"])
        #expect(bad.status == .badRequest && bad.headerFields[.contentType] == "application/problem+json")
        #expect(try bad.json()["detail"]?.stringValue?.hasPrefix("url:") == true)
        // It follows answers at once.
        _ = await Self.create(server, "Ada")
        #expect(await Self.attempts(server, count: 1).count == 1)
        // PUT by name replaces (200) or adds (201); GET reads; DELETE removes, then 404.
        let replaced = await call(.put, "/webhooks/created", ["on": "DELETE /people/:id", "url": "http://127.0.0.1:9/gone"])
        #expect(try replaced.status == .ok && replaced.json()["on"] == "DELETE /people/:id")
        #expect(await call(.put, "/webhooks/other", ["on": "*", "url": "http://127.0.0.1:9/o"]).status == .created)
        let listed = try await call(.get, "/webhooks").json().arrayValue?.compactMap { $0["name"]?.stringValue }
        #expect(listed == ["created", "other"])
        #expect(await call(.delete, "/webhooks/other").status == .noContent)
        #expect(await call(.get, "/webhooks/other").status == .notFound)
        #expect(await call(.delete, "/webhooks/other").status == .notFound)
        #expect(await call(.delete, "/webhooks").status == .ok)
        #expect(server.webhooks.isEmpty)
    }

    @Test("A webhook to a route it follows, on the mock itself, is sent once: its own request fires none")
    func noLoop() async throws {
        let server = try await Self.people()
        let port = try await server.start(port: 0)
        do {
            server.setWebhookTransport(try WebhookClient())
            try server.setWebhooks([
                try Webhook("echo", on: "POST /people", url: "http://127.0.0.1:\(port)/people", body: ["name": "echo"])
            ])
            _ = await Self.create(server, "Ada")
            let attempt = try #require(await Self.attempts(server, count: 1).first)
            #expect(attempt.status.code == 201)
            while server.pendingWebhookDeliveries > 0 { try await Task.sleep(for: .milliseconds(5)) }
            // Ada and the one echo: the echo's own POST fired nothing more.
            #expect(server.journal.entries.filter { $0.webhook != nil }.count == 1)
            #expect(try await server.respond(to: MockRequest(.get, "/people")).json().arrayValue?.count == 2)
            await server.stop()
        } catch {
            await server.stop()
            throw error
        }
    }

    @Test("Stopping the server cancels deliveries still waiting: nothing is sent after it")
    func stopCancels() async throws {
        let clock = ManualClock()
        let server = try await Self.people(clock: clock)
        let transport = ScriptedTransport()
        server.setWebhookTransport(transport)
        try server.setWebhooks([try Webhook("later", on: "POST /people", url: "http://127.0.0.1:9/h", delay: .seconds(60))])
        _ = await Self.create(server, "Ada")
        #expect(server.pendingWebhookDeliveries == 1)
        #expect(await clock.waitForSleepers(1))
        await server.stop()
        #expect(server.pendingWebhookDeliveries == 0)
        clock.advance(by: .seconds(120))
        #expect(transport.sent.withLock { $0.isEmpty })
        #expect(server.journal.entries.allSatisfy { $0.webhook == nil })
    }

    @Test("A configuration's webhooks are read with their keys checked, and a reload replaces them")
    func configuration() async throws {
        let text = #"""
            {"resources": [{"name": "people", "fields": {"name": "string"}}],
             "webhooks": [{"name": "paid", "on": "POST /people", "url": "http://127.0.0.1:9/h", "statuses": "2xx",
                           "delay": 250, "retries": 2, "backoff": 500, "headers": {"X-Event": "created"},
                           "body": {"id": "{{response.body.id}}"}}]}
            """#
        let configuration = try ServerConfiguration(parsing: Array(text.utf8), file: "hooks.json")
        let webhook = try #require(configuration.webhooks.first)
        #expect(webhook.name == "paid" && webhook.route == "POST /people" && webhook.statuses == 200...299)
        #expect(webhook.delay == .milliseconds(250) && webhook.retries == 2 && webhook.backoff == .milliseconds(500))
        for (bad, message) in [
            (#"{"name": "a", "on": "POST /people", "url": "ftp://x/y"}"#, "webhooks[0].url"),
            (#"{"name": "a", "on": "POST /people", "url": "http://x/", "retries": 11}"#, "webhooks[0].retries"),
            (#"{"name": "a", "on": "POST /people", "url": "http://x/{{nothing}}"}"#, "webhooks[0].url"),
            (#"{"name": "a", "on": "GET /people now", "url": "http://x/"}"#, "webhooks[0].on"),
            (#"{"name": "a", "on": "POST /people", "url": "http://x/", "when": 1}"#, "webhooks[0].when"),
            (#"{"name": "a", "on": "POST /people", "url": "http://x/", "statuses": "7xx"}"#, "webhooks[0].statuses"),
        ] {
            let file = #"{"resources": [{"name": "people", "fields": {"name": "string"}}], "webhooks": ["# + bad + "]}"
            let error = #expect(throws: ConfigurationError.self) {
                try ServerConfiguration(parsing: Array(file.utf8), file: "x.json")
            }
            #expect(error?.description.contains(message) == true, "\(bad): \(String(describing: error))")
        }
        let server = try await MockServer(configuration: configuration, store: MemoryStore())
        #expect(server.webhooks.map(\.name) == ["paid"])
        var changed = configuration
        changed.webhooks = [try Webhook("other", on: "*", url: "http://127.0.0.1:9/o")]
        _ = try await server.reload(changed)
        #expect(server.webhooks.map(\.name) == ["other"])
        #expect(throws: WebhookError.self) {
            try server.setWebhooks([try Webhook("x", on: "*", url: "http://a/"), try Webhook("x", on: "*", url: "http://b/")])
        }
    }

    @Test("Over loopback: AsyncHTTPClient delivers to a second mock, and the admin API lists the attempt")
    func overLoopback() async throws {
        let receiver = try await MockServer(resources: [])
        _ = receiver.addStubs([try StubRoute(.post, "/hooks", status: .accepted)])
        let port = try await receiver.start(port: 0)
        let sender = try await Self.people()
        sender.setWebhookTransport(try WebhookClient())
        try sender.setWebhooks([
            try Webhook(
                "created", on: "POST /people", url: "http://127.0.0.1:\(port)/hooks",
                body: ["person": "{{response.body}}"])
        ])
        do {
            _ = await Self.create(sender, "Ada")
            let received = try await receiver.journal.next(matching: RequestPattern(.post, "/hooks"), timeout: .seconds(10))
            #expect(try received.request.json() == ["person": ["id": 1, "name": "Ada"]])
            #expect(received.headerFields[.userAgent] == "Hammock-Webhook/1")
            #expect(received.headerFields[HTTPField.Name("X-Hammock-Webhook")!] == "created")
            let attempt = try #require(await Self.attempts(sender, count: 1).first)
            #expect(attempt.status.code == 202 && attempt.peer == "127.0.0.1:\(port)")
            let listing = await sender.respond(to: MockRequest(.get, "/__hammock/requests"))
            let entries = try JSON(parsing: listing.body).arrayValue ?? []
            let hook = try #require(entries.first { $0["webhook"] != nil && $0["webhook"] != .null })
            #expect(hook["webhook"]?["name"] == "created" && hook["webhook"]?["attempt"] == 1)
            #expect(hook["response"]?["status"] == 202)
            await receiver.stop()
        } catch {
            await receiver.stop()
            throw error
        }
    }
}
