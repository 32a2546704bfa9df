import HTTPTypes
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2

/// HTTP/2: one stream of a connection served from its frames (``HTTP2StreamRouter``), with no channel
/// and no HTTP/1 codec of its own. Answers are written as HEADERS and DATA frames straight to the
/// connection; what ``HTTP2Wire`` leaves to NIO's codec (lower-case names, no `Connection` or
/// `Transfer-Encoding`) it does itself, and it says the same on the wire.
///
/// As on ``HTTP2Wire``, what HTTP/1.1 says by closing the connection, a stream says by `RST_STREAM`: a
/// fault, a body cut short. The connection's other streams carry on.
enum HTTP2FrameWire: ConnectionWire {
    typealias Output = HTTP2Frame
    typealias Context = HTTP2FrameStream

    static func chunksBodies(version: HTTPVersion) -> Bool { false }

    /// A field RFC 9113 §8.2.2 forbids in HTTP/2, which NIO's codec drops as well. A switch, not a
    /// `Set`: hashing every answer's field names was 2 % of an HTTP/2 server's samples under `perf`, and
    /// names this short compare as two words.
    static func isConnectionSpecific(_ name: String) -> Bool {
        switch name {
        case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade": true
        default: false
        }
    }

    static func writeAnswer(
        _ response: MockResponse, version: HTTPVersion, keepAlive: Bool, headOnly: Bool, context stream: HTTP2FrameStream
    ) {
        // The same framing decision as HTTP/1.1's and HTTP2Wire's (MockResponse.framing).
        let framing = MockResponse.framing(for: response.status)
        let keepsLength = framing == .body || framing == .representationLength
        let body = framing == .body && !headOnly ? response.body : []
        var headers = HPACKHeaders()
        headers.reserveCapacity(response.headerFields.count + 2)
        headers.add(name: ":status", value: String(response.status.code))
        for field in response.headerFields where keepsLength || field.name != .contentLength {
            let name = field.name.canonicalName
            if isConnectionSpecific(name) { continue }
            headers.add(name: name, value: field.value)
        }
        switch framing {
        case .body where !headOnly && response.headerFields[.contentLength] == nil:
            headers.add(name: "content-length", value: String(body.count))
        case .empty:
            headers.add(name: "content-length", value: "0")
        case .body, .none, .representationLength:
            break
        }
        stream.write(.headers(.init(headers: headers, endStream: !headOnly && body.isEmpty)))
        if !headOnly && !body.isEmpty {
            let buffer = stream.connection.channel.allocator.buffer(bytes: body)
            stream.write(.data(.init(data: .byteBuffer(buffer), endStream: true)))
        }
        stream.flush()
    }

    static func writeChunk(_ bytes: [UInt8], chunked: Bool, context stream: HTTP2FrameStream) -> EventLoopFuture<Void> {
        let buffer = stream.connection.channel.allocator.buffer(bytes: bytes)
        let future = stream.writeCounted(buffer)
        stream.flush()
        return future
    }

    /// END_STREAM when complete; a body cut short resets the stream, so the client cannot take it for
    /// the whole.
    static func finishBody(chunked: Bool, complete: Bool, context stream: HTTP2FrameStream) {
        if complete {
            stream.write(.data(.init(data: .byteBuffer(ByteBuffer()), endStream: true)))
            stream.flush()
        } else {
            stream.close(mode: .all, promise: nil)
        }
    }

    static func writeContinue(version: HTTPVersion, context stream: HTTP2FrameStream) {
        stream.write(.headers(.init(headers: [":status": "100"])))
        stream.flush()
    }

    /// Every connection fault resets the stream (`RST_STREAM`, CANCEL) after what was sent.
    static func abort(_ fault: ConnectionFault, context stream: HTTP2FrameStream) {
        stream.flush()
        stream.close(mode: .all, promise: nil)
    }

    /// Resets a stream the answer has not ended (RFC 9113 §8.1: the client stops sending); one it has
    /// ended is closed once the client's side is (NIO's stream state).
    static func stopInput(context stream: HTTP2FrameStream) -> Bool {
        stream.close(mode: .all, promise: nil)
        return false
    }

    static func switchToWebSocket(
        _ response: MockResponse, session: WebSocketSession, request: MockRequest, server: MockServer,
        limits: ConnectionLimits, activity: ConnectionActivity, context: HTTP2FrameStream
    ) -> Bool { false }
}

/// One stream of an HTTP/2 connection answered from its frames: what its ``HTTPExchange`` writes to.
/// Frames leave through the router's handler context with the stream's ID. Open until NIO reports the
/// stream closed (both sides ended, or reset) or the connection ends.
///
/// Writable as a stream channel is: while the connection is, and while the streamed body's bytes that
/// have not yet left (held by NIO's HTTP/2 handler for the client's flow-control window, or by the
/// socket) stay under a high-water mark. A client that stops reading one stream's body leaves that stream
/// unwritable, so its exchange sees it stall and resets it at the idle timeout, as over HTTP/1.1; the
/// connection itself stays writable (NIO buffers what a window holds back), so without this count such a
/// stream was held for as long as the connection lived.
final class HTTP2FrameStream: ExchangeContext {
    /// NIO's stream channel's marks (8 KiB and 4 KiB), so both paths stall at the same point.
    static let highWatermark = 8192
    static let lowWatermark = 4096

