import HTTPTypes
import HammockWire
import Synchronization

/// One message of a WebSocket, either way.
public enum WebSocketMessage: Sendable, Hashable, CustomStringConvertible {
    /// A text message (UTF-8 on the wire).
    case text(String)
    /// A binary message.
    case binary([UInt8])

    public var description: String {
        switch self {
        case .text(let text): "text \(text.utf8.count > 80 ? String(text.prefix(80)) + "…" : text)"
        case .binary(let bytes): "binary \(bytes.count) bytes"
        }
    }
}

/// The close frame of a WebSocket: a code (RFC 6455 §7.4) and a reason of at most 123 bytes.
public struct WebSocketClose: Sendable, Hashable, CustomStringConvertible {
    public var code: UInt16
    public var reason: String

    public init(code: UInt16 = 1000, reason: String = "") {
        self.code = code
        // A close frame's payload is at most 125 bytes, two of them the code: a longer reason is cut on a
        // character boundary rather than refused (it is text for people).
        var cut = reason
        while cut.utf8.count > 123 { cut.removeLast() }
        self.reason = cut
    }

    /// 1000: the session did what it was for.
    public static let normal = WebSocketClose(code: 1000)
    /// 1001: the server stops.
    public static let goingAway = WebSocketClose(code: 1001, reason: "the server stops")

    /// Whether a peer may send `code` in a close frame (RFC 6455 §7.4): 1000 to 1014 but 1004 to 1006,
    /// or 3000 to 4999 (registered and private codes).
    public static func isSendable(_ code: Int) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    public var description: String { reason.isEmpty ? "\(code)" : "\(code) \(reason)" }
}

/// The messages a client sends on a WebSocket, as a session reads them: `for await message in
/// connection.inbound`. The sequence ends when the client closes (``closedWith`` then holds its close
/// frame), the connection is lost, or the server stops. One reader at a time.
///
/// It is bounded: past 16 messages waiting, the transport stops reading the socket until the session has
/// taken half of them, so a client that sends faster than the session reads is slowed by TCP, not held in
/// the server's memory.
public final class WebSocketInbound: AsyncSequence, Sendable {
    public typealias Element = WebSocketMessage

    private struct State {
        var queue: [WebSocketMessage] = []
        var head = 0
        var ended = false
        var closedWith: WebSocketClose?
        var paused = false
        var waiter: CheckedContinuation<WebSocketMessage?, Never>?
        /// Sees each message as it arrives (the journal).
        var tap: (@Sendable (WebSocketMessage) -> Void)?

        mutating func take() -> WebSocketMessage? {
            guard head < queue.count else { return nil }
            let message = queue[head]
            head += 1
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
            }
            return message
        }

