import Foundation
import HTTPTypes
import HammockClient
import HammockHTTPServer
import HammockResources
import HammockServer
import HammockTesting
import Testing

/// A generated client and observable resources against the mock over loopback, with the journal as the
/// witness of exactly which requests they sent.
@MainActor
@Suite("End to end: the journal proves what the client sent", .timeLimit(.minutes(1)))
struct JournalEndToEndTests {
    struct Person: Codable, Equatable, Sendable {
        var id: Int? = nil
        var name: String
    }

    @API
    protocol People: Sendable {
        @GET("/people/{id}")
        func person(id: Int) async throws -> Person

        @POST("/people")
        @Body("person")
        func create(person: Person) async throws -> Person
    }

    @Test("The client's POST and GET, a fresh loadIfNeeded that sends nothing, and a revalidation with If-None-Match")
    func journalWitness() async throws {
        let server = try await MockServer(resources: [MockResource("people", fields: ["name": .string])])
        let clock = ManualClock()
        try await server.whileServing { port in
            let baseURL = try #require(URL(string: "http://127.0.0.1:\(port)"))
            let people = PeopleClient(client: RestClient(baseURL: baseURL))
            let ada = try await people.create(person: Person(name: "ada"))
            let id = try #require(ada.id)
            #expect(try await people.person(id: id) == ada)
            try server.journal.verify(RequestPattern(.post, "/people", body: ["name": "ada"]), count: .once)
            try server.journal.verify(RequestPattern(.get, "/people/\(id)", status: 200), count: .once)

            let service = try Service(baseURL: baseURL, clock: clock)
            let resource = service.resource("/people/\(id)")
            let beforeLoad = server.journal.mark()
            _ = try await resource.load().value()
            let first = try await server.journal.next(matching: RequestPattern(.get, "/people/\(id)"), after: beforeLoad)
            #expect(first.headerFields[.ifNoneMatch] == nil)
            let tag = try #require(first.responseHeaderFields[.eTag])

            // Fresh data: loadIfNeeded sends nothing, however often it is called.
            let whileFresh = server.journal.mark()
            for _ in 0..<3 { #expect(resource.loadIfNeeded() == nil) }
            #expect(server.journal.entries(matching: .any, after: whileFresh).isEmpty)

            // Past the expiration time it revalidates with the tag it has, and the server answers 304.
            clock.advance(by: .seconds(31))
            let revalidating = try #require(resource.loadIfNeeded())
            _ = try await revalidating.value()
            let revalidation = try await server.journal.next(
                matching: RequestPattern(.get, "/people/\(id)", headers: ["If-None-Match": tag]), after: whileFresh)
            #expect(revalidation.status == .notModified)
            #expect(server.journal.entries(matching: .any, after: whileFresh).count == 1)
            #expect(resource.latestData != nil)
        }
    }
}

/// Observable resources meeting injected failures over loopback, the journal counting every request.
@MainActor
@Suite("End to end: a 503 burst and a recovery", .timeLimit(.minutes(1)))
struct FaultEndToEndTests {
    @Test("A resource meets a 503 burst with Retry-After, waits as asked, and recovers through its retry")
    func burstAndRecovery() async throws {
        let server = try await MockServer(resources: [MockResource("people", fields: ["name": .string])])
        _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": "ada"]))
        server.setFaults([try Fault(parsing: "GET /people/:id 503 retry-after=2")])
        let clock = ManualClock()
        try await server.whileServing { port in
            let service = try Service(baseURL: "http://127.0.0.1:\(port)", clock: clock)
            service.configure { $0.retry = RetryBackoff(maximumAttempts: 4, initialDelay: .seconds(1), multiplier: 2) }
            let resource = service.resource("/people/1")
            let mark = server.journal.mark()
            let failed = RequestPattern(.get, "/people/1", status: 503)
            let loading = resource.load()
            _ = try await server.journal.next(matching: failed, after: mark)
            // The backoff asks for 1 s, the server for 2: the retry waits 2.
            #expect(await eventually { clock.sleeperCount == 1 })
            clock.advance(by: .milliseconds(1999))
            #expect(server.journal.entries(matching: .any, after: mark).count == 1)
            clock.advance(by: .milliseconds(1))
            let second = try await server.journal.next(matching: failed, after: JournalCursor(id: mark.id + 1))
            // The burst ends; the next retry gets through.
            server.setFaults([])
            #expect(await eventually { clock.sleeperCount == 1 })
            clock.advance(by: .seconds(2))
            let entity = try await loading.value()
            #expect(entity.jsonContent?["name"] == "ada")
            let sent = server.journal.entries(matching: RequestPattern(.get, "/people/1"), after: mark)
            #expect(sent.map(\.status.code) == [503, 503, 200])
            #expect(sent.prefix(2).allSatisfy { $0.fault == "GET /people/:id 503 retry-after=2" })
            #expect(sent.last?.fault == nil)
            #expect(second.responseHeaderFields[.retryAfter] == "2")
            #expect(resource.latestError == nil)
        }
    }
}
