import HTTPTypes
import HammockWire
import Synchronization

/// The handshake for a WebSocket was not answered with `101 Switching Protocols`: the route is not a
/// WebSocket (404, 426), a fault answered instead, or the request lacked what a handshake needs.
public struct WebSocketHandshakeError: Error, Sendable, CustomStringConvertible {
    /// What the server answered instead.
    public let response: MockResponse

    public var description: String {
        "the WebSocket handshake got \(response.status.code) \(response.status.reasonPhrase): \(String(decoding: response.body.prefix(300), as: UTF8.self))"
    }
}

extension MockServer {
    /// Opens a WebSocket on a route of this server, in process: the same handshake, session, faults and
    /// journal as over a socket, with no socket.
    ///
    /// ```swift
    /// let socket = try await server.connectWebSocket("/ws/echo")
    /// try await socket.send(.text("hello"))
    /// for await message in socket.messages { print(message) }   // text hello
    /// ```
    /// - Parameter target: The path, with a query after `?` if any.
    /// - Parameter headers: More header fields for the handshake (`Sec-WebSocket-Protocol`, a token).
    /// - Throws: ``WebSocketHandshakeError`` when the answer is not a `101`; ``ConnectionFaultError`` for a
    ///   connection fault on the route.
    public func connectWebSocket(
        _ target: String, headers: HTTPFields = [:]
    ) async throws
        -> InProcessWebSocket
    {
        var fields = headers
        fields[.upgrade] = "websocket"
        fields[.connection] = "Upgrade"
        fields[.secWebSocketVersion] = WebSocketHandshake.version
        if fields[.secWebSocketKey] == nil {
            // A key is 16 random bytes; the server only proves it read them.
            let bytes = (0..<16).map { _ in UInt8.random(in: 0...255) }
            fields[.secWebSocketKey] = WebSocketHandshake.base64(bytes)
        }
        let request = MockRequest(.get, target, headerFields: fields)
        let exchanged = try await exchangeStreaming(request, timeout: nil)
        guard let session = exchanged.head.webSocket, exchanged.head.status == .switchingProtocols else {
            var response = exchanged.head
            if let body = exchanged.body { response.body = (try? await body.collect()) ?? [] }
            throw WebSocketHandshakeError(response: response)
        }
        // The client keeps the 101 without its session: a session holds what it serves with (a proxied
        // socket's upstream connection, closed when the session goes), and it goes when it has run.
        var opened = exchanged.head
        opened.webSocket = nil
        let socket = InProcessWebSocket(response: opened, subprotocol: session.subprotocol, tap: session.tap)
        let outbound = socket.serverSide
        let inbound = socket.sessionInbound
        inProcessSockets.start { [self] in
            await serveWebSocket(session, request: request, inbound: inbound, outbound: outbound)
            outbound.end()
        }
        return socket
    }
}

/// The sessions of in-process WebSockets, so that the server's stop ends them as it ends a socket's:
/// cancelled, and closed with 1001.
final class InProcessSockets: Sendable {
    private struct State {
        var nextID = 0
        var tasks: [Int: Task<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    func start(_ body: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            state.nextID += 1
            let id = state.nextID
            state.tasks[id] = Task { [weak self] in
                await body()
                self?.state.withLock { _ = $0.tasks.removeValue(forKey: id) }
            }
        }
    }

    /// Cancels every session still running; returns once they have ended.
    func stopAll() async {
        let tasks = state.withLock { Array($0.tasks.values) }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }
}

/// A WebSocket opened in process (``MockServer/connectWebSocket(_:headers:)``): send to the
/// route's session, read what it sends, close.
public final class InProcessWebSocket: Sendable {
    /// The `101` that opened it (its ``MockResponse/webSocket`` session is the server's, and not kept here).
    public let response: MockResponse
    /// The subprotocol agreed, if any.
    public let subprotocol: String?
    /// What the session sends, in order; ends when it closes or drops the connection (or the server stops).
    public let messages: AsyncStream<WebSocketMessage>
    let sessionInbound: WebSocketInbound
    let serverSide: ServerSide

    init(response: MockResponse, subprotocol: String?, tap: (@Sendable (WebSocketMessage) -> Void)?) {
        self.response = response
        self.subprotocol = subprotocol
        let (stream, continuation) = AsyncStream.makeStream(of: WebSocketMessage.self)
        messages = stream
        let inbound = WebSocketInbound(tap: tap)
        sessionInbound = inbound
        serverSide = ServerSide(continuation: continuation, inbound: inbound)
    }

    /// Sends a message to the session.
    /// - Throws: ``WebSocketClosedError`` once either side has closed.
    public func send(_ message: WebSocketMessage) async throws {
        guard serverSide.isOpen, !sessionInbound.isFinished else { throw WebSocketClosedError() }
        sessionInbound.yield(message)
    }

    /// Closes from the client's side: the session's inbound ends with `close`, and the session answers.
    public func close(_ close: WebSocketClose = .normal) { sessionInbound.finish(closedWith: close) }

    /// The session's close frame, once it has closed; `nil` while open or when it dropped the connection.
    public var closedWith: WebSocketClose? { serverSide.ending.withLock { $0?.close } }

    /// Whether the session cut the connection without a close frame.
    public var wasDropped: Bool { serverSide.ending.withLock { $0?.dropped ?? false } }

    /// The session's side of the connection.
    final class ServerSide: WebSocketOutbound {
        struct Ending {
            var close: WebSocketClose?
            var dropped: Bool
        }

        let continuation: AsyncStream<WebSocketMessage>.Continuation
        let inbound: WebSocketInbound
        let ending = Mutex<Ending?>(nil)

        init(continuation: AsyncStream<WebSocketMessage>.Continuation, inbound: WebSocketInbound) {
            self.continuation = continuation
            self.inbound = inbound
        }

        var isOpen: Bool { ending.withLock { $0 == nil } }

        func send(_ message: WebSocketMessage) async throws {
            guard isOpen else { throw WebSocketClosedError() }
            continuation.yield(message)
        }

        func offer(_ message: WebSocketMessage) async -> Bool {
            guard isOpen else { return false }
            continuation.yield(message)
            return true
        }

        func close(_ close: WebSocketClose) async {
            // A client that closed first gets its own code back, as over a socket.
            end(with: Ending(close: inbound.closedWith.map { WebSocketClose(code: $0.code) } ?? close, dropped: false))
        }

        func drop() async { end(with: Ending(close: nil, dropped: true)) }

        /// Notes how the session ended the connection (the first way only), then ends both directions.
        private func end(with how: Ending) {
            let first = ending.withLock { ending -> Bool in
                guard ending == nil else { return false }
                ending = how
                return true
            }
            if first { end() }
        }

        /// The session has returned: whatever it did, the connection is over.
        func end() {
            continuation.finish()
            inbound.finish(closedWith: nil)
        }
    }
}
