import Foundation
import HTTPTypes
import HammockClient
import HammockHTTPServer
import HammockJSON
import HammockServer
import HammockTesting
import HammockURLSession
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The same test bodies in process (`HammockURLProtocol`) and over a loopback socket: redirects, event
/// streams, cookies and connection faults behave alike, so a test that passes in process passes on a
/// socket (the third client review found each of them differing). What still differs is in docs/testing.md.
@Suite("In process exactly as over a socket")
struct InProcessParityTests {
    enum Reach: String, CaseIterable, CustomStringConvertible, Sendable {
        case inProcess = "in process"
        case loopback
        var description: String { rawValue }
    }

    /// `server` reached as `reach` says: its base URL and a session configuration that reaches it.
    static func serve(_ server: MockServer, _ reach: Reach) async throws -> (base: URL, configuration: URLSessionConfiguration) {
        switch reach {
        case .inProcess:
            return (server.inProcessURL, server.urlSessionConfiguration(.ephemeral))
        case .loopback:
            try await server.start(host: "127.0.0.1", port: 0)
            return (try #require(await server.baseURL), .ephemeral)
        }
    }

    @Test(
        "A stub's redirect is followed: 302 and 303 (POST becomes GET), to another server too, and an app's delegate can refuse it",
        arguments: Reach.allCases)
    func redirects(reach: Reach) async throws {
        let home = try await MockServer(resources: [MockResource("people", fields: ["name": .string])])
        let elsewhere = try await MockServer()
        let (base, configuration) = try await Self.serve(home, reach)
        let (away, _) = try await Self.serve(elsewhere, reach)
        defer {
            Task {
                await home.stop()
                await elsewhere.stop()
            }
        }
        _ = elsewhere.addStubs([try StubRoute.fixture(.get, "/whoami", json: ["server": "elsewhere"])])
        _ = home.addStubs([
            try StubRoute.fixture(.get, "/old", status: 302, headers: [("Location", "/people")]),
            try StubRoute.fixture(.post, "/form", status: 303, headers: [("Location", "/people")]),
            try StubRoute.fixture(.get, "/away", status: 302, headers: [("Location", away.absoluteString + "/whoami")]),
        ])
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        let (_, old) = try await session.data(from: base.appendingPathComponent("old"))
        #expect((old as? HTTPURLResponse)?.statusCode == 200)
        #expect(old.url?.path == "/people")
        var form = URLRequest(url: base.appendingPathComponent("form"))
        form.httpMethod = "POST"
        form.httpBody = Data("a=1".utf8)
        let (_, posted) = try await session.data(for: form)
        #expect((posted as? HTTPURLResponse)?.statusCode == 200)
        #expect(home.journal.entries.suffix(2).map { "\($0.method.rawValue) \($0.path)" } == ["POST /form", "GET /people"])

        // Through HammockClient's transport on the same session: RedirectRule strips the API key on
        // the way to another origin, in process as on the wire.
        let transport = URLSessionTransport(session: URLSession(configuration: configuration))
        var request = HTTPRequest(method: .get, url: base.appendingPathComponent("away"))
        request.headerFields[HTTPField.Name("X-Api-Key")!] = "k-42"
        request.headerFields[.accept] = "application/json"
        let (response, body) = try await transport.send(request, body: nil)
        #expect(response.status == .ok)
        #expect(try JSON(parsing: body) == ["server": "elsewhere"])
        let arrived = try #require(elsewhere.journal.entries.last)
        #expect(arrived.headerFields[HTTPField.Name("X-Api-Key")!] == nil)
        #expect(arrived.headerFields[.accept] == "application/json")

        // The app's own delegate decides: refused, the redirect is the answer.
        let refusing = URLSession(configuration: configuration, delegate: RefusingRedirects(), delegateQueue: nil)
        defer { refusing.finishTasksAndInvalidate() }
        let (_, kept) = try await refusing.data(from: base.appendingPathComponent("old"))
        #expect((kept as? HTTPURLResponse)?.statusCode == 302)
    }

    @Test(
        "An event stream arrives event by event while it runs, ends when the task is cancelled, and ends when the server stops",
        arguments: Reach.allCases)
    func eventStreams(reach: Reach) async throws {
        let server = try await MockServer()
        let events = (1...3).map { ServerSentEvent(event: "tick", data: ["n": .integer($0)], delay: .milliseconds(30)) }
        _ = server.addStubs([try StubRoute(.get, "/ticks", answers: [StubAnswer(body: .events(events, repeats: true))])])
        let (base, configuration) = try await Self.serve(server, reach)
        let collector = StreamCollector()
        let session = URLSession(configuration: configuration, delegate: collector, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        // The stream repeats for ever: before, in process, nothing arrived and the buffer grew for ever.
        let running = session.dataTask(with: base.appendingPathComponent("ticks"))
        running.resume()
        #expect(await eventually { collector.text.components(separatedBy: "event: tick").count > 4 })
        #expect(collector.completions == 0)
        running.cancel()
        #expect(await eventually { collector.completions == 1 })
        // A stream still running when the server stops ends, as a socket's connection does.
        let stopped = session.dataTask(with: base.appendingPathComponent("ticks"))
        stopped.resume()
        #expect(await eventually { collector.text.components(separatedBy: "event: tick").count > 6 })
        await server.stop()
        #expect(await eventually { collector.completions == 2 })
    }

    @Test(
        "Cookies a stub sets go to the session's storage line by line and come back on the next request",
        arguments: Reach.allCases)
    func cookies(reach: Reach) async throws {
        let server = try await MockServer()
        defer { Task { await server.stop() } }
        _ = server.addStubs([
            try StubRoute.fixture(
                .post, "/login", status: 204,
                headers: [
                    ("Set-Cookie", "sid=abc123; Path=/"),
                    // A comma inside its date: joined with the first line, it was split there.
                    ("Set-Cookie", "theme=dark; Expires=Wed, 21 Oct 2037 07:28:00 GMT; Path=/"),
                ]),
            try StubRoute.fixture(.get, "/me", json: ["me": true]),
        ])
        let (base, configuration) = try await Self.serve(server, reach)
        configuration.httpCookieStorage = HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: UUID().uuidString)
        configuration.httpCookieAcceptPolicy = .always
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        var login = URLRequest(url: base.appendingPathComponent("login"))
        login.httpMethod = "POST"
        let (_, loggedIn) = try await session.data(for: login)
        #expect((loggedIn as? HTTPURLResponse)?.statusCode == 204)
        let names = Set((configuration.httpCookieStorage?.cookies ?? []).map(\.name))
        #expect(names == ["sid", "theme"])
        _ = try await session.data(from: base.appendingPathComponent("me"))
        let sent = try #require(server.journal.entries.last).headerFields[values: .cookie].joined(separator: "; ")
        #expect(sent.contains("sid=abc123"), "\(sent)")
        #expect(sent.contains("theme=dark"), "\(sent)")
    }

    @Test("Connection faults fail the same way: a reset, a cut body, a drop", arguments: Reach.allCases)
    func faults(reach: Reach) async throws {
        let server = try await MockServer(resources: [MockResource("people", fields: ["name": .string])])
        defer { Task { await server.stop() } }
        let (base, configuration) = try await Self.serve(server, reach)
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        for fault in [ConnectionFault.reset, .truncate, .drop] {
            server.setFaults([try Fault("GET /people", effect: .connection(fault))])
            let error = await #expect(throws: URLError.self, "\(fault)") {
                _ = try await session.data(from: base.appendingPathComponent("people"))
            }
            #expect(error?.code == InProcessNetwork.urlError(for: fault).code, "\(fault)")
        }
    }
}

/// A delegate that follows no redirect.
final class RefusingRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}

/// A data delegate that keeps what arrives, as it arrives.
final class StreamCollector: NSObject, URLSessionDataDelegate, Sendable {
    private let state = Mutex((text: "", completions: 0))

    var text: String { state.withLock { $0.text } }
    var completions: Int { state.withLock { $0.completions } }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        state.withLock { $0.text += String(decoding: data, as: UTF8.self) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        state.withLock { $0.completions += 1 }
    }
}
