import HTTPTypes
import NIOCore
import NIOHTTP1
import Synchronization

/// One HTTP/1.1 connection's exchanges, or one HTTP/2 stream's: turns decoded request parts into
/// ``MockRequest``s, answers them in order through `MockServer.respond(to:)`, and enforces
/// ``ConnectionLimits``. `Wire` says how answers are encoded (``HTTP1Wire``, ``HTTP2Wire``,
/// ``HTTP2FrameWire``) and where they go (its `Context`: a channel's handler context, or a stream of a
/// connection served from frames); the rules are the same for all.
///
/// This is the I/O shell: what the connection is doing lives in ``HTTPConnectionStateMachine``, whose
/// transitions say what to do next (answer, write, read, close); this class only carries that out with
/// SwiftNIO. Its events come from ``HTTPConnectionHandler`` (a channel) or ``HTTP2StreamRouter`` (a
/// stream without a channel). Every way a connection can end leads to its socket being closed: a request the
/// decoder rejects gets a problem response, then the connection lingers (output closed, input read and
/// discarded) until the client closes or the linger timeout passes. A request that takes too long to
/// arrive gets 408 the same way; an idle connection is closed after the idle timeout.
final class HTTPExchange<Wire: ConnectionWire> {
    typealias Context = Wire.Context
    typealias Work = HTTPConnectionStateMachine.Work

    let server: MockServer
    let limits: ConnectionLimits
    /// What this connection's decoder and handler tell each other.
    let activity: ConnectionActivity
    private var state: HTTPConnectionStateMachine
    private var timer: Scheduled<Void>?
    /// The client's address and port, for each request's context.
    private var peer: String?
    /// Where the engine answers this connection's requests: its own event loop.
    private var executor: EventLoopTaskExecutor?
    /// The task sending a streamed body, cancelled when the client goes away or the server stops.
    private var streaming: Task<Void, Never>?
    /// The body of the request being answered while it arrives, if one is (a body over the limit, for a
    /// route that takes streamed bodies).
    private var requestBody: RequestBodyStream?

    /// The connection runs over TLS.
    let isSecure: Bool

    init(
        server: MockServer, limits: ConnectionLimits, activity: ConnectionActivity, isSecure: Bool,
        executor: EventLoopTaskExecutor? = nil
    ) {
        self.server = server
        self.limits = limits
        self.activity = activity
        self.isSecure = isSecure
        self.executor = executor
        state = HTTPConnectionStateMachine(maximumBodySize: server.options.maximumBodySize, activity: activity)
    }

    // MARK: Lifecycle

    /// The connection (or stream) is open: its timer starts.
    func started(context: Context) {
        notePeer(context: context)
        scheduleTimer(context: context)
    }

    private func notePeer(context: Context) {
        guard peer == nil, let address = context.peerAddress, let ip = address.ipAddress else { return }
        let host = ip.contains(":") ? "[\(ip)]" : ip
        peer = address.port.map { "\(host):\($0)" } ?? host
    }

    /// The connection (or stream) has closed: nothing more is written, a streamed body stops.
    func ended() {
        cancelTimer()
        streaming?.cancel()
        cutRequestBody()
    }

    /// The client will send nothing more.
    func inputClosed(context: Context) {
        perform(state.inputClosed(now: .now()), context: context)
    }

    /// The server is stopping.
    func quiesce(context: Context) {
        perform(state.quiesce(now: .now(), isWritable: context.isWritable), context: context)
    }

    // MARK: Input

    /// A decoded part of a request.
    func received(_ part: HTTPServerRequestPart, context: Context) {
        let isWritable = context.isWritable
        let next: HTTPConnectionStateMachine.Next
        switch part {
        case .head(let head):
            next = receiveHead(head, isWritable: isWritable)
        case .body(let buffer):
            next = state.receivedBody(buffer, now: .now(), isWritable: isWritable)
        case .end:
            next = state.receivedEnd(now: .now(), isWritable: isWritable)
        }
        perform(next, context: context)
    }

