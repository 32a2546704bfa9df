import HammockServer
import NIOCore
import NIOWebSocket

/// Serves one WebSocket after its `101`: frames in from NIO's decoder, the session's messages out
/// through NIO's encoder. The rules are ``WebSocketStateMachine``'s; this handler carries its actions out,
/// runs the route's ``WebSocketSession`` in a task on the connection's event loop, and ends the
/// connection on every path: the close handshake, a protocol error, a drop, a client that never answers
/// a close (after the linger timeout), the server's stop (1001), and a client that has gone without a
/// word: after the idle timeout with nothing received the server pings, and a client that sends nothing
/// (not even the pong every WebSocket client sends by itself) for another idle timeout is cut off.
final class WebSocketHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private var state: WebSocketStateMachine
    private let server: MockServer
    private let session: WebSocketSession
    private let request: MockRequest
    private let lingerTimeout: Duration
    private let idleTimeout: Duration
    private var inbound: WebSocketInbound?
    private var idleTimer: Scheduled<Void>?
    private var task: Task<Void, Never>?
    private var lingerTimer: Scheduled<Void>?
    /// The session has more messages waiting than it reads: reading the socket waits (TCP slows the client).
    private var readingPaused = false
    private var readPending = false

    init(
        server: MockServer, session: WebSocketSession, request: MockRequest, maximumMessageSize: Int,
        lingerTimeout: Duration, idleTimeout: Duration
    ) {
        self.server = server
        self.idleTimeout = idleTimeout
        self.session = session
        self.request = request
        self.lingerTimeout = lingerTimeout
        state = WebSocketStateMachine(maximumMessageSize: maximumMessageSize)
    }

    // MARK: Lifecycle

    func handlerAdded(context: ChannelHandlerContext) {
        let loop = context.eventLoop
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: loop)
        let inbound = WebSocketInbound(tap: session.tap) {
            loop.execute {
                let (handler, context) = bound.value
                handler.resumeReading(context: context)
            }
        }
        self.inbound = inbound
        let outbound = SocketOutbound(loop: loop, bound: bound)
        let (server, session, request) = (self.server, self.session, self.request)
        task = Task(executorPreference: EventLoopTaskExecutor(loop)) {
            await server.serveWebSocket(session, request: request, inbound: inbound, outbound: outbound)
        }
        scheduleIdleCheck(at: state.firstIdleCheck(idleTimeout: TimeAmount(idleTimeout)), context: context)
    }

    /// The idle timer: what ``WebSocketStateMachine/idleCheck(now:idleTimeout:)`` says, carried out.
    private func scheduleIdleCheck(at deadline: NIODeadline, context: ChannelHandlerContext) {
        idleTimer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            self.idleTimer = nil
            guard context.channel.isActive else { return }
            switch self.state.idleCheck(now: .now(), idleTimeout: TimeAmount(self.idleTimeout)) {
            case .wait(let until):
                self.scheduleIdleCheck(at: until, context: context)
            case .ping(let next):
                self.write(opcode: .ping, Array("hammock".utf8), context: context, promise: nil)
                context.flush()
                self.scheduleIdleCheck(at: next, context: context)
            case .close:
                context.close(promise: nil)
            case .stop:
                break
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        state.connectionEnded()
        end()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { end() }

    /// The connection is over: the session's inbound ends (with no close if the client sent none) and its
    /// task is cancelled, so a session waiting on a timer or a feed returns.
    private func end() {
        lingerTimer?.cancel()
        lingerTimer = nil
        idleTimer?.cancel()
        idleTimer = nil
        inbound?.finish(closedWith: nil)
        task?.cancel()
        task = nil
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            // The server stops: 1001 now, and the session is cancelled (its close comes too late to count).
            close(.goingAway, context: context)
            task?.cancel()
            return
        }
        if let event = event as? ChannelEvent, event == .inputClosed {
            // The client shut its side without a close frame: nothing more will come.
            state.connectionEnded()
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    // MARK: Input

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        let kind: WebSocketStateMachine.Frame.Kind =
            switch frame.opcode {
            case .text: .text
            case .binary: .binary
            case .continuation: .continuation
            case .connectionClose: .close
            case .ping: .ping
            case .pong: .pong
            default: .reserved
            }
        var payload = frame.unmaskedData
        let bytes = payload.readBytes(length: payload.readableBytes) ?? []
        let action = state.received(
            WebSocketStateMachine.Frame(
                kind: kind, fin: frame.fin, isMasked: frame.maskKey != nil,
                usesReservedBits: frame.rsv1 || frame.rsv2 || frame.rsv3, payload: bytes))
        perform(action, context: context)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? NIOWebSocketError else {
            context.close(promise: nil)
            return
        }
        perform(state.decoderFailed(tooLarge: error == .invalidFrameLength), context: context)
    }

    private func perform(_ action: WebSocketStateMachine.Action, context: ChannelHandlerContext) {
        switch action {
        case .none:
            break
        case .deliver(let message):
            if inbound?.yield(message) == false { readingPaused = true }
        case .pong(let payload):
            write(opcode: .pong, payload, context: context, promise: nil)
            context.flush()
        case .clientClosed(let close, let reply):
            inbound?.finish(closedWith: close)
            writeClose(reply, context: context).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        case .closeConnection:
            context.close(promise: nil)
        case .fail(let close):
            inbound?.finish(closedWith: nil)
            writeClose(close, context: context).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }

    func read(context: ChannelHandlerContext) {
        guard !readingPaused else {
            readPending = true
            return
        }
        context.read()
    }

    private func resumeReading(context: ChannelHandlerContext) {
        guard readingPaused else { return }
        readingPaused = false
        if readPending {
            readPending = false
            context.read()
        }
    }

    // MARK: Output

    /// Sends one of the session's messages; fails once the connection is closing.
    func send(_ message: WebSocketMessage, context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        guard state.isOpen, context.channel.isActive else { return context.eventLoop.makeFailedFuture(WebSocketClosedError()) }
        let promise = context.eventLoop.makePromise(of: Void.self)
        switch message {
        case .text(let text): write(opcode: .text, Array(text.utf8), context: context, promise: promise)
        case .binary(let bytes): write(opcode: .binary, bytes, context: context, promise: promise)
        }
        context.flush()
        return promise.futureResult
    }

    /// Sends a pushed message unless the connection is closing or its client is not reading (NIO's
    /// write buffer is past its high-water mark, 64 KiB by default).
    func offer(_ message: WebSocketMessage, context: ChannelHandlerContext) -> Bool {
        guard state.isOpen, context.channel.isActive, context.channel.isWritable else { return false }
        _ = send(message, context: context)
        return true
    }

    /// Starts the close handshake (once): the close frame now, and the connection ends when the client
    /// answers, or after the linger timeout.
    func close(_ close: WebSocketClose, context: ChannelHandlerContext) {
        guard state.closing() else { return }
        _ = writeClose(close, context: context)
        lingerTimer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(lingerTimeout)) {
            context.close(promise: nil)
        }
    }

    /// Ends the connection without a close frame.
    func drop(context: ChannelHandlerContext) {
        state.connectionEnded()
        context.close(promise: nil)
    }

    private func writeClose(_ close: WebSocketClose, context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        let promise = context.eventLoop.makePromise(of: Void.self)
        let code = close.code
        write(
            opcode: .connectionClose, [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(close.reason.utf8), context: context,
            promise: promise)
        context.flush()
        return promise.futureResult
    }

    private func write(
        opcode: WebSocketOpcode, _ bytes: [UInt8], context: ChannelHandlerContext, promise: EventLoopPromise<Void>?
    ) {
        var buffer = context.channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: opcode, data: buffer)), promise: promise)
    }
}

