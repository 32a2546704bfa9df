import NIOCore
import NIOTLS

/// Closes a TLS connection whose handshake has not finished within the idle timeout, then leaves the
/// pipeline once it has. Until the handshake agrees on a protocol there is no HTTP handler, so nothing
/// else would time the connection out: a client that connects and sends nothing, or a ClientHello a byte a
/// minute, would hold its socket for ever. (When HTTP/1.1 was configured before the handshake, its idle
/// timer did this; ALPN now picks the pipeline after it.)
final class HandshakeTimeout: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    let limit: Duration
    private var timer: Scheduled<Void>?

    init(limit: Duration) { self.limit = limit }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { schedule(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        schedule(context: context)
        context.fireChannelActive()
    }

    private func schedule(context: ChannelHandlerContext) {
        guard timer == nil else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(limit)) {
            context.close(promise: nil)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        context.fireUserInboundEventTriggered(event)
        if case .handshakeCompleted = event as? TLSUserEvent {
            timer?.cancel()
            timer = nil
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
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
}
