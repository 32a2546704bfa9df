import NIOCore
import NIOHTTP1
import NIOHTTP2

/// An HTTP/2 connection's pipeline, after TLS agreed on `h2`: a flush coalescer, NIO's HTTP/2 handler,
/// ``ConnectionEnd`` (idle, client gone, connection errors, a bounded stop), NIO's connection manager
/// (graceful shutdown with GOAWAY), ``HTTP2StreamRouter``, which serves the streams straight from the
/// frames (``HTTP2FrameWire``), and NIO's stream multiplexer, which gives back the connection's window and
/// takes a stream whose head NIO's HTTP/2-to-HTTP/1 codec refuses, with that codec and the same
/// ``HTTPConnectionHandler`` as an HTTP/1.1 connection, encoding through ``HTTP2Wire``. Every rule
/// (limits, timeouts, faults, streamed and throttled bodies, the server's stop) is the HTTP/1.1
/// connection's ``HTTPExchange``, applied to one stream, on either path.
enum HTTP2Connection {
    /// Streams one client may have open at once (`SETTINGS_MAX_CONCURRENT_STREAMS`): what browsers and
    /// NIO use by default, and more than the 6 connections a browser opens per origin over HTTP/1.1.
    static let maximumConcurrentStreams = 100

    static func configure(_ channel: any Channel, server: MockServer, limits: ConnectionLimits) throws {
        let pipeline = channel.pipeline.syncOperations
        // A stop sends GOAWAY and lets open streams finish (NIO's manager); the idle timeout and the
        // rest of the connection's end are ConnectionEnd's.
        let manager = NIOHTTP2ServerConnectionManagementHandler(
            eventLoop: channel.eventLoop,
            configuration: .init(maxIdleTime: nil, maxAge: nil, maxGraceTime: nil, keepalive: nil))
        var connection = NIOHTTP2Handler.ConnectionConfiguration()
        connection.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: maximumConcurrentStreams),
            // The header budget of an HTTP/1.1 head, for the decoded header list (RFC 9113 §6.5.2).
            HTTP2Setting(parameter: .maxHeaderListSize, value: limits.maximumHeaderBytes),
        ]
        try pipeline.addHandler(FlushCoalescer())
        let end = ConnectionEnd(idleTimeout: limits.idleTimeout, backstop: limits.requestTimeout + limits.lingerTimeout)
        // ConnectionEnd hears of the frames NIO writes, to tell a connection's error from a stream's.
        try pipeline.addHandler(NIOHTTP2Handler(mode: .server, frameDelegate: end, connectionConfiguration: connection))
        // Before NIO's manager: it keeps the manager from hearing of a stream closed that never opened.
        try pipeline.addHandler(end)
        try pipeline.addHandler(manager)
        try pipeline.addHandler(HTTP2StreamRouter(server: server, limits: limits))
        let multiplexer = HTTP2StreamMultiplexer(
            mode: .server, channel: channel,
            inboundStreamInitializer: { stream in
                stream.eventLoop.makeCompletedFuture {
                    // A stream exists once its HEADERS frame has arrived: the request is already being read.
                    let activity = ConnectionActivity(now: .now())
                    activity.enter(.reading)
                    try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                    try stream.pipeline.syncOperations.addHandler(
                        HTTPConnectionHandler<HTTP2Wire>(server: server, limits: limits, activity: activity, isSecure: true))
                }
            })
        try pipeline.addHandler(multiplexer)
    }

    /// One flush of the connection per turn of its event loop, however many streams answered in it.
    ///
    /// Each stream's answer ends with a flush, and a stream's flush is the connection's: NIO's HTTP/2
    /// handler encodes what is pending, TLS seals it and the socket takes it, once per answer. With 100
    /// streams in flight that was a TLS record and a `write(2)` per answer; `perf` put 47 % of the
    /// server's time under those flushes and 19 % in `write` alone (docs/benchmarks.md, HTTP/2). Here
    /// the first flush of a turn is put off to the end of the loop's queue of tasks, where the answers
    /// of that turn are already waiting, and the later ones join it. A close flushes first, so nothing
    /// written is lost to it (NIO's manager closes a turn after the last stream's end).
    final class FlushCoalescer: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer

        private var isFlushPending = false

        func flush(context: ChannelHandlerContext) {
            guard !isFlushPending else { return }
            isFlushPending = true
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.execute {
                let (coalescer, context) = bound.value
                guard coalescer.isFlushPending else { return }
                coalescer.isFlushPending = false
                context.flush()
            }
        }

        func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
            if isFlushPending {
                isFlushPending = false
                context.flush()
            }
            context.close(mode: mode, promise: promise)
        }
    }

    /// Ends the connection when nothing more can happen on it, which NIO's handlers leave to the peer:
    ///
    /// - no stream has been open for the idle timeout, as an HTTP/1.1 connection with no request in
    ///   progress: GOAWAY, then close. (NIO's manager has an idle timer too, but it starts on
    ///   `channelActive`, which a pipeline set up after the TLS handshake never sees: a client that
    ///   connected and opened no stream kept its connection for ever.)
    /// - the client closed its side (AsyncHTTPClient's shutdown closes the socket; the server allows
    ///   half-closed connections for HTTP/1.1's sake, so NIO keeps it open) or said GOAWAY: once its open
    ///   streams have been answered, the server closes too (RFC 9113 §6.8);
    /// - the server is stopping: NIO's manager closes once the client has acknowledged its GOAWAY (a PING
    ///   round trip) and the streams have ended, and a client that never answers the PING would keep
    ///   `MockServer.stop()` waiting for ever. Streams end on their own within the request timeout (a stop
    ///   ends streamed bodies and held answers at once), so after that and the linger timeout the
    ///   connection is closed whatever the client does;
    /// - a connection error (below).
    ///
    /// It learns of streams from NIO's HTTP/2 handler's events (`NIOHTTP2StreamCreatedEvent`,
    /// `StreamClosedEvent`), which travel down the connection's pipeline, as NIO's manager does.
    final class ConnectionEnd: ChannelDuplexHandler, NIOHTTP2FrameDelegate {
        typealias InboundIn = HTTP2Frame
        typealias OutboundIn = HTTP2Frame
        typealias OutboundOut = HTTP2Frame

        let idleTimeout: Duration
        let backstop: Duration
        /// NIO's handler has ended the connection for an error (its GOAWAY carried an error code).
        private var hasFailed = false
        private var openStreams = Set<HTTP2StreamID>()
        private var lastStream = HTTP2StreamID.rootStream
        private var peerIsDone = false
        private var isStopping = false
        private var idleTimer: Scheduled<Void>?
        private var stopTimer: Scheduled<Void>?
        private var context: ChannelHandlerContext?

        init(idleTimeout: Duration, backstop: Duration) {
            self.idleTimeout = idleTimeout
            self.backstop = backstop
        }

        func handlerAdded(context: ChannelHandlerContext) {
            self.context = context
            startIdleTimer()
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            cancelTimers()
            self.context = nil
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .goAway = unwrapInboundIn(data).payload { peerFinished() }
            context.fireChannelRead(data)
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if let created = event as? NIOHTTP2StreamCreatedEvent {
                streamOpened(created.streamID)
            } else if let closed = event as? StreamClosedEvent {
                // NIO reports the end of a stream it refused at its first frame (a request without
                // `:path`) without having reported it open; NIO's manager asserts on such an end (a debug
                // build stopped there), and no handler after this one knows the stream.
                guard streamClosed(closed.streamID) else { return }
            } else if let event = event as? ChannelEvent, event == .inputClosed {
                peerFinished()
            } else if event is ChannelShouldQuiesceEvent, !isStopping {
                isStopping = true
                idleTimer?.cancel()
                stopTimer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(backstop)) {
                    context.close(promise: nil)
                }
            }
            context.fireUserInboundEventTriggered(event)
        }

        func channelInactive(context: ChannelHandlerContext) {
            cancelTimers()
            context.fireChannelInactive()
        }

        /// A connection error (a frame that breaks HTTP/2, a flood NIO's heuristics stopped, TLS failing):
        /// NIO has written GOAWAY and will write nothing more, so streams still open would wait for ever.
        /// Closed on the next turn, once that GOAWAY is flushed.
        ///
        /// NIO reports a stream's error the same way (a field name in upper case, more body than its
        /// `content-length`), after resetting that stream alone: such an error is not the connection's.
        /// Closing on it cut every other stream of the connection, a browser's whole page, for one bad
        /// request. An HTTP/2 error is the connection's only once NIO has said so with a GOAWAY that
        /// carries an error code (``wroteFrame(_:)``); any other error (TLS, the socket) is.
        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            if error is any NIOHTTP2Error, !hasFailed { return }
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.eventLoop.execute { bound.value.close(promise: nil) }
        }

        /// NIO's handler tells of each frame it writes (``NIOHTTP2FrameDelegate``): a GOAWAY with an
        /// error code is NIO ending the connection for an error.
        func wroteFrame(_ frame: HTTP2Frame) {
            if case .goAway(_, let code, _) = frame.payload, code != .noError { hasFailed = true }
        }

        private func streamOpened(_ id: HTTP2StreamID) {
            guard openStreams.insert(id).inserted else { return }
            lastStream = max(lastStream, id)
            idleTimer?.cancel()
            idleTimer = nil
        }

        /// Notes a stream's end; `false` if it was not open.
        private func streamClosed(_ id: HTTP2StreamID) -> Bool {
            guard openStreams.remove(id) != nil else { return false }
            guard openStreams.isEmpty, let context else { return true }
            if peerIsDone {
                // On the next turn: the frame that ended the stream is written but not yet flushed.
                let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
                context.eventLoop.execute { bound.value.close(promise: nil) }
            } else {
                startIdleTimer()
            }
            return true
        }

        private func peerFinished() {
            peerIsDone = true
            if openStreams.isEmpty { context?.close(promise: nil) }
        }

        private func startIdleTimer() {
            guard let context, !isStopping, context.channel.isActive else { return }
            idleTimer?.cancel()
            idleTimer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(idleTimeout)) {
                self.idleTimer = nil
                guard self.openStreams.isEmpty else { return }
                let goAway = HTTP2Frame(
                    streamID: .rootStream,
                    payload: .goAway(lastStreamID: self.lastStream, errorCode: .noError, opaqueData: nil))
                context.writeAndFlush(self.wrapOutboundOut(goAway)).assumeIsolated().whenComplete { _ in
                    context.close(promise: nil)
                }
            }
        }

        private func cancelTimers() {
            idleTimer?.cancel()
            idleTimer = nil
            stopTimer?.cancel()
            stopTimer = nil
        }
    }
}
