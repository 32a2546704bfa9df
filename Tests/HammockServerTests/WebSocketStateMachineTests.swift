import NIOCore
import Testing

@testable import HammockHTTPServer
@testable import HammockServer

/// The WebSocket's rules without a socket: frames in the orders a client can send them, and what the
/// handler is asked to do.
@Suite("WebSocket state machine")
struct WebSocketStateMachineTests {
    typealias Machine = WebSocketStateMachine
    typealias Frame = WebSocketStateMachine.Frame

    func frame(_ kind: Frame.Kind, _ payload: [UInt8] = [], fin: Bool = true, masked: Bool = true, rsv: Bool = false) -> Frame {
        Frame(kind: kind, fin: fin, isMasked: masked, usesReservedBits: rsv, payload: payload)
    }

    func close(_ code: UInt16, _ reason: String = "") -> [UInt8] { [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8) }

    @Test("A message in three fragments is delivered once, whole, with a ping answered between them")
    func fragments() {
        var machine = Machine(maximumMessageSize: 100)
        #expect(machine.received(frame(.text, Array("he".utf8), fin: false)) == .none)
        #expect(machine.received(frame(.ping, [9])) == .pong([9]))
        #expect(machine.received(frame(.continuation, Array("ll".utf8), fin: false)) == .none)
        #expect(machine.received(frame(.continuation, Array("o".utf8))) == .deliver(.text("hello")))
        #expect(machine.received(frame(.binary, [1, 2])) == .deliver(.binary([1, 2])))
    }

    @Test("A text message split inside a UTF-8 character is whole again, and one that is not UTF-8 fails with 1007")
    func utf8AcrossFragments() {
        var machine = Machine(maximumMessageSize: 100)
        let bytes = Array("é".utf8)
        #expect(machine.received(frame(.text, [bytes[0]], fin: false)) == .none)
        #expect(machine.received(frame(.continuation, [bytes[1]])) == .deliver(.text("é")))
        guard case .fail(let failure) = machine.received(frame(.text, [0xFF])) else {
            Issue.record("expected a failure")
            return
        }
        #expect(failure.code == 1007)
        #expect(machine.state == .closed)
        #expect(machine.received(frame(.text, Array("late".utf8))) == .none)
    }

