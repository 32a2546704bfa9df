import HTTPTypes
import NIOCore
import NIOHTTP1

/// The life of one HTTP/1.1 connection without its I/O: what arrives, what is owed, what may be read
/// and when it ends. ``HTTPConnectionHandler`` feeds it the connection's events and carries out what
/// each transition returns; the tests drive it with no socket (`HTTPConnectionStateMachineTests`).
///
/// Two sides move on their own:
/// - the **input** waits for a request, receives one (head, then body), or is done (after an error,
///   `CONNECT`, or an answer that closes the connection): once done, what arrives is discarded;
/// - the **output** is ready, answering one request with the engine, streaming an answer's body (a
///   streamed, throttled or truncated body: its head is written, its body is being sent), holding (a
///   timeout fault: nothing is sent until the client gives up or the server stops), stalled (the
///   client has not read what was written: the next answer waits), or finished (nothing more is
///   written).
///
/// Requests received while one is being answered wait in order in a queue. Time comes in through `now`
/// and goes out through the connection's ``ConnectionActivity``, which the decoder shares.
struct HTTPConnectionStateMachine {
    /// A request whose head has arrived and whose body is arriving.
    struct Receiving {
        var request: MockRequest
        var version: HTTPVersion
        var keepAlive: Bool
        var expectsContinue: Bool
        /// llhttp stops parsing after this request (it asked for an upgrade).
        var stopsDecoder: Bool
        /// The route that answers it reads a body over the limit as it arrives (the proxy): such a body
        /// is handed over while it arrives instead of being refused with 413.
        var takesStreamedBody = false
    }

    /// What the connection owes the client, in the order the requests came.
    enum Work {
        case request(MockRequest, version: HTTPVersion, keepAlive: Bool)
        /// A request refused with a problem (or no request at all), after which the connection closes.
        case failure(MockRequest?, HTTPProblem, version: HTTPVersion)

        var version: HTTPVersion {
            switch self {
            case .request(_, let version, _), .failure(_, _, let version): version
            }
        }
    }

    enum Input {
        case waiting
        case receiving(Receiving)
        /// The request is being answered while its body arrives (a body over the limit, for a route that
        /// takes streamed bodies); `paused` while the reader has more waiting than it takes.
        case streamingBody(paused: Bool)
        case done
    }

    enum Output {
        case ready
        case answering(Work)
        /// The head is written and the body is being sent; the connection stays open after it if `keepAlive`.
        case streaming(keepAlive: Bool)
        /// A timeout fault: the request is never answered.
        case holding
        case stalled
        case finished
    }

    /// What the handler does next.
    enum Next {
        /// Nothing until the next event.
        case none
        /// Answer this with the engine, then call ``answered(_:now:)``.
        case answer(Work)
        /// Call ``nextTurn(now:isWritable:)`` on the event loop's next turn.
        case answerOnNextTurn
        /// Close the connection: nothing is owed.
        case close
        /// Nothing is owed: send `100 Continue` for the request arriving, and read again if a read was
        /// held back.
        case idle(sendContinue: HTTPVersion?, resumeReading: Bool)
        /// End the body being streamed (the server is stopping); ``bodyEnded(complete:now:isWritable:)`` follows.
        case stopBody
        /// Answer this with the engine while its body arrives: hand it a body stream that starts with
        /// `received` (and send `100 Continue` first if a version is given); the parts that follow come
        /// as ``receiveBody(_:)`` and ``endBody``.
        case answerWhileReceiving(Work, received: [UInt8], length: Int?, sendContinue: HTTPVersion?)
        /// More of the body being handed over (``answerWhileReceiving(_:received:length:sendContinue:)``).
        case receiveBody(ByteBuffer)
        /// The body being handed over has arrived in full.
        case endBody
        /// None of the body being handed over has come for the request timeout: end it as stalled, so its
        /// reader stops waiting (the proxy answers 408); the answer then closes the connection, as any
        /// answer that comes before the body's end does.
        case stallBody(after: Duration)
    }

