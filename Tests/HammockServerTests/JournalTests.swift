import Foundation
import HTTPTypes
import HammockHTTPServer
import HammockJSON
import HammockServer
import HammockTestSupport
import Synchronization
import Testing

/// The request journal: every answered request is recorded as the client saw it, and a test can
/// query it, verify counts, and wait for a request, with near misses when nothing matches.
@Suite("Request journal")
struct JournalTests {
    func server(options: MockServer.Options = MockServer.Options(), clock: ManualClock? = nil) async throws -> MockServer {
        let orders = MockResource("orders", fields: ["total": .integer, "customer": .json])
        if let clock {
            return try await MockServer(resources: [Fixtures.people, orders], options: options, clock: clock)
        }
        return try await MockServer(resources: [Fixtures.people, orders], options: options)
    }

    @Test("Each answered request is recorded with its method, target, headers, body, answer, route and duration")
    func recordsRequestAndAnswer() async throws {
        let server = try await server()
        var fields = HTTPFields()
        fields[.authorization] = "Bearer t-1"
        let created = await server.respond(
            to: MockRequest(.post, "/orders?source=app", headerFields: fields, json: ["total": 12, "customer": ["name": "ada"]]))
        #expect(created.status == .created)
        let entries = server.journal.entries
        try #require(entries.count == 1)
        let entry = entries[0]
        #expect(entry.id == 1)
        #expect(entry.request.method == .post && entry.request.path == "/orders" && entry.request.query == "source=app")
        #expect(entry.request.headerFields[.authorization] == "Bearer t-1")
        #expect(try entry.request.json()["customer"]?["name"] == "ada")
        #expect(entry.status == .created)
        #expect(entry.responseBodySize == created.body.count)
        #expect(entry.responseHeaderFields[.location] == "/orders/1")
        #expect(entry.route == MatchedRoute(kind: .resource, pattern: "/orders", resource: "orders"))
        #expect(entry.duration >= .zero)
        #expect(entry.peer == nil)
        #expect(!entry.isRefused)
        #expect(entry.summary == "#1 POST /orders?source=app → 201")
    }

    @Test("The journal sees what the client saw: a HEAD without its body, a 304, CORS headers, a 404 with no route")
    func recordsTheFinalAnswer() async throws {
        let server = try await server()
        _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": "ada"]))
        let first = await server.respond(to: MockRequest(.get, "/people/1"))
        let tag = try #require(first.headerFields[.eTag])
        var conditional = HTTPFields()
        conditional[.ifNoneMatch] = tag
        _ = await server.respond(to: MockRequest(.get, "/people/1", headerFields: conditional))
        _ = await server.respond(to: MockRequest(.head, "/people/1"))
        _ = await server.respond(to: MockRequest(.get, "/nowhere"))
        let entries = server.journal.entries
        try #require(entries.count == 5)
        #expect(entries[2].status == .notModified && entries[2].responseBodySize == 0)
        #expect(entries[3].method == .head && entries[3].responseBodySize == 0)
        #expect(entries[3].responseHeaderFields[.contentLength] == String(first.body.count))
        #expect(entries[1].responseHeaderFields[.accessControlAllowOrigin] == "*")
        #expect(entries[4].status == .notFound && entries[4].route == nil)
    }

    @Test("A request the transport refused is recorded, marked refused")
    func recordsRefusals() async throws {
        let server = try await server()
        _ = await server.respond(
            to: MockRequest(.post, "/orders"), rejectedWith: HTTPProblem(.contentTooLarge, detail: "too big"))
        let entry = try #require(server.journal.entries.first)
        #expect(entry.isRefused)
        #expect(entry.status == .contentTooLarge)
        #expect(entry.route == nil)
    }