    func receiveHead(_ head: HTTPRequestHead, isWritable: Bool) -> HTTPConnectionStateMachine.Next {
        let now = NIODeadline.now()
        if head.method == .CONNECT {
            // A tunnel: what follows the head is not HTTP, so the connection ends after the answer.
            return state.refuse(.connectRefused, request: nil, version: head.version, now: now, isWritable: isWritable)
        }
        switch head.mockRequest() {
        case .failure(let problem):
            return state.refuse(problem, request: nil, version: head.version, now: now, isWritable: isWritable)
        case .success(var request):
            request.context = server.makeContext(arrival: .now, peer: peer, isSecure: isSecure)
            let expectsContinue =
                head.version == .http1_1
                && head.headers.first(name: "expect").map { $0.lowercased() == "100-continue" } == true
            var receiving = HTTPConnectionStateMachine.Receiving(
                request: request, version: head.version, keepAlive: head.isKeepAlive, expectsContinue: expectsContinue,
                stopsDecoder: head.stopsDecoder)
            let declared = head.headers.first(name: "content-length").flatMap(Int.init)
            // Only a body that can pass the limit asks the routes: one declared larger, or one of no
            // declared length (chunked; HTTP/2 need not declare one). A GET or HEAD carries none.
            let mayPassLimit =
                declared.map { $0 > state.maximumBodySize } ?? (head.method != .GET && head.method != .HEAD)
            if mayPassLimit, !receiving.stopsDecoder, server.takesStreamedBody(request) {
                receiving.takesStreamedBody = true
            }
            return state.receivedHead(receiving, declaredLength: declared, now: now, isWritable: isWritable)
        }
    }

    /// The decoder (or the connection) failed.
    func errorCaught(_ error: any Error, context: Context) {
        guard state.isTakingRequests else { return }  // a decoder in its error state repeats itself
        let problem: HTTPProblem
        switch error {
        case HTTPParserError.invalidEOFState:
            // The client closed its side in the middle of a request: nothing to answer (the close follows).
            perform(state.inputClosed(now: .now()), context: context)
            return
        case let parserError as HTTPParserError:
            problem = parserError.problem
        case is ByteToMessageDecoderError.PayloadTooLargeError:
            problem = HTTPProblem(.requestHeaderFieldsTooLarge, detail: "The request's head is too large")
        default:
            context.close(mode: .all, promise: nil)  // the connection itself failed
            return
        }
        perform(state.refuse(problem, request: nil, now: .now(), isWritable: context.isWritable), context: context)
    }

    /// Whether the input may be read now.
    func shouldRead(context: Context) -> Bool { state.shouldRead(isWritable: context.isWritable) }

    func writabilityChanged(context: Context) {
        perform(state.writabilityChanged(now: .now(), isWritable: context.isWritable), context: context)
    }

    // MARK: Output