    /// How an answer is written, and what follows it.
    enum Writing: Equatable {
        /// The connection stays open: call ``continueAfterAnswer(now:isWritable:)`` after writing.
        case keepOpen
        /// With `Connection: close`, then flush and close.
        case closeAfterFlush
        /// After an error: write with `Connection: close`, close the output, then read and discard (read
        /// again now if a read was held back) until the client closes or the linger timeout passes.
        case linger(resumeReading: Bool)
        /// Write the head, then send the body (with `Connection: close` unless `keepAlive`), then call
        /// ``bodyEnded(complete:now:isWritable:)``.
        case stream(keepAlive: Bool)
        /// Write nothing and keep the connection open (a timeout fault) until the client closes it or
        /// the server stops.
        case hold
        /// Fail the connection as the fault says (close, reset, or bytes that are not HTTP, then close).
        case abort(ConnectionFault)
    }

    /// After this many answers in a row, the next pipelined request waits for the loop's next turn.
    static let pipelineBurst = 16

    private(set) var input = Input.waiting
    private(set) var output = Output.ready
    private var queue = CircularBuffer<Work>(initialCapacity: 2)
    /// Close once the answers owed are written: the server is stopping, or the client closed its side.
    private var closesWhenDone = false
    /// The client closed its side of the connection (a half-close): nothing more arrives.
    private var isInputClosed = false
    /// A `read()` was held back: requests wait in the socket, not in memory.
    private var isReadWithheld = false
    /// Pipelined requests answered one after another without the loop going back to its sockets.
    private var answeredInARow = 0
    /// When the body being handed over last brought bytes (or its reader, once behind, took what waited):
    /// a client that sends none for the request timeout has stalled its upload. The request timeout cannot
    /// bound the whole of such a body (a large upload may rightly take minutes); before this, only the
    /// upstream's 30 s bounded it, and its 504 blamed the backend. `nil` when not watching.
    private var bodyHeardAt: NIODeadline?
    let maximumBodySize: Int
    let activity: ConnectionActivity

    init(maximumBodySize: Int, activity: ConnectionActivity) {
        self.maximumBodySize = maximumBodySize
        self.activity = activity
    }

    /// Whether requests are still taken (errors from a decoder that already failed are not).
    var isTakingRequests: Bool {
        if case .done = input { return false }
        return true
    }

    // MARK: Input

    /// A head arrived and became a request. A body declared larger than the limit is refused before a
    /// byte of it is read.
    mutating func receivedHead(_ receiving: Receiving, declaredLength: Int?, now: NIODeadline, isWritable: Bool) -> Next {
        guard case .waiting = input else { return .none }
        if let declaredLength, declaredLength > maximumBodySize {
            if receiving.takesStreamedBody,
                let next = answerWhileReceiving(receiving, received: [], length: declaredLength, now: now)
            {
                return next
            }
            return refuse(
                .contentTooLarge(limit: maximumBodySize), request: receiving.request, version: receiving.version, now: now,
                isWritable: isWritable)
        }
        input = .receiving(receiving)
        if activity.phase == .idle { activity.enter(.reading, at: now) }
        return continueIfExpected()
    }

    /// Part of the body arrived.
    mutating func receivedBody(_ buffer: ByteBuffer, now: NIODeadline, isWritable: Bool) -> Next {
        if case .streamingBody = input {
            if bodyHeardAt != nil { bodyHeardAt = now }
            return .receiveBody(buffer)
        }
        guard case .receiving(var current) = input else { return .none }
        guard current.request.body.count + buffer.readableBytes <= maximumBodySize else {
            if current.takesStreamedBody {
                // Past the limit with no length declared (chunked, or HTTP/2): what arrived so far starts the stream.
                var received = current.request.body
                received.append(contentsOf: buffer.readableBytesView)
                current.request.body = []
                if let next = answerWhileReceiving(current, received: received, length: nil, now: now) { return next }
            }
            return refuse(
                .contentTooLarge(limit: maximumBodySize), request: current.request, version: current.version, now: now,
                isWritable: isWritable)
        }
        input = .waiting  // so that the body below is the only reference to its storage: appended in place
        current.request.body.append(contentsOf: buffer.readableBytesView)
        input = .receiving(current)
        return .none
    }

