import NIOCore
import NIOHTTP1

/// Serves one HTTP/1.1 connection, or one HTTP/2 stream that has a channel of its own: hands the
/// channel's events to an ``HTTPExchange``, which holds the rules. What the exchange writes goes through
/// this handler's context, encoded by `Wire`.
final class HTTPConnectionHandler<Wire: ConnectionWire>: ChannelDuplexHandler, RemovableChannelHandler
where Wire.Context == ChannelHandlerContext {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = Wire.Output
    /// Responses leave as the wire encodes them: bytes this server writes itself for HTTP/1.1.
    typealias OutboundOut = Wire.Output

    let exchange: HTTPExchange<Wire>

    init(server: MockServer, limits: ConnectionLimits, activity: ConnectionActivity, isSecure: Bool) {
        exchange = HTTPExchange(server: server, limits: limits, activity: activity, isSecure: isSecure)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { exchange.started(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        exchange.started(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        exchange.ended()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { exchange.cancelTimer() }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            exchange.inputClosed(context: context)
        } else if event is ChannelShouldQuiesceEvent {
            exchange.quiesce(context: context)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        exchange.received(unwrapInboundIn(data), context: context)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        exchange.errorCaught(error, context: context)
    }

    func read(context: ChannelHandlerContext) {
        if exchange.shouldRead(context: context) { context.read() }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        exchange.writabilityChanged(context: context)
        context.fireChannelWritabilityChanged()
    }
}

/// What an ``HTTPExchange`` needs of the place it runs in: a channel's handler context (an HTTP/1.1
/// connection, an HTTP/2 stream channel), or ``HTTP2FrameStream``, a stream of a connection served from
/// its frames.
protocol ExchangeContext: AnyObject {
    var eventLoop: any EventLoop { get }
    /// What is written can still reach the client: the connection (or stream) is open.
    var isOpen: Bool { get }
    /// The connection takes writes without queueing them.
    var isWritable: Bool { get }
    /// The client's address.
    var peerAddress: SocketAddress? { get }
    /// Asks for more input.
    func read()
    func flush()
    /// Closes the connection (or resets the stream); `.output` closes only the sending side.
    func close(mode: CloseMode, promise: EventLoopPromise<Void>?)
}

extension ChannelHandlerContext: ExchangeContext {
    var isOpen: Bool { channel.isActive }
    var isWritable: Bool { channel.isWritable }
    var peerAddress: SocketAddress? { channel.remoteAddress }
}
