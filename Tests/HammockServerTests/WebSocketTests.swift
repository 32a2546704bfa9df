import Foundation
import HTTPTypes
import HammockHTTPServer
import HammockJSON
import HammockStore
import HammockTestSupport
import HammockWire
import Testing

@testable import HammockServer

/// WebSocket routes: echo, scripted messages, live feeds of resources' changes, faults; in process
/// (`connectWebSocket`) and over a socket with frames written by hand (`RawWebSocket`).
@Suite("WebSocket routes")
struct WebSocketTests {
    static let configuration = """
        {"resources": [{"name": "people", "fields": {"name": "string"}}, {"name": "notes", "fields": {"text": "string"}}],
         "routes": [
           {"path": "/ws/echo", "websocket": {"echo": true}},
           {"path": "/ws/greet", "websocket": {"messages": [
              {"text": "hello {{query.name}}"}, {"json": {"room": "{{query.room}}", "n": 1}, "delay": 5},
              {"base64": "AAEC"}]}},
           {"path": "/ws/bye", "websocket": {"messages": [{"text": "one"}, {"close": 4001, "reason": "session over"}]}},
           {"path": "/ws/lost", "websocket": {"messages": [{"text": "one"}, {"drop": true}]}},
           {"path": "/ws/people", "websocket": {"feed": "people", "protocols": ["hammock.v1"]}},
           {"path": "/ws/all", "websocket": {"feed": "*"}}
         ]}
        """

    func server(_ text: String = configuration, clock: some Clock<Duration> = ContinuousClock()) async throws -> MockServer {
        let configuration = try ServerConfiguration(parsing: Array(text.utf8), file: "mock.json")
        return try await MockServer(configuration: configuration, store: MemoryStore(), clock: clock)
    }

