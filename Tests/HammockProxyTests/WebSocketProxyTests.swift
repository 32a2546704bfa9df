import Foundation
import HTTPTypes
import HammockHTTPServer
import HammockJSON
import HammockProxy
import HammockServer
import HammockTestSupport
import Testing

/// WebSockets through the proxy, to a backend no one here wrote: the `websockets` library (PyPI) on
/// loopback (Tests/Scripts/websocket_backend.py). The client is the mock's in-process one, so each test
/// reads exactly what reached the client; `ProxyCommandTests` meets the same backend with the same library
/// as the client, over real sockets through `hammock serve --proxy`.
@Suite("Proxying WebSockets", .timeLimit(.minutes(2)))
struct WebSocketProxyTests {
    /// A mock with nothing of its own, in front of the Python backend.
    static func withProxy<T>(
        timeout: Duration = .seconds(30), _ body: (MockServer, URL) async throws -> T
    ) async throws -> T {
        try await withBackend { upstream in
            try await withMock(proxyingTo: upstream, timeout: timeout) { server in try await body(server, upstream) }
        }
    }

    /// The Python backend (over TLS with a certificate and key file) for `body`, stopped after it, thrown or not.
    static func withBackend<T>(tls: [String] = [], _ body: (URL) async throws -> T) async throws -> T {
        let backend = try await HTTPBinServer.startScript("websocket_backend.py", tls, isTLS: !tls.isEmpty)
        do {
            let result = try await body(backend.baseURL)
            await backend.stop()
            return result
        } catch {
            await backend.stop()
            throw error
        }
    }

    /// A mock with nothing of its own in front of `upstream` for `body` (recording into `recording` when
    /// one is given), stopped after it, thrown or not.
    static func withMock<T>(
        proxyingTo upstream: URL, timeout: Duration = .seconds(30), rootsPEM: String? = nil, cors: Bool = true,
        recording: ProxyRecording? = nil, _ body: (MockServer) async throws -> T
    ) async throws -> T {
        try await withServer(try await MockServer(resources: [], options: MockServer.Options(allowsCrossOrigin: cors))) {
            server in
            server.addRoutes(
                try ProxyRoutes(upstream: upstream, timeout: timeout, recording: recording, upstreamRootsPEM: rootsPEM),
                first: false)
            return try await body(server)
        }
    }

    /// Every message until the socket ends.
    static func all(_ socket: InProcessWebSocket) async -> [WebSocketMessage] {
        var messages: [WebSocketMessage] = []
        for await message in socket.messages { messages.append(message) }
        return messages
    }