    @Test("Patterns match by method, path pattern with wildcards, query, header, JSON body path and status")
    func patterns() async throws {
        let server = try await server()
        var fields = HTTPFields()
        fields[HTTPField.Name("X-Env")!] = "qa"
        _ = await server.respond(
            to: MockRequest(.post, "/orders?page=2", headerFields: fields, json: ["total": 12, "customer": ["name": "ada"]]))
        _ = await server.respond(to: MockRequest(.get, "/orders/1"))
        _ = await server.respond(to: MockRequest(.get, "/orders/1/nothing/here"))
        let journal = server.journal
        #expect(journal.count(matching: RequestPattern(.post, "/orders")) == 1)
        #expect(journal.count(matching: RequestPattern(.get, "/orders/:id")) == 1)
        #expect(journal.count(matching: RequestPattern(.get, "/orders/*")) == 1)
        #expect(journal.count(matching: RequestPattern(nil, "/orders/**")) == 3)
        #expect(journal.count(matching: RequestPattern(query: ["page": "2"])) == 1)
        #expect(journal.count(matching: RequestPattern(headers: ["x-env": "qa"])) == 1)
        #expect(journal.count(matching: RequestPattern(body: ["customer.name": "ada", "total": 12])) == 1)
        #expect(journal.count(matching: RequestPattern(body: ["customer.name": "bob"])) == 0)
        #expect(journal.count(matching: RequestPattern(status: 404)) == 1)
        #expect(journal.count(matching: .any) == 3)
        // A pattern that cannot be parsed matches nothing, and says so.
        let broken = RequestPattern(.get, "orders")
        #expect(journal.count(matching: broken) == 0)
        let why = try #require(journal.entries.first.map(broken.differences(from:)))
        #expect(why.contains { $0.contains("must start with /") })
    }

