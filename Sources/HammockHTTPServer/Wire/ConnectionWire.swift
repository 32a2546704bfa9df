import HammockServer
import NIOCore
import NIOHTTP1

/// How a connection's answers are put on the wire. ``HTTPConnectionHandler`` decides what is sent and
/// when (its ``HTTPConnectionStateMachine`` holds the rules); a wire decides only the encoding: HTTP/1.1
/// text on a TCP connection (``HTTP1Wire``), or HTTP/2 frames on one stream of a multiplexed connection
/// (``HTTP2Wire``). One copy of the rules, two encodings: a fault, a throttled body, a timeout or a
/// limit behaves the same on both, as far as each protocol can say it.
protocol ConnectionWire {
    /// What the handler hands the next handler down: bytes, or HTTP/1-shaped parts that NIO's codec turns
    /// into HTTP/2 frames.
    associatedtype Output
    /// Where answers are written: a channel's handler context, or a stream of a connection served from
    /// its frames (``HTTP2FrameStream``).
    associatedtype Context: ExchangeContext

    /// Whether a streamed body of unknown length is sent in chunks (`Transfer-Encoding: chunked`). HTTP/2
    /// frames every body, and HTTP/1.0 has no chunks (such a body ends where the connection does).
    static func chunksBodies(version: HTTPVersion) -> Bool

    /// Writes and flushes an answer: its head, then its body unless `headOnly` (a streamed body follows
    /// through ``writeChunk(_:chunked:context:)`` and ends with ``finishBody(chunked:complete:context:)``).
    static func writeAnswer(
        _ response: MockResponse, version: HTTPVersion, keepAlive: Bool, headOnly: Bool, context: Context)

    /// Writes and flushes one piece of a streamed body; the future completes once it is written.
    static func writeChunk(_ bytes: [UInt8], chunked: Bool, context: Context) -> EventLoopFuture<Void>

    /// Ends a streamed body: properly when `complete`, else so the client sees it was cut short.
    static func finishBody(chunked: Bool, complete: Bool, context: Context)

    /// Sends `100 Continue` for a request that asked for it.
    static func writeContinue(version: HTTPVersion, context: Context)

    /// Fails the exchange as a connection fault says.
    static func abort(_ fault: ConnectionFault, context: Context)

    /// After an answer to a request that broke the rules (a body over the limit, a malformed head): stops
    /// taking what the client still sends. Returns whether the handler should then read and discard until
    /// the linger timeout (HTTP/1.1, so the client reads the answer instead of a reset), or nothing more is
    /// needed (HTTP/2 resets the stream: its framing cannot fall out of step).
    static func stopInput(context: Context) -> Bool

    /// After a `101 Switching Protocols` that carries a WebSocket session: writes it and hands the
    /// connection over to the session. Returns `false`, writing nothing, where the protocol has no upgrade
    /// (an HTTP/2 stream: RFC 8441's WebSocket over HTTP/2 is not served).
    static func switchToWebSocket(
        _ response: MockResponse, session: WebSocketSession, request: MockRequest, server: MockServer,
        limits: ConnectionLimits, activity: ConnectionActivity, context: Context
    ) -> Bool
}