    /// How the backend saw `path`'s sockets end (close code and reason, 1006 for none), once it has seen
    /// `count` of them: its `/closes` socket reports them.
    static func backendEndings(of path: String, count: Int = 1, server: MockServer) async throws -> [JSON] {
        for _ in 0..<100 {
            let socket = try await server.connectWebSocket("/closes")
            var iterator = socket.messages.makeAsyncIterator()
            guard case .text(let text)? = await iterator.next() else { continue }
            socket.close()
            let endings = try JSON(parsing: Array(text.utf8)).arrayValue?.filter { $0["path"]?.stringValue == path } ?? []
            if endings.count >= count { return endings }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("the backend never reported \(count) ending(s) of \(path)")
        return []
    }

    @Test("A WebSocket the mock does not serve opens on the backend, and text and bytes go both ways")
    func echo() async throws {
        try await Self.withProxy { server, _ in
            let socket = try await server.connectWebSocket("/echo")
            #expect(socket.response.status == .switchingProtocols)
            try await socket.send(.text("hello"))
            try await socket.send(.binary([0, 1, 0xFF]))
            var iterator = socket.messages.makeAsyncIterator()
            #expect(await iterator.next() == .text("hello"))
            #expect(await iterator.next() == .binary([0, 1, 0xFF]))
            socket.close()
            // The journal has the handshake as a proxied route, and the client's messages under it.
            let handshake = try await server.journal.next(matching: RequestPattern(.get, "/echo"), timeout: .seconds(5))
            #expect(handshake.status == .switchingProtocols && handshake.route?.kind == .proxy)
            let message = try await server.journal.next(matching: .webSocketMessage("/echo"), timeout: .seconds(5))
            #expect(message.body == Array("hello".utf8))
        }
    }

    @Test(
        "The handshake reaches the backend with the client's fields and query, this hop's Via and Forwarded, no hop field; the backend's subprotocol is agreed"
    )
    func handshakeFields() async throws {
        try await Self.withProxy { server, upstream in
            var fields: HTTPFields = [:]
            fields[.authorization] = "Bearer t-1"
            fields[.cookie] = "session=abc"
            fields[.origin] = "http://app.local"
            fields[HTTPField.Name("X-Custom")!] = "kept"
            fields[HTTPField.Name("Keep-Alive")!] = "timeout=5"
            fields[.secWebSocketProtocol] = "chat.v1, chat.v2"
            fields[.secWebSocketExtensions] = "permessage-deflate; client_max_window_bits"
            let socket = try await server.connectWebSocket("/hello?room=7&x=%20y", headers: fields)
            #expect(socket.subprotocol == "chat.v2")
            #expect(socket.response.headerFields[.secWebSocketProtocol] == "chat.v2")
            #expect(socket.response.headerFields[.secWebSocketExtensions] == nil)
            var iterator = socket.messages.makeAsyncIterator()
            guard case .text(let text)? = await iterator.next() else {
                Issue.record("no report from the backend")
                return
            }
            let report = try JSON(parsing: Array(text.utf8))
            #expect(report["target"] == "/hello?room=7&x=%20y")
            #expect(report["subprotocol"] == "chat.v2")
            let seen = try #require(report["fields"])
            #expect(seen["Host"] == .string("127.0.0.1:\(upstream.port ?? 0)"))
            #expect(seen["Authorization"] == "Bearer t-1" && seen["Cookie"] == "session=abc")
            #expect(seen["Origin"] == "http://app.local" && seen["X-Custom"] == "kept")
            #expect(seen["Sec-WebSocket-Protocol"] == "chat.v1, chat.v2")
            // Each hop negotiates its own extensions; Keep-Alive is hop-by-hop.
            #expect(seen["Sec-WebSocket-Extensions"] == .null && seen["Keep-Alive"] == .null)
            #expect(seen["Via"]?.stringValue?.wholeMatch(of: /1\.1 hammock-[0-9a-f]{8}/) != nil)
            #expect(seen["Forwarded"] == "for=unknown;proto=http")
            socket.close()
        }
    }

    @Test("The backend's close reaches the client with its code and reason; the client's close reaches the backend with its own")
    func closesBothWays() async throws {
        try await Self.withProxy { server, _ in
            let closing = try await server.connectWebSocket("/close")
            try await closing.send(.text("x"))
            #expect(await Self.all(closing).isEmpty)
            #expect(closing.closedWith == WebSocketClose(code: 4001, reason: "bye from backend"))

            let echo = try await server.connectWebSocket("/echo")
            try await echo.send(.text("one"))
            var iterator = echo.messages.makeAsyncIterator()
            #expect(await iterator.next() == .text("one"))
            echo.close(WebSocketClose(code: 4002, reason: "bye from the app"))
            let ended = try await Self.backendEndings(of: "/echo", server: server)
            #expect(ended.first?["code"] == 4002 && ended.first?["reason"] == "bye from the app")
        }
    }

    @Test("A backend that cuts its connection cuts the client's; a server that stops tells the backend 1001")
    func dropsAndStops() async throws {
        try await Self.withBackend { upstream in
            try await Self.withMock(proxyingTo: upstream) { server in
                let dropping = try await server.connectWebSocket("/drop")
                try await dropping.send(.text("x"))
                #expect(await Self.all(dropping).isEmpty)
                #expect(dropping.wasDropped && dropping.closedWith == nil)

                let echo = try await server.connectWebSocket("/echo")
                try await echo.send(.text("before the stop"))
                var iterator = echo.messages.makeAsyncIterator()
                #expect(await iterator.next() == .text("before the stop"))
                await server.stop()
                #expect(await iterator.next() == nil)
                #expect(echo.closedWith == .goingAway)
            }
            // A second mock asks the backend how the first one's socket ended.
            try await Self.withMock(proxyingTo: upstream) { asking in
                let ended = try await Self.backendEndings(of: "/echo", server: asking)
                #expect(ended.first?["code"] == 1001)
            }
        }
    }

    @Test("Thirty sockets at once keep their messages in order and apart, and each close reaches the backend with its own code")
    func manyAtOnce() async throws {
        try await Self.withProxy { server, _ in
            let codes = try await withThrowingTaskGroup(of: UInt16.self) { group in
                for index in 0..<30 {
                    group.addTask {
                        let socket = try await server.connectWebSocket("/echo")
                        var iterator = socket.messages.makeAsyncIterator()
                        for number in 0..<20 {
                            try await socket.send(.text("\(index)-\(number)"))
                            #expect(await iterator.next() == .text("\(index)-\(number)"))
                        }
                        let code = UInt16(4000 + index)
                        socket.close(WebSocketClose(code: code))
                        return code
                    }
                }
                return try await group.reduce(into: Set<UInt16>()) { $0.insert($1) }
            }
            let ended = try await Self.backendEndings(of: "/echo", count: 30, server: server)
            #expect(Set(ended.compactMap { $0["code"]?.intValue.map(UInt16.init) }) == codes)
        }
    }

    @Test("The backend's pings are answered, so a backend that closes a socket whose pings go unanswered keeps it open")
    func pingsAreAnswered() async throws {
        try await Self.withProxy { server, _ in
            // The backend pings five times and closes with 1011 if a pong does not come.
            let quiet = try await server.connectWebSocket("/quiet")
            var iterator = quiet.messages.makeAsyncIterator()
            #expect(await iterator.next() == .text("still here after 5 pongs"))
            #expect(quiet.closedWith == nil)
            quiet.close()
        }
    }

    @Test("A message the backend sends in 300 fragments reaches the client as one message")
    func fragmentsAreJoined() async throws {
        try await Self.withProxy { server, _ in
            let long = try await server.connectWebSocket("/long")
            var iterator = long.messages.makeAsyncIterator()
            #expect(await iterator.next() == .text(String(repeating: "x", count: 300_000)))
            long.close()
        }
    }

    @Test("A handshake the backend refuses comes back as the backend answered it; one the client got wrong never leaves the mock")
    func refusals() async throws {
        try await Self.withProxy { server, _ in
            let refusal = await #expect(throws: WebSocketHandshakeError.self) { try await server.connectWebSocket("/refuse") }
            #expect(refusal?.response.status == .forbidden)
            #expect(refusal?.response.body == Array("no socket for you\n".utf8))
            #expect(refusal?.response.headerFields[HTTPField.Name("X-Reason")!] == "refused by the backend")

            var bad = MockRequest(.get, "/echo")
            bad.headerFields[.upgrade] = "websocket"
            bad.headerFields[.connection] = "Upgrade"
            bad.headerFields[.secWebSocketVersion] = "13"
            bad.headerFields[.secWebSocketKey] = "short"
            let answer = await server.respond(to: bad)
            #expect(answer.status == .badRequest)
            #expect(answer.headerFields[.contentType] == "application/problem+json")
            // Nothing reached the backend: it saw no /echo socket.
            try await Task.sleep(for: .milliseconds(200))
            #expect(try await Self.backendEndings(of: "/echo", count: 0, server: server).isEmpty)
        }
    }

    @Test("A backend that cannot be reached is a 502 problem naming it")
    func unreachable() async throws {
        // A port nothing listens on: one the backend held, then gave up.
        let gone = try await Self.withBackend { $0 }
        try await Self.withMock(proxyingTo: gone) { server in
            let failure = await #expect(throws: WebSocketHandshakeError.self) { try await server.connectWebSocket("/echo") }
            #expect(failure?.response.status == .badGateway)
            let problem = try JSON(parsing: failure?.response.body ?? [])
            #expect(problem["upstream"] == .string(gone.absoluteString))
        }
    }

    @Test("A wss:// backend whose root the proxy is given is reached; without the root the handshake is a 502 naming it")
    func secureBackend() async throws {
        let authority = try LocalCertificateAuthority.make(commonName: "Staging CA")
        let leaf = try authority.issuePEM(for: ["127.0.0.1"])
        let tls = [
            try HTTPSTests.write(leaf.certificateChain, "ws-upstream"), try HTTPSTests.write(leaf.privateKey, "ws-upstream-key"),
        ]
        try await Self.withBackend(tls: tls) { upstream in
            #expect(upstream.scheme == "https")
            try await Self.withMock(proxyingTo: upstream, rootsPEM: authority.certificatePEM) { trusted in
                let socket = try await trusted.connectWebSocket("/echo")
                try await socket.send(.text("over tls"))
                var iterator = socket.messages.makeAsyncIterator()
                #expect(await iterator.next() == .text("over tls"))
                socket.close()
            }
            try await Self.withMock(proxyingTo: upstream) { untrusted in
                let refused = await #expect(throws: WebSocketHandshakeError.self) {
                    try await untrusted.connectWebSocket("/echo")
                }
                #expect(refused?.response.status == .badGateway)
                let detail = String(decoding: refused?.response.body ?? [], as: UTF8.self)
                #expect(detail.contains("could not open the WebSocket"))
            }
        }
    }

