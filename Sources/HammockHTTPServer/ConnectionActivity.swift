import NIOCore

/// What one connection is doing and since when: the clock its timeouts read.
///
/// Shared by the two handlers of a connection's pipeline (the byte tap in front of the HTTP decoder,
/// which sees a request's first byte, and ``HTTPConnectionHandler`` behind it, which sees its end).
/// Both run on the connection's event loop only, so it needs no lock.
final class ConnectionActivity {
    enum Phase: Equatable {
        /// Between requests: nothing received of the next one.
        case idle
        /// Part of a request has arrived.
        case reading
        /// Every received request is answered or being answered.
        case responding
        /// The connection is closing after an error: input is read and discarded.
        case lingering
    }

    private(set) var phase = Phase.idle
    private(set) var since: NIODeadline

    init(now: NIODeadline) { since = now }

    func enter(_ phase: Phase, at now: NIODeadline = .now()) {
        self.phase = phase
        since = now
    }
}

/// Sits in front of the HTTP decoder and notes when the bytes of a new request start to arrive, which
/// the decoder cannot say until the whole head is in (a client sending its head one byte a minute
/// would otherwise never start the request timeout).
final class RequestStartTap: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    let activity: ConnectionActivity

    init(activity: ConnectionActivity) { self.activity = activity }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if activity.phase == .idle { activity.enter(.reading) }
        context.fireChannelRead(data)
    }
}