    /// The request arrived in full: it is queued, and answered now if nothing is ahead of it.
    mutating func receivedEnd(now: NIODeadline, isWritable: Bool) -> Next {
        if case .streamingBody = input {
            input = .waiting
            bodyHeardAt = nil
            return .endBody
        }
        guard case .receiving(let current) = input else { return .none }
        input = .waiting
        if current.stopsDecoder { activity.decoderStopped = true }
        queue.append(.request(current.request, version: current.version, keepAlive: current.keepAlive))
        return startNext(now: now, isWritable: isWritable)
    }

    /// Ends the input with a problem, answered after whatever is owed before it.
    mutating func refuse(
        _ problem: HTTPProblem, request: MockRequest?, version: HTTPVersion = .http1_1, now: NIODeadline, isWritable: Bool
    ) -> Next {
        var version = version
        switch input {
        case .done: return .none
        case .receiving(let current): version = current.version
        case .waiting, .streamingBody: break
        }
        input = .done
        activity.isInputDone = true
        // No more request timeouts: what is left is answering, then lingering.
        if activity.phase != .lingering { activity.enter(.responding, at: now) }
        queue.append(.failure(request, problem, version: version))
        return startNext(now: now, isWritable: isWritable)
    }

    /// Whether to read from the socket now. While one answer is pending and another request waits
    /// behind it, or while the client leaves written answers unread, further requests wait in the
    /// socket. One answer in progress alone does not hold reads back: a client that waits for its
    /// answer sends nothing meanwhile, and withholding the read would cost two `epoll_ctl` calls per
    /// request (interest dropped, then restored).
    mutating func shouldRead(isWritable: Bool) -> Bool {
        guard activity.phase != .lingering else { return true }
        if case .streamingBody(paused: true) = input {
            isReadWithheld = true
            return false
        }
        if isBusy, !queue.isEmpty {
            isReadWithheld = true
            return false
        }
        guard isWritable else {
            isReadWithheld = true
            return false
        }
        return true
    }

    /// Whether a body is being handed over as it arrives.
    var isStreamingBody: Bool {
        if case .streamingBody = input { return true }
        return false
    }

    /// The reader of the body being handed over has more waiting than it takes: read no more for now.
    mutating func bodyReaderFull() {
        if case .streamingBody = input { input = .streamingBody(paused: true) }
    }

    /// The reader has taken what waited: read again if a read was held back for it.
    mutating func bodyReaderReady(now: NIODeadline, isWritable: Bool) -> Next {
        guard case .streamingBody(paused: true) = input else { return .none }
        input = .streamingBody(paused: false)
        // The client's silence while reads were held back was the reader's doing, not the client's.
        if bodyHeardAt != nil { bodyHeardAt = now }
        return resumeReadingIfWithheld(isWritable: isWritable) ? .idle(sendContinue: nil, resumeReading: true) : .none
    }

    /// Starts answering `receiving` while its body arrives, if nothing else is owed on the connection
    /// (pipelined requests ahead of it keep the 413: no HTTP/1.1 client pipelines an upload).
    private mutating func answerWhileReceiving(
        _ receiving: Receiving, received: [UInt8], length: Int?, now: NIODeadline
    ) -> Next? {
        guard case .ready = output, queue.isEmpty, !receiving.stopsDecoder else { return nil }
        input = .streamingBody(paused: false)
        bodyHeardAt = now
        let work = Work.request(receiving.request, version: receiving.version, keepAlive: receiving.keepAlive)
        output = .answering(work)
        if activity.phase != .lingering { activity.enter(.responding, at: now) }
        return .answerWhileReceiving(
            work, received: received, length: length, sendContinue: receiving.expectsContinue ? receiving.version : nil)
    }