    /// Carries out what a transition asked for.
    func perform(_ next: HTTPConnectionStateMachine.Next, context: Context) {
        switch next {
        case .none:
            break
        case .answer(let work):
            answer(work, context: context)
        case .answerOnNextTurn:
            // A timer a millisecond ahead is not due in this task phase: the loop polls its sockets first.
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(1)) {
                guard context.isOpen else { return }
                self.perform(self.state.nextTurn(now: .now(), isWritable: context.isWritable), context: context)
            }
        case .close:
            context.close(mode: .all, promise: nil)
        case .idle(let sendContinue, let resumeReading):
            if let sendContinue { Wire.writeContinue(version: sendContinue, context: context) }
            if resumeReading { context.read() }
        case .stopBody:
            // The producer's next write throws `CancellationError`; the body ends as sent so far (an
            // event stream gets its last chunk) and the connection closes.
            streaming?.cancel()
        case .answerWhileReceiving(let work, let received, let length, let sendContinue):
            guard case .request(var request, let version, let keepAlive) = work else { return }
            let loop = context.eventLoop
            let bound = NIOLoopBound((handler: self, context: context), eventLoop: loop)
            let body = RequestBodyStream(length: length) {
                // The reader took what waited, on whatever thread it runs: the read resumes on the loop.
                loop.execute {
                    let (handler, context) = bound.value
                    guard context.isOpen else { return }
                    handler.perform(
                        handler.state.bodyReaderReady(now: .now(), isWritable: context.isWritable), context: context)
                }
            }
            requestBody = body
            if !body.yield(received) { state.bodyReaderFull() }
            request.bodyStream = body
            if let sendContinue { Wire.writeContinue(version: sendContinue, context: context) }
            answer(.request(request, version: version, keepAlive: keepAlive), context: context)
        case .receiveBody(let buffer):
            guard let requestBody else { return }
            if !requestBody.yield(Array(buffer.readableBytesView)) { state.bodyReaderFull() }
        case .endBody:
            requestBody?.finish(complete: true)
            requestBody = nil
        case .stallBody(let after):
            requestBody?.stall(after: after)
            requestBody = nil
        }
        cutRequestBodyIfInputStopped()
    }

    /// Ends the body being handed over as cut short: the connection closed, the server stopped, or the
    /// answer came before the body ended (its reader then stops waiting for the rest).
    private func cutRequestBody() {
        requestBody?.finish(complete: false)
        requestBody = nil
    }

    /// After a transition: a body still being handed over whose input the state machine has ended is cut.
    private func cutRequestBodyIfInputStopped() {
        if requestBody != nil, !state.isStreamingBody { cutRequestBody() }
    }

    /// Answers `work` through the engine, on this connection's event loop, then writes the answer.
    func answer(_ work: Work, context: Context) {
        let executor = self.executor ?? EventLoopTaskExecutor(context.eventLoop)
        self.executor = executor
        let server = self.server
        let answer: @Sendable () async -> MockResponse
        switch work {
        case .request(let request, _, _):
            answer = { await server.respond(to: request) }
        case .failure(let request, let problem, _):
            answer = { await server.respond(to: request, rejectedWith: problem) }
        }
        // Queued on the loop, run after the reads of this turn. `Task.immediate` (answering inside
        // `channelRead`) was measured: about 10 µs more CPU per request under wrk, since each response
        // then leaves alone instead of with the others of the same turn (docs/benchmarks.md).
        // The task ends on the loop (its executor preference), so the answer is written there directly,
        // with no promise and future in between; a task that ends elsewhere hands it to the loop.
        let loop = context.eventLoop
        let finish = NIOLoopBound(
            { (response: MockResponse) in self.write(response, for: work, context: context) }, eventLoop: loop)
        Task(executorPreference: executor) {
            let response = await answer()
            if loop.inEventLoop {
                finish.value(response)
            } else {
                loop.execute { finish.value(response) }
            }
        }
    }

    /// Writes the engine's answer to `work`, then does what the state machine says follows it.
    func write(_ response: MockResponse, for work: Work, context: Context) {
        var response = response
        if let session = response.webSocket, response.status == .switchingProtocols, case .request(let request, _, _) = work,
            case .normal = response.delivery
        {
            // The connection is the WebSocket's from here: this handler and the request decoder leave it.
            cancelTimer()
            if Wire.switchToWebSocket(
                response, session: session, request: request, server: server, limits: limits, activity: activity,
                context: context)
            {
                return
            }
            response =
                HTTPProblem(
                    .notImplemented, detail: "WebSocket over HTTP/2 (RFC 8441) is not served here; connect over HTTP/1.1"
                ).response
        }
        let writing = state.answered(response, now: .now())
        cutRequestBodyIfInputStopped()
        switch writing {
        case .keepOpen:
            write(response, version: work.version, keepAlive: true, context: context)
            perform(state.continueAfterAnswer(now: .now(), isWritable: context.isWritable), context: context)
        case .closeAfterFlush:
            write(response, version: work.version, keepAlive: false, context: context)
            context.flush()
            context.close(mode: .all, promise: nil)
        case .linger(let resumeReading):
            write(response, version: work.version, keepAlive: false, context: context)
            guard Wire.stopInput(context: context) else { return }
            // The linger timeout starts now.
            cancelTimer()
            scheduleTimer(context: context)
            if resumeReading { context.read() }
        case .stream(let keepAlive):
            var isHead = false
            if case .request(let request, _, _) = work { isHead = request.method == .head }
            startStreaming(response, version: work.version, keepAlive: keepAlive, isHead: isHead, context: context)
        case .hold:
            break  // a timeout fault: the client waits until it gives up or the server stops
        case .abort(let fault):
            Wire.abort(fault, context: context)
        }
    }

    /// Writes and flushes a whole answer.
    func write(_ response: MockResponse, version: HTTPVersion, keepAlive: Bool, context: Context) {
        Wire.writeAnswer(response, version: version, keepAlive: keepAlive, headOnly: false, context: context)
    }

    // MARK: Streamed bodies

    /// Writes an answer's head, then its body as ``MockServer/transmission(of:)`` gives it (streamed,
    /// throttled or cut), each chunk once the one before has reached the socket; then tells the state
    /// machine, which keeps the connection open or closes it. Meanwhile the state machine is streaming:
    /// no timeout, pipelined requests wait.
    func startStreaming(
        _ response: MockResponse, version: HTTPVersion, keepAlive: Bool, isHead: Bool, context: Context
    ) {
        let transmission = server.transmission(of: response)
        // A HEAD answer keeps the Content-Length the engine gave it, and sends no body.
        let hasBody = MockResponse.allowsBody(response.status) && !isHead
        let length = hasBody ? transmission.length : nil
        let chunked = hasBody && length == nil && Wire.chunksBodies(version: version)
        var head = response
        head.body = []
        if let length {
            head.headerFields[.contentLength] = String(length)
        } else if hasBody {
            head.headerFields[.contentLength] = nil
            if chunked { head.headerFields[.transferEncoding] = "chunked" }
        }
        Wire.writeAnswer(head, version: version, keepAlive: keepAlive, headOnly: true, context: context)
        guard hasBody else {
            // The head is the whole answer (HEAD, 204, 304): HTTP/1.1 has said all; HTTP/2 ends the stream.
            Wire.finishBody(chunked: false, complete: !transmission.isTruncated, context: context)
            perform(
                state.bodyEnded(complete: !transmission.isTruncated, now: .now(), isWritable: context.isWritable),
                context: context)
            return
        }
        let loop = context.eventLoop
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: loop)
        let executor = self.executor ?? EventLoopTaskExecutor(loop)
        self.executor = executor
        streaming = Task(executorPreference: executor) {
            let sent = await StreamedBody.send(transmission.body, upTo: length, chunked: chunked, loop: loop, bound: bound)
            // Cut short: a truncate fault, a producer that failed, or fewer bytes than announced.
            let complete = sent.isComplete && !transmission.isTruncated && (length == nil || sent.bytes == length)
            loop.execute {
                let (handler, context) = bound.value
                handler.finishStreaming(chunked: chunked, complete: complete, context: context)
            }
        }
    }

    func writeChunk(_ bytes: [UInt8], chunked: Bool, context: Context) -> EventLoopFuture<Void> {
        guard context.isOpen else { return context.eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel) }
        return Wire.writeChunk(bytes, chunked: chunked, context: context)
    }

    /// The streamed body has ended: its last chunk if it is complete, then what the state machine says
    /// (the next request, or the close).
    func finishStreaming(chunked: Bool, complete: Bool, context: Context) {
        streaming = nil
        guard context.isOpen else { return }
        Wire.finishBody(chunked: chunked, complete: complete, context: context)
        let next = state.bodyEnded(complete: complete, now: .now(), isWritable: context.isWritable)
        if case .close = next { context.flush() }
        perform(next, context: context)
    }

    // MARK: Timeouts

    func scheduleTimer(context: Context) {
        guard timer == nil else { return }
        let deadline = state.deadline(now: .now(), limits: limits)
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            self.timer = nil
            guard context.isOpen else { return }
            self.perform(
                self.state.timerFired(now: .now(), limits: self.limits, isWritable: context.isWritable),
                context: context)
            if context.isOpen { self.scheduleTimer(context: context) }
        }
    }

    func cancelTimer() {
        timer?.cancel()
        timer = nil
    }
}