        var waiting: Int { queue.count - head }
    }

    private let state = Mutex(State())
    /// Past this many waiting messages, ``yield(_:)`` asks the transport to stop reading.
    let highWater: Int
    private let resume: @Sendable () -> Void

    /// - Parameter resume: Called, outside any lock, when the transport may read again after
    ///   ``yield(_:)`` said to pause.
    /// - Parameter tap: Sees each message as it arrives, before the session reads it (the session's
    ///   ``WebSocketSession/tap``: the journal).
    package init(
        highWater: Int = 16, tap: (@Sendable (WebSocketMessage) -> Void)? = nil, resume: @escaping @Sendable () -> Void = {}
    ) {
        self.highWater = highWater
        self.resume = resume
        state.withLock { $0.tap = tap }
    }

    /// Hands the session a message the client sent. Returns whether the transport may go on reading:
    /// `false` once ``highWater`` messages wait (it then waits for `resume`).
    @discardableResult
    package func yield(_ message: WebSocketMessage) -> Bool {
        let (waiter, keepReading, tap):
            (CheckedContinuation<WebSocketMessage?, Never>?, Bool, (@Sendable (WebSocketMessage) -> Void)?) = state.withLock {
                state in
                guard !state.ended else { return (nil, true, nil) }
                if let waiter = state.waiter.take() { return (waiter, true, state.tap) }
                state.queue.append(message)
                if state.waiting >= highWater { state.paused = true }
                return (nil, !state.paused, state.tap)
            }
        tap?(message)
        waiter?.resume(returning: message)
        return keepReading
    }

    /// Ends the sequence after what waits: the client closed with `close`, or (`nil`) the connection ended
    /// without a close frame.
    package func finish(closedWith close: WebSocketClose?) {
        let waiter = state.withLock { state -> CheckedContinuation<WebSocketMessage?, Never>? in
            guard !state.ended else { return nil }
            state.ended = true
            state.closedWith = close
            return state.waiter.take()
        }
        waiter?.resume(returning: nil)
    }

    /// The client's close frame, once the sequence has ended because it sent one.
    public var closedWith: WebSocketClose? { state.withLock { $0.closedWith } }

    /// Whether the client has closed or the connection has ended.
    public var isFinished: Bool { state.withLock { $0.ended } }

    /// The next message, waiting for one; `nil` at the end or when the calling task is cancelled.
    func next() async -> WebSocketMessage? {
        await withTaskCancellationHandler {
            let (message, resumeReading): (WebSocketMessage??, Bool) = state.withLock { state in
                guard let message = state.take() else { return (state.ended ? .some(nil) : nil, false) }
                if state.paused, state.waiting <= highWater / 2 {
                    state.paused = false
                    return (message, true)
                }
                return (message, false)
            }
            if resumeReading { resume() }
            if let message { return message }
            if Task.isCancelled { return nil }
            return await withCheckedContinuation { (continuation: CheckedContinuation<WebSocketMessage?, Never>) in
                let ready: WebSocketMessage?? = state.withLock { state in
                    if let message = state.take() { return message }
                    if state.ended || Task.isCancelled { return .some(nil) }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiter.take() }
            waiter?.resume(returning: nil)
        }
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let inbound: WebSocketInbound
        public mutating func next() async -> WebSocketMessage? { await inbound.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(inbound: self) }
}

/// What a transport gives a WebSocket session to send with: frames on a socket (HammockHTTPServer), or
/// messages handed to an in-process client (``MockServer/connectWebSocket(_:headers:)``).
package protocol WebSocketOutbound: Sendable {
    /// Sends one message; returns once it is written. Throws ``WebSocketClosedError`` once the connection
    /// is closing or gone.
    func send(_ message: WebSocketMessage) async throws
    /// Sends one message without waiting for it to be written, unless the connection is closing or its
    /// client has stopped reading (what waits to be written is past the transport's bound): then it is
    /// not sent, and the answer is `false`. What a push from outside the session uses, so that one
    /// client that does not read holds up neither the others nor the caller.
    func offer(_ message: WebSocketMessage) async -> Bool
    /// Sends a close frame (once; later calls do nothing), then ends the connection when the client
    /// answers with its own, or after a short wait.
    func close(_ close: WebSocketClose) async
    /// Ends the connection at once, without a close frame: what a crashed server or a lost network does.
    func drop() async
}

/// A message could not be sent: the WebSocket is closing or closed.
public struct WebSocketClosedError: Error, Sendable, CustomStringConvertible {
    public init() {}
    public var description: String { "the WebSocket is closed" }
}

/// An open WebSocket as a session's code sees it: what the client sends, and how to answer.
///
/// ```swift
/// MockResponse.webSocket(answering: request) { connection in
///     for await message in connection.inbound { try await connection.send(message) }   // an echo
/// }
/// ```
public struct WebSocketConnection: Sendable {
    /// The request that opened it.
    public let request: MockRequest
    /// The subprotocol agreed in the handshake (`Sec-WebSocket-Protocol`), if any.
    public let subprotocol: String?
    /// What the client sends.
    public let inbound: WebSocketInbound
    let outbound: any WebSocketOutbound

    package init(request: MockRequest, subprotocol: String?, inbound: WebSocketInbound, outbound: any WebSocketOutbound) {
        self.request = request
        self.subprotocol = subprotocol
        self.inbound = inbound
        self.outbound = outbound
    }

    /// Sends a message; returns once it is written (a client that reads slowly slows the sender).
    /// - Throws: ``WebSocketClosedError`` once the connection is closing or gone.
    public func send(_ message: WebSocketMessage) async throws { try await outbound.send(message) }

    /// Sends a text message.
    public func send(text: String) async throws { try await outbound.send(.text(text)) }

    /// Closes with `close` (1000 by default); the session should return after it.
    public func close(_ close: WebSocketClose = .normal) async { await outbound.close(close) }

    /// Cuts the connection without a close frame, as a lost network does.
    public func drop() async { await outbound.drop() }
}

/// What a WebSocket route runs once the handshake is done: ``MockResponse/webSocket`` carries it to the
/// transport. When `run` returns, the connection is closed with 1000 (unless it was closed already);
/// when it throws, with 1011.
public struct WebSocketSession: Sendable {
    /// The subprotocol agreed in the handshake, if any.
    public let subprotocol: String?
    /// The session's work.
    public let run: @Sendable (WebSocketConnection) async throws -> Void
    /// Sees each message a client sends as it arrives (the journal): a transport hands it to the
    /// ``WebSocketInbound`` it makes, so no message slips past before the session starts.
    package var tap: (@Sendable (WebSocketMessage) -> Void)?

    public init(subprotocol: String? = nil, run: @escaping @Sendable (WebSocketConnection) async throws -> Void) {
        self.subprotocol = subprotocol
        self.run = run
    }

    /// Runs the session on a connection a transport opened, then closes it as ``WebSocketSession`` says.
    package func serve(_ request: MockRequest, inbound: WebSocketInbound, outbound: any WebSocketOutbound) async {
        let connection = WebSocketConnection(request: request, subprotocol: subprotocol, inbound: inbound, outbound: outbound)
        do {
            try await run(connection)
            // Cancelled: the server stops (a session that returns on cancellation says so with 1001).
            await outbound.close(Task.isCancelled ? .goingAway : .normal)
        } catch is WebSocketClosedError {
            await outbound.close(.normal)  // already closing: nothing more is sent
        } catch is CancellationError {
            await outbound.close(.goingAway)
        } catch {
            await outbound.close(WebSocketClose(code: 1011, reason: "the session failed: \(error)"))
        }
    }
}

extension MockResponse {
    /// What a transport that speaks WebSocket runs once it has sent this `101 Switching Protocols`.
    /// Set by ``webSocket(answering:protocols:run:)``; `nil` on every other answer.
    public var webSocket: WebSocketSession? {
        get { upgrade?.session }
        set { upgrade = newValue.map(UpgradeBox.init) }
    }

    /// Answers a request for a WebSocket (RFC 6455 §4.2): `101 Switching Protocols` with the
    /// `Sec-WebSocket-Accept` the key asks for and the session to run, or a problem+json saying what the
    /// request lacks: `426 Upgrade Required` (with `Upgrade: websocket`) for a plain request or another
    /// protocol version (with `Sec-WebSocket-Version: 13`), `400` for a missing or malformed key.
    ///
    /// - Parameter protocols: The subprotocols the route speaks; the first the client offers that is one
    ///   of them is agreed. A client that offers none of them still connects, without a subprotocol, and
    ///   may then close (RFC 6455 leaves it to the client).
    public static func webSocket(
        answering request: MockRequest, protocols: [String] = [],
        run: @escaping @Sendable (WebSocketConnection) async throws -> Void
    ) -> MockResponse {
        let fields = request.headerFields
        let upgrades = fields[values: .upgrade].contains { Self.hasToken("websocket", in: $0) }
        let connectionUpgrades = fields[values: .connection].contains { Self.hasToken("upgrade", in: $0) }
        guard request.method == .get, upgrades, connectionUpgrades else {
            return HTTPProblem(
                .upgradeRequired,
                detail:
                    "\(request.path) speaks WebSocket: open it with GET, 'Connection: Upgrade' and 'Upgrade: websocket', as a WebSocket client does",
                headerFields: [.upgrade: "websocket", .connection: "Upgrade"]
            ).response
        }
        guard fields[.secWebSocketVersion] == WebSocketHandshake.version else {
            return HTTPProblem(
                .upgradeRequired,
                detail: "Sec-WebSocket-Version '\(fields[.secWebSocketVersion] ?? "")' is not one this server speaks: 13",
                headerFields: [.upgrade: "websocket", .secWebSocketVersion: WebSocketHandshake.version]
            ).response
        }
        guard let key = fields[.secWebSocketKey], WebSocketHandshake.isValidKey(key) else {
            return HTTPProblem(.badRequest, detail: "Sec-WebSocket-Key must be 16 random bytes in base64 (24 characters)")
                .response
        }
        let offered = fields[values: .secWebSocketProtocol].flatMap { $0.split(separator: ",") }.map {
            String($0.trimmingCharacters(in: " \t"))
        }
        let agreed = offered.first { protocols.contains($0) }
        var headers: HTTPFields = [
            .upgrade: "websocket", .connection: "Upgrade", .secWebSocketAccept: WebSocketHandshake.accept(forKey: key),
        ]
        if let agreed { headers[.secWebSocketProtocol] = agreed }
        var response = MockResponse(status: .switchingProtocols, headerFields: headers)
        response.webSocket = WebSocketSession(subprotocol: agreed, run: run)
        return response
    }

    static func hasToken(_ token: String, in value: String) -> Bool {
        value.split(separator: ",").contains { $0.trimmingCharacters(in: " \t").lowercased() == token }
    }
}

extension MockRequest {
    /// Whether it asks to open a WebSocket: a `GET` whose `Upgrade` names `websocket` (what the cross-origin
    /// check and the proxy look for, before any route answers).
    package var asksForWebSocket: Bool {
        method == .get && headerFields[values: .upgrade].contains { MockResponse.hasToken("websocket", in: $0) }
    }
}

/// The session a 101 carries, boxed so that an answer without one (every other) stays one word larger.
final class UpgradeBox: Sendable {
    let session: WebSocketSession
    init(_ session: WebSocketSession) { self.session = session }
}

extension Substring {
    func trimmingCharacters(in set: String) -> Substring {
        var text = self
        while let first = text.first, set.contains(first) { text.removeFirst() }
        while let last = text.last, set.contains(last) { text.removeLast() }
        return text
    }
}