    // MARK: Output

    /// The engine answered the work that ``Next/answer(_:)`` handed out.
    mutating func answered(_ response: MockResponse, now: NIODeadline) -> Writing {
        guard case .answering(let work) = output else { return .closeAfterFlush }
        switch work {
        case .request(_, let version, let keepAlive):
            switch response.delivery {
            case .fault(.timeout):
                output = .holding
                endInput()
                return .hold
            case .fault(let fault) where fault != .truncate:
                output = .finished
                endInput()
                return .abort(fault)
            default:
                break
            }
            // Answered before its body arrived in full (an upstream that refused it early, a fault): the rest
            // of the body is read and dropped while the connection lingers, or after a streamed answer is
            // sent, the connection closes.
            var bodyUnread = false
            if case .streamingBody = input {
                bodyUnread = true
                endInput()
                if !response.needsTransmission {
                    output = .finished
                    activity.enter(.lingering, at: now)
                    defer { isReadWithheld = false }
                    return .linger(resumeReading: isReadWithheld)
                }
            }
            // While stopping, the last answer owed is the one that closes.
            let isLast = closesWhenDone && queue.isEmpty
            var keepsOpen = keepAlive && !isLast && !bodyUnread && response.headerFields[.connection] != "close"
            if response.needsTransmission {
                // A body of unknown length over HTTP/1.0 ends where the connection does; a cut one too.
                let hasLength = response.stream == nil || response.stream?.length != nil
                if response.delivery == .fault(.truncate) || (!hasLength && version == .http1_0) { keepsOpen = false }
                if !keepsOpen { endInput() }
                output = .streaming(keepAlive: keepsOpen)
                return .stream(keepAlive: keepsOpen)
            }
            if keepsOpen {
                output = .ready
                return .keepOpen
            }
            output = .finished
            endInput()
            return .closeAfterFlush
        case .failure:
            output = .finished
            // Lingering waits for the client to close; one that already has needs no wait.
            if isInputClosed { return .closeAfterFlush }
            activity.enter(.lingering, at: now)
            defer { isReadWithheld = false }
            return .linger(resumeReading: isReadWithheld)
        }
    }

    /// A streamed body ended: `complete` when all of it was sent (a cut body leaves the connection out of
    /// step, so it closes). The next request follows on a connection kept open.
    mutating func bodyEnded(complete: Bool, now: NIODeadline, isWritable: Bool) -> Next {
        guard case .streaming(let keepAlive) = output else { return .none }
        guard complete, keepAlive, !(closesWhenDone && queue.isEmpty) else {
            output = .finished
            endInput()
            return .close
        }
        output = .ready
        return continueAfterAnswer(now: now, isWritable: isWritable)
    }

    private mutating func endInput() {
        input = .done
        activity.isInputDone = true
    }

    /// After a kept-alive answer is written: the next request, or after a burst of pipelined answers,
    /// a turn of the event loop first. The engine answers on the loop, each answer a task: a client that
    /// pipelines thousands of requests would otherwise keep the loop in its task phase for the whole
    /// pipeline, and the timers of other connections would fire before their reads.
    mutating func continueAfterAnswer(now: NIODeadline, isWritable: Bool) -> Next {
        answeredInARow += 1
        guard answeredInARow >= Self.pipelineBurst, !queue.isEmpty else {
            if queue.isEmpty { answeredInARow = 0 }
            return startNext(now: now, isWritable: isWritable)
        }
        answeredInARow = 0
        return .answerOnNextTurn
    }

