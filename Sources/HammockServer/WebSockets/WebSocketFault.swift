import Synchronization

/// A fault for a WebSocket route (``Fault/Effect/webSocket(_:)``): the handshake succeeds, then, after
/// the session has sent ``afterMessages`` messages, the server closes with a code or drops the
/// connection. What a live UI must survive: a feed that ends with 1011 after the third update, a socket
/// that goes silent and dies.
///
/// ```swift
/// try Fault("GET /ws/prices", effect: .webSocket(WebSocketFault(.close(WebSocketClose(code: 1011)), afterMessages: 3)))
/// ```
/// On a route that is no WebSocket it does nothing.
public struct WebSocketFault: Sendable, Hashable, CustomStringConvertible {
    public enum Action: Sendable, Hashable {
        /// Closes with this frame.
        case close(WebSocketClose)
        /// Cuts the connection without a close frame.
        case drop
    }

    public var action: Action
    /// How many messages the session sends first: 0 strikes right after the handshake.
    public var afterMessages: Int

    public init(_ action: Action, afterMessages: Int = 0) {
        self.action = action
        self.afterMessages = afterMessages
    }

    /// The compact form's words: `ws-close=1011 after=3`, `ws-drop`.
    public var description: String {
        var words: [String]
        switch action {
        case .close(let close): words = ["ws-close=\(close.code)"]
        case .drop: words = ["ws-drop"]
        }
        if afterMessages > 0 { words.append("after=\(afterMessages)") }
        return words.joined(separator: " ")
    }

    /// `session` with the fault applied: its messages counted, and the fault struck after the last
    /// allowed one (the session's next send then finds the connection closed).
    func applied(to session: WebSocketSession) -> WebSocketSession {
        let fault = self
        var faulty = WebSocketSession(subprotocol: session.subprotocol) { connection in
            let outbound = FaultyOutbound(base: connection.outbound, fault: fault)
            if fault.afterMessages == 0 {
                await outbound.strike()
                return
            }
            try await session.run(
                WebSocketConnection(
                    request: connection.request, subprotocol: connection.subprotocol, inbound: connection.inbound,
                    outbound: outbound))
        }
        faulty.tap = session.tap
        return faulty
    }
}

/// The session's outbound with a ``WebSocketFault`` in between.
final class FaultyOutbound: WebSocketOutbound {
    let base: any WebSocketOutbound
    let fault: WebSocketFault
    /// Messages sent so far, or `nil` once the fault has struck.
    private let sent = Mutex<Int?>(0)

    init(base: any WebSocketOutbound, fault: WebSocketFault) {
        self.base = base
        self.fault = fault
    }

    func send(_ message: WebSocketMessage) async throws {
        guard sent.withLock({ $0 }) != nil else { throw WebSocketClosedError() }
        try await base.send(message)
        let strikes = sent.withLock { count -> Bool in
            guard let current = count else { return false }
            count = current + 1
            return current + 1 >= fault.afterMessages
        }
        if strikes { await strike() }
    }

    func strike() async {
        let first = sent.withLock { count -> Bool in
            defer { count = nil }
            return count != nil
        }
        guard first else { return }
        switch fault.action {
        case .close(let close): await base.close(close)
        case .drop: await base.drop()
        }
    }

    /// A push from outside the session: not counted, and refused once the fault has struck.
    func offer(_ message: WebSocketMessage) async -> Bool {
        guard sent.withLock({ $0 }) != nil else { return false }
        return await base.offer(message)
    }

    func close(_ close: WebSocketClose) async { await base.close(close) }
    func drop() async { await base.drop() }
}
