import HTTPTypes
import NIOCore
import NIOHTTP1
import Synchronization

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Serves one HTTP/1.1 connection: turns decoded request parts into ``MockRequest``s, answers them in
/// order through `MockServer.respond(to:)`, and enforces ``ConnectionLimits``.
///
/// This is the I/O shell: what the connection is doing lives in ``HTTPConnectionStateMachine``, whose
/// transitions say what to do next (answer, write, read, close); this handler only carries that out
/// with SwiftNIO. Every way a connection can end leads to its socket being closed: a request the
/// decoder rejects gets a problem response, then the connection lingers (output closed, input read and
/// discarded) until the client closes or the linger timeout passes. A request that takes too long to
/// arrive gets 408 the same way; an idle connection is closed after the idle timeout.
final class HTTPConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = ByteBuffer
    /// Responses leave as bytes this handler writes itself (see `write`), not as parts for NIO's encoder.
    typealias OutboundOut = ByteBuffer
    typealias Work = HTTPConnectionStateMachine.Work

    let server: MockServer
    let limits: ConnectionLimits
    private var state: HTTPConnectionStateMachine
    private var timer: Scheduled<Void>?
    /// The client's address and port, for each request's context.
    private var peer: String?
    /// Where the engine answers this connection's requests: its own event loop.
    private var executor: EventLoopTaskExecutor?
    /// The task sending a streamed body, cancelled when the client goes away or the server stops.
    private var streaming: Task<Void, Never>?

    init(server: MockServer, limits: ConnectionLimits, activity: ConnectionActivity) {
        self.server = server
        self.limits = limits
        state = HTTPConnectionStateMachine(maximumBodySize: server.options.maximumBodySize, activity: activity)
    }

    // MARK: Lifecycle

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive {
            notePeer(context: context)
            scheduleTimer(context: context)
        }
    }

    func channelActive(context: ChannelHandlerContext) {
        notePeer(context: context)
        scheduleTimer(context: context)
        context.fireChannelActive()
    }

    private func notePeer(context: ChannelHandlerContext) {
        guard peer == nil, let address = context.channel.remoteAddress, let ip = address.ipAddress else { return }
        let host = ip.contains(":") ? "[\(ip)]" : ip
        peer = address.port.map { "\(host):\($0)" } ?? host
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelTimer()
        streaming?.cancel()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { cancelTimer() }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            perform(state.inputClosed(now: .now()), context: context)
            return
        }
        guard event is ChannelShouldQuiesceEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        perform(state.quiesce(now: .now(), isWritable: context.channel.isWritable), context: context)
    }

    // MARK: Input

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let isWritable = context.channel.isWritable
        let next: HTTPConnectionStateMachine.Next
        switch unwrapInboundIn(data) {
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
            return state.refuse(Self.connectRefused, request: nil, version: head.version, now: now, isWritable: isWritable)
        }
        switch Self.makeRequest(from: head) {
        case .failure(let problem):
            return state.refuse(problem, request: nil, version: head.version, now: now, isWritable: isWritable)
        case .success(var request):
            request.context = server.makeContext(arrival: .now, peer: peer)
            let expectsContinue =
                head.version == .http1_1
                && head.headers.first(name: "expect").map { $0.lowercased() == "100-continue" } == true
            let receiving = HTTPConnectionStateMachine.Receiving(
                request: request, version: head.version, keepAlive: head.isKeepAlive, expectsContinue: expectsContinue,
                stopsDecoder: head.stopsDecoder)
            let declared = head.headers.first(name: "content-length").flatMap(Int.init)
            return state.receivedHead(receiving, declaredLength: declared, now: now, isWritable: isWritable)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard state.isTakingRequests else { return }  // a decoder in its error state repeats itself
        let problem: HTTPProblem
        switch error {
        case HTTPParserError.invalidEOFState:
            // The client closed its side in the middle of a request: nothing to answer (the close follows).
            perform(state.inputClosed(now: .now()), context: context)
            return
        case let parserError as HTTPParserError:
            problem = Self.problem(for: parserError)
        case is ByteToMessageDecoderError.PayloadTooLargeError:
            problem = HTTPProblem(.requestHeaderFieldsTooLarge, detail: "The request's head is too large")
        default:
            context.close(promise: nil)  // the connection itself failed
            return
        }
        perform(state.refuse(problem, request: nil, now: .now(), isWritable: context.channel.isWritable), context: context)
    }

    func read(context: ChannelHandlerContext) {
        if state.shouldRead(isWritable: context.channel.isWritable) { context.read() }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        perform(state.writabilityChanged(now: .now(), isWritable: context.channel.isWritable), context: context)
        context.fireChannelWritabilityChanged()
    }

    // MARK: Output

    /// Carries out what a transition asked for.
    func perform(_ next: HTTPConnectionStateMachine.Next, context: ChannelHandlerContext) {
        switch next {
        case .none:
            break
        case .answer(let work):
            answer(work, context: context)
        case .answerOnNextTurn:
            // A timer a millisecond ahead is not due in this task phase: the loop polls its sockets first.
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(1)) {
                guard context.channel.isActive else { return }
                self.perform(self.state.nextTurn(now: .now(), isWritable: context.channel.isWritable), context: context)
            }
        case .close:
            context.close(promise: nil)
        case .idle(let sendContinue, let resumeReading):
            if let sendContinue { writeContinue(version: sendContinue, context: context) }
            if resumeReading { context.read() }
        case .stopBody:
            // The producer's next write throws `CancellationError`; the body ends as sent so far (an
            // event stream gets its last chunk) and the connection closes.
            streaming?.cancel()
        }
    }

    /// Answers `work` through the engine, on this connection's event loop, then writes the answer.
    func answer(_ work: Work, context: ChannelHandlerContext) {
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
    func write(_ response: MockResponse, for work: Work, context: ChannelHandlerContext) {
        let writing = state.answered(response, now: .now())
        switch writing {
        case .keepOpen:
            write(response, version: work.version, keepAlive: true, context: context)
            perform(state.continueAfterAnswer(now: .now(), isWritable: context.channel.isWritable), context: context)
        case .closeAfterFlush:
            write(response, version: work.version, keepAlive: false, context: context)
            context.flush()
            context.close(promise: nil)
        case .linger(let resumeReading):
            write(response, version: work.version, keepAlive: false, context: context)
            // Closing at once could reset the connection before the client reads the error.
            cancelTimer()
            scheduleTimer(context: context)
            context.close(mode: .output, promise: nil)
            if resumeReading { context.read() }
        case .stream(let keepAlive):
            var isHead = false
            if case .request(let request, _, _) = work { isHead = request.method == .head }
            startStreaming(response, version: work.version, keepAlive: keepAlive, isHead: isHead, context: context)
        case .hold:
            break  // a timeout fault: the client waits until it gives up or the server stops
        case .abort(let fault):
            abort(fault, context: context)
        }
    }

    /// Fails the connection as a connection fault says.
    func abort(_ fault: ConnectionFault, context: ChannelHandlerContext) {
        switch fault {
        case .reset:
            // SO_LINGER with a zero timeout makes close() send RST instead of FIN.
            guard let socket = context.channel as? any SocketOptionProvider else {
                context.close(promise: nil)
                return
            }
            socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).hop(to: context.eventLoop).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        case .malformed:
            var buffer = context.channel.allocator.buffer(capacity: ConnectionFault.malformedBytes.count)
            buffer.writeBytes(ConnectionFault.malformedBytes)
            context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
            context.close(promise: nil)
        case .drop, .empty, .timeout, .truncate:
            context.close(promise: nil)
        }
    }

    // MARK: Streamed bodies

    /// Writes an answer's head, then its body as ``MockServer/transmission(of:)`` gives it (streamed,
    /// throttled or cut), each chunk once the one before has reached the socket; then tells the state
    /// machine, which keeps the connection open or closes it. Meanwhile the state machine is streaming:
    /// no timeout, pipelined requests wait.
    func startStreaming(
        _ response: MockResponse, version: HTTPVersion, keepAlive: Bool, isHead: Bool, context: ChannelHandlerContext
    ) {
        let transmission = server.transmission(of: response)
        // A HEAD answer keeps the Content-Length the engine gave it, and sends no body.
        let hasBody = MockResponse.allowsBody(response.status) && !isHead
        let length = hasBody ? transmission.length : nil
        // HTTP/1.0 has no chunked encoding: a body of unknown length ends where the connection does.
        let chunked = hasBody && length == nil && version != .http1_0
        var head = response
        head.body = []
        if let length {
            head.headerFields[.contentLength] = String(length)
        } else if hasBody {
            head.headerFields[.contentLength] = nil
            if chunked { head.headerFields[.transferEncoding] = "chunked" }
        }
        write(head, version: version, keepAlive: keepAlive, bodyLength: nil, context: context)
        guard hasBody else {
            perform(
                state.bodyEnded(complete: !transmission.isTruncated, now: .now(), isWritable: context.channel.isWritable),
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

    func writeChunk(_ bytes: [UInt8], chunked: Bool, context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        guard context.channel.isActive else { return context.eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel) }
        var buffer = context.channel.allocator.buffer(capacity: bytes.count + 16)
        if chunked {
            buffer.writeString(String(bytes.count, radix: 16))
            buffer.writeStaticString("\r\n")
        }
        buffer.writeBytes(bytes)
        if chunked { buffer.writeStaticString("\r\n") }
        return context.writeAndFlush(wrapOutboundOut(buffer))
    }

    /// The streamed body has ended: its last chunk if it is complete, then what the state machine says
    /// (the next request, or the close).
    func finishStreaming(chunked: Bool, complete: Bool, context: ChannelHandlerContext) {
        streaming = nil
        guard context.channel.isActive else { return }
        if chunked, complete {
            var buffer = context.channel.allocator.buffer(capacity: 5)
            buffer.writeStaticString("0\r\n\r\n")
            context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        }
        let next = state.bodyEnded(complete: complete, now: .now(), isWritable: context.channel.isWritable)
        if case .close = next { context.flush() }
        perform(next, context: context)
    }

    /// Writes a response as one buffer: status line, header fields, framing headers, body; one write
    /// and one flush. HTTPTypes has already made every name a token and every value free of CR, LF and
    /// NUL, so the fields are written as they are.
    func write(_ response: MockResponse, version: HTTPVersion, keepAlive: Bool, context: ChannelHandlerContext) {
        write(response, version: version, keepAlive: keepAlive, bodyLength: -1, context: context)
    }

    /// - Parameter bodyLength: `nil` for a streamed body (no `Content-Length`); else the body is written.
    func write(
        _ response: MockResponse, version: HTTPVersion, keepAlive: Bool, bodyLength: Int?, context: ChannelHandlerContext
    ) {
        // One decision for the engine and the wire (MockResponse.framing): the engine already takes the
        // body off the statuses that forbid one; a body written here would be read as the next response.
        let framing = MockResponse.framing(for: response.status)
        let body = framing == .body ? response.body : []
        // A 204's or 205's own Content-Length is not written: the framing says what it must be.
        let keepsLength = framing == .body || framing == .representationLength
        var size = 64 + body.count
        for field in response.headerFields { size += field.name.rawName.utf8.count + field.value.utf8.count + 4 }
        var buffer = context.channel.allocator.buffer(capacity: size)
        Self.writeStatusLine(version: version, status: response.status, into: &buffer)
        for field in response.headerFields where field.name != .connection && (keepsLength || field.name != .contentLength) {
            buffer.writeString(field.name.rawName)
            buffer.writeStaticString(": ")
            buffer.writeString(field.value)
            buffer.writeStaticString("\r\n")
        }
        switch framing {
        case .body where bodyLength != nil && response.headerFields[.contentLength] == nil:
            buffer.writeStaticString("Content-Length: ")
            buffer.writeString(String(body.count))
            buffer.writeStaticString("\r\n")
        case .empty:
            buffer.writeStaticString("Content-Length: 0\r\n")
        case .body, .none, .representationLength:
            break
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
        // A status made from its code alone (a stub's 202, `Prefer: status=418`) has no phrase of its own.
        buffer.writeString(status.reasonPhrase.isEmpty ? Self.standardReasonPhrases[status.code] ?? "" : status.reasonPhrase)
        buffer.writeStaticString("\r\n")
    }

    /// The phrases of RFC 9110 (and 6585's, 7538's, 8297's, 8470's, 2518/4918's that clients meet).
    static let standardReasonPhrases: [Int: String] = [
        100: "Continue", 101: "Switching Protocols", 103: "Early Hints",
        200: "OK", 201: "Created", 202: "Accepted", 203: "Non-Authoritative Information", 204: "No Content",
        205: "Reset Content", 206: "Partial Content", 207: "Multi-Status",
        300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
        307: "Temporary Redirect", 308: "Permanent Redirect",
        400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found",
        405: "Method Not Allowed", 406: "Not Acceptable", 407: "Proxy Authentication Required", 408: "Request Timeout",
        409: "Conflict", 410: "Gone", 411: "Length Required", 412: "Precondition Failed", 413: "Content Too Large",
        414: "URI Too Long", 415: "Unsupported Media Type", 416: "Range Not Satisfiable", 417: "Expectation Failed",
        418: "I'm a teapot", 421: "Misdirected Request", 422: "Unprocessable Content", 423: "Locked", 425: "Too Early",
        426: "Upgrade Required", 428: "Precondition Required", 429: "Too Many Requests",
        431: "Request Header Fields Too Large", 451: "Unavailable For Legal Reasons",
        500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
        504: "Gateway Timeout", 505: "HTTP Version Not Supported", 507: "Insufficient Storage",
        511: "Network Authentication Required",
    ]

    /// `100 Continue`.
    func writeContinue(version: HTTPVersion, context: ChannelHandlerContext) {
        var buffer = context.channel.allocator.buffer(capacity: 32)
        Self.writeStatusLine(version: version, status: .continue, into: &buffer)
        buffer.writeStaticString("\r\n")
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
    }

    // MARK: Timeouts

    func scheduleTimer(context: ChannelHandlerContext) {
        guard timer == nil else { return }
        let deadline = state.deadline(now: .now(), limits: limits)
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            self.timer = nil
            guard context.channel.isActive else { return }
            self.perform(
                self.state.timerFired(now: .now(), limits: self.limits, isWritable: context.channel.isWritable),
                context: context)
            if context.channel.isActive { self.scheduleTimer(context: context) }
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
    static func send(
        _ body: StreamingBody, upTo limit: Int?, chunked: Bool, loop: any EventLoop,
        bound: NIOLoopBound<(handler: HTTPConnectionHandler, context: ChannelHandlerContext)>
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