    /// The event loop's next turn, after ``Next/answerOnNextTurn``.
    mutating func nextTurn(now: NIODeadline, isWritable: Bool) -> Next { startNext(now: now, isWritable: isWritable) }

    /// The channel's writability changed (SwiftNIO's water marks on unwritten bytes).
    mutating func writabilityChanged(now: NIODeadline, isWritable: Bool) -> Next {
        // A body that the client stops reading stalls like an unread answer: closed at the idle timeout.
        if case .streaming = output, activity.phase != .lingering {
            if isWritable, activity.phase == .stalled {
                activity.enter(.responding, at: now)
            } else if !isWritable, activity.phase != .stalled {
                activity.enter(.stalled, at: now)
            }
        }
        guard isWritable else { return .none }
        if case .stalled = output {
            output = .ready
            return startNext(now: now, isWritable: isWritable)
        }
        return resumeReadingIfWithheld(isWritable: isWritable) ? .idle(sendContinue: nil, resumeReading: true) : .none
    }

    /// The server is stopping: finish what was received in full, the last answer closing the connection;
    /// a request still arriving is dropped. A body being streamed ends now, at once if its client has
    /// stopped reading (the stop would otherwise wait for a client that may never read again).
    mutating func quiesce(now: NIODeadline, isWritable: Bool = true) -> Next {
        closesWhenDone = true
        if case .receiving = input { activity.enter(.responding, at: now) }
        if case .streamingBody = input {
            // The request being answered cannot be without the rest of its body: it is dropped.
            output = .finished
            endInput()
            return .close
        }
        endInput()
        switch output {
        case .holding:
            output = .finished
            return .close
        case .streaming where !isWritable:
            output = .finished
            return .close
        case .streaming:
            // A body could go on for ever (events): it ends now, and the connection closes after it.
            return .stopBody
        default:
            break
        }
        guard case .ready = output, queue.isEmpty else { return .none }
        output = .finished
        return .close
    }

    /// The client closed its side (a half-close, as `shutdown(SHUT_WR)` does, or a close): what it sent
    /// in full is answered, then the connection closes; a request cut by the close is dropped. While
    /// lingering after an error, this is the close the linger waits for. A client that closes while a
    /// body streams or a timeout fault holds its request is taken for gone (an event stream's reader
    /// that leaves never half-closes first): the connection closes at once.
    mutating func inputClosed(now: NIODeadline) -> Next {
        // The decoder reports a request cut by the close before the close itself: the second is no news.
        guard !isInputClosed else { return .none }
        isInputClosed = true
        if case .streamingBody = input {
            // The body was cut by the close: the request being answered is dropped.
            output = .finished
            endInput()
            return .close
        }
        switch output {
        case .streaming, .holding:
            output = .finished
            endInput()
            return .close
        default:
            break
        }
        if activity.phase == .lingering {
            output = .finished
            return .close
        }
        closesWhenDone = true
        if case .receiving = input { activity.enter(.responding, at: now) }
        endInput()
        guard case .ready = output, queue.isEmpty else { return .none }
        output = .finished
        return .close
    }

    // MARK: Timeouts

    /// When the timer should wake: the current phase's deadline, or sooner, since the phase can change
    /// without the timer knowing (the decoder starts a request), so it looks again at least every
    /// shortest timeout.
    func deadline(now: NIODeadline, limits: ConnectionLimits) -> NIODeadline {
        var check = now + TimeAmount(min(limits.idleTimeout, limits.requestTimeout, limits.lingerTimeout))
        if case .streamingBody(paused: false) = input, let heard = bodyHeardAt {
            check = min(check, heard + TimeAmount(limits.requestTimeout))
        }
        switch activity.phase {
        case .idle, .stalled: return min(activity.since + TimeAmount(limits.idleTimeout), check)
        case .reading: return min(activity.since + TimeAmount(limits.requestTimeout), check)
        case .lingering: return min(activity.since + TimeAmount(limits.lingerTimeout), check)
        case .responding: return check
        }
    }

