import Foundation
import HTTPTypes
import HammockAsyncHTTPClient
import HammockClient
import HammockHTTPServer
import HammockServer
import HammockTestSupport
import Synchronization
import Testing

struct Person: Codable, Equatable, Sendable {
    var id: Int?
    var name: String
    var numberOfKids: Int?
}

@API
protocol People: Sendable {
    @GET("/people")
    func people(limit: Int?) async throws -> [Person]

    @POST("/people")
    @Body("person")
    func create(person: Person) async throws -> Response<Person>

    @FormURLEncoded
    @POST("/people")
    func createFromForm(name: String, numberOfKids: Int) async throws -> Person

    @PATCH("/people/{id}")
    @Body("changes")
    func update(id: Int, changes: JSON) async throws -> Person

    @DELETE("/people/{id}")
    func delete(id: Int) async throws

    @GET("/people/{id}")
    func person(id: Int) async throws -> Person
}

@Suite("AsyncHTTPClient transport")
struct AsyncHTTPClientTransportTests {
    @Test("A generated client over AsyncHTTPClient against the mock server on loopback")
    func crud() async throws {
        let server = try await MockServer(resources: [
            MockResource("people", fields: ["name": .string, "numberOfKids": .integer])
        ])
        let port = try await server.start(port: 0)
        do {
            let api = PeopleClient(
                client: RestClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!, transport: AsyncHTTPClientTransport()))
            #expect(try await api.people(limit: nil) == [])
            let created = try await api.create(person: Person(name: "john", numberOfKids: 1))
            #expect(created.status == .created && created.headerFields[.location] == "/people/1")
            #expect(
                try await api.createFromForm(name: "ada lovelace", numberOfKids: 2)
                    == Person(id: 2, name: "ada lovelace", numberOfKids: 2))
            #expect(try await api.update(id: 1, changes: ["name": "jeff"]).name == "jeff")
            try await api.delete(id: 1)
            do {
                _ = try await api.person(id: 1)
                Issue.record("expected 404")
            } catch let error as RestError {
                #expect(error.status == .notFound)
                #expect(error.description.contains("404 Not Found"))
            }
            #expect(try await api.people(limit: 10).map(\.name) == ["ada lovelace"])
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test("Cancelling the task cancels the request")
    func cancellation() async throws {
        let server = try await MockServer(
            resources: [MockResource("people", fields: ["name": .string])],
            options: MockServer.Options(latency: Latency(.seconds(30)...(.seconds(30)))))
        let port = try await server.start(port: 0)
        let api = PeopleClient(
            client: RestClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!, transport: AsyncHTTPClientTransport()))
        let call = Task { try await api.people(limit: nil) }
        try await Task.sleep(for: .milliseconds(100))
        call.cancel()
        do {
            _ = try await call.value
            Issue.record("expected cancellation")
        } catch let error as RestError {
            guard case .cancelled = error.reason else {
                Issue.record("expected cancelled, got \(error)")
                await server.stop()
                return
            }
        }
        await server.stop()
    }

    @Test("Progress reports reach a listening task: the head with its length, then the bytes so far")
    func progressReports() async throws {
        let server = try await MockServer(resources: [MockResource("people", fields: ["name": .string])])
        try await server.addData(.array((1...500).map { ["name": .string("person \($0) with a longer name")] }), for: "people")
        let port = try await server.start(port: 0)
        let events = EventRecorder()
        let transport = AsyncHTTPClientTransport()
        let request = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:\(port)", path: "/people")
        do {
            let (_, silentBody) = try await transport.send(request, body: nil)  // nobody listens: nothing recorded
            #expect(events.all.isEmpty)
            let (response, body) = try await TransferProgress.$reporter.withValue(TransferReporter { events.append($0) }) {
                try await transport.send(request, body: nil)
            }
            #expect(response.status == .ok && body == silentBody && body.count > 10_000)
            #expect(events.all.first == .responseHeadReceived(expectedBytes: body.count))
            #expect(events.all.last == .responseBytesReceived(total: body.count))
            let totals = events.all.compactMap { event -> Int? in
                if case .responseBytesReceived(let total) = event { return total }
                return nil
            }
            #expect(zip(totals, totals.dropFirst()).allSatisfy { $0 < $1 })
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}

/// Collects transfer events from any task.
final class EventRecorder: Sendable {
    private let events = Mutex<[TransferEvent]>([])
    func append(_ event: TransferEvent) { events.withLock { $0.append(event) } }
    var all: [TransferEvent] { events.withLock { $0 } }
}

@Suite("AsyncHTTPClient transport on the wire", .timeLimit(.minutes(1)))
struct AsyncHTTPClientWireTests {
    @Test("A redirect to another origin drops Authorization and Cookie; one within the origin keeps them")
    func redirects() async throws {
        let elsewhere = try RecordingHTTPServer { _ in .text("landed") }
        defer { elsewhere.stop() }
        let origin = try RecordingHTTPServer { request in
            switch request.target {
            case "/away": .redirect(to: "http://localhost:\(elsewhere.port)/landing")
            case "/here": .redirect(to: "/landing")
            default: .text("home")
            }
        }
        defer { origin.stop() }
        let api = RestClient(
            baseURL: URL(string: "http://127.0.0.1:\(origin.port)")!, transport: AsyncHTTPClientTransport(),
            interceptors: [BearerAuthentication { "user-secret" }])
        var away = RequestBuilder(.get, "/away")
        away.setHeader("Cookie", "session=abc")
        #expect(try await api.send(away).body == Array("landed".utf8))
        let landed = try #require(elsewhere.requests.first)
        #expect(landed.values(of: "Authorization").isEmpty)
        #expect(landed.values(of: "Cookie").isEmpty)

        var here = RequestBuilder(.get, "/here")
        here.setHeader("Cookie", "session=abc")
        #expect(try await api.send(here).body == Array("home".utf8))
        let followed = try #require(origin.requests.last)
        #expect(followed.target == "/landing")
        #expect(followed.values(of: "Authorization") == ["Bearer user-secret"])
        #expect(followed.values(of: "Cookie") == ["session=abc"])
    }

    @Test("A redirect whose body trickles in ends the call at its timeout: the deadline covers redirects' bodies too")
    func redirectBodyDeadline() async throws {
        let server = try await MockServer()
        _ = server.addStubs([
            try StubRoute(
                .get, "/old",
                answers: [
                    try StubAnswer(status: 302, headers: [(.location, "/new")], body: .text(String(repeating: "x", count: 2_000)))
                ])
        ])
        // One byte a second: before, only AsyncHTTPClient's 90 s idle timeout bounded the read.
        server.setFaults([try Fault("GET /old", effect: .bandwidth(1))])
        try await server.whileServing { port in
            let transport = AsyncHTTPClientTransport(timeout: .seconds(1))
            let request = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:\(port)", path: "/old")
            let outcome = await withTaskGroup(of: String.self) { group in
                group.addTask {
                    do {
                        _ = try await transport.send(request, body: nil)
                        return "answered"
                    } catch {
                        return String(describing: error)
                    }
                }
                group.addTask {
                    try? await Task.sleep(for: .seconds(30))
                    return "still running after 30 s"
                }
                let first = await group.next() ?? ""
                group.cancelAll()
                return first
            }
            #expect(outcome.contains("deadlineExceeded"), "\(outcome)")
        }
    }

    @Test("The timeout it shows is the one it applies")
    func clampedTimeout() {
        #expect(AsyncHTTPClientTransport(timeout: .seconds(Int64.max)).timeout == .seconds(366 * 86_400))
        #expect(AsyncHTTPClientTransport(timeout: .zero).timeout == .milliseconds(1))
    }

    @Test("Two cookies go on one Cookie line, joined by a semicolon")
    func oneCookieLine() async throws {
        let server = try RecordingHTTPServer { _ in .text("ok") }
        defer { server.stop() }
        let client = RestClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!, transport: AsyncHTTPClientTransport())
        var request = RequestBuilder(.get, "/echo")
        request.setHeader("Cookie", "session=abc; theme=dark")
        _ = try await client.send(request)
        #expect(server.requests.first?.values(of: "Cookie") == ["session=abc; theme=dark"])
    }

    @Test("The timeout covers the whole call: a body that trickles in past it fails")
    func timeoutCoversBody() async throws {
        let server = try RecordingHTTPServer { _ in
            // 4 s of body against a 300 ms timeout: a margin that a loaded machine (the suite runs races
            // with every core busy alongside) cannot eat.
            RecordingHTTPServer.Reply(body: Array("abcd".utf8), trickle: .seconds(1))
        }
        defer { server.stop() }
        let transport = AsyncHTTPClientTransport(timeout: .milliseconds(300))
        let client = RestClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!, transport: transport)
        let error = try await #require(throws: RestError.self) { try await client.send(RequestBuilder(.get, "/slow")) }
        // A timeout, as URLSession's is: the same case whichever transport.
        guard case .timedOut = error.reason else {
            Issue.record("expected a timeout, got \(error.reason)")
            return
        }
        // A generous timeout lets the same trickle through.
        let patient = RestClient(
            baseURL: URL(string: "http://127.0.0.1:\(server.port)")!, transport: AsyncHTTPClientTransport(timeout: .seconds(30)))
        #expect(try await patient.send(RequestBuilder(.get, "/slow")).body == Array("abcd".utf8))
    }

    @Test(
        "Timeouts and size limits at their extremes never trap: the longest timeout answers, a negative size refuses every body")
    func extremes() async throws {
        let server = try RecordingHTTPServer { _ in .text("ok") }
        defer { server.stop() }
        let base = URL(string: "http://127.0.0.1:\(server.port)")!
        for timeout in [Duration.seconds(Int64.max), .seconds(Int64.min), .zero] {
            let client = RestClient(baseURL: base, transport: AsyncHTTPClientTransport(timeout: timeout))
            // A zero or negative timeout is a millisecond: the call may fail, as a transport error.
            do {
                #expect(try await client.send(RequestBuilder(.get, "/x")).body == Array("ok".utf8))
            } catch {
                #expect(timeout <= .zero, "\(timeout): \(error)")
            }
        }
        let strict = RestClient(baseURL: base, transport: AsyncHTTPClientTransport(maximumResponseSize: Int.min))
        await #expect(throws: RestError.self) { try await strict.send(RequestBuilder(.get, "/x")) }
    }
}
