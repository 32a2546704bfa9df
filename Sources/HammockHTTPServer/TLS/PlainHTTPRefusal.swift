import NIOCore

/// First on a TLS connection: a client that speaks plain HTTP to the HTTPS port (`http://` typed where
/// `https://` was meant) gets a 400 that says so, instead of a reset it would have to guess at. A TLS
/// connection begins with a handshake record (byte 0x16); anything else is not TLS. Once the first
/// bytes are seen the handler leaves the pipeline, so it costs a connection one check.
final class PlainHTTPRefusal: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The handshake record's content type (RFC 8446 §5.1).
    static let handshake: UInt8 = 0x16

    static let answer: [UInt8] = Array(
        ("HTTP/1.1 400 Bad Request\r\nContent-Type: application/problem+json\r\nConnection: close\r\nContent-Length: "
            + "\(body.utf8.count)\r\n\r\n" + body).utf8)
    static let body =
        #"{"type":"about:blank","title":"Bad Request","status":400,"detail":"This port speaks HTTPS: use an https:// URL."}"#

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        guard let first = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) else { return }
        if first == Self.handshake {
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        // Straight to the socket: the TLS handler after this one never sees these bytes.
        var reply = context.channel.allocator.buffer(capacity: Self.answer.count)
        reply.writeBytes(Self.answer)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(reply)).whenComplete { _ in bound.value.close(promise: nil) }
    }
}