    /// `server` for `body`, stopped after it, thrown or not.
    func stopping<T>(_ server: MockServer, _ body: (MockServer) async throws -> T) async throws -> T {
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    func collect(_ socket: InProcessWebSocket, _ count: Int) async -> [WebSocketMessage] {
        var received: [WebSocketMessage] = []
        for await message in socket.messages {
            received.append(message)
            if received.count == count { break }
        }
        return received
    }

    // MARK: In process

    @Test("An echo route sends back each text and binary message, and answers the client's close with its code")
    func echoInProcess() async throws {
        let server = try await server()
        let socket = try await server.connectWebSocket("/ws/echo")
        #expect(socket.response.status == .switchingProtocols)
        try await socket.send(.text("hello"))
        try await socket.send(.binary([0, 1, 255]))
        #expect(await collect(socket, 2) == [.text("hello"), .binary([0, 1, 255])])
        socket.close(WebSocketClose(code: 4000, reason: "done"))
        for await _ in socket.messages {}
        #expect(socket.closedWith?.code == 4000)
        await #expect(throws: WebSocketClosedError.self) { try await socket.send(.text("late")) }
    }

    @Test("A scripted route sends its messages in order with the request's placeholders, then closes with 1000")
    func scriptedMessages() async throws {
        let server = try await server()
        let socket = try await server.connectWebSocket("/ws/greet?name=Ada&room=7")
        var received: [WebSocketMessage] = []
        for await message in socket.messages { received.append(message) }
        #expect(received.count == 3)
        #expect(received.first == .text("hello Ada"))
        if case .text(let text) = received[1] { #expect(try JSON(parsing: Array(text.utf8)) == ["room": "7", "n": 1]) }
        #expect(received.last == .binary([0, 1, 2]))
        #expect(socket.closedWith == .normal)
        #expect(!socket.wasDropped)
    }

    @Test("A close step closes with its code and reason; a drop step ends with no close frame")
    func closeAndDropSteps() async throws {
        let server = try await server()
        let closing = try await server.connectWebSocket("/ws/bye")
        #expect(await collect(closing, 5) == [.text("one")])
        #expect(closing.closedWith == WebSocketClose(code: 4001, reason: "session over"))
        let dropping = try await server.connectWebSocket("/ws/lost")
        #expect(await collect(dropping, 5) == [.text("one")])
        #expect(dropping.wasDropped)
        #expect(dropping.closedWith == nil)
    }

    @Test(
        "A receive step waits for the client's message, one sent ahead counts, and keepOpen holds the socket after the last step")
    func receiveSteps() async throws {
        let server = try await server(
            #"""
            {"resources": [], "routes": [
              {"path": "/ws/chat", "websocket": {"keepOpen": true, "messages": [
                 {"text": "ready"}, {"receive": true}, {"text": "got one"}, {"receive": true}, {"receive": true},
                 {"text": "got three", "delay": 5}]}},
              {"path": "/ws/once", "websocket": {"messages": [{"receive": true}, {"text": "{{query.x}} stays {{"}]}, "verbatim": true}
            ]}
            """#)
        let chat = try await server.connectWebSocket("/ws/chat")
        var iterator = chat.messages.makeAsyncIterator()
        #expect(await iterator.next() == .text("ready"))
        // The script waits: a message pushed now comes before what follows the receive step.
        #expect(try await server.sendToWebSockets(.text("pushed"), path: "/ws/chat") == 1)
        #expect(await iterator.next() == .text("pushed"))
        try await chat.send(.text("one"))
        #expect(await iterator.next() == .text("got one"))
        // Two at once: the second receive step counts the message that came while the first waited.
        try await chat.send(.text("two"))
        try await chat.send(.binary([3]))
        #expect(await iterator.next() == .text("got three"))
        // The steps are done, and the socket stays open: a message is still taken, nothing is answered.
        try await chat.send(.text("four"))
        chat.close(WebSocketClose(code: 4000, reason: "done"))
        #expect(await iterator.next() == nil)
        #expect(chat.closedWith?.code == 4000)

        // Without keepOpen the script closes with 1000 after its last step; verbatim text keeps its braces.
        let once = try await server.connectWebSocket("/ws/once?x=1")
        try await once.send(.text("go"))
        #expect(await collect(once, 5) == [.text("{{query.x}} stays {{")])
        #expect(once.closedWith == .normal)
    }

    @Test("A client that leaves while a receive step waits ends the session; the next client starts the script again")
    func receiveThenLeave() async throws {
        let server = try await server(
            #"{"resources": [], "routes": [{"path": "/ws/ask", "websocket": {"messages": [{"text": "q"}, {"receive": true}, {"text": "a"}]}}]}"#
        )
        let first = try await server.connectWebSocket("/ws/ask")
        var iterator = first.messages.makeAsyncIterator()
        #expect(await iterator.next() == .text("q"))
        first.close()
        #expect(await iterator.next() == nil)
        #expect(await eventually { server.openWebSockets.isEmpty })
        let second = try await server.connectWebSocket("/ws/ask")
        try await second.send(.text("answer me"))
        #expect(await collect(second, 5) == [.text("q"), .text("a")])
        #expect(second.closedWith == .normal)
    }

    @Test("A route's responses may be sockets played in turn, its method unsaid as for one socket")
    func socketsInTurn() async throws {
        try await stopping(
            try await server(
                #"""
                {"resources": [], "routes": [{"path": "/ws/turns", "responses": [
                  {"websocket": {"messages": [{"text": "first"}]}}, {"websocket": {"messages": [{"text": "second"}]}}]}]}
                """#)
        ) { server in
            let first = try await server.connectWebSocket("/ws/turns")
            #expect(await collect(first, 5) == [.text("first")])
            let second = try await server.connectWebSocket("/ws/turns")
            #expect(await collect(second, 5) == [.text("second")])
            let third = try await server.connectWebSocket("/ws/turns")
            #expect(await collect(third, 5) == [.text("second")])
        }
    }

    @Test(
        "Under load, clients that answer, answer early or leave while a receive step waits each get what they earned, and no session outlives its client"
    )
    func receiveUnderLoad() async throws {
        try await stopping(
            try await server(
                #"{"resources": [], "routes": [{"path": "/ws/ask", "websocket": {"messages": [{"text": "q"}, {"receive": true}, {"text": "a"}]}}]}"#
            )
        ) { server in
            // 60 clients at once on a machine kept busy: a third answer after the question, a third before it
            // arrives (the message counts for the receive step), a third leave while the step waits.
            let outcomes = try await withBusyMachine {
                try await withThrowingTaskGroup(of: (Int, [WebSocketMessage], WebSocketClose?).self) { group in
                    for client in 0..<60 {
                        group.addTask {
                            let socket = try await server.connectWebSocket("/ws/ask")
                            var iterator = socket.messages.makeAsyncIterator()
                            switch client % 3 {
                            case 0:
                                let first = await iterator.next()
                                try await socket.send(.text("answer"))
                                var got = first.map { [$0] } ?? []
                                while let message = await iterator.next() { got.append(message) }
                                return (client, got, socket.closedWith)
                            case 1:
                                try await socket.send(.text("early"))
                                var got: [WebSocketMessage] = []
                                while let message = await iterator.next() { got.append(message) }
                                return (client, got, socket.closedWith)
                            default:
                                let first = await iterator.next()
                                socket.close()
                                while await iterator.next() != nil {}
                                return (client, first.map { [$0] } ?? [], socket.closedWith)
                            }
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            #expect(outcomes.count == 60)
            for (client, messages, close) in outcomes {
                if client % 3 == 2 {
                    #expect(messages == [.text("q")], "client \(client)")
                } else {
                    #expect(messages == [.text("q"), .text("a")], "client \(client)")
                    #expect(close == .normal, "client \(client)")
                }
            }
            #expect(await eventually { server.openWebSockets.isEmpty })
        }
    }

    @Test("A live feed sends each created, updated and deleted record of its resource as it happens, and nothing of another")
    func liveFeedInProcess() async throws {
        let server = try await server()
        let socket = try await server.connectWebSocket("/ws/people")
        _ = await server.send(.post, "/notes", json: ["text": "not this one"])
        let (created, body) = await server.send(.post, "/people", json: ["name": "Ada"])
        #expect(created.status == .created)
        let id = try #require(body?["id"])
        _ = await server.send(.patch, "/people/\(id.intValue ?? 0)", json: ["name": "Ada L."])
        _ = await server.send(.delete, "/people/\(id.intValue ?? 0)")
        let changes = try await collect(socket, 3).map { message -> JSON in
            guard case .text(let text) = message else { return .null }
            return try JSON(parsing: Array(text.utf8))
        }
        #expect(changes.map { $0["type"] } == ["created", "updated", "deleted"])
        #expect(changes.allSatisfy { $0["resource"] == "people" })
        #expect(changes[0]["record"]?["name"] == "Ada")
        #expect(changes[1]["record"]?["name"] == "Ada L.")
        #expect(changes[2]["record"]?["id"] == id)
        socket.close()
    }

    @Test("A feed of every resource says 'invalidated' for each when the data is reset")
    func feedOfEveryResourceOnReset() async throws {
        let server = try await server()
        _ = await server.send(.post, "/people", json: ["name": "Ada"])
        let socket = try await server.connectWebSocket("/ws/all")
        try await server.reset()
        let changes = await collect(socket, 2)
        #expect(
            Set(changes) == [
                .text(#"{"type":"invalidated","resource":"people"}"#), .text(#"{"type":"invalidated","resource":"notes"}"#),
            ])
        socket.close()
    }

    @Test("The handshake refuses a plain GET with 426 and Upgrade: websocket, another version with 426, and a bad key with 400")
    func handshakeRefusals() async throws {
        let server = try await server()
        let plain = await server.respond(to: MockRequest(.get, "/ws/echo"))
        #expect(plain.status == .upgradeRequired)
        #expect(plain.headerFields[.upgrade] == "websocket")
        #expect(plain.headerFields[.contentType] == "application/problem+json")
        var fields: HTTPFields = [.upgrade: "websocket", .connection: "keep-alive, Upgrade", .secWebSocketVersion: "8"]
        fields[.secWebSocketKey] = "dGhlIHNhbXBsZSBub25jZQ=="
        let version = await server.respond(to: MockRequest(.get, "/ws/echo", headerFields: fields))
        #expect(version.status == .upgradeRequired)
        #expect(version.headerFields[.secWebSocketVersion] == "13")
        fields[.secWebSocketVersion] = "13"
        fields[.secWebSocketKey] = "short"
        let key = await server.respond(to: MockRequest(.get, "/ws/echo", headerFields: fields))
        #expect(key.status == .badRequest)
        let error = await #expect(throws: WebSocketHandshakeError.self) { try await server.connectWebSocket("/nowhere") }
        #expect(error?.response.status == .notFound)
    }

    @Test(
        "With cross-origin access off, a page of another origin is refused the WebSocket (403) before its feed starts; the same origin and a client with no Origin connect"
    )
    func foreignOriginRefusedWhenCORSIsOff() async throws {
        let text = Self.configuration.replacingOccurrences(of: #"{"resources""#, with: #"{"cors": false, "resources""#)
        let closed = try await server(text)
        let foreign: HTTPFields = [.init("Origin")!: "http://evil.example", .init("Host")!: "localhost:8888"]
        let refused = await #expect(throws: WebSocketHandshakeError.self) {
            try await closed.connectWebSocket("/ws/people", headers: foreign)
        }
        #expect(refused?.response.status == .forbidden)
        #expect(refused?.response.headerFields[.contentType] == "application/problem+json")
        #expect(closed.openWebSockets.isEmpty)
        // `null` (a sandboxed page, a file) and a lookalike port are other origins too.
        for origin in ["null", "http://localhost:9999", "http://localhost.evil.example:8888"] {
            let fields: HTTPFields = [.init("Origin")!: origin, .init("Host")!: "localhost:8888"]
            await #expect(throws: WebSocketHandshakeError.self) { try await closed.connectWebSocket("/ws/echo", headers: fields) }
        }
        let same: HTTPFields = [.init("Origin")!: "http://LOCALHOST:8888", .init("Host")!: "localhost:8888"]
        let page = try await closed.connectWebSocket("/ws/echo", headers: same)
        let tool = try await closed.connectWebSocket("/ws/echo")
        try await page.send(.text("one"))
        try await tool.send(.text("two"))
        #expect(await collect(page, 1) == [.text("one")])
        #expect(await collect(tool, 1) == [.text("two")])
        page.close()
        tool.close()
        // With CORS on (the default), any page may open it, as it may read the resources.
        let open = try await server()
        let socket = try await open.connectWebSocket("/ws/echo", headers: foreign)
        socket.close()
    }

    @Test("The accept value is RFC 6455's for its sample key, and a subprotocol is agreed only when the route speaks it")
    func acceptAndSubprotocol() async throws {
        #expect(WebSocketHandshake.accept(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(WebSocketHandshake.isValidKey("dGhlIHNhbXBsZSBub25jZQ=="))
        #expect(!WebSocketHandshake.isValidKey("dGhlIHNhbXBsZSBub25jZR=="))  // R carries bits past the 16th byte
        let server = try await server()
        let agreed = try await server.connectWebSocket("/ws/people", headers: [.secWebSocketProtocol: "other, hammock.v1"])
        #expect(agreed.subprotocol == "hammock.v1")
        #expect(agreed.response.headerFields[.secWebSocketProtocol] == "hammock.v1")
        let none = try await server.connectWebSocket("/ws/people", headers: [.secWebSocketProtocol: "other"])
        #expect(none.subprotocol == nil)
        #expect(none.response.headerFields[.secWebSocketProtocol] == nil)
        agreed.close()
        none.close()
    }

    @Test("Faults apply to the handshake: a status fault answers instead, a drop fault is a lost connection")
    func faultsOnTheHandshake() async throws {
        let server = try await server()
        server.setFaults([try Fault("GET /ws/echo", effect: .status(503))])
        let refused = await #expect(throws: WebSocketHandshakeError.self) { try await server.connectWebSocket("/ws/echo") }
        #expect(refused?.response.status == .serviceUnavailable)
        server.setFaults([try Fault("GET /ws/echo", effect: .connection(.drop))])
        await #expect(throws: ConnectionFaultError.self) { try await server.connectWebSocket("/ws/echo") }
        let entries = server.journal.entries
        #expect(entries.map(\.status.code) == [503, 101])  // a drop runs the route: its answer is what was lost
    }

    @Test("A WebSocket fault closes with its code after the session's third message, or drops the connection at once")
    func webSocketFaults() async throws {
        let server = try await server()
        let closing = try Fault(parsing: "GET /ws/echo ws-close=1011 after=3")
        #expect(closing.effect == .webSocket(WebSocketFault(.close(WebSocketClose(code: 1011)), afterMessages: 3)))
        #expect(try Fault(json: closing.json) == closing)
        #expect(closing.description == "GET /ws/echo ws-close=1011 after=3")
        server.setFaults([closing])
        let socket = try await server.connectWebSocket("/ws/echo")
        for word in ["a", "b", "c", "d"] { try? await socket.send(.text(word)) }
        var echoed: [WebSocketMessage] = []
        for await message in socket.messages { echoed.append(message) }
        #expect(echoed == [.text("a"), .text("b"), .text("c")])
        #expect(socket.closedWith?.code == 1011)
        #expect(server.journal.entries.last?.fault?.hasPrefix("GET /ws/echo ws-close=1011") == true)

        let dropping = try Fault(json: ["route": "/ws/greet", "webSocket": ["drop": true]])
        server.setFaults([dropping])
        let dropped = try await server.connectWebSocket("/ws/greet")
        for await _ in dropped.messages {}
        #expect(dropped.wasDropped)
        // A plain route meets a WebSocket fault and answers as always.
        server.setFaults([try Fault(parsing: "* ws-drop")])
        #expect(await server.respond(to: MockRequest(.get, "/people")).status == .ok)
    }

    @Test("WebSocket faults refuse what cannot be sent, naming the key")
    func webSocketFaultMistakes() {
        let json: [(JSON, String)] = [
            (["route": "*", "webSocket": ["close": 1005]], "webSocket"),
            (["route": "*", "webSocket": ["drop": true, "reason": "x"]], "webSocket.reason"),
            (["route": "*", "webSocket": ["close": 1000, "drop": true]], "webSocket"),
            (["route": "*", "webSocket": ["close": 1000, "afterMessages": -1]], "webSocket.afterMessages"),
            (["route": "*", "webSocket": ["close": 1000], "status": 503], "webSocket"),
        ]
        for (value, key) in json {
            let error = #expect(throws: FaultError.self) { try Fault(json: value) }
            #expect(error?.key == key, "\(value): \(error?.description ?? "")")
        }
        #expect(throws: FaultError.self) { try Fault(parsing: "* 503 after=2") }
        #expect(throws: FaultError.self) { try Fault(parsing: "* ws-close=1011 ws-drop") }
    }

    @Test(
        "A client's messages and the socket's end are journaled under its handshake; a test waits for a message as for a request")
    func journal() async throws {
        let server = try await server()
        let socket = try await server.connectWebSocket("/ws/echo?room=7", headers: [.authorization: "Bearer t-1"])
        let cursor = server.journal.mark()
        try await socket.send(.text(#"{"type": "join", "name": "Ada"}"#))
        try await socket.send(.binary([1, 2]))
        let join = try await server.journal.next(
            matching: .webSocketMessage(
                "/ws/echo", query: ["room": "7"], headers: ["Authorization": "Bearer t-1"], body: ["type": "join"]),
            after: cursor, timeout: .seconds(30))
        #expect(join.webSocket == WebSocketEvent(kind: .message))
        #expect(try join.request.json()["name"] == "Ada")
        socket.close(WebSocketClose(code: 4000, reason: "bye"))
        for await _ in socket.messages {}
        // The end is journaled before the session's close reaches the client.
        let end = try #require(server.journal.entries.last)
        #expect(
            end.webSocket == WebSocketEvent(kind: .closed, close: WebSocketClose(code: 4000, reason: "bye"), closedByClient: true)
        )
        let kinds = server.journal.entries.map { $0.webSocket?.kind }
        #expect(kinds == [nil, .message, .message, .closed])
        // A pattern about requests does not take a message on the same path, and says why.
        let requests = server.journal.entries(matching: RequestPattern(.get, "/ws/echo"))
        #expect(requests.count == 1)
        let message = try #require(server.journal.entries.last)
        #expect(RequestPattern(.get, "/ws/echo").differences(from: message) == ["the end of a WebSocket, not a request"])
    }

    @Test("A test pushes a message to the open sockets of a path, lists them, and closes them with a code of its choosing")
    func pushAndClose() async throws {
        let server = try await server()
        let first = try await server.connectWebSocket("/ws/people")
        let second = try await server.connectWebSocket("/ws/people", headers: [.secWebSocketProtocol: "hammock.v1"])
        let echo = try await server.connectWebSocket("/ws/echo?room=1")
        // The sessions start on their own tasks: wait until the three are listed.
        while server.openWebSockets.count < 3 { await Task.yield() }
        #expect(server.openWebSockets.map(\.path) == ["/ws/people", "/ws/people", "/ws/echo"])
        #expect(server.openWebSockets.map(\.subprotocol) == [nil, "hammock.v1", nil])
        #expect(server.openWebSockets.last?.query == "room=1")
        #expect(try await server.sendToWebSockets(.text("hi"), path: "/ws/people") == 2)
        #expect(await collect(first, 1) == [.text("hi")])
        #expect(await collect(second, 1) == [.text("hi")])
        #expect(try await server.closeWebSockets(path: "/ws/*", with: WebSocketClose(code: 4003)) == 3)
        for socket in [first, second, echo] {
            for await _ in socket.messages {}
            #expect(socket.closedWith?.code == 4003)
        }
        while !server.openWebSockets.isEmpty { await Task.yield() }
        #expect(try await server.sendToWebSockets(.text("nobody")) == 0)
        await #expect(throws: StubError.self) { try await server.sendToWebSockets(.text("x"), path: "no-slash") }
    }

    @Test("The server's stop closes an open WebSocket with 1001, in process")
    func stopClosesInProcess() async throws {
        let server = try await server()
        let socket = try await server.connectWebSocket("/ws/echo")
        await server.stop()
        for await _ in socket.messages {}
        #expect(socket.closedWith?.code == 1001)
    }

    @Test("A Swift route answers a WebSocket of its own with MockResponse.webSocket")
    func swiftRoute() async throws {
        let server = try await MockServer()
        try server.route(.get, "/ws/upper") { request in
            MockResponse.webSocket(answering: request.request) { connection in
                for await message in connection.inbound {
                    guard case .text(let text) = message else { continue }
                    try await connection.send(text: text.uppercased())
                }
            }
        }
        let socket = try await server.connectWebSocket("/ws/upper")
        try await socket.send(.text("quiet"))
        #expect(await collect(socket, 1) == [.text("QUIET")])
        socket.close()
    }

    @Test("A configuration's WebSocket mistakes are refused with the key that holds them")
    func configurationMistakes() throws {
        let cases: [(String, String)] = [
            (#"{"method": "POST", "path": "/ws", "websocket": {"echo": true}}"#, "routes[0].path"),
            (#"{"path": "/ws", "websocket": {"feed": "nobody"}}"#, "routes[0].websocket.feed"),
            (#"{"path": "/ws", "websocket": {"messages": [{"close": 1006}]}}"#, "routes[0].websocket.messages[0].close"),
            (#"{"path": "/ws", "status": 201, "websocket": {"echo": true}}"#, "routes[0].status"),
            (#"{"path": "/ws", "websocket": {}}"#, "routes[0].websocket"),
            (#"{"path": "/ws", "websocket": {"messages": [{"text": "a"}], "repeat": true}}"#, "routes[0].websocket"),
            (#"{"path": "/ws", "websocket": {"messages": [{"text": "a", "json": 1}]}}"#, "routes[0].websocket.messages[0]"),
            (#"{"path": "/ws", "websocket": {"echo": true, "shout": true}}"#, "routes[0].websocket.shout"),
            (
                #"{"path": "/ws", "websocket": {"messages": [{"receive": true, "delay": 5}]}}"#,
                "routes[0].websocket.messages[0].delay"
            ),
            (#"{"path": "/ws", "websocket": {"messages": [{"receive": false}]}}"#, "routes[0].websocket.messages[0].receive"),
            (#"{"path": "/ws", "websocket": {"messages": [{"receive": true, "text": "a"}]}}"#, "routes[0].websocket.messages[0]"),
            (#"{"path": "/ws", "websocket": {"keepOpen": "yes"}}"#, "routes[0].websocket.keepOpen"),
            (#"{"path": "/ws", "websocket": {"messages": [{"text": "{{nothing}}"}]}}"#, "routes[0].websocket"),
        ]
        for (route, key) in cases {
            let text = #"{"resources": [{"name": "people", "fields": {"name": "string"}}], "routes": [\#(route)]}"#
            let error = #expect(throws: ConfigurationError.self) {
                _ = try ServerConfiguration(parsing: Array(text.utf8), file: "mock.json")
            }
            #expect(error?.keyPath == key, "\(route): \(error?.description ?? "no error")")
        }
    }

    // MARK: Over a socket

    @Test(
        "Over a socket: the 101 carries RFC 6455's accept value, an echo returns a masked message unmasked, and a client's close is echoed"
    )
    func echoOverSocket() async throws {
        let server = try await server()
        let port = try await server.start(host: "127.0.0.1", port: 0)
        do {
            let socket = try RawWebSocket(port: port)
            let head = await socket.handshake("/ws/echo")
            #expect(head.hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"))
            #expect(head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"))
            #expect(head.contains("Connection: Upgrade\r\n"))
            #expect(!head.lowercased().contains("content-length"))
            await socket.send(text: "hello")
            #expect(await socket.nextFrame() == RawWebSocket.Frame(opcode: 1, fin: true, payload: Array("hello".utf8)))
            // A fragmented message, a ping between its fragments (control frames may interleave).
            await socket.send(opcode: 2, [1, 2], fin: false)
            await socket.send(opcode: 9, Array("are you there".utf8))
            await socket.send(opcode: 0, [3], fin: true)
            #expect(await socket.nextFrame() == RawWebSocket.Frame(opcode: 10, fin: true, payload: Array("are you there".utf8)))
            #expect(await socket.nextFrame() == RawWebSocket.Frame(opcode: 2, fin: true, payload: [1, 2, 3]))
            await socket.sendClose(4002, reason: "bye")
            let close = await socket.nextFrame()
            #expect(close?.closeCode == 4002)
            #expect(await socket.connection.readToEnd(timeout: .seconds(30)).end == .closed)
            let entry = try #require(server.journal.entries.last)
            #expect(entry.status.code == 101)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test("Over a socket, a client that breaks the protocol gets the close code that says how, then the end of the connection")
    func protocolErrorsOverSocket() async throws {
        var configuration = try ServerConfiguration(parsing: Array(Self.configuration.utf8), file: "mock.json")
        configuration.maximumBodySize = 1024
        let server = try await MockServer(configuration: configuration, store: MemoryStore())
        let port = try await server.start(host: "127.0.0.1", port: 0)
        let cases: [(name: String, misbehave: @Sendable (RawWebSocket) async -> Void, code: Int)] = [
            ("unmasked", { await $0.send(opcode: 1, Array("hi".utf8), masked: false) }, 1002),
            ("not UTF-8", { await $0.send(opcode: 1, [0xC3, 0x28]) }, 1007),
            ("too large", { await $0.send(opcode: 2, [UInt8](repeating: 7, count: 1025)) }, 1009),
            (
                "too large in fragments",
                { socket in
                    await socket.send(opcode: 2, [UInt8](repeating: 7, count: 600), fin: false)
                    await socket.send(opcode: 0, [UInt8](repeating: 7, count: 600), fin: true)
                }, 1009
            ),
            ("a reserved bit", { await $0.send(opcode: 1, Array("hi".utf8), rsv: 4) }, 1002),
            ("a reserved opcode", { await $0.send(opcode: 3, [1]) }, 1002),
            ("a continuation with nothing to continue", { await $0.send(opcode: 0, [1]) }, 1002),
            ("a close code no peer sends", { await $0.sendClose(1005) }, 1002),
        ]
        do {
            for (name, misbehave, code) in cases {
                let socket = try RawWebSocket(port: port)
                #expect(await socket.handshake("/ws/echo").hasPrefix("HTTP/1.1 101"))
                await misbehave(socket)
                let frames = await socket.framesUntilClose(timeout: Duration.seconds(30))
                #expect(frames.last?.closeCode == code, "\(name): \(frames)")
                let end = await socket.connection.readToEnd(timeout: .seconds(30)).end
                #expect(end != RawConnection.End.silent, "\(name)")
            }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test("Over a socket, a live feed sends a record another connection creates, and the server's stop closes it with 1001")
    func feedOverSocketAndStop() async throws {
        let server = try await server()
        let port = try await server.start(host: "127.0.0.1", port: 0)
        do {
            let socket = try RawWebSocket(port: port)
            let head = await socket.handshake("/ws/people", extra: "Sec-WebSocket-Protocol: hammock.v1\r\n")
            #expect(head.contains("Sec-WebSocket-Protocol: hammock.v1\r\n"))
            let writer = try RawConnection(port: port)
            let body = #"{"name":"Grace"}"#
            await writer.send(
                "POST /people HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
            )
            #expect(await writer.readResponses(1).first?.status == 201)
            let change = try #require(await socket.nextFrame())
            let json = try JSON(parsing: change.payload)
            #expect(json["type"] == "created")
            #expect(json["record"]?["name"] == "Grace")
            let stopped = Task { await server.stop() }
            let close = await socket.nextFrame()
            #expect(close?.closeCode == 1001)
            await socket.sendClose(1001)
            await stopped.value
            #expect(await socket.connection.readToEnd(timeout: .seconds(30)).end != .silent)
        } catch {
            await server.stop()
            throw error
        }
    }

    @Test(
        "Over a socket, with cross-origin access off, a handshake from another origin's page is answered 403 and no socket opens")
    func foreignOriginOverSocket() async throws {
        let text = Self.configuration.replacingOccurrences(of: #"{"resources""#, with: #"{"cors": false, "resources""#)
        let closed = try await server(text)
        let port = try await closed.start(host: "127.0.0.1", port: 0)
        do {
            let socket = try RawWebSocket(port: port)
            let head = await socket.handshake("/ws/people", extra: "Origin: https://evil.example\r\n")
            #expect(head.hasPrefix("HTTP/1.1 403"))
            #expect(closed.openWebSockets.isEmpty)
        } catch {
            await closed.stop()
            throw error
        }
        await closed.stop()
    }

    @Test("Over a socket, the admin API lists open sockets, pushes a message to those of a path, and closes them")
    func adminOverSocket() async throws {
        let server = try await server()
        let port = try await server.start(host: "127.0.0.1", port: 0)
        do {
            let socket = try RawWebSocket(port: port)
            #expect(await socket.handshake("/ws/echo").hasPrefix("HTTP/1.1 101"))
            let admin = try RawConnection(port: port)
            while server.openWebSockets.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
            await admin.send("GET /__hammock/websockets HTTP/1.1\r\nHost: localhost\r\n\r\n")
            let listed = try #require(await admin.readResponses(1).first)
            #expect(try JSON(parsing: listed.body)[0]?["path"] == "/ws/echo")
            let push = #"{"path": "/ws/echo", "json": {"type": "price", "value": 99.5}}"#
            await admin.send(
                "POST /__hammock/websockets/messages HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: \(push.utf8.count)\r\n\r\n\(push)"
            )
            let pushed = try #require(await admin.readResponses(1).first)
            #expect(try JSON(parsing: pushed.body) == ["sent": 1])
            let frame = try #require(await socket.nextFrame())
            #expect(try JSON(parsing: frame.payload) == ["type": "price", "value": 99.5])
            await admin.send("DELETE /__hammock/websockets HTTP/1.1\r\nHost: localhost\r\n\r\n")
            #expect(try JSON(parsing: try #require(await admin.readResponses(1).first).body) == ["closed": 1])
            #expect(await socket.nextFrame()?.closeCode == 1001)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test(
        "Under load, 40 sockets echoing at once each get their own messages back in order, and the stop closes them all with 1001"
    )
    func loadedEchoAndStop() async throws {
        let server = try await server()
        let port = try await server.start(host: "127.0.0.1", port: 0)
        do {
            let sockets = try (0..<40).map { _ in try RawWebSocket(port: port) }
            let orderly = try await withThrowingTaskGroup(of: Bool.self) { group in
                for (index, socket) in sockets.enumerated() {
                    group.addTask {
                        guard await socket.handshake("/ws/echo").hasPrefix("HTTP/1.1 101") else { return false }
                        for message in 0..<20 { await socket.send(text: "\(index)-\(message)") }
                        for message in 0..<20 {
                            guard await socket.nextFrame()?.text == "\(index)-\(message)" else { return false }
                        }
                        return true
                    }
                }
                var all: [Bool] = []
                for try await result in group { all.append(result) }
                return all
            }
            #expect(orderly == Array(repeating: true, count: 40))
            #expect(server.openWebSockets.count == 40)
            let stopped = Task { await server.stop() }
            for socket in sockets {
                #expect(await socket.nextFrame()?.closeCode == 1001)
            }
            // No client answers the close: the stop still returns, after the linger timeout at most.
            await stopped.value
            #expect(server.openWebSockets.isEmpty)
        } catch {
            await server.stop()
            throw error
        }
    }

    @Test("A push skips a client that has stopped reading, and still reaches the one that reads")
    func pushSkipsAStalledClient() async throws {
        let server = try await server()
        let port = try await server.start(host: "127.0.0.1", port: 0)
        do {
            let stalled = try RawWebSocket(port: port)
            #expect(await stalled.handshake("/ws/echo").hasPrefix("HTTP/1.1 101"))
            // The one that reads is in process: it takes every push whatever the machine's load.
            let reading = try await server.connectWebSocket("/ws/echo")
            while server.openWebSockets.count < 2 { try await Task.sleep(for: .milliseconds(5)) }
            let pushes = 60
            let reader = Task {
                var count = 0
                for await message in reading.messages {
                    guard case .binary(let bytes) = message, bytes.count == 512 << 10 else { break }
                    count += 1
                    if count == pushes { break }
                }
                return count
            }
            var counts: [Int] = []
            for _ in 0..<pushes {
                counts.append(try await server.sendToWebSockets(.binary([UInt8](repeating: 1, count: 512 << 10))))
            }
            // 30 MB cannot all wait in loopback's buffers for a client that reads nothing: once they are
            // full, the stalled one is no longer offered messages; the other gets every one.
            #expect(counts.first == 2)
            #expect(counts.last == 1, "\(counts)")
            #expect(await reader.value == pushes)
            reading.close()
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test("A live feed's listener that falls 10,000 changes behind is told why and let go, holding nothing")
    func feedOverflow() async {
        let changes = ResourceChanges()
        let feed = changes.subscribe(to: ["people"])
        for index in 0..<ChangeFeed.limit {
            changes.publish([ResourceChange(.created, resource: "people", record: ["id": .integer(index)])])
        }
        changes.publish([ResourceChange(.created, resource: "notes")])  // not listened to: no effect
        guard case .change(let first)? = await feed.next() else {
            Issue.record("expected the first change")
            return
        }
        #expect(first.record?["id"] == 0)
        changes.publish([ResourceChange(.deleted, resource: "people"), ResourceChange(.deleted, resource: "people")])
        guard case .overflowed(let reason)? = await feed.next() else {
            Issue.record("expected the overflow")
            return
        }
        #expect(reason == "the listener fell 10000 changes behind")
        feed.cancel()
    }

    @Test("Over a socket, a silent client is pinged after the idle timeout and cut off after another")
    func idleSocketsArePinged() async throws {
        // What keeps an answering client (a frame heard in time) is the state machine's test: over a
        // socket, answering in time depends on the test process not stalling, which a loaded CI run did.
        let server = try await server()
        let port = try await server.start(host: "127.0.0.1", port: 0, limits: ConnectionLimits(idleTimeout: .seconds(1)))
        do {
            let silent = try RawWebSocket(port: port)
            #expect(await silent.handshake("/ws/echo").hasPrefix("HTTP/1.1 101"))
            let ping = await silent.nextFrame()
            #expect(ping?.opcode == 9)
            #expect(ping?.text == "hammock")
            #expect(await silent.connection.readToEnd(timeout: .seconds(30)).end == .closed)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test("Over a socket, a client that never answers the server's close is disconnected after the linger timeout")
    func unansweredCloseOverSocket() async throws {
        let server = try await server()
        let port = try await server.start(host: "127.0.0.1", port: 0, limits: ConnectionLimits(lingerTimeout: .milliseconds(200)))
        do {
            let socket = try RawWebSocket(port: port)
            #expect(await socket.handshake("/ws/bye").hasPrefix("HTTP/1.1 101"))
            let frames = await socket.framesUntilClose()
            #expect(frames.map(\.opcode) == [1, 8])
            #expect(frames.last?.closeCode == 4001)
            #expect(frames.last?.closeReason == "session over")
            // No answer to the close: the server ends the connection on its own.
            #expect(await socket.connection.readToEnd(timeout: .seconds(30)).end == .closed)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}
