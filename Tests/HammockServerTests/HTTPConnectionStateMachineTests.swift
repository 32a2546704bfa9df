import HTTPTypes
import NIOCore
import NIOHTTP1
import Testing

@testable import HammockHTTPServer
@testable import HammockServer
@testable import HammockStore

/// The connection's life without a socket: each test feeds the state machine events in an order a
/// client (or the event loop) can produce and checks what it asks the handler to do.
@Suite("HTTP connection state machine")
struct HTTPConnectionStateMachineTests {
    typealias Machine = HTTPConnectionStateMachine

    let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
    let limits = ConnectionLimits(
        idleTimeout: .seconds(60), requestTimeout: .seconds(30), lingerTimeout: .seconds(2))

    func machine(maximumBodySize: Int = 1024) -> Machine {
        Machine(maximumBodySize: maximumBodySize, activity: ConnectionActivity(now: start))
    }

    func receiving(
        _ target: String = "/people", keepAlive: Bool = true, expectsContinue: Bool = false, stopsDecoder: Bool = false
    ) -> Machine.Receiving {
        Machine.Receiving(
            request: MockRequest(.get, target), version: .http1_1, keepAlive: keepAlive,
            expectsContinue: expectsContinue, stopsDecoder: stopsDecoder)
    }

    /// Head and end of one request; returns what the end asked for.
    func receive(
        _ target: String, into machine: inout Machine, keepAlive: Bool = true, at now: NIODeadline? = nil,
        isWritable: Bool = true
    ) -> Machine.Next {
        let now = now ?? start
        _ = machine.receivedHead(
            receiving(target, keepAlive: keepAlive), declaredLength: nil, now: now, isWritable: isWritable)
        return machine.receivedEnd(now: now, isWritable: isWritable)
    }

    func target(of next: Machine.Next) -> String? {
        guard case .answer(.request(let request, _, _)) = next else { return nil }
        return request.path
    }

    func problemStatus(of next: Machine.Next) -> Int? {
        guard case .answer(.failure(_, let problem, _)) = next else { return nil }
        return problem.status.code
    }

    func isIdle(_ next: Machine.Next, resumeReading: Bool) -> Bool {
        switch next {
        case .none: !resumeReading
        case .idle(nil, let resume): resume == resumeReading
        default: false
        }
    }

    let ok = MockResponse(status: .ok)

    @Test("A whole request is answered at once, and a kept-alive answer leaves the connection idle")
    func oneRequest() {
        var machine = machine()
        let next = receive("/people", into: &machine)
        #expect(target(of: next) == "/people")
        #expect(machine.activity.phase == .responding)
        #expect(machine.answered(ok, now: start) == .keepOpen)
        let after = machine.continueAfterAnswer(now: start + .seconds(1), isWritable: true)
        #expect(isIdle(after, resumeReading: false))
        #expect(machine.activity.phase == .idle)
        #expect(machine.activity.since == start + .seconds(1))
    }

    @Test("Pipelined requests are answered in order, and reads wait while one is queued behind an answer")
    func pipelined() {
        var machine = machine()
        #expect(target(of: receive("/a", into: &machine)) == "/a")
        #expect(reads(&machine, isWritable: true), "one answer in progress alone does not hold reads back")
        #expect(isNone(receive("/b", into: &machine)))
        #expect(!reads(&machine, isWritable: true), "a second request waits: the third stays in the socket")
        #expect(machine.answered(ok, now: start) == .keepOpen)
        #expect(target(of: machine.continueAfterAnswer(now: start, isWritable: true)) == "/b")
        #expect(machine.answered(ok, now: start) == .keepOpen)
        let after = machine.continueAfterAnswer(now: start, isWritable: true)
        #expect(isIdle(after, resumeReading: true), "the read held back is taken back once nothing is queued")
    }