    @Test(
        "With cross-origin access off, another origin's page is refused a proxied WebSocket (403) before the backend is asked; the mock's own page is not"
    )
    func foreignPagesNeverReachTheBackend() async throws {
        try await Self.withBackend { upstream in
            try await Self.withMock(proxyingTo: upstream, cors: false) { server in
                let page: HTTPFields = [.init("Origin")!: "http://evil.example", .init("Host")!: "127.0.0.1:8888"]
                let refused = await #expect(throws: WebSocketHandshakeError.self) {
                    try await server.connectWebSocket("/echo", headers: page)
                }
                #expect(refused?.response.status == .forbidden)
                let own: HTTPFields = [.init("Origin")!: "http://127.0.0.1:8888", .init("Host")!: "127.0.0.1:8888"]
                let socket = try await server.connectWebSocket("/push", headers: own)
                var iterator = socket.messages.makeAsyncIterator()
                #expect(await iterator.next() == .text("1"))
                socket.close()
                // The backend saw the /push socket end, and never an /echo one.
                _ = try await Self.backendEndings(of: "/push", server: server)
                #expect(try await Self.backendEndings(of: "/echo", count: 0, server: server).isEmpty)
            }
        }
    }

    @Test("A text message from the backend that is not UTF-8 closes both sides with 1007, never passed on altered")
    func invalidTextFromTheBackend() async throws {
        try await Self.withProxy { server, _ in
            let socket = try await server.connectWebSocket("/badtext")
            #expect(await Self.all(socket).isEmpty)
            #expect(socket.closedWith?.code == 1007)
            let ended = try await Self.backendEndings(of: "/badtext", server: server)
            #expect(ended.first?["code"] == 1007)
        }
    }

    @Test("A WebSocket fault strikes a proxied socket as a mocked one, and the backend is told the client left")
    func faults() async throws {
        try await Self.withProxy { server, _ in
            server.setFaults([try Fault(parsing: "GET /push ws-close=1011 after=2")])
            let pushed = try await server.connectWebSocket("/push")
            #expect(await Self.all(pushed) == [.text("1"), .text("2")])
            #expect(pushed.closedWith?.code == 1011)
            let ended = try await Self.backendEndings(of: "/push", server: server)
            #expect(ended.first?["code"] == 1001)

            // A fault that strikes before the first message: the relay never starts, and the backend's
            // connection is closed all the same.
            server.setFaults([try Fault(parsing: "GET /push ws-drop")])
            let dropped = try await server.connectWebSocket("/push")
            #expect(await Self.all(dropped).isEmpty && dropped.wasDropped)
            let both = try await Self.backendEndings(of: "/push", count: 2, server: server)
            #expect(both.last?["code"] == 1006)
            // The client is still held: what it keeps of the 101 holds no upstream connection.
            withExtendedLifetime(dropped) {}
        }
    }
}
