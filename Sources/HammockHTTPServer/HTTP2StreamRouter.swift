import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2

/// Serves an HTTP/2 connection's streams whose request came whole in its HEADERS frame (a GET, a HEAD, a
/// DELETE: `END_STREAM` on the headers) straight from the frames, and passes every other stream on to
/// NIO's stream multiplexer, where each gets a channel, NIO's HTTP/1 codec and an
/// ``HTTPConnectionHandler``.
///
/// Why: a stream channel with its pipeline and codec cost half of what a stream cost this server
/// (66.7 → 32.3 µs of CPU per request in `scripts/bench http2-frames`, docs/benchmarks.md), which kept
/// 100 streams on one connection at 0.35 of the rate of 100 HTTP/1.1 connections. A stream served here
/// gets an ``HTTPExchange`` (the same rules and state machine as any connection) whose context is an
/// ``HTTP2FrameStream`` and whose wire is ``HTTP2FrameWire``. Requests with a body still take the
/// channel's path, where NIO's stream channel keeps each stream's inbound flow-control window.
///
/// It sits after NIO's HTTP/2 handler (which validates frames, keeps stream states and the outbound
/// windows), ``HTTP2Connection/ConnectionEnd`` and the connection manager, and before the multiplexer.
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
        guard streams[id] == nil else {
            // WINDOW_UPDATE, PRIORITY or RST_STREAM on a stream served here: NIO has applied them already
            // (a reset closes the stream, which its StreamClosedEvent reports).
            return
        }
        guard case .headers(let headers) = frame.payload else {
            // A late frame of a stream already closed (a WINDOW_UPDATE after the answer ended it): the
            // multiplexer would report an unknown stream as a connection error.
            return
        }
        guard headers.endStream, let head = Self.requestHead(headers.headers), head.method != .CONNECT else {
            passed.insert(id)
            context.fireChannelRead(data)
            return
        }
        serve(head, id: id, context: context)
    }

    private func serve(_ head: HTTPRequestHead, id: HTTP2StreamID, context: ChannelHandlerContext) {
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
        exchange.received(.end(nil), context: stream)
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
    static func requestHead(_ headers: HPACKHeaders) -> HTTPRequestHead? {
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
            // A request that came whole has an empty body; NIO's codec says so the same way.
            if !fields.contains(where: { $0.0 == "content-length" }) { fields.append(("content-length", "0")) }
        }
        return HTTPRequestHead(
            version: HTTPVersion(major: 2, minor: 0), method: httpMethod, uri: path, headers: HTTPHeaders(fields))
    }
}