    @Test("A client that does not read its answers stalls the connection: nothing more is answered or read until it does")
    func backpressure() {
        var machine = machine()
        _ = receive("/a", into: &machine)
        _ = receive("/b", into: &machine)
        #expect(machine.answered(ok, now: start) == .keepOpen)
        // The first answer filled the channel past its high-water mark.
        #expect(isNone(machine.continueAfterAnswer(now: start, isWritable: false)))
        #expect(machine.activity.phase == .stalled)
        #expect(!reads(&machine, isWritable: false))
        // A stalled connection is timed as idle: a client that never reads is closed.
        #expect(machine.deadline(now: start, limits: limits) <= start + .seconds(2))
        #expect(target(of: machine.writabilityChanged(now: start, isWritable: true)) == "/b")
    }

    @Test("A stalled connection whose client never reads is closed at the idle timeout")
    func stalledCloses() {
        var machine = machine()
        _ = receive("/a", into: &machine)
        _ = receive("/b", into: &machine)
        _ = machine.answered(ok, now: start)
        _ = machine.continueAfterAnswer(now: start, isWritable: false)
        #expect(isNone(machine.timerFired(now: start + .seconds(59), limits: limits, isWritable: false)))
        #expect(isClose(machine.timerFired(now: start + .seconds(60), limits: limits, isWritable: false)))
    }

    @Test("Writability coming back with nothing stalled only takes back a held read")
    func writabilityWithoutStall() {
        var machine = machine()
        #expect(!reads(&machine, isWritable: false))
        #expect(isIdle(machine.writabilityChanged(now: start, isWritable: true), resumeReading: true))
        #expect(isNone(machine.writabilityChanged(now: start, isWritable: true)))
        #expect(isNone(machine.writabilityChanged(now: start, isWritable: false)))
    }

    @Test("A body declared or sent beyond the limit is refused with 413, after the answers owed before it")
    func bodyTooLarge() {
        var declared = machine(maximumBodySize: 10)
        let next = declared.receivedHead(receiving(), declaredLength: 11, now: start, isWritable: true)
        #expect(problemStatus(of: next) == 413)
        #expect(!declared.isTakingRequests)
        #expect(declared.activity.isInputDone)

        var sent = machine(maximumBodySize: 10)
        #expect(target(of: receive("/first", into: &sent)) == "/first")
        _ = sent.receivedHead(receiving("/second"), declaredLength: nil, now: start, isWritable: true)
        #expect(isNone(sent.receivedBody(ByteBuffer(bytes: Array(repeating: 1, count: 10)), now: start, isWritable: true)))
        #expect(isNone(sent.receivedBody(ByteBuffer(bytes: [1]), now: start, isWritable: true)), "queued behind /first")
        #expect(sent.answered(ok, now: start) == .keepOpen)
        #expect(problemStatus(of: sent.continueAfterAnswer(now: start, isWritable: true)) == 413)
    }

    @Test("After a refusal the connection lingers: its answer closes the output, and a held read is resumed to discard")
    func refusalLingers() {
        var machine = machine()
        _ = receive("/a", into: &machine)
        _ = receive("/b", into: &machine)
        #expect(!reads(&machine, isWritable: true))
        #expect(isNone(machine.refuse(.badRequest("bad"), request: nil, now: start, isWritable: true)))
        #expect(isNone(machine.refuse(.badRequest("again"), request: nil, now: start, isWritable: true)), "refused once")
        _ = machine.answered(ok, now: start)
        #expect(target(of: machine.continueAfterAnswer(now: start, isWritable: true)) == "/b")
        _ = machine.answered(ok, now: start)
        #expect(problemStatus(of: machine.continueAfterAnswer(now: start, isWritable: true)) == 400)
        #expect(machine.answered(MockResponse(status: .badRequest), now: start) == .linger(resumeReading: true))
        #expect(machine.activity.phase == .lingering)
        #expect(reads(&machine, isWritable: false), "a lingering connection reads, to discard")
        #expect(isNone(machine.timerFired(now: start + .seconds(1), limits: limits, isWritable: true)))
        #expect(isClose(machine.timerFired(now: start + .seconds(2), limits: limits, isWritable: true)))
    }

