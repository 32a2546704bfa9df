import HammockServer
import NIOCore

/// What one WebSocket connection is doing, without a socket: frames in, actions out. The rules of RFC
/// 6455 a server must keep live here, so that they are tested frame by frame (`WebSocketStateMachineTests`);
/// ``WebSocketHandler`` only carries the actions out with SwiftNIO.
///
/// - Client frames must be masked and use no reserved bit (no extension is agreed): else the connection
///   fails with 1002.
/// - Messages may come in fragments, up to ``maximumMessageSize`` bytes in all (else 1009); text must
///   be UTF-8 (else 1007).
/// - The close handshake: a client's close is answered with the same code, then the connection ends; a
///   close the server starts waits for the client's (the handler bounds the wait).
/// - A client gone without a word: after the idle timeout with no frame heard the server pings; with
///   still nothing heard after another, the connection ends.
struct WebSocketStateMachine {
    enum State: Equatable {
        /// Messages flow both ways.
        case open
        /// The server sent its close frame and waits for the client's.
        case closeSent
        /// Both closes are done, or the connection failed: nothing more is read or sent.
        case closed
    }

    /// A frame as it arrived, its payload unmasked.
    struct Frame {
        enum Kind: Equatable { case text, binary, continuation, close, ping, pong, reserved }
        var kind: Kind
        var fin: Bool
        var isMasked: Bool
        var usesReservedBits: Bool
        var payload: [UInt8]
    }

    /// What the handler does next.
    enum Action: Equatable {
        case none
        /// Hands the session a whole message.
        case deliver(WebSocketMessage)
        /// Answers a ping.
        case pong([UInt8])
        /// The client closed (with this frame, or none for an empty close): answer with `reply` and end
        /// the connection once it is written.
        case clientClosed(WebSocketClose?, reply: WebSocketClose)
        /// The client answered the server's close: end the connection.
        case closeConnection
        /// The client broke the protocol: send this close, then end the connection.
        case fail(WebSocketClose)
    }

    private(set) var state = State.open
    /// When a frame last arrived (or the socket opened, or a ping left), and whether that ping is unanswered.
    private(set) var lastHeard: NIODeadline
    private(set) var pingSent = false
    /// The message whose fragments are arriving: text or binary, and the bytes so far.
    private var fragments: (isText: Bool, bytes: [UInt8])?
    let maximumMessageSize: Int

    init(maximumMessageSize: Int, now: NIODeadline = .now()) {
        self.maximumMessageSize = maximumMessageSize
        lastHeard = now
    }

    /// What the idle timer does when it fires.
    enum IdleAction: Equatable {
        /// Something was heard since: check again then.
        case wait(until: NIODeadline)
        /// Send a ping, and check again then.
        case ping(thenCheckAt: NIODeadline)
        /// Nothing heard for a whole idle timeout after a ping: end the connection.
        case close
        /// The socket is closing or closed: the timer stops.
        case stop
    }

    /// When the idle timer should first fire.
    func firstIdleCheck(idleTimeout: TimeAmount) -> NIODeadline { lastHeard + idleTimeout }

    /// The idle timer fired at `now`.
    mutating func idleCheck(now: NIODeadline, idleTimeout: TimeAmount) -> IdleAction {
        guard state == .open else { return .stop }
        if lastHeard + idleTimeout > now { return .wait(until: lastHeard + idleTimeout) }
        if pingSent {
            state = .closed
            return .close
        }
        pingSent = true
        lastHeard = now
        return .ping(thenCheckAt: now + idleTimeout)
    }

    /// Whether the session may still send.
    var isOpen: Bool { state == .open }

    mutating func received(_ frame: Frame, now: NIODeadline = .now()) -> Action {
        lastHeard = now
        pingSent = false
        guard state != .closed else { return .none }
        guard frame.isMasked else { return fail(1002, "a client's frames must be masked") }
        guard !frame.usesReservedBits else { return fail(1002, "reserved bits are set, and no extension was agreed") }
        switch frame.kind {
        case .reserved:
            return fail(1002, "an opcode RFC 6455 reserves")
        case .ping:
            return state == .open ? .pong(frame.payload) : .none
        case .pong:
            return .none
        case .close:
            return receivedClose(frame.payload)
        case .text, .binary:
            guard fragments == nil else { return fail(1002, "a new message began before the last one ended") }
            guard state == .open else { return .none }  // after our close, what the client still sends is dropped
            guard frame.payload.count <= maximumMessageSize else { return tooLarge() }
            if frame.fin { return message(isText: frame.kind == .text, frame.payload) }
            fragments = (frame.kind == .text, frame.payload)
            return .none
        case .continuation:
            guard var assembling = fragments else { return fail(1002, "a continuation frame with no message to continue") }
            guard assembling.bytes.count + frame.payload.count <= maximumMessageSize else { return tooLarge() }
            assembling.bytes += frame.payload
            if frame.fin {
                fragments = nil
                guard state == .open else { return .none }
                return message(isText: assembling.isText, assembling.bytes)
            }
            fragments = assembling
            return .none
        }
    }

    private mutating func message(isText: Bool, _ bytes: [UInt8]) -> Action {
        guard isText else { return .deliver(.binary(bytes)) }
        guard let text = String(validating: bytes, as: UTF8.self) else { return fail(1007, "a text message that is not UTF-8") }
        return .deliver(.text(text))
    }

    private mutating func tooLarge() -> Action {
        fragments = nil
        return fail(1009, "a message over \(maximumMessageSize) bytes")
    }

    private mutating func receivedClose(_ payload: [UInt8]) -> Action {
        var close: WebSocketClose?
        if payload.count == 1 { return fail(1002, "a close frame of one byte") }
        if payload.count >= 2 {
            let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
            guard WebSocketClose.isSendable(Int(code)) else {
                return fail(1002, "the close code \(code) is not one a peer sends")
            }
            guard let reason = String(validating: payload[2...], as: UTF8.self) else {
                return fail(1007, "a close reason that is not UTF-8")
            }
            close = WebSocketClose(code: code, reason: reason)
        }
        switch state {
        case .open:
            state = .closed
            // RFC 6455 §5.5.1: the answer typically echoes the code; an empty close is answered with 1000.
            return .clientClosed(close, reply: WebSocketClose(code: close?.code ?? 1000))
        case .closeSent:
            state = .closed
            return .closeConnection
        case .closed:
            return .none
        }
    }

    private mutating func fail(_ code: UInt16, _ reason: String) -> Action {
        state = .closed
        fragments = nil
        return .fail(WebSocketClose(code: code, reason: reason))
    }

    /// The session (or the server's stop) closes: whether to send the close frame now.
    mutating func closing() -> Bool {
        guard state == .open else { return false }
        state = .closeSent
        return true
    }

    /// The frame decoder refused what arrived (a frame over the size limit, a malformed control frame).
    mutating func decoderFailed(tooLarge: Bool) -> Action {
        guard state != .closed else { return .none }
        return tooLarge ? self.tooLarge() : fail(1002, "a malformed frame")
    }

    /// The connection is gone.
    mutating func connectionEnded() { state = .closed }
}
