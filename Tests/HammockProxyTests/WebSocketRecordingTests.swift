import Foundation
import HTTPTypes
import HammockJSON
import HammockProxy
import HammockServer
import HammockTestSupport
import Testing

/// WebSockets recorded through the proxy, from the `websockets` library's backend (PyPI,
/// Tests/Scripts/websocket_backend.py), then played back by a mock made from the file alone.
@Suite("Recording WebSockets", .timeLimit(.minutes(2)))
struct WebSocketRecordingTests {
    /// A recording mock in front of the Python backend for `body`, both stopped after it, thrown or not.
    static func withRecordingProxy<T>(
        _ recording: ProxyRecording, _ body: (MockServer) async throws -> T
    ) async throws -> T {
        try await WebSocketProxyTests.withBackend { upstream in
            try await WebSocketProxyTests.withMock(proxyingTo: upstream, recording: recording, body)
        }
    }

    /// A mock from the configuration (or HAR) at `path`, with no backend anywhere.
    static func replay(_ path: String) async throws -> MockServer {
        if path.hasSuffix(".har") {
            let read = try HTTPArchive.read(contentsOfFile: path)
            return try await MockServer.inMemory(try ServerConfiguration(root: read.configuration, file: path))
        }
        return try await MockServer.inMemory(try ServerConfiguration(contentsOfFile: path))
    }

    static func temporaryFile(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("ws-rec-\(UUID().uuidString)-\(name)").path
    }