/// The session's way to the socket: each call hops to the connection's event loop.
final class SocketOutbound: WebSocketOutbound {
    let loop: any EventLoop
    let bound: NIOLoopBound<(handler: WebSocketHandler, context: ChannelHandlerContext)>

    init(loop: any EventLoop, bound: NIOLoopBound<(handler: WebSocketHandler, context: ChannelHandlerContext)>) {
        self.loop = loop
        self.bound = bound
    }

    func send(_ message: WebSocketMessage) async throws {
        let bound = self.bound
        do {
            try await loop.flatSubmit {
                let (handler, context) = bound.value
                return handler.send(message, context: context)
            }.get()
        } catch {
            throw WebSocketClosedError()  // the connection closed under the write
        }
    }

    func offer(_ message: WebSocketMessage) async -> Bool {
        let bound = self.bound
        return
            (try? await loop.submit {
                let (handler, context) = bound.value
                return handler.offer(message, context: context)
            }.get()) ?? false
    }

    func close(_ close: WebSocketClose) async {
        let bound = self.bound
        try? await loop.submit {
            let (handler, context) = bound.value
            handler.close(close, context: context)
        }.get()
    }

    func drop() async {
        let bound = self.bound
        try? await loop.submit {
            let (handler, context) = bound.value
            handler.drop(context: context)
        }.get()
    }
}
