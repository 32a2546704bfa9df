import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2

/// Serves an HTTP/2 connection's streams straight from its frames: each gets an ``HTTPExchange`` (the same
/// rules and state machine as any connection) whose context is an ``HTTP2FrameStream`` and whose wire is
/// ``HTTP2FrameWire``; the stream keeps its own inbound flow-control window, given back as the exchange
/// reads. A stream whose head NIO's HTTP/2-to-HTTP/1 codec would refuse (no `:authority`, a space in
/// `:path`) goes on to NIO's stream multiplexer, where it gets a channel, that codec and an
/// ``HTTPConnectionHandler``, and is refused there as before.
///
/// Why: a stream channel with its pipeline and codec cost half of what a stream cost this server
/// (66.7 → 32.3 µs of CPU per request in `scripts/bench http2-frames`, docs/benchmarks.md), which kept
/// 100 streams on one connection at 0.35 of the rate of 100 HTTP/1.1 connections.
///
/// It sits after NIO's HTTP/2 handler (which validates frames, keeps stream states and the outbound
/// windows), ``HTTP2Connection/ConnectionEnd`` and the connection manager, and before the multiplexer,
/// which also gives the connection's inbound window back as DATA arrives (NIO's events reach it through
/// here).
final class HTTP2StreamRouter: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame

    let server: MockServer
    let limits: ConnectionLimits
    /// The streams served here, until NIO reports them closed.
    private var streams: [HTTP2StreamID: (stream: HTTP2FrameStream, exchange: HTTPExchange<HTTP2FrameWire>)] = [:]
    /// The streams passed on to the multiplexer, until closed: their later frames follow them there.
    private var passed = Set<HTTP2StreamID>()
    /// One executor for every stream's answers: the connection's event loop.
    private var executor: EventLoopTaskExecutor?

    init(server: MockServer, limits: ConnectionLimits) {
        self.server = server
        self.limits = limits
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        let id = frame.streamID
        if id == .rootStream || passed.contains(id) {
            context.fireChannelRead(data)
            return
        }
        if let (stream, _) = streams[id] {
            switch frame.payload {
            case .data(let data):
                stream.received(data)
            case .headers(let trailers) where trailers.endStream:
                // Trailers end the request; their fields are not handed to the engine (nor were they
                // through NIO's codec to HTTPConnectionHandler, which ignores an end's trailers).
                stream.receivedEnd()
            default:
                // WINDOW_UPDATE, PRIORITY or RST_STREAM: NIO has applied them already (a reset closes the
                // stream, which its StreamClosedEvent reports).
                break
            }
            return
        }
        guard case .headers(let headers) = frame.payload else {
            // A late frame of a stream already closed (a WINDOW_UPDATE after the answer ended it): the
            // multiplexer would report an unknown stream as a connection error.
            return
        }
        guard let head = Self.requestHead(headers.headers, endStream: headers.endStream), head.method != .CONNECT
        else {
            passed.insert(id)
            context.fireChannelRead(data)
            return
        }
        serve(head, id: id, isWhole: headers.endStream, context: context)
    }

    private func serve(_ head: HTTPRequestHead, id: HTTP2StreamID, isWhole: Bool, context: ChannelHandlerContext) {
        let executor = self.executor ?? EventLoopTaskExecutor(context.eventLoop)
        self.executor = executor
        let activity = ConnectionActivity(now: .now())
        activity.enter(.reading)
        let stream = HTTP2FrameStream(id: id, connection: context)
        let exchange = HTTPExchange<HTTP2FrameWire>(
            server: server, limits: limits, activity: activity, isSecure: true, executor: executor)
        stream.exchange = exchange
        streams[id] = (stream, exchange)
        exchange.started(context: stream)
        exchange.received(.head(head), context: stream)
        if isWhole { stream.receivedEnd() }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let closed as StreamClosedEvent:
            if let (stream, exchange) = streams.removeValue(forKey: closed.streamID) {
                stream.closed()
                exchange.ended()
            } else {
                passed.remove(closed.streamID)
            }
        case is ChannelShouldQuiesceEvent:
            for (stream, exchange) in streams.values { exchange.quiesce(context: stream) }
        default:
            break
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        for (stream, exchange) in streams.values { exchange.writabilityChanged(context: stream) }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        let open = streams.values
        streams = [:]
        for (stream, exchange) in open {
            stream.closed()
            exchange.ended()
        }
        context.fireChannelInactive()
    }

    /// The request's head, as NIO's HTTP/2-to-HTTP/1 codec makes it (`:authority` as `Host` when there is
    /// none), or nil where the codec would refuse it: such a stream takes the channel's path, so it is
    /// refused as before.
    static func requestHead(_ headers: HPACKHeaders, endStream: Bool = true) -> HTTPRequestHead? {
        var method: String?
        var path: String?
        var authority: String?
        var hasScheme = false
        var hasHost = false
        var fields: [(String, String)] = []
        fields.reserveCapacity(headers.count)
        for (name, value, _) in headers {
            switch name {
            case ":method":
                guard method == nil else { return nil }
                method = value
            case ":path":
                guard path == nil else { return nil }
                path = value
            case ":authority":
                guard authority == nil else { return nil }
                authority = value
            case ":scheme":
                guard !hasScheme else { return nil }
                hasScheme = true
            default:
                if name.utf8.first == UInt8(ascii: ":") { continue }
                if name == "host" { hasHost = true }
                fields.append((name, value))
            }
        }
        guard let method, let path, let authority, hasScheme else { return nil }
        // NIO's codec refuses pseudo-header values with spaces or control characters (request smuggling
        // into an HTTP/1.1 request line).
        for value in [method, path, authority] where value.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
            return nil
        }
        if !hasHost { fields.insert(("host", authority), at: 0) }
        let httpMethod = HTTPMethod(rawValue: method)
        switch httpMethod {
        case .GET, .HEAD, .DELETE, .CONNECT, .TRACE:
            break
        default:
            // A request that came whole has an empty body, one still arriving a body of no declared length;
            // NIO's codec says so the same way.
            if !fields.contains(where: { $0.0 == "content-length" }) {
                fields.append(endStream ? ("content-length", "0") : ("transfer-encoding", "chunked"))
            }
        }
        return HTTPRequestHead(
            version: HTTPVersion(major: 2, minor: 0), method: httpMethod, uri: path, headers: HTTPHeaders(fields))
    }
}