/// Sending a streamed body from its task.
enum StreamedBody {
    /// Sends `body` to the connection: at most `limit` bytes. Complete unless the producer threw (the
    /// server's stop, which cancels it, counts as an end) or the client went away.
    static func send<Wire: ConnectionWire>(
        _ body: StreamingBody, upTo limit: Int?, chunked: Bool, loop: any EventLoop,
        bound: NIOLoopBound<(handler: HTTPExchange<Wire>, context: Wire.Context)>
    ) async -> Sent {
        let counter = ByteCounter(limit: limit)
        do {
            try await body.write(
                to: BodyWriter { chunk in
                    let allowed = counter.take(chunk.count)
                    guard allowed > 0 else { throw ByteCounter.Full() }
                    let piece = allowed == chunk.count ? chunk : Array(chunk[..<allowed])
                    let written = loop.flatSubmit { () -> EventLoopFuture<Void> in
                        let (handler, context) = bound.value
                        return handler.writeChunk(piece, chunked: chunked, context: context)
                    }
                    try await written.get()
                })
            return Sent(bytes: counter.total, isComplete: true)
        } catch is ByteCounter.Full {
            return Sent(bytes: counter.total, isComplete: true)
        } catch is CancellationError {
            return Sent(bytes: counter.total, isComplete: true)
        } catch {
            return Sent(bytes: counter.total, isComplete: false)
        }
    }

    /// How a streamed body went: the bytes sent, and whether the producer finished (or was stopped by
    /// the server) rather than failed.
    struct Sent: Sendable {
        var bytes: Int
        var isComplete: Bool
    }

}

/// Counts a streamed body's bytes against its announced length. Used by one task at a time; the lock
/// only satisfies `@Sendable`.
final class ByteCounter: Sendable {
    struct Full: Error {}

    private let state: Mutex<Int>
    let limit: Int?

    init(limit: Int?) {
        self.limit = limit
        state = Mutex(0)
    }

    var total: Int { state.withLock { $0 } }

    /// How many of `count` more bytes fit; counts them.
    func take(_ count: Int) -> Int {
        state.withLock { total in
            let allowed = limit.map { min(count, max($0 - total, 0)) } ?? count
            total += allowed
            return allowed
        }
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        self = nanoseconds.overflow ? .nanoseconds(.max) : .nanoseconds(nanoseconds.partialValue + attoseconds / 1_000_000_000)
    }
}