    @Test("A failed verification names the closest requests and the first field that differed, as text")
    func verificationFailure() async throws {
        let server = try await server()
        _ = await server.respond(to: MockRequest(.get, "/orders"))
        _ = await server.respond(to: MockRequest(.post, "/orders", json: ["total": 12]))
        try server.journal.verify(RequestPattern(.post, "/orders", body: ["total": 12]), count: .once)
        try server.journal.verify(RequestPattern(.delete, "/orders/*"), count: .never)
        let error = #expect(throws: JournalError.self) {
            try server.journal.verify(RequestPattern(.post, "/orders", body: ["total": 10]))
        }
        #expect(error?.reason == .wrongCount(expected: .atLeast(1), found: 0))
        #expect(
            error?.description == """
                expected at least 1 request matching POST /orders {body total = 10}, found 0
                closest recorded requests:
                  #2 POST /orders → 201: body member 'total' is 12, not 10
                  #1 GET /orders → 200: method is GET, not POST (and 1 more difference)
                """)
        let tooMany = #expect(throws: JournalError.self) {
            try server.journal.verify(RequestPattern(nil, "/orders"), count: .once)
        }
        #expect(tooMany?.description == "expected exactly 1 request matching /orders, found 2")
    }

    @Test("next(matching:) returns a request already recorded, or waits for one to arrive")
    func waitsForRequests() async throws {
        let server = try await server()
        _ = await server.respond(to: MockRequest(.get, "/orders"))
        let early = try await server.journal.next(matching: RequestPattern(.get, "/orders"))
        #expect(early.id == 1)
        let mark = server.journal.mark()
        async let later = server.journal.next(matching: RequestPattern(.post, "/orders"), after: mark, timeout: .seconds(30))
        // Give the waiter time to register, then send: either order must work.
        try await Task.sleep(for: .milliseconds(20))
        _ = await server.respond(to: MockRequest(.get, "/orders"))
        _ = await server.respond(to: MockRequest(.post, "/orders", json: ["total": 3]))
        let entry = try await later
        #expect(entry.request.method == .post && entry.id == 3)
    }

    @Test("A wait that times out on the server's clock says what came closest")
    func waitTimesOut() async throws {
        let clock = ManualClock()
        let server = try await server(clock: clock)
        _ = await server.respond(to: MockRequest(.post, "/orders", json: ["total": 1]))
        async let waited: JournalError? = {
            do {
                _ = try await server.journal.next(
                    matching: RequestPattern(.post, "/orders", body: ["total": 2]), timeout: .seconds(2))
                return nil
            } catch let error as JournalError {
                return error
            } catch {
                return nil
            }
        }()
        #expect(await eventually { clock.sleeperCount == 1 })
        clock.advance(by: .seconds(2))
        let error = try #require(await waited)
        #expect(error.reason == .timedOut(after: .seconds(2)))
        #expect(error.nearMisses.map(\.entry.id) == [1])
        #expect(error.description.contains("body member 'total' is 1, not 2"))
    }

    @Test("Cancelling a wait ends it with a cancelled error and leaves no waiter behind")
    func cancelledWait() async throws {
        let server = try await server()
        let task = Task { () -> JournalError? in
            do {
                _ = try await server.journal.next(matching: RequestPattern(.delete, "/orders/1"), timeout: .seconds(60))
                return nil
            } catch let error as JournalError {
                return error
            } catch {
                return nil
            }
        }
        try await Task.sleep(for: .milliseconds(20))
        task.cancel()
        let error = try #require(await task.value)
        #expect(error.reason == .cancelled)
        // A later matching request finds no stale waiter to resume.
        _ = await server.respond(to: MockRequest(.delete, "/orders/1"))
        #expect(server.journal.count(matching: RequestPattern(.delete, "/orders/1")) == 1)
    }

    @Test("Waits and cancellations racing with recording on a busy machine never hang and never lose a match")
    func waitsUnderLoad() async throws {
        let server = try await server()
        try await withBusyMachine {
            for round in 0..<40 {
                let mark = server.journal.mark()
                let path = "/orders/\(round)"
                async let found = server.journal.next(matching: RequestPattern(.get, path), after: mark, timeout: .seconds(60))
                let cancelled = Task {
                    try? await server.journal.next(matching: RequestPattern(.put, path), timeout: .seconds(60))
                }
                async let sent = server.respond(to: MockRequest(.get, path))
                cancelled.cancel()
                _ = await sent
                let entry = try await found
                #expect(entry.request.path == path)
                #expect(await cancelled.value == nil)
            }
        }
    }

    @Test("The journal keeps at most its entry limit and its byte budget, dropping the oldest")
    func bounded() async throws {
        let short = try await server(options: MockServer.Options(journal: RequestJournal.Limits(entries: 3)))
        for index in 1...7 { _ = await short.respond(to: MockRequest(.get, "/orders/\(index)")) }
        #expect(short.journal.entries.map(\.id) == [5, 6, 7])
        #expect(short.journal.entries.map(\.request.path) == ["/orders/5", "/orders/6", "/orders/7"])

        let small = try await server(options: MockServer.Options(journal: RequestJournal.Limits(entries: 100, bytes: 4_000)))
        let body = JSON.string(String(repeating: "x", count: 1_000))
        for _ in 1...10 { _ = await small.respond(to: MockRequest(.post, "/orders", json: ["customer": body])) }
        let kept = small.journal.entries
        #expect(kept.count < 10 && !kept.isEmpty)
        #expect(kept.last?.id == 10)
        #expect(kept.map(\.id) == Array(kept.first!.id...10))
        // Clearing empties it; numbering goes on.
        small.journal.clear()
        #expect(small.journal.entries.isEmpty)
        _ = await small.respond(to: MockRequest(.get, "/orders"))
        #expect(small.journal.entries.map(\.id) == [11])
    }

    @Test("Turned off, the journal records nothing and a wait says it is off")
    func journalOff() async throws {
        let server = try await server(options: MockServer.Options(journal: .off))
        _ = await server.respond(to: MockRequest(.get, "/orders"))
        #expect(server.journal.entries.isEmpty)
        let error = await #expect(throws: JournalError.self) {
            try await server.journal.next(timeout: .seconds(1))
        }
        #expect(error?.reason == .journalOff)
    }

    @Test("Admin API requests are not recorded")
    func adminNotRecorded() async throws {
        let server = try await server()
        #expect(await server.respond(to: MockRequest(.get, "/__hammock/requests")).status == .ok)
        #expect(await server.respond(to: MockRequest(.get, "/__hammock/version")).status == .ok)
        _ = await server.respond(to: MockRequest(.get, "/orders"))
        #expect(server.journal.entries.map(\.request.path) == ["/orders"])
    }

    @Test("Subscribers get every new entry in order")
    func updates() async throws {
        let server = try await server()
        let stream = server.journal.updates()
        for index in 1...5 { _ = await server.respond(to: MockRequest(.get, "/orders/\(index)")) }
        var seen: [UInt64] = []
        for await entry in stream {
            seen.append(entry.id)
            if seen.count == 5 { break }
        }
        #expect(seen == [1, 2, 3, 4, 5])
    }

    @Test("Over HTTP the entry carries the peer's address, and concurrent connections get distinct entries")
    func overHTTP() async throws {
        let server = try await server()
        try await server.whileServing { port in
            let client = LoopbackClient(port: port)
            try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<20 {
                    group.addTask { try await client.send("POST", "/orders", json: ["total": .integer(index)]).status }
                }
                for try await status in group { #expect(status == 201) }
            }
            let entries = server.journal.entries
            #expect(entries.count == 20)
            #expect(Set(entries.map(\.id)).count == 20)
            #expect(entries.allSatisfy { $0.peer?.hasPrefix("127.0.0.1:") == true })
            #expect(Set(entries.compactMap { try? $0.request.json()["total"] }) == Set((0..<20).map { JSON.integer($0) }))
        }
    }
}
