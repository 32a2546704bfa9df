public import HammockJSON
import Synchronization

/// What the journal keeps of a WebSocket after its handshake (``JournalEntry/webSocket``): each message a
/// client sent, and how the socket ended. The entry carries the handshake's method, path, query and
/// header fields, and, for a message, the message as its body, so that a test waits for one as for a
/// request: `journal.next(matching: .webSocketMessage("/ws/chat", body: ["type": "join"]))`.
///
/// Messages the server sends are not journaled: a feed or a ticker would push the requests out.
public struct WebSocketEvent: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        /// A client's message; the entry's body holds it.
        case message
        /// The socket ended.
        case closed
    }

    public var kind: Kind
    /// For a message: whether it was binary (else text, UTF-8 in the body).
    public var isBinary: Bool
    /// For an end: the close frame that ended it, `nil` when the connection ended without one (a drop, a
    /// client gone).
    public var close: WebSocketClose?
    /// For an end: whether the client closed first (else the server did, or the connection was lost).
    public var closedByClient: Bool

    public init(kind: Kind, isBinary: Bool = false, close: WebSocketClose? = nil, closedByClient: Bool = false) {
        self.kind = kind
        self.isBinary = isBinary
        self.close = close
        self.closedByClient = closedByClient
    }

    /// The event as the admin API shows it.
    var json: JSON {
        switch kind {
        case .message: return ["event": "message", "binary": .bool(isBinary)]
        case .closed:
            return [
                "event": "closed", "code": close.map { .integer(Int($0.code)) } ?? .null,
                "reason": close.map { .string($0.reason) } ?? .null, "by": closedByClient ? "client" : "server",
            ]
        }
    }
}

extension WebSocketSession {
    /// The session with its client's messages and its end recorded in `journal`, under the handshake's
    /// `request` and `route`.
    func journaled(in journal: RequestJournal, request: MockRequest, route: MatchedRoute?) -> WebSocketSession {
        let session = self
        let peer = request.context?.peer
        var journaled = WebSocketSession(subprotocol: subprotocol) { connection in
            let outbound = ClosingNote(base: connection.outbound)
            let watched = WebSocketConnection(
                request: connection.request, subprotocol: connection.subprotocol, inbound: connection.inbound,
                outbound: outbound)
            var failure: (any Error)?
            do {
                try await session.run(watched)
            } catch {
                failure = error
            }
            // The end as the client meets it: its own close answered, the server's close (or the one
            // `serve` sends next: 1011 for an error, 1001 when cancelled, else 1000), or nothing at all.
            let event: WebSocketEvent
            if let clientClose = connection.inbound.closedWith {
                event = WebSocketEvent(kind: .closed, close: clientClose, closedByClient: true)
            } else if let ending = outbound.ending {
                event = WebSocketEvent(kind: .closed, close: ending)
            } else if outbound.dropped {
                event = WebSocketEvent(kind: .closed)
            } else if failure is CancellationError || (failure == nil && Task.isCancelled) {
                event = WebSocketEvent(kind: .closed, close: .goingAway)
            } else if let failure, !(failure is WebSocketClosedError) {
                event = WebSocketEvent(kind: .closed, close: WebSocketClose(code: 1011, reason: "the session failed: \(failure)"))
            } else if connection.inbound.isFinished {
                event = WebSocketEvent(kind: .closed)  // the client went without a close frame
            } else {
                event = WebSocketEvent(kind: .closed, close: .normal)
            }
            journal.recordWebSocket(request: request, body: [], event: event, route: route, peer: peer)
            if let failure { throw failure }
        }
        let inner = tap
        journaled.tap = { message in
            inner?(message)
            let (bytes, isBinary): ([UInt8], Bool) =
                switch message {
                case .text(let text): (Array(text.utf8), false)
                case .binary(let bytes): (bytes, true)
                }
            journal.recordWebSocket(
                request: request, body: bytes, event: WebSocketEvent(kind: .message, isBinary: isBinary), route: route,
                peer: peer)
        }
        return journaled
    }
}

/// Notes how the session ended the socket: the close it sent, or a drop.
final class ClosingNote: WebSocketOutbound {
    let base: any WebSocketOutbound
    private let state = Mutex<(close: WebSocketClose?, dropped: Bool)>((nil, false))

    init(base: any WebSocketOutbound) { self.base = base }

    var ending: WebSocketClose? { state.withLock { $0.close } }
    var dropped: Bool { state.withLock { $0.dropped } }

    func send(_ message: WebSocketMessage) async throws { try await base.send(message) }
    func offer(_ message: WebSocketMessage) async -> Bool { await base.offer(message) }

    func close(_ close: WebSocketClose) async {
        state.withLock { state in
            if state.close == nil, !state.dropped { state.close = close }
        }
        await base.close(close)
    }

    func drop() async {
        state.withLock { state in
            if state.close == nil { state.dropped = true }
        }
        await base.drop()
    }
}