    /// Records two sessions: `/push` (five messages, then an echo of "a"; the client closes) and `/close`
    /// (the backend closes with 4001 on the client's first message).
    static func recordConversation(_ recording: ProxyRecording) async throws {
        try await withRecordingProxy(recording) { server in
            let push = try await server.connectWebSocket("/push?room=7")
            var messages = push.messages.makeAsyncIterator()
            for number in 1...5 { #expect(await messages.next() == .text("\(number)")) }
            try await push.send(.text("a"))
            #expect(await messages.next() == .text("a"))
            push.close()
            #expect(await messages.next() == nil)

            let closing = try await server.connectWebSocket("/close")
            try await closing.send(.text("hi"))
            for await _ in closing.messages {}
            #expect(closing.closedWith == WebSocketClose(code: 4001, reason: "bye from backend"))
            #expect(await eventually { recording.webSockets.count == 2 })
        }
    }

    /// Plays the two sessions `recordConversation` recorded back on `server`, as the backend answered.
    static func expectPlayback(on server: MockServer) async throws {
        let push = try await server.connectWebSocket("/push?room=7")
        var messages = push.messages.makeAsyncIterator()
        for number in 1...5 { #expect(await messages.next() == .text("\(number)")) }
        // What the backend answered to the client's message, whatever this client sends.
        try await push.send(.text("something else"))
        #expect(await messages.next() == .text("a"))
        // The client ended the recorded session, so the played one stays open until this client closes.
        push.close()
        #expect(await messages.next() == nil)
        #expect(!push.wasDropped)

        let closing = try await server.connectWebSocket("/close")
        try await closing.send(.text("anything"))
        for await _ in closing.messages {}
        #expect(closing.closedWith == WebSocketClose(code: 4001, reason: "bye from backend"))
    }

    @Test(
        "A recorded WebSocket plays back without the backend: the backend's messages, each after the client's message before it, and its close"
    )
    func recordThenReplay() async throws {
        let recording = ProxyRecording()
        try await Self.recordConversation(recording)
        let push = try #require(recording.webSockets.first { $0.path == "/push" })
        #expect(push.query == "room=7")
        #expect(
            push.moments.map(\.event).prefix(7) == [
                .fromUpstream(.text("1")), .fromUpstream(.text("2")), .fromUpstream(.text("3")), .fromUpstream(.text("4")),
                .fromUpstream(.text("5")), .fromClient(.text("a")), .fromUpstream(.text("a")),
            ])

        let file = Self.temporaryFile("recorded.json")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let summary = try recording.write(toFile: file)
        #expect(summary.webSockets == 2)
        #expect(summary.description.contains("2 WebSocket sessions"))
        let written = try JSON(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: file))))
        let routes = written["routes"]?.arrayValue ?? []
        let closeRoute = try #require(routes.first { $0["path"] == "/close" })
        // The close after the client's message, its delay (however long the backend took) aside.
        let closeSteps = (closeRoute["websocket"]?["messages"]?.arrayValue ?? []).map { step -> JSON in
            guard case .object(var object) = step else { return step }
            object["delay"] = nil
            return .object(object)
        }
        let expected: [JSON] = [["receive": true], ["close": 4001, "reason": "bye from backend"]]
        #expect(closeSteps == expected)
        #expect(closeRoute["websocket"]?["keepOpen"] == nil)
        let pushRoute = try #require(routes.first { $0["path"] == "/push" })
        #expect(pushRoute["match"] == ["query": ["room": "7"]])
        #expect(pushRoute["websocket"]?["keepOpen"] == true)

        try await withServer(try await Self.replay(file)) { try await Self.expectPlayback(on: $0) }
    }

    @Test("A recording written as HAR keeps the sockets as Chromium's developer tools do, and reading it back plays them")
    func recordThenReplayFromHAR() async throws {
        let recording = ProxyRecording()
        try await Self.recordConversation(recording)
        let file = Self.temporaryFile("recorded.har")
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(try recording.write(toFile: file).webSockets == 2)
        let document = try JSON(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: file))))
        let entries = document["log"]?["entries"]?.arrayValue ?? []
        let push = try #require(entries.first { $0["request"]?["url"]?.stringValue?.contains("/push") == true })
        #expect(push["response"]?["status"] == 101)
        #expect(push["_resourceType"] == "websocket")
        let messages = push["_webSocketMessages"]?.arrayValue ?? []
        #expect(messages.compactMap { $0["type"]?.stringValue } == Array(repeating: "receive", count: 5) + ["send", "receive"])
        #expect(messages.allSatisfy { $0["opcode"] == 1 && ($0["time"]?.doubleValue ?? 0) > 1_700_000_000 })

        // Chromium's format keeps no close frames: the `/close` session plays back as far as the messages go.
        try await withServer(try await Self.replay(file)) { server in
            let played = try await server.connectWebSocket("/push?room=7")
            var iterator = played.messages.makeAsyncIterator()
            for number in 1...5 { #expect(await iterator.next() == .text("\(number)")) }
            try await played.send(.text("b"))
            #expect(await iterator.next() == .text("a"))
            played.close()
        }
    }

    @Test(
        "A proxied WebSocket's secrets are in no file written: the handshake's token, cookie and query key, and a secret member of a message either way"
    )
    func secretsStayOut() async throws {
        let recording = ProxyRecording()
        try await Self.withRecordingProxy(recording) { server in
            var fields: HTTPFields = [:]
            fields[.authorization] = "Bearer tok-9f8e7d6c5b"
            fields[.cookie] = "session=cookie-1a2b3c4d"
            let hello = try await server.connectWebSocket("/hello?access_token=query-55aa66bb", headers: fields)
            var iterator = hello.messages.makeAsyncIterator()
            // The backend's report repeats the fields it got: the recording must not.
            guard case .text(let report)? = await iterator.next() else {
                Issue.record("no report from the backend")
                return
            }
            #expect(report.contains("tok-9f8e7d6c5b"))
            try await hello.send(.text(#"{"password": "pw-77cc88dd", "text": "hi"}"#))
            #expect(await iterator.next() != nil)
            hello.close()
            #expect(await eventually { recording.webSockets.count == 1 })
        }
        for name in ["secrets.json", "secrets.har"] {
            let file = Self.temporaryFile(name)
            defer { try? FileManager.default.removeItem(atPath: file) }
            try recording.write(toFile: file)
            let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: file)), as: UTF8.self)
            for secret in ["tok-9f8e7d6c5b", "cookie-1a2b3c4d", "query-55aa66bb", "pw-77cc88dd"] {
                #expect(!text.contains(secret), "\(name) holds \(secret)")
            }
            #expect(text.contains("REDACTED"))
        }
    }

    @Test("A refused WebSocket is recorded as the backend's refusal, and the replay refuses it the same way")
    func refusalRecorded() async throws {
        let recording = ProxyRecording()
        try await Self.withRecordingProxy(recording) { server in
            let refused = await #expect(throws: WebSocketHandshakeError.self) { try await server.connectWebSocket("/refuse") }
            #expect(refused?.response.status == .forbidden)
        }
        let file = Self.temporaryFile("refused.json")
        defer { try? FileManager.default.removeItem(atPath: file) }
        try recording.write(toFile: file)
        try await withServer(try await Self.replay(file)) { server in
            let replayed = await #expect(throws: WebSocketHandshakeError.self) { try await server.connectWebSocket("/refuse") }
            #expect(replayed?.response.status == .forbidden)
            #expect(replayed?.response.headerFields[HTTPField.Name("X-Reason")!] == "refused by the backend")
        }
    }

    @Test(
        "A path answered both plainly and as a WebSocket records as two routes, and the replay tells them apart by Upgrade"
    )
    func plainAndSocketOnOnePath() async throws {
        let recording = ProxyRecording()
        try await Self.withRecordingProxy(recording) { server in
            let plain = await server.respond(to: MockRequest(.get, "/both"))
            #expect(plain.status == .ok)
            let socket = try await server.connectWebSocket("/both")
            var iterator = socket.messages.makeAsyncIterator()
            try await socket.send(.text("ping"))
            #expect(await iterator.next() == .text("ping"))
            socket.close()
            #expect(await eventually { recording.webSockets.count == 1 })
        }
        let file = Self.temporaryFile("both.json")
        defer { try? FileManager.default.removeItem(atPath: file) }
        try recording.write(toFile: file, inferringResources: false)
        let written = try JSON(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: file))))
        let routes = (written["routes"]?.arrayValue ?? []).filter { $0["path"] == "/both" }
        #expect(routes.count == 2, "\(written)")
        // The socket's route comes first and asks for the upgrade; the plain stub takes the rest.
        #expect(routes.first?["websocket"] != nil)
        #expect(routes.first?["match"]?["headers"]?["Upgrade"] != nil)

        try await withServer(try await Self.replay(file)) { server in
            let replayedPlain = await server.respond(to: MockRequest(.get, "/both"))
            #expect(replayedPlain.status == .ok)
            #expect(try await ProxyTests.json(replayedPlain) == ["plain": true])
            let replayedSocket = try await server.connectWebSocket("/both")
            var iterator = replayedSocket.messages.makeAsyncIterator()
            try await replayedSocket.send(.text("ping"))
            #expect(await iterator.next() == .text("ping"))
            replayedSocket.close()
        }
    }

    @Test(
        "Two sessions on one path that said different things play in turn from a HAR, one whose subprotocol is no token without it (found by fuzz-har)"
    )
    func twoSessionsOnOnePath() async throws {
        // The second names a subprotocol no route can offer (a space in it): it plays without one.
        func entry(_ said: String) -> String {
            #"{"startedDateTime": "2026-12-01T10:00:01.000Z", "_resourceType": "websocket", "#
                + #""request": {"method": "GET", "url": "wss://api.example.test/feed", "headers": []}, "#
                + #""response": {"status": 101, "headers": [\#(said == "two" ? #"{"name": "Sec-WebSocket-Protocol", "value": "chat v2"}"# : "")], "#
                + #""content": {"size": 0}}, "#
                + #""_webSocketMessages": [{"type": "receive", "time": 1796119201.05, "opcode": 1, "data": "\#(said)"}]}"#
        }
        let har = #"{"log": {"version": "1.2", "entries": ["# + entry("one") + "," + entry("two") + "]}}"
        let read = try HTTPArchive.read(Array(har.utf8), file: "turns.har")
        try await withServer(try await MockServer.inMemory(try ServerConfiguration(root: read.configuration, file: "turns.har")))
        { server in
            for said in ["one", "two"] {
                let socket = try await server.connectWebSocket("/feed")
                var iterator = socket.messages.makeAsyncIterator()
                #expect(await iterator.next() == .text(said))
                socket.close()
            }
        }
    }

    @Test(
        "A HAR with a socket as Chromium writes it (wss, text and binary, times in seconds) plays what was received after each message sent"
    )
    func chromiumHAR() async throws {
        let har = #"""
            {"log": {"version": "1.2", "creator": {"name": "WebInspector", "version": "537.36"}, "entries": [
              {"startedDateTime": "2026-12-01T10:00:00.000Z", "time": 12, "_resourceType": "fetch",
               "request": {"method": "GET", "url": "https://api.example.test/rooms", "headers": [], "queryString": [],
                           "cookies": [], "headersSize": -1, "bodySize": 0, "httpVersion": "http/2.0"},
               "response": {"status": 200, "statusText": "", "httpVersion": "http/2.0", "cookies": [], "redirectURL": "",
                            "headers": [{"name": "content-type", "value": "application/json"}],
                            "content": {"size": 2, "mimeType": "application/json", "text": "[]"}, "headersSize": -1, "bodySize": 2},
               "cache": {}, "timings": {"send": 0, "wait": 12, "receive": 0}},
              {"startedDateTime": "2026-12-01T10:00:01.000Z", "time": 0, "_resourceType": "websocket",
               "request": {"method": "GET", "url": "wss://api.example.test/socket?room=1", "headers": [], "queryString": [],
                           "cookies": [], "headersSize": -1, "bodySize": 0, "httpVersion": "HTTP/1.1"},
               "response": {"status": 101, "statusText": "Switching Protocols", "httpVersion": "HTTP/1.1", "cookies": [],
                            "headers": [{"name": "Upgrade", "value": "websocket"}, {"name": "Sec-WebSocket-Protocol", "value": "chat.v1"},
                                        {"name": "Sec-WebSocket-Accept", "value": "x"}],
                            "content": {"size": 0, "mimeType": "x-unknown"}, "redirectURL": "", "headersSize": -1, "bodySize": 0},
               "cache": {}, "timings": {"send": 0, "wait": 0, "receive": 0},
               "_webSocketMessages": [
                 {"type": "receive", "time": 1796119201.05, "opcode": 1, "data": "{\"hello\":true}"},
                 {"type": "send", "time": 1796119201.5, "opcode": 1, "data": "join"},
                 {"type": "receive", "time": 1796119201.52, "opcode": 2, "data": "AAEC"},
                 {"type": "receive", "time": 1796119201.53, "opcode": 9, "data": ""}
               ]}
            ]}}
            """#
        let read = try HTTPArchive.read(Array(har.utf8), file: "chromium.har")
        #expect(read.origin == "https://api.example.test")
        #expect(read.summary.webSockets == 1)
        try await withServer(
            try await MockServer.inMemory(try ServerConfiguration(root: read.configuration, file: "chromium.har"))
        ) { server in
            var fields: HTTPFields = [:]
            fields[.secWebSocketProtocol] = "chat.v1"
            let socket = try await server.connectWebSocket("/socket?room=1", headers: fields)
            #expect(socket.subprotocol == "chat.v1")
            var iterator = socket.messages.makeAsyncIterator()
            #expect(await iterator.next() == .text(#"{"hello":true}"#))
            try await socket.send(.text("join"))
            #expect(await iterator.next() == .binary([0, 1, 2]))
            socket.close()
            #expect(await iterator.next() == nil)
        }
    }
}