    @Test("The limit counts every fragment of a message: one byte over fails with 1009")
    func limitAcrossFragments() {
        var machine = Machine(maximumMessageSize: 10)
        #expect(machine.received(frame(.binary, [UInt8](repeating: 0, count: 6), fin: false)) == .none)
        guard case .fail(let failure) = machine.received(frame(.continuation, [UInt8](repeating: 0, count: 5))) else {
            Issue.record("expected a failure")
            return
        }
        #expect(failure.code == 1009)
        var exact = Machine(maximumMessageSize: 10)
        #expect(
            exact.received(frame(.binary, [UInt8](repeating: 0, count: 10)))
                == .deliver(.binary([UInt8](repeating: 0, count: 10))))
    }

    @Test("Unmasked frames, reserved bits, reserved opcodes and stray continuations fail with 1002")
    func protocolErrors() {
        for bad in [
            frame(.text, [1], masked: false), frame(.text, [1], rsv: true), frame(.reserved, [1]), frame(.continuation, [1]),
            frame(.close, [3]), frame(.close, close(1005)), frame(.close, close(2999)),
        ] {
            var machine = Machine(maximumMessageSize: 10)
            guard case .fail(let failure) = machine.received(bad) else {
                Issue.record("expected a failure for \(bad)")
                continue
            }
            #expect(failure.code == 1002, "\(bad)")
        }
        var interrupted = Machine(maximumMessageSize: 10)
        _ = interrupted.received(frame(.text, [65], fin: false))
        guard case .fail(let failure) = interrupted.received(frame(.binary, [1])) else {
            Issue.record("a new message inside another must fail")
            return
        }
        #expect(failure.code == 1002)
    }

    @Test(
        "A client's close is answered with its code; an empty close with 1000; a close reason that is not UTF-8 fails with 1007")
    func clientCloses() {
        var machine = Machine(maximumMessageSize: 10)
        #expect(
            machine.received(frame(.close, close(4001, "bye")))
                == .clientClosed(WebSocketClose(code: 4001, reason: "bye"), reply: WebSocketClose(code: 4001)))
        #expect(!machine.isOpen)
        let closesAgain = machine.closing()
        #expect(!closesAgain)
        var empty = Machine(maximumMessageSize: 10)
        #expect(empty.received(frame(.close)) == .clientClosed(nil, reply: WebSocketClose(code: 1000)))
        var garbled = Machine(maximumMessageSize: 10)
        guard case .fail(let failure) = garbled.received(frame(.close, close(1000) + [0xFF])) else {
            Issue.record("expected a failure")
            return
        }
        #expect(failure.code == 1007)
    }

    @Test("After the server's close, messages are dropped, pings unanswered, and the client's close ends the connection")
    func serverCloses() {
        var machine = Machine(maximumMessageSize: 10)
        let first = machine.closing()
        let second = machine.closing()
        #expect(first)
        #expect(!second)  // one close frame only
        #expect(machine.received(frame(.text, [65])) == .none)
        #expect(machine.received(frame(.ping, [1])) == .none)
        #expect(machine.received(frame(.close, close(1000))) == .closeConnection)
        #expect(machine.received(frame(.close, close(1000))) == .none)
    }

    @Test("The decoder's refusals become 1009 for a frame too large and 1002 otherwise, once")
    func decoderFailures() {
        var large = Machine(maximumMessageSize: 10)
        guard case .fail(let failure) = large.decoderFailed(tooLarge: true) else {
            Issue.record("expected a failure")
            return
        }
        #expect(failure.code == 1009)
        #expect(large.decoderFailed(tooLarge: false) == .none)
        var malformed = Machine(maximumMessageSize: 10)
        guard case .fail(let other) = malformed.decoderFailed(tooLarge: false) else {
            Issue.record("expected a failure")
            return
        }
        #expect(other.code == 1002)
    }

    @Test("A silent client is pinged after the idle timeout and let go after another; any frame in between keeps it")
    func idlePings() {
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
        let idle = TimeAmount.seconds(60)
        var machine = Machine(maximumMessageSize: 10, now: start)
        #expect(machine.firstIdleCheck(idleTimeout: idle) == start + idle)
        #expect(machine.idleCheck(now: start + idle, idleTimeout: idle) == .ping(thenCheckAt: start + idle + idle))
        // The pong comes back a second later: the next check waits for a whole idle timeout after it.
        _ = machine.received(frame(.pong, Array("hammock".utf8)), now: start + idle + .seconds(1))
        #expect(
            machine.idleCheck(now: start + idle + idle, idleTimeout: idle) == .wait(until: start + idle + .seconds(1) + idle))
        #expect(
            machine.idleCheck(now: start + idle + .seconds(1) + idle, idleTimeout: idle)
                == .ping(thenCheckAt: start + idle + .seconds(1) + idle + idle))
        // Nothing this time: the connection ends.
        #expect(machine.idleCheck(now: start + idle + .seconds(1) + idle + idle, idleTimeout: idle) == .close)
        #expect(machine.state == .closed)
        // A socket that is closing has no idle timer.
        var closing = Machine(maximumMessageSize: 10, now: start)
        _ = closing.closing()
        #expect(closing.idleCheck(now: start + idle, idleTimeout: idle) == .stop)
        // A message counts as much as a pong.
        var chatty = Machine(maximumMessageSize: 10, now: start)
        _ = chatty.idleCheck(now: start + idle, idleTimeout: idle)
        _ = chatty.received(frame(.text, [65]), now: start + idle + .seconds(59))
        #expect(chatty.idleCheck(now: start + idle + idle, idleTimeout: idle) == .wait(until: start + idle + .seconds(59) + idle))
    }
}
