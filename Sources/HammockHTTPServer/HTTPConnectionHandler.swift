import HTTPTypes
import NIOCore
import NIOHTTP1

/// Serves one HTTP/1.1 connection: turns decoded request parts into ``MockRequest``s, answers them in
/// order through `MockServer.respond(to:)`, and enforces ``ConnectionLimits``.
///
/// Every way a connection can end leads to its socket being closed: a request the decoder rejects
/// gets a problem response, then the connection lingers (output closed, input read and discarded)
/// until the client closes or the linger timeout passes. A request that takes too long to arrive gets
/// 408 the same way; an idle connection is closed after the idle timeout.
final class HTTPConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = ByteBuffer
    /// Responses leave as bytes this handler writes itself (see `write`), not as parts for NIO's encoder.
    typealias OutboundOut = ByteBuffer

    /// A request whose head has arrived and whose body is arriving.
    struct Receiving {
        var request: MockRequest
        var version: HTTPVersion
        var keepAlive: Bool
        var expectsContinue: Bool
        /// llhttp stops parsing after this request (it asked for an upgrade).
        var stopsDecoder: Bool
    }

    /// What the connection owes the client, in the order the requests came.
    enum Work {
        case request(MockRequest, version: HTTPVersion, keepAlive: Bool)
        /// A request refused with a problem (or no request at all), after which the connection closes.
        case failure(MockRequest?, HTTPProblem, version: HTTPVersion)
    }

    let server: MockServer
    let limits: ConnectionLimits
    let activity: ConnectionActivity
    private var receiving: Receiving?
    private var queue = CircularBuffer<Work>(initialCapacity: 2)
    private var isResponding = false
    /// After an error nothing more is taken from the input as requests.
    private var isInputDone = false
    /// The server is stopping: close once the responses owed are written.
    private var isQuiescing = false
    /// A `read()` held back while a response is pending (pipelined requests wait in the socket).
    private var hasWithheldRead = false
    /// The next answer waits until the client has read enough of those already written.
    private var isWaitingForWritability = false
    private var timer: Scheduled<Void>?
    /// Nothing more is written: the connection closes after its last response, or lingers after an error.
    private var isFinished = false
    /// `startNext` is running. A response that completes inside it (the engine answered at once) lets
    /// its loop take the next request, instead of calling `startNext` again: no recursion, however
    /// many requests a client pipelines.
    private var isStarting = false
    /// Pipelined requests answered one after another without the loop going back to its sockets.
    private var answeredInARow = 0
    /// After this many, the next pipelined request waits for the loop's next turn (see `continueAfter`).
    static let pipelineBurst = 16
    /// Where the engine answers this connection's requests: its own event loop.
    private var executor: EventLoopTaskExecutor?

    init(server: MockServer, limits: ConnectionLimits, activity: ConnectionActivity) {
        self.server = server
        self.limits = limits
        self.activity = activity
    }

    /// Answers `request` through the engine on this connection's event loop, then calls `done` there.
    func respond(
        context: ChannelHandlerContext, _ answer: @escaping @Sendable () async -> MockResponse,
        then done: @escaping (MockResponse) -> Void
    ) {
        let executor = self.executor ?? EventLoopTaskExecutor(context.eventLoop)
        self.executor = executor
        // Queued on the loop, run after the reads of this turn. `Task.immediate` (answering inside
        // `channelRead`) was measured: about 10 µs more CPU per request under wrk, since each response
        // then leaves alone instead of with the others of the same turn (docs/benchmarks.md).
        // The task ends on the loop (its executor preference), so `done` is called there directly, with
        // no promise and future in between; a task that ends elsewhere hands the response to the loop.
        let loop = context.eventLoop
        let finish = NIOLoopBound(done, eventLoop: loop)
        Task(executorPreference: executor) {
            let response = await answer()
            if loop.inEventLoop {
                finish.value(response)
            } else {
                loop.execute { finish.value(response) }
            }
        }
    }

    // MARK: Lifecycle

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { scheduleTimer(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        scheduleTimer(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        // Finish what was received in full; a request still arriving is dropped.
        isQuiescing = true
        if !isResponding && queue.isEmpty { context.close(promise: nil) }
    }

    // MARK: Input

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isInputDone else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            receiveHead(head, context: context)
        case .body(let buffer):
            guard let current = receiving else { return }
            let limit = server.options.maximumBodySize
            guard current.request.body.count + buffer.readableBytes <= limit else {
                fail(.contentTooLarge(limit: limit), request: current.request, context: context)
                return
            }
            receiving?.request.body.append(contentsOf: buffer.readableBytesView)
        case .end:
            guard let current = receiving else { return }
            receiving = nil
            if current.stopsDecoder { activity.decoderStopped = true }
            queue.append(.request(current.request, version: current.version, keepAlive: current.keepAlive))
            startNext(context: context)
        }
    }

    func receiveHead(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        if head.method == .CONNECT {
            // A tunnel: what follows the head is not HTTP, so the connection ends after the answer.
            fail(Self.connectRefused, request: nil, version: head.version, context: context)
            return
        }
        let request: MockRequest
        switch Self.makeRequest(from: head) {
        case .success(let made): request = made
        case .failure(let problem):
            fail(problem, request: nil, version: head.version, context: context)
            return
        }
        let limit = server.options.maximumBodySize
        if let length = head.headers.first(name: "content-length").flatMap(Int.init), length > limit {
            // Refused before a byte of the body is read; the client is told not to send it.
            fail(.contentTooLarge(limit: limit), request: request, version: head.version, context: context)
            return
        }
        let expectsContinue =
            head.version == .http1_1
            && head.headers.first(name: "expect").map { $0.lowercased() == "100-continue" } == true
        receiving = Receiving(
            request: request, version: head.version, keepAlive: head.isKeepAlive, expectsContinue: expectsContinue,
            stopsDecoder: head.stopsDecoder)
        if activity.phase == .idle { activity.enter(.reading) }
        sendContinueIfExpected(context: context)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !isInputDone else { return }  // a decoder in its error state repeats itself
        guard let parserError = error as? HTTPParserError else {
            context.close(promise: nil)  // the connection itself failed
            return
        }
        fail(Self.problem(for: parserError), request: nil, context: context)
    }

    /// Ends the input with a problem response (through the server's pipeline, like any answer), written
    /// after the responses owed before it.
    func fail(
        _ problem: HTTPProblem, request: MockRequest?, version: HTTPVersion = .http1_1, context: ChannelHandlerContext
    ) {
        isInputDone = true
        activity.isInputDone = true
        let version = receiving?.version ?? version
        receiving = nil
        // No more request timeouts: what is left is answering, then lingering.
        if activity.phase != .lingering { activity.enter(.responding) }
        queue.append(.failure(request, problem, version: version))
        startNext(context: context)
    }

    // MARK: Output

    func read(context: ChannelHandlerContext) {
        // While a response is pending and another request waits behind it, further pipelined requests
        // wait in the socket, not in memory. One answer in progress alone does not hold reads back: a
        // client that waits for its answer sends nothing meanwhile, and withholding the read would cost
        // two `epoll_ctl` calls per request (interest dropped, then restored).
        // Nor are requests read while the client leaves written answers unread (backpressure): a client
        // that pipelines requests for large lists and never reads would otherwise make the server hold
        // every answer.
        if activity.phase != .lingering && ((isResponding && !queue.isEmpty) || !context.channel.isWritable) {
            hasWithheldRead = true
            return
        }
        context.read()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            if isWaitingForWritability {
                isWaitingForWritability = false
                startNext(context: context)
            } else {
                resumeReadingIfWithheld(context: context)
            }
        }
        context.fireChannelWritabilityChanged()
    }

    /// Reads again after `read()` held back, unless what held it back still holds.
    func resumeReadingIfWithheld(context: ChannelHandlerContext) {
        guard hasWithheldRead, context.channel.isWritable, !(isResponding && !queue.isEmpty) else { return }
        hasWithheldRead = false
        context.read()
    }

    func startNext(context: ChannelHandlerContext) {
        guard !isStarting else { return }
        isStarting = true
        defer { isStarting = false }
        while !isResponding && !isFinished {
            if !queue.isEmpty && !context.channel.isWritable {
                // The answers written so far exceed the channel's high-water mark (64 KiB): the next
                // one waits until the client reads, so one connection holds at most one answer more.
                isWaitingForWritability = true
                if activity.phase != .lingering { activity.enter(.stalled) }
                return
            }
            guard let work = queue.popFirst() else {
                if isQuiescing {
                    context.close(promise: nil)
                    return
                }
                if activity.phase != .lingering {
                    if receiving != nil {
                        activity.enter(.reading)
                    } else if let since = activity.partialHeadSince {
                        // Part of the next head arrived with or before this answer: its clock is running.
                        activity.enter(.reading, at: since)
                    } else {
                        activity.enter(.idle)
                    }
                }
                sendContinueIfExpected(context: context)
                resumeReadingIfWithheld(context: context)
                return
            }
            isResponding = true
            switch work {
            case .request(let request, let version, let keepAlive):
                if activity.phase != .lingering { activity.enter(.responding) }
                let server = self.server
                respond(context: context, { await server.respond(to: request) }) { response in
                    self.isResponding = false
                    let keepAlive = keepAlive && !self.isQuiescing && response.headerFields[.connection] != "close"
                    self.write(response, version: version, keepAlive: keepAlive, context: context)
                    if keepAlive {
                        self.continueAfterAnswer(context: context)
                    } else {
                        self.closeAfterFlush(context: context)
                    }
                }
            case .failure(let request, let problem, let version):
                let server = self.server
                respond(context: context, { await server.respond(to: request, rejectedWith: problem) }) { response in
                    self.isResponding = false
                    self.write(response, version: version, keepAlive: false, context: context)
                    self.linger(context: context)
                }
            }
        }
    }

    /// Starts the next queued request, or, after a burst of pipelined answers, lets the loop serve its
    /// other connections first. The engine answers on the event loop, and each answer is a task: a
    /// client that pipelines thousands of requests would otherwise keep the loop in its task phase
    /// for the whole pipeline, and the timers of other connections would fire before their reads.
    func continueAfterAnswer(context: ChannelHandlerContext) {
        answeredInARow += 1
        guard answeredInARow >= Self.pipelineBurst, !queue.isEmpty else {
            if queue.isEmpty { answeredInARow = 0 }
            startNext(context: context)
            return
        }
        answeredInARow = 0
        // A timer a millisecond ahead is not due in this task phase: the loop polls its sockets first.
        context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(1)) {
            guard context.channel.isActive else { return }
            self.startNext(context: context)
        }
    }

    /// Writes a response as one buffer: status line, header fields, framing headers, body; one write
    /// and one flush. HTTPTypes has already made every name a token and every value free of CR, LF and
    /// NUL, so the fields are written as they are.
    func write(_ response: MockResponse, version: HTTPVersion, keepAlive: Bool, context: ChannelHandlerContext) {
        let code = Int(response.status.code)
        // The engine already takes the body off these statuses; a body written here would be read as
        // the start of the next response.
        let body = MockResponse.allowsBody(response.status) ? response.body : []
        var size = 64 + body.count
        for field in response.headerFields { size += field.name.rawName.utf8.count + field.value.utf8.count + 4 }
        var buffer = context.channel.allocator.buffer(capacity: size)
        Self.writeStatusLine(version: version, status: response.status, into: &buffer)
        for field in response.headerFields where field.name != .connection {
            buffer.writeString(field.name.rawName)
            buffer.writeStaticString(": ")
            buffer.writeString(field.value)
            buffer.writeStaticString("\r\n")
        }
        // RFC 9110 §8.6: no Content-Length on 1xx and 204; a 304's, if any, is the engine's.
        if code >= 200 && code != 204 && code != 304 && response.headerFields[.contentLength] == nil {
            buffer.writeStaticString("Content-Length: ")
            buffer.writeString(String(body.count))
            buffer.writeStaticString("\r\n")
        }
        if !keepAlive {
            buffer.writeStaticString("Connection: close\r\n")
        } else if version == .http1_0 {
            buffer.writeStaticString("Connection: keep-alive\r\n")
        }
        buffer.writeStaticString("\r\n")
        buffer.writeBytes(body)
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
    }

    /// `HTTP/1.1 200 OK`: the request's version (1.0 or 1.1; the decoder accepts no other), the code and
    /// its reason phrase.
    static func writeStatusLine(version: HTTPVersion, status: HTTPResponse.Status, into buffer: inout ByteBuffer) {
        let isOneZero = version.major == 1 && version.minor == 0
        if status.code == 200 && status.reasonPhrase == "OK" {
            buffer.writeStaticString(isOneZero ? "HTTP/1.0 200 OK\r\n" : "HTTP/1.1 200 OK\r\n")
            return
        }
        if isOneZero {
            buffer.writeStaticString("HTTP/1.0 ")
        } else {
            buffer.writeStaticString("HTTP/1.1 ")
        }
        buffer.writeString(String(status.code))
        buffer.writeStaticString(" ")
        buffer.writeString(status.reasonPhrase)
        buffer.writeStaticString("\r\n")
    }

    /// `100 Continue` for a request that asked for it, once every earlier response is written.
    func sendContinueIfExpected(context: ChannelHandlerContext) {
        guard !isResponding, queue.isEmpty, let current = receiving, current.expectsContinue else { return }
        receiving?.expectsContinue = false
        var buffer = context.channel.allocator.buffer(capacity: 32)
        Self.writeStatusLine(version: current.version, status: .continue, into: &buffer)
        buffer.writeStaticString("\r\n")
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
    }

    func closeAfterFlush(context: ChannelHandlerContext) {
        isInputDone = true
        isFinished = true
        context.flush()
        context.close(promise: nil)
    }

    /// After an error: stop writing, then read and discard what the client still sends (closing at
    /// once could reset the connection before the client reads the error) until it closes or the
    /// linger timeout passes.
    func linger(context: ChannelHandlerContext) {
        isFinished = true
        activity.enter(.lingering)
        timer?.cancel()
        timer = nil
        scheduleTimer(context: context)
        context.close(mode: .output, promise: nil)
        if hasWithheldRead {
            hasWithheldRead = false
            context.read()
        }
    }

    // MARK: Timeouts

    /// Wakes at the current phase's deadline, or sooner: the phase can change without the timer
    /// knowing (the decoder starts a request), so it looks again at least every shortest timeout.
    func scheduleTimer(context: ChannelHandlerContext) {
        guard timer == nil else { return }
        let now = NIODeadline.now()
        let check = now + TimeAmount(min(limits.idleTimeout, limits.requestTimeout, limits.lingerTimeout))
        let deadline: NIODeadline
        switch activity.phase {
        case .idle, .stalled: deadline = activity.since + TimeAmount(limits.idleTimeout)
        case .reading: deadline = activity.since + TimeAmount(limits.requestTimeout)
        case .lingering: deadline = activity.since + TimeAmount(limits.lingerTimeout)
        case .responding: deadline = check
        }
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: min(deadline, check)) {
            self.timer = nil
            self.timerFired(context: context)
        }
    }

    func timerFired(context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        let now = NIODeadline.now()
        switch activity.phase {
        case .idle where now >= activity.since + TimeAmount(limits.idleTimeout),
            .stalled where now >= activity.since + TimeAmount(limits.idleTimeout):
            context.close(promise: nil)
            return
        case .lingering where now >= activity.since + TimeAmount(limits.lingerTimeout):
            context.close(promise: nil)
            return
        case .reading where now >= activity.since + TimeAmount(limits.requestTimeout):
            let seconds =
                Double(limits.requestTimeout.components.seconds)
                + Double(limits.requestTimeout.components.attoseconds) / 1e18
            let problem = HTTPProblem(
                .requestTimeout, detail: "The request did not arrive in full within \(seconds) seconds",
                extensions: ["timeout": .double(seconds)])
            fail(problem, request: receiving?.request, context: context)
        default:
            break
        }
        scheduleTimer(context: context)
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        self = nanoseconds.overflow ? .nanoseconds(.max) : .nanoseconds(nanoseconds.partialValue + attoseconds / 1_000_000_000)
    }
}