    let id: HTTP2StreamID
    /// The router's context on the connection's pipeline.
    let connection: ChannelHandlerContext
    /// Told when the stream's own writability changes.
    weak var exchange: HTTPExchange<HTTP2FrameWire>?
    private(set) var isOpen = true
    /// This side has ended the stream (END_STREAM or RST_STREAM): nothing more is written.
    private var isOutputDone = false
    /// Bytes of streamed body written whose writes have not completed.
    private var pendingBytes = 0
    private var isUnderWatermark = true
    /// What the client sent that the exchange has not read yet (it reads as its state machine allows,
    /// as an HTTP/1.1 connection's socket is read), with each part's share of the flow-control window.
    private var inbound = CircularBuffer<(part: HTTPServerRequestPart, size: Int)>()
    private var isDelivering = false
    /// The client has ended its side (END_STREAM).
    private var isInputDone = false
    /// Bytes read by the exchange and not yet given back to the client's window.
    private var unacknowledged = 0

    init(id: HTTP2StreamID, connection: ChannelHandlerContext) {
        self.id = id
        self.connection = connection
    }

    var eventLoop: any EventLoop { connection.eventLoop }
    var isWritable: Bool { isUnderWatermark && connection.channel.isWritable }
    var peerAddress: SocketAddress? { connection.channel.remoteAddress }

    /// The exchange may read: what waits is handed over.
    func read() { deliver() }

    /// A DATA frame of the request's body.
    func received(_ data: HTTP2Frame.FramePayload.Data) {
        // The window counts padding too (RFC 9113 §6.9.1): its length and the byte that says it.
        let size = data.data.readableBytes + (data.paddingBytes.map { $0 + 1 } ?? 0)
        if case .byteBuffer(let buffer) = data.data, buffer.readableBytes > 0 {
            inbound.append((.body(buffer), size))
        } else if size > 0 {
            inbound.append((.body(ByteBuffer()), size))
        }
        if data.endStream { receivedEnd() } else { deliver() }
    }

    /// The client ended the request (END_STREAM on its headers, a DATA frame or its trailers).
    func receivedEnd() {
        isInputDone = true
        inbound.append((.end(nil), 0))
        deliver()
    }

    /// Hands what waits to the exchange while its state machine takes input, and gives what it read
    /// back to the client's window. What it does not take stays here; the client can send no more than
    /// the window (NIO's default, 65,535 bytes) until it is read.
    private func deliver() {
        guard !isDelivering else { return }  // the exchange asked for more while taking a part
        isDelivering = true
        defer { isDelivering = false }
        while isOpen, let exchange, let next = inbound.first, exchange.shouldRead(context: self) {
            inbound.removeFirst()
            exchange.received(next.part, context: self)
            unacknowledged += next.size
        }
        // Half the window read: given back, as NIO's stream channels do.
        if unacknowledged >= Self.windowUpdateThreshold, isOpen, !isInputDone {
            let increment = unacknowledged
            unacknowledged = 0
            connection.writeAndFlush(
                NIOAny(HTTP2Frame(streamID: id, payload: .windowUpdate(windowSizeIncrement: increment))), promise: nil)
        }
    }

    /// Half of NIO's initial stream window (65,535 bytes).
    static let windowUpdateThreshold = 32_768

    func flush() { connection.flush() }

    /// Writes a frame of this stream, unless the stream is over (then `promise` fails).
    func write(_ payload: HTTP2Frame.FramePayload, promise: EventLoopPromise<Void>? = nil) {
        guard isOpen, !isOutputDone else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        switch payload {
        case .headers(let headers) where headers.endStream: isOutputDone = true
        case .data(let data) where data.endStream: isOutputDone = true
        default: break
        }
        connection.write(NIOAny(HTTP2Frame(streamID: id, payload: payload)), promise: promise)
    }

    /// Writes a piece of a streamed body and counts it until its write completes.
    func writeCounted(_ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let promise = eventLoop.makePromise(of: Void.self)
        guard isOpen, !isOutputDone else {
            promise.fail(ChannelError.ioOnClosedChannel)
            return promise.futureResult
        }
        let size = buffer.readableBytes
        pendingBytes += size
        write(.data(.init(data: .byteBuffer(buffer))), promise: promise)
        if isUnderWatermark, pendingBytes > Self.highWatermark { watermarkCrossed() }
        promise.futureResult.assumeIsolated().whenComplete { _ in
            self.pendingBytes -= size
            if !self.isUnderWatermark, self.pendingBytes < Self.lowWatermark { self.watermarkCrossed() }
        }
        return promise.futureResult
    }

    private func watermarkCrossed() {
        isUnderWatermark.toggle()
        guard isOpen, let exchange else { return }
        exchange.writabilityChanged(context: self)
    }

    /// Resets the stream (CANCEL) unless both sides have ended it, as NIO's stream channel does: after an
    /// answer to a request still arriving (a 413), the reset tells the client to stop sending.
    func close(mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if isOpen, !(isOutputDone && isInputDone) {
            isOutputDone = true
            isInputDone = true
            inbound.removeAll()
            connection.writeAndFlush(NIOAny(HTTP2Frame(streamID: id, payload: .rstStream(.cancel))), promise: nil)
        }
        promise?.succeed()
    }

    /// NIO closed the stream, or the connection ended.
    func closed() {
        isOpen = false
        inbound.removeAll()
    }
}
