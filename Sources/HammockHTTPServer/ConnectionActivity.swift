import NIOCore

/// What one connection is doing and since when: the clock its timeouts read, and what its input side
/// (``RequestDecoder``) and its handler (``HTTPConnectionHandler``) tell each other.
///
/// The decoder sees a request's first byte and what is left unparsed; the handler sees where each
/// request ends and when input is over. Both run on the connection's event loop only, so it needs no
/// lock.
final class ConnectionActivity {
    enum Phase: Equatable {
        /// Between requests: nothing received of the next one.
        case idle
        /// Part of a request has arrived.
        case reading
        /// Every received request is answered or being answered.
        case responding
        /// Answers are owed but the client is not reading them: nothing more is taken until it does.
        case stalled
        /// The connection is closing after an error: input is read and discarded.
        case lingering
    }

    private(set) var phase = Phase.idle
    private(set) var since: NIODeadline
    /// No more requests are taken: what arrives is discarded.
    var isInputDone = false
    /// A request after which llhttp stops parsing (an upgrade) has ended: the decoder is replaced.
    var decoderStopped = false
    /// The connection now speaks WebSocket: the request decoder passes what it holds on as bytes.
    var switchedProtocols = false
    /// When the unfinished head still in the decoder's buffer started to arrive, if there is one.
    private(set) var partialHeadSince: NIODeadline?

    init(now: NIODeadline) { since = now }

    func enter(_ phase: Phase, at now: NIODeadline = .now()) {
        self.phase = phase
        since = now
    }

    func notePartialHead(_ isPending: Bool) {
        if !isPending {
            partialHeadSince = nil
        } else if partialHeadSince == nil {
            partialHeadSince = phase == .reading ? since : .now()
        }
    }
}