    @Test("Input after the connection is done is ignored, whatever order it comes in")
    func inputAfterDone() {
        var machine = machine()
        _ = machine.refuse(.badRequest("bad"), request: nil, now: start, isWritable: true)
        #expect(isNone(machine.receivedHead(receiving(), declaredLength: nil, now: start, isWritable: true)))
        #expect(isNone(machine.receivedBody(ByteBuffer(bytes: [1]), now: start, isWritable: true)))
        #expect(isNone(machine.receivedEnd(now: start, isWritable: true)))
    }

    @Test("Connection: close, on the request or on the answer, closes after the flush")
    func closing() {
        var onRequest = machine()
        _ = receive("/a", into: &onRequest, keepAlive: false)
        #expect(onRequest.answered(ok, now: start) == .closeAfterFlush)
        #expect(!onRequest.isTakingRequests)

        var onAnswer = machine()
        _ = receive("/a", into: &onAnswer)
        #expect(
            onAnswer.answered(MockResponse(status: .ok, headerFields: [.connection: "close"]), now: start) == .closeAfterFlush)
    }

    @Test("Stopping the server closes an idle connection at once and a busy one after what it received in full")
    func quiescing() {
        var idle = machine()
        #expect(isClose(idle.quiesce(now: start)))

        var busy = machine()
        _ = receive("/a", into: &busy)
        _ = receive("/b", into: &busy)
        _ = busy.receivedHead(receiving("/c"), declaredLength: nil, now: start, isWritable: true)
        #expect(isNone(busy.quiesce(now: start)))
        #expect(!busy.isTakingRequests, "/c, still arriving, is dropped")
        #expect(busy.answered(ok, now: start) == .keepOpen)
        #expect(target(of: busy.continueAfterAnswer(now: start, isWritable: true)) == "/b")
        #expect(busy.answered(ok, now: start) == .closeAfterFlush, "the last answer owed closes")
    }

    @Test("100 Continue goes out only once every earlier answer is written")
    func expectContinue() {
        var machine = machine()
        let alone = machine.receivedHead(receiving(expectsContinue: true), declaredLength: 5, now: start, isWritable: true)
        guard case .idle(let version?, false) = alone else {
            Issue.record("expected 100 Continue, got \(alone)")
            return
        }
        #expect(version == .http1_1)

        var behind = self.machine()
        _ = receive("/a", into: &behind)
        #expect(isNone(behind.receivedHead(receiving(expectsContinue: true), declaredLength: 5, now: start, isWritable: true)))
        _ = behind.answered(ok, now: start)
        guard case .idle(.http1_1?, _) = behind.continueAfterAnswer(now: start, isWritable: true) else {
            Issue.record("expected 100 Continue after the first answer")
            return
        }
    }

    @Test("After sixteen pipelined answers in a row the next waits for the event loop's next turn")
    func pipelineBurst() {
        var machine = machine()
        for index in 0...Machine.pipelineBurst {
            _ = receive("/\(index)", into: &machine)
        }
        var answered = 0
        var next = Machine.Next.none
        repeat {
            _ = machine.answered(ok, now: start)
            answered += 1
            next = machine.continueAfterAnswer(now: start, isWritable: true)
        } while target(of: next) != nil
        #expect(answered == Machine.pipelineBurst)
        guard case .answerOnNextTurn = next else {
            Issue.record("expected a turn of the loop, got \(next)")
            return
        }
        #expect(target(of: machine.nextTurn(now: start, isWritable: true)) == "/\(Machine.pipelineBurst)")
    }

    @Test("A request that arrives too slowly gets 408 at the request timeout, counted from its first byte")
    func requestTimeout() {
        var machine = machine()
        let head = start + .seconds(10)
        _ = machine.receivedHead(receiving(), declaredLength: 100, now: head, isWritable: true)
        #expect(machine.deadline(now: head, limits: limits) <= head + .seconds(2))
        #expect(isNone(machine.timerFired(now: head + .seconds(29), limits: limits, isWritable: true)))
        #expect(problemStatus(of: machine.timerFired(now: head + .seconds(30), limits: limits, isWritable: true)) == 408)
    }

    @Test("An idle connection closes at the idle timeout, not before")
    func idleTimeout() {
        var machine = machine()
        #expect(isNone(machine.timerFired(now: start + .seconds(59), limits: limits, isWritable: true)))
        #expect(isClose(machine.timerFired(now: start + .seconds(60), limits: limits, isWritable: true)))
    }

    @Test("Timeouts of a millisecond and of Int64.max seconds give deadlines that neither loop nor overflow")
    func extremeDeadlines() {
        let machine = machine()
        let tiny = ConnectionLimits(idleTimeout: .zero, requestTimeout: .seconds(-5), lingerTimeout: .zero).effective
        #expect(machine.deadline(now: start, limits: tiny) > start)
        let huge = ConnectionLimits(
            idleTimeout: .seconds(Int64.max), requestTimeout: .seconds(Int64.max), lingerTimeout: .seconds(Int64.max))
        #expect(machine.deadline(now: start, limits: huge) > start + .hours(24 * 365))
    }

    @Test("A request that asks for an upgrade tells the decoder to start again once it has arrived")
    func upgrade() {
        var machine = machine()
        _ = machine.receivedHead(receiving(stopsDecoder: true), declaredLength: nil, now: start, isWritable: true)
        #expect(!machine.activity.decoderStopped)
        _ = machine.receivedEnd(now: start, isWritable: true)
        #expect(machine.activity.decoderStopped)
    }

    // MARK: Streamed bodies and connection faults

    func streamed(length: Int?, delivery: MockResponse.Delivery = .normal) -> MockResponse {
        var response = MockResponse(status: .ok, stream: StreamingBody(length: length) { _ in })
        response.delivery = delivery
        return response
    }

    func faulted(_ fault: ConnectionFault) -> MockResponse {
        var response = MockResponse(status: .ok, body: Array("0123456789".utf8))
        response.delivery = .fault(fault)
        return response
    }

    @Test("A streamed body keeps the connection: a pipelined request waits, unread, until the body ends, then is answered")
    func streamKeepsAlive() {
        var machine = machine()
        #expect(target(of: receive("/a", into: &machine)) == "/a")
        #expect(machine.answered(streamed(length: 10), now: start) == .stream(keepAlive: true))
        // While the body goes out, the next request queues and reads wait in the socket.
        #expect(isNone(receive("/b", into: &machine)))
        #expect(!reads(&machine, isWritable: true))
        #expect(target(of: machine.bodyEnded(complete: true, now: start, isWritable: true)) == "/b")
        #expect(machine.answered(ok, now: start) == .keepOpen)
    }

    @Test("A body cut short, or truncated on purpose, closes the connection: the client cannot find the next answer")
    func cutBodyCloses() {
        var machine = machine()
        _ = receive("/a", into: &machine)
        #expect(machine.answered(streamed(length: 10), now: start) == .stream(keepAlive: true))
        _ = receive("/b", into: &machine)
        #expect(isClose(machine.bodyEnded(complete: false, now: start, isWritable: true)))
        #expect(!machine.isTakingRequests)

        var truncated = self.machine()
        _ = receive("/a", into: &truncated)
        #expect(truncated.answered(faulted(.truncate), now: start) == .stream(keepAlive: false))
        #expect(!truncated.isTakingRequests)  // a request arriving behind it is never read
        #expect(isClose(truncated.bodyEnded(complete: true, now: start, isWritable: true)))
    }

    @Test("A body of unknown length goes chunked over HTTP/1.1 and ends with the connection over HTTP/1.0")
    func unknownLength() {
        var machine = machine()
        _ = receive("/a", into: &machine)
        #expect(machine.answered(streamed(length: nil), now: start) == .stream(keepAlive: true))
        var old = self.machine()
        _ = old.receivedHead(
            Machine.Receiving(
                request: MockRequest(.get, "/a"), version: .http1_0, keepAlive: true, expectsContinue: false, stopsDecoder: false),
            declaredLength: nil, now: start, isWritable: true)
        _ = old.receivedEnd(now: start, isWritable: true)
        #expect(old.answered(streamed(length: nil), now: start) == .stream(keepAlive: false))
        #expect(old.answered(streamed(length: 4), now: start) == .closeAfterFlush)  // not answering any more: ignored
    }

    @Test("A throttled answer is streamed; a throttled empty body is written at once")
    func throttled() {
        var machine = machine()
        _ = receive("/a", into: &machine)
        var slow = MockResponse(status: .ok, body: [1, 2, 3])
        slow.delivery = .throttled(bytesPerSecond: 1)
        #expect(machine.answered(slow, now: start) == .stream(keepAlive: true))
        _ = machine.bodyEnded(complete: true, now: start, isWritable: true)
        _ = receive("/b", into: &machine)
        var empty = MockResponse(status: .noContent)
        empty.delivery = .throttled(bytesPerSecond: 1)
        #expect(machine.answered(empty, now: start) == .keepOpen)
    }

    @Test("Stopping the server mid-body ends the body, then closes, even on a kept-alive connection")
    func stopMidBody() {
        var machine = machine()
        _ = receive("/events", into: &machine)
        #expect(machine.answered(streamed(length: nil), now: start) == .stream(keepAlive: true))
        guard case .stopBody = machine.quiesce(now: start) else {
            Issue.record("the stop did not end the body")
            return
        }
        #expect(isClose(machine.bodyEnded(complete: true, now: start, isWritable: true)))
    }

    @Test("A client that stops reading a streamed body is closed at the idle timeout; a stop closes it at once")
    func unreadStream() {
        var machine = machine()
        _ = receive("/big", into: &machine)
        #expect(machine.answered(streamed(length: nil), now: start) == .stream(keepAlive: true))
        _ = machine.writabilityChanged(now: start, isWritable: false)
        #expect(isNone(machine.timerFired(now: start + .seconds(59), limits: limits, isWritable: false)))
        #expect(isClose(machine.timerFired(now: start + .seconds(60), limits: limits, isWritable: false)))

        var reading = self.machine()
        _ = receive("/big", into: &reading)
        _ = reading.answered(streamed(length: nil), now: start)
        _ = reading.writabilityChanged(now: start, isWritable: false)
        // It reads again: the clock of the stall stops.
        _ = reading.writabilityChanged(now: start + .seconds(30), isWritable: true)
        #expect(isNone(reading.timerFired(now: start + .seconds(90), limits: limits, isWritable: true)))
        _ = reading.writabilityChanged(now: start + .seconds(90), isWritable: false)
        #expect(isClose(reading.quiesce(now: start + .seconds(91), isWritable: false)))
    }

    @Test("A client that closes its side after pipelined requests gets every answer, then the close")
    func halfCloseAnswersWhatArrived() {
        var machine = machine()
        #expect(target(of: receive("/a", into: &machine)) == "/a")
        _ = receive("/b", into: &machine)
        // Half a request, then the client's side closes: the cut request is dropped.
        _ = machine.receivedHead(receiving("/cut"), declaredLength: 10, now: start, isWritable: true)
        #expect(isNone(machine.inputClosed(now: start)))
        #expect(!machine.isTakingRequests)
        #expect(machine.answered(ok, now: start) == .keepOpen)
        #expect(target(of: machine.continueAfterAnswer(now: start, isWritable: true)) == "/b")
        // The last answer owed closes the connection.
        #expect(machine.answered(ok, now: start) == .closeAfterFlush)
    }

    @Test("A half-close on an idle connection closes it; during a linger it ends the wait")
    func halfCloseIdleAndLingering() {
        var idle = machine()
        _ = receive("/a", into: &idle)
        _ = idle.answered(ok, now: start)
        _ = idle.continueAfterAnswer(now: start, isWritable: true)
        #expect(isClose(idle.inputClosed(now: start)))

        var lingering = machine()
        _ = lingering.refuse(.badRequest("bad"), request: nil, now: start, isWritable: true)
        #expect(lingering.answered(ok, now: start) == .linger(resumeReading: false))
        #expect(isClose(lingering.inputClosed(now: start)))

        // A refusal whose client has already closed its side needs no linger.
        var closedFirst = machine()
        #expect(problemStatus(of: closedFirst.refuse(.badRequest("bad"), request: nil, now: start, isWritable: true)) == 400)
        #expect(isNone(closedFirst.inputClosed(now: start)))
        #expect(closedFirst.answered(ok, now: start) == .closeAfterFlush)
    }

    @Test("A client that closes while a body streams or a timeout holds is gone: the connection closes at once")
    func closeDuringStreamOrHold() {
        var machine = machine()
        _ = receive("/events", into: &machine)
        #expect(machine.answered(streamed(length: nil), now: start) == .stream(keepAlive: true))
        #expect(isClose(machine.inputClosed(now: start)))
        #expect(isNone(machine.bodyEnded(complete: true, now: start, isWritable: true)))

        var held = self.machine()
        _ = receive("/a", into: &held)
        #expect(held.answered(faulted(.timeout), now: start) == .hold)
        #expect(isClose(held.inputClosed(now: start)))
    }

    @Test("A timeout fault holds the connection: no timer closes it, what arrives is ignored, and the stop closes it")
    func hold() {
        var machine = machine()
        _ = receive("/a", into: &machine)
        #expect(machine.answered(faulted(.timeout), now: start) == .hold)
        let later = start + .hours(2)
        #expect(isNone(machine.timerFired(now: later, limits: limits, isWritable: true)))
        #expect(isNone(receive("/b", into: &machine, at: later)))
        #expect(isClose(machine.quiesce(now: later)))
    }

    @Test(
        "Drop, empty, reset and malformed abort the connection; nothing behind them is answered",
        arguments: [ConnectionFault.drop, .empty, .reset, .malformed])
    func abort(kind: ConnectionFault) {
        var machine = machine()
        _ = receive("/a", into: &machine)
        _ = receive("/b", into: &machine)
        #expect(machine.answered(faulted(kind), now: start) == .abort(kind))
        #expect(!machine.isTakingRequests)
        #expect(isNone(machine.continueAfterAnswer(now: start, isWritable: true)))
    }

    // MARK: Bodies over the limit, for a route that takes them as they arrive

    func streamable(_ target: String = "/upload", expectsContinue: Bool = false) -> Machine.Receiving {
        var receiving = receiving(target, expectsContinue: expectsContinue)
        receiving.request.method = .post
        receiving.takesStreamedBody = true
        return receiving
    }

    /// The request handed over while its body arrives, with the bytes that start its stream.
    func handedOver(_ next: Machine.Next) -> (path: String, received: [UInt8], length: Int?, sendsContinue: Bool)? {
        guard case .answerWhileReceiving(.request(let request, _, _), let received, let length, let sendContinue) = next else {
            return nil
        }
        return (request.path, received, length, sendContinue != nil)
    }

    func bodyPart(_ next: Machine.Next) -> Int? {
        guard case .receiveBody(let buffer) = next else { return nil }
        return buffer.readableBytes
    }

    func isEndBody(_ next: Machine.Next) -> Bool {
        if case .endBody = next { return true }
        return false
    }

    @Test(
        "A body declared over the limit, for a route that takes streamed bodies, is answered as it arrives: its parts and end are handed over, and the connection stays open"
    )
    func declaredBodyStreams() {
        var machine = machine(maximumBodySize: 10)
        let head = machine.receivedHead(streamable(expectsContinue: true), declaredLength: 25, now: start, isWritable: true)
        let handed = handedOver(head)
        #expect(handed?.path == "/upload")
        #expect(handed?.received == [])
        #expect(handed?.length == 25)
        #expect(handed?.sendsContinue == true, "a client that waits for 100 Continue gets it, or the body never comes")
        #expect(machine.isStreamingBody)
        #expect(machine.activity.phase == .responding, "no request timeout: the route's own (the upstream's) bounds it")
        #expect(
            bodyPart(machine.receivedBody(ByteBuffer(bytes: Array(repeating: 1, count: 20)), now: start, isWritable: true)) == 20)
        #expect(bodyPart(machine.receivedBody(ByteBuffer(bytes: [1, 2, 3, 4, 5]), now: start, isWritable: true)) == 5)
        #expect(isEndBody(machine.receivedEnd(now: start, isWritable: true)))
        #expect(!machine.isStreamingBody)
        #expect(machine.answered(ok, now: start) == .keepOpen)
        #expect(isIdle(machine.continueAfterAnswer(now: start, isWritable: true), resumeReading: false))
        #expect(target(of: receive("/next", into: &machine)) == "/next", "the connection serves the next request")
    }

    @Test("A body of no declared length starts its stream where it passes the limit, with what arrived before")
    func chunkedBodySpills() {
        var machine = machine(maximumBodySize: 10)
        _ = machine.receivedHead(streamable(), declaredLength: nil, now: start, isWritable: true)
        #expect(isNone(machine.receivedBody(ByteBuffer(bytes: Array(repeating: 7, count: 8)), now: start, isWritable: true)))
        let spilled = handedOver(machine.receivedBody(ByteBuffer(bytes: [8, 9, 10]), now: start, isWritable: true))
        #expect(spilled?.received == Array(repeating: 7, count: 8) + [8, 9, 10])
        #expect(spilled?.length == nil)
        #expect(bodyPart(machine.receivedBody(ByteBuffer(bytes: [11]), now: start, isWritable: true)) == 1)
        #expect(isEndBody(machine.receivedEnd(now: start, isWritable: true)))
    }

    @Test("A body within the limit reaches the route whole even when the route takes streamed bodies")
    func smallBodyStaysWhole() {
        var machine = machine(maximumBodySize: 10)
        _ = machine.receivedHead(streamable(), declaredLength: 10, now: start, isWritable: true)
        #expect(isNone(machine.receivedBody(ByteBuffer(bytes: Array(repeating: 1, count: 10)), now: start, isWritable: true)))
        let next = machine.receivedEnd(now: start, isWritable: true)
        guard case .answer(.request(let request, _, _)) = next else {
            Issue.record("expected the whole request, got \(next)")
            return
        }
        #expect(request.body.count == 10)
        #expect(request.bodyStream == nil)
    }

    @Test("Behind an answer still owed, a body over the limit keeps its 413: streaming starts only on an idle connection")
    func streamingNeedsAnIdleConnection() {
        var machine = machine(maximumBodySize: 10)
        #expect(target(of: receive("/first", into: &machine)) == "/first")
        #expect(isNone(machine.receivedHead(streamable(), declaredLength: 25, now: start, isWritable: true)))
        #expect(!machine.isStreamingBody)
        _ = machine.answered(ok, now: start)
        #expect(problemStatus(of: machine.continueAfterAnswer(now: start, isWritable: true)) == 413)
    }

    @Test("A reader that falls behind holds reads back until it has taken what waits")
    func streamedBodyBackpressure() {
        var machine = machine(maximumBodySize: 10)
        _ = machine.receivedHead(streamable(), declaredLength: 1000, now: start, isWritable: true)
        #expect(reads(&machine, isWritable: true))
        machine.bodyReaderFull()
        #expect(!reads(&machine, isWritable: true), "the socket keeps the rest: TCP slows the client")
        #expect(isIdle(machine.bodyReaderReady(now: start, isWritable: true), resumeReading: true))
        #expect(reads(&machine, isWritable: true))
        #expect(isNone(machine.bodyReaderReady(now: start, isWritable: true)), "ready twice takes back nothing more")
    }

    func stalledAfter(_ next: Machine.Next) -> Duration? {
        guard case .stallBody(let after) = next else { return nil }
        return after
    }

    @Test(
        "A streamed body none of which comes for the request timeout is ended as stalled, once; its answer then lingers, as any answer before the body's end"
    )
    func streamedBodyStalls() {
        var machine = machine(maximumBodySize: 10)
        _ = machine.receivedHead(streamable(), declaredLength: 1000, now: start, isWritable: true)
        #expect(machine.deadline(now: start, limits: limits) <= start + .seconds(30))
        // Each piece that arrives starts the wait again: a slow upload that goes on is no stall.
        let later = start + .seconds(20)
        _ = machine.receivedBody(ByteBuffer(bytes: [1]), now: later, isWritable: true)
        #expect(isNone(machine.timerFired(now: start + .seconds(31), limits: limits, isWritable: true)))
        #expect(machine.deadline(now: start + .seconds(31), limits: limits) <= later + .seconds(30))
        #expect(stalledAfter(machine.timerFired(now: later + .seconds(30), limits: limits, isWritable: true)) == .seconds(30))
        #expect(isNone(machine.timerFired(now: later + .seconds(90), limits: limits, isWritable: true)), "ended once")
        #expect(
            machine.answered(MockResponse(status: .requestTimeout), now: later + .seconds(30)) == .linger(resumeReading: false))
    }

    @Test("A streamed body whose reader has fallen behind is not stalled by the client: the wait starts when reading resumes")
    func readerBehindIsNoStall() {
        var machine = machine(maximumBodySize: 10)
        _ = machine.receivedHead(streamable(), declaredLength: 1000, now: start, isWritable: true)
        machine.bodyReaderFull()
        #expect(isNone(machine.timerFired(now: start + .seconds(100), limits: limits, isWritable: true)))
        _ = machine.bodyReaderReady(now: start + .seconds(100), isWritable: true)
        #expect(isNone(machine.timerFired(now: start + .seconds(129), limits: limits, isWritable: true)))
        #expect(stalledAfter(machine.timerFired(now: start + .seconds(130), limits: limits, isWritable: true)) != nil)
    }

    @Test(
        "An answer that comes before the body ends closes the connection: a whole answer lingers, a streamed one closes after its body"
    )
    func answeredBeforeTheBodyEnds() {
        var whole = machine(maximumBodySize: 10)
        _ = whole.receivedHead(streamable(), declaredLength: 1000, now: start, isWritable: true)
        #expect(whole.answered(MockResponse(status: .contentTooLarge), now: start) == .linger(resumeReading: false))
        #expect(!whole.isStreamingBody)
        #expect(whole.activity.isInputDone, "what the client still sends is read and dropped")
        #expect(isNone(whole.receivedBody(ByteBuffer(bytes: [1]), now: start, isWritable: true)))

        var streamed = machine(maximumBodySize: 10)
        _ = streamed.receivedHead(streamable(), declaredLength: 1000, now: start, isWritable: true)
        let answer = MockResponse(status: .ok, stream: StreamingBody(length: nil) { _ in })
        #expect(streamed.answered(answer, now: start) == .stream(keepAlive: false))
        #expect(isClose(streamed.bodyEnded(complete: true, now: start, isWritable: true)))
    }

    @Test("A body cut by the client's close or by the server's stop drops the request being answered")
    func streamedBodyCut() {
        var closed = machine(maximumBodySize: 10)
        _ = closed.receivedHead(streamable(), declaredLength: 1000, now: start, isWritable: true)
        #expect(isClose(closed.inputClosed(now: start)))
        #expect(!closed.isStreamingBody)

        var stopped = machine(maximumBodySize: 10)
        _ = stopped.receivedHead(streamable(), declaredLength: 1000, now: start, isWritable: true)
        #expect(isClose(stopped.quiesce(now: start)))
        #expect(!stopped.isStreamingBody)
    }

    func reads(_ machine: inout Machine, isWritable: Bool) -> Bool { machine.shouldRead(isWritable: isWritable) }

    func isNone(_ next: Machine.Next) -> Bool {
        if case .none = next { return true }
        return false
    }

    func isClose(_ next: Machine.Next) -> Bool {
        if case .close = next { return true }
        return false
    }
}
