import Foundation
import HTTPTypes
import HammockClient
import HammockJSON
import HammockServer
import HammockServerTesting
import HammockTesting
import HammockURLSession
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The third client review's findings through the public API, against the mock server: MockServerTransport
/// behaving as a socket does (redirects, bounded streams), waits of any `Duration`, a launch environment
/// no other process can use, and the in-process table.
@Suite("The third client review, against the mock")
struct ClientReviewThreeTests {
    static func request(_ method: HTTPRequest.Method, _ path: String) -> HTTPRequest {
        HTTPRequest(method: method, scheme: "http", authority: "mock.test", path: path)
    }

    @Test("MockServerTransport follows a redirect within its server as the socket transports do, and a POST after a 303 is a GET")
    func transportRedirects() async throws {
        let server = try await MockServer(resources: [MockResource("people", fields: ["name": .string])])
        _ = server.addStubs([
            try StubRoute.fixture(.get, "/old", status: 301, headers: [("Location", "/people")]),
            try StubRoute.fixture(.post, "/form", status: 303, headers: [("Location", "http://mock.test/people?from=form")]),
            try StubRoute.fixture(.get, "/away", status: 302, headers: [("Location", "https://elsewhere.example/x")]),
            try StubRoute.fixture(.get, "/loop", status: 302, headers: [("Location", "/loop")]),
            try StubRoute.fixture(.get, "/search", status: 302, headers: [("Location", "/people?name=Amy%20Lee&f[x]=1")]),
        ])
        let transport = MockServerTransport(server: server)
        var old = Self.request(.get, "/old")
        old.headerFields[HTTPField.Name("X-Api-Key")!] = "k-42"
        let (response, body) = try await transport.send(old, body: nil)
        #expect(try response.status == .ok && JSON(parsing: body) == [])
        // Within the origin the request goes on as it was.
        #expect(server.journal.entries.last?.headerFields[HTTPField.Name("X-Api-Key")!] == "k-42")
        let (posted, _) = try await transport.send(Self.request(.post, "/form"), body: Array("a=1".utf8))
        #expect(posted.status == .ok)
        #expect(
            server.journal.entries.last.map { "\($0.method.rawValue) \($0.path)?\($0.query ?? "")" } == "GET /people?from=form")
        let away = await #expect(throws: URLError.self) { _ = try await transport.send(Self.request(.get, "/away"), body: nil) }
        #expect(away?.code == .unsupportedURL)
        let loop = await #expect(throws: URLError.self) { _ = try await transport.send(Self.request(.get, "/loop"), body: nil) }
        #expect(loop?.code == .httpTooManyRedirects)
        // A `Location` with brackets beside an escape is followed with the escape as it was (`Amy%2520Lee` before).
        _ = try await transport.send(Self.request(.get, "/search"), body: nil)
        #expect(server.journal.entries.last?.query == "name=Amy%20Lee&f%5Bx%5D=1")
    }

    @Test("MockServerTransport bounds a streamed body as the other transports do: in size, and in time for one that never ends")
    func transportBoundsStreams() async throws {
        let server = try await MockServer()
        let events = [ServerSentEvent(event: "tick", data: ["n": 1], delay: .milliseconds(20))]
        _ = server.addStubs([
            try StubRoute(.get, "/ticks", answers: [StubAnswer(body: .events(events, repeats: true))]),
            try StubRoute(.get, "/large", answers: [StubAnswer(body: .bytes([UInt8](repeating: 7, count: 300_000)))]),
        ])
        // Before, the repeating stream was read until the test process ran out of memory.
        let timed = await #expect(throws: URLError.self) {
            _ = try await MockServerTransport(server: server, timeout: .milliseconds(300)).send(
                Self.request(.get, "/ticks"), body: nil)
        }
        #expect(timed?.code == .timedOut)
        let large = await #expect(throws: URLError.self) {
            _ = try await MockServerTransport(server: server, maximumResponseSize: 100_000).send(
                Self.request(.get, "/large"), body: nil)
        }
        #expect(large?.code == .dataLengthExceedsMaximum)
    }

    @Test("Waits of any Duration never trap: a timeout fault under .seconds(Int64.max), in MockServerTransport and exchange")
    func hugeTimeouts() async throws {
        let server = try await MockServer(resources: [MockResource("people", fields: ["name": .string])])
        server.setFaults([try Fault("GET /people", effect: .connection(.timeout))])
        // Before, ContinuousClock trapped ("Not enough bits to represent the passed value").
        let transport = MockServerTransport(server: server, timeout: .seconds(Int64.max))
        #expect(transport.timeout == .seconds(366 * 86_400))
        let call = Task { try await transport.send(Self.request(.get, "/people"), body: nil) }
        #expect(await eventually { server.journal.count() == 1 })
        call.cancel()
        await #expect(throws: CancellationError.self) { _ = try await call.value }
        let exchange = Task { try await server.exchange(MockRequest(.get, "/people"), timeout: .seconds(Int64.max)) }
        #expect(await eventually { server.journal.count() == 2 })
        exchange.cancel()
        await #expect(throws: CancellationError.self) { _ = try await exchange.value }
    }

    @Test("A RetryBackoff of Int64.max seconds waits (a year at most) instead of trapping on the first 503")
    func hugeBackoff() async throws {
        let server = try await MockServer()
        _ = server.addStubs([try StubRoute.fixture(.get, "/flaky", status: 503)])
        let backoff = RetryBackoff(initialDelay: .seconds(Int64.max), maximumDelay: .seconds(Int64.max))
        let client = InterceptedTransport(MockServerTransport(server: server), interceptors: [RetryPolicy(backoff: backoff)])
        let call = Task { try await client.send(Self.request(.get, "/flaky"), body: nil) }
        #expect(await eventually { server.journal.count() == 1 })
        // Past the first answer the policy sleeps: cancelling ends the wait.
        try await Task.sleep(for: .milliseconds(50))
        call.cancel()
        await #expect(throws: CancellationError.self) { _ = try await call.value }
        #expect(server.journal.count() == 1)
    }

    @Test("An in-process mock's launch environment throws naming .loopback, where before it handed the app an unreachable URL")
    func inProcessLaunchEnvironment() async throws {
        let mock = try await TestMock.start(.inProcess) { try await MockServer() }
        defer { Task { await mock.stop() } }
        let error = #expect(throws: TestMock.LaunchEnvironmentError.self) { _ = try mock.launchEnvironment }
        #expect(error?.description.contains(".loopback") == true)
    }

    @Test("TestMock.stop() ends an in-process stream still running, so the session can finish")
    func stopEndsInProcessStreams() async throws {
        let events = [ServerSentEvent(event: "tick", data: ["n": 1], delay: .milliseconds(20))]
        let mock = try await TestMock.start(.inProcess) {
            let server = try await MockServer()
            _ = server.addStubs([try StubRoute(.get, "/ticks", answers: [StubAnswer(body: .events(events, repeats: true))])])
            return server
        }
        let collector = StreamCollector()
        let session = URLSession(configuration: mock.server.urlSessionConfiguration(), delegate: collector, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        session.dataTask(with: mock.url("ticks")).resume()
        #expect(await eventually { collector.text.contains("event: tick") })
        await mock.stop()
        #expect(await eventually { collector.completions == 1 })
    }

    @Test("The in-process table forgets servers that are gone, both ways")
    func inProcessTablePruned() async throws {
        for _ in 0..<50 {
            let server = try await MockServer()
            _ = server.inProcessURL
        }
        let survivor = try await MockServer()
        _ = survivor.inProcessURL
        // Every entry by server has its entry by host: before, the one by server was never pruned.
        let counts = InProcessServers.shared.counts
        #expect(counts.servers == counts.hosts)
    }
}