    /// The timer woke: close an idle, stalled or lingering connection past its time, answer 408 to a
    /// request that has not arrived in time, and end a streamed body none of which came for as long.
    mutating func timerFired(now: NIODeadline, limits: ConnectionLimits, isWritable: Bool) -> Next {
        if case .streamingBody(paused: false) = input, let heard = bodyHeardAt, now >= heard + TimeAmount(limits.requestTimeout) {
            bodyHeardAt = nil
            return .stallBody(after: limits.requestTimeout)
        }
        switch activity.phase {
        case .idle where now >= activity.since + TimeAmount(limits.idleTimeout),
            .stalled where now >= activity.since + TimeAmount(limits.idleTimeout),
            .lingering where now >= activity.since + TimeAmount(limits.lingerTimeout):
            output = .finished
            return .close
        case .reading where now >= activity.since + TimeAmount(limits.requestTimeout):
            let seconds =
                Double(limits.requestTimeout.components.seconds)
                + Double(limits.requestTimeout.components.attoseconds) / 1e18
            let problem = HTTPProblem(
                .requestTimeout, detail: "The request did not arrive in full within \(seconds) seconds",
                extensions: ["timeout": .double(seconds)])
            var request: MockRequest?
            if case .receiving(let current) = input { request = current.request }
            return refuse(problem, request: request, now: now, isWritable: isWritable)
        default:
            return .none
        }
    }

    // MARK: Steps

    /// An answer is under way: the engine's, or a streamed body's.
    private var isBusy: Bool {
        switch output {
        case .answering, .streaming: true
        case .ready, .holding, .stalled, .finished: false
        }
    }

    /// Starts the next queued work, or, with nothing owed, goes idle.
    private mutating func startNext(now: NIODeadline, isWritable: Bool) -> Next {
        switch output {
        case .answering, .streaming, .holding, .finished: return .none
        case .ready, .stalled: break
        }
        if !queue.isEmpty && !isWritable {
            // The answers written so far exceed the channel's high-water mark (64 KiB): the next one
            // waits until the client reads, so one connection holds at most one answer more.
            output = .stalled
            if activity.phase != .lingering { activity.enter(.stalled, at: now) }
            return .none
        }
        guard let work = queue.popFirst() else {
            output = .ready
            if closesWhenDone {
                output = .finished
                return .close
            }
            if activity.phase != .lingering {
                if case .receiving = input {
                    activity.enter(.reading, at: now)
                } else if let since = activity.partialHeadSince {
                    // Part of the next head arrived with or before this answer: its clock is running.
                    activity.enter(.reading, at: since)
                } else {
                    activity.enter(.idle, at: now)
                }
            }
            let sendContinue = continueVersion()
            let resume = resumeReadingIfWithheld(isWritable: isWritable)
            return sendContinue == nil && !resume ? .none : .idle(sendContinue: sendContinue, resumeReading: resume)
        }
        output = .answering(work)
        if case .request = work, activity.phase != .lingering { activity.enter(.responding, at: now) }
        return .answer(work)
    }

    /// `100 Continue` is owed to the request arriving, once every earlier answer is written.
    private mutating func continueIfExpected() -> Next {
        continueVersion().map { .idle(sendContinue: $0, resumeReading: false) } ?? .none
    }

    private mutating func continueVersion() -> HTTPVersion? {
        guard case .ready = output, queue.isEmpty, case .receiving(var current) = input, current.expectsContinue else {
            return nil
        }
        current.expectsContinue = false
        input = .receiving(current)
        return current.version
    }

    /// Takes back a held read if nothing holds it any more.
    private mutating func resumeReadingIfWithheld(isWritable: Bool) -> Bool {
        guard isReadWithheld, isWritable else { return false }
        if isBusy, !queue.isEmpty { return false }
        isReadWithheld = false
        return true
    }
}
