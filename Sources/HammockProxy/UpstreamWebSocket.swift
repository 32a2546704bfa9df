import HammockServer
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import Synchronization

/// A WebSocket opened to the upstream for a client's handshake, and the relay between the two once both
/// are open: what ``ProxyRoutes`` does with a request to upgrade.
///
/// The relay works on whole messages, not bytes, so that the mock's own WebSocket rules hold on the proxied
/// socket: the client's messages are in the journal, a WebSocket fault closes or drops it after so many of
/// the upstream's messages, and the server's stop closes it with 1001. Each hop negotiates on its own:
/// extensions (`permessage-deflate`) are offered to neither, pings are answered by the hop that gets them.
enum UpstreamWebSocket {
    /// What the upstream answered the handshake with.
    enum Opening: Sendable {
        /// `101`: the socket, and the answer's head (its subprotocol, its cookies).
        case upgraded(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, HTTPResponseHead)
        /// Anything else: the connection, whose answer is read next.
        case refused(NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>)
    }

    /// The upstream's answer took longer than the proxy's timeout.
    struct TimedOut: Error {}

    /// The largest message from the upstream: a larger one ends its socket with 1009. A bound on what one
    /// message holds in memory, 16 times the client's (the server's body limit, 1 MiB by default): an
    /// upstream's feed is the team's own backend, not a stranger.
    static let maximumMessageSize = 16 << 20

    /// The connection being opened, so that a deadline can close it whatever phase it is in.
    final class Pending: Sendable {
        private struct State {
            var channel: (any Channel)?
            var timedOut = false
        }

        private let state = Mutex(State())

        func opened(_ channel: any Channel) {
            let late = state.withLock { state -> Bool in
                state.channel = channel
                return state.timedOut
            }
            if late { channel.close(promise: nil) }
        }

        /// The deadline passed: the connection is closed, and what waits on it fails.
        func timeOut() {
            let channel = state.withLock { state -> (any Channel)? in
                state.timedOut = true
                return state.channel
            }
            channel?.close(promise: nil)
        }

        var hasTimedOut: Bool { state.withLock { $0.timedOut } }
    }

    /// Connects to `host:port` (over TLS with `tls`), sends the handshake for `target` with `headers` and a
    /// key of its own, and returns the answer. The upgrader checks the upstream's `Sec-WebSocket-Accept`.
    static func open(
        host: String, port: Int, tls: NIOSSLContext?, target: String, headers: HTTPHeaders, on loop: any EventLoop,
        pending: Pending
    ) async throws -> Opening {
        let serverName = Self.isAddress(host) ? nil : host
        let negotiated: EventLoopFuture<Opening> = try await ClientBootstrap(group: loop)
            // A refused connection fails at once (this bootstrap does not retry, as AsyncHTTPClient does);
            // the limit is for a host that never answers. 10 s, not 3: a loaded machine's full test run
            // took over 3 s to see a loopback connection complete (a local run's 502).
            .connectTimeout(.seconds(10))
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    pending.opened(channel)
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(
                            NIOSSLClientHandler(context: tls, serverHostname: serverName))
                    }
                    let upgrader = NIOTypedWebSocketClientUpgrader<Opening>(
                        maxFrameSize: maximumMessageSize,
                        // A frame the decoder refuses reaches `pass`, which closes both sides with its code;
                        // NIO's own handler would close only the upstream's and cut the client's (1006).
                        enableAutomaticErrorHandling: false,
                        upgradePipelineHandler: { channel, head in
                            channel.eventLoop.makeCompletedFuture {
                                // Fragments joined into messages, as the client's side hands them to the session.
                                try channel.pipeline.syncOperations.addHandler(
                                    NIOWebSocketFrameAggregator(
                                        minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 1 << 16,
                                        maxAccumulatedFrameSize: maximumMessageSize))
                                return .upgraded(try NIOAsyncChannel(wrappingChannelSynchronously: channel), head)
                            }
                        })
                    let configuration = NIOTypedHTTPClientUpgradeConfiguration(
                        upgradeRequestHead: HTTPRequestHead(version: .http1_1, method: .GET, uri: target, headers: headers),
                        upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in
                            channel.eventLoop.makeCompletedFuture {
                                .refused(try NIOAsyncChannel(wrappingChannelSynchronously: channel))
                            }
                        })
                    var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: configuration)
                    // What the upstream sends right after its 101, in the same read, is its first frames: NIO's
                    // default drops those bytes (a greeting lost, the next frame read from its middle).
                    pipeline.leftOverBytesStrategy = .forwardBytes
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: pipeline)
                }
            }
        do {
            return try await negotiated.get()
        } catch {
            // The deadline closed the connection: the error NIO reports is that, not the cause.
            throw pending.hasTimedOut ? TimedOut() : error
        }
    }

    /// An answer other than `101`, read whole up to `limit` bytes of body (the rest is left unread: the
    /// connection is closed after it).
    static func readRefusal(
        _ channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>, limit: Int, pending: Pending
    ) async throws -> (HTTPResponseHead, [UInt8]) {
        do {
            return try await channel.executeThenClose { inbound, _ in
                var head: HTTPResponseHead?
                var body: [UInt8] = []
                reading: for try await part in inbound {
                    switch part {
                    case .head(let answer): head = answer
                    case .body(let buffer):
                        body += buffer.readableBytesView.prefix(limit - body.count)
                        if body.count >= limit { break reading }
                    case .end: break reading
                    }
                }
                guard let head else { throw ChannelError.eof }
                return (head, body)
            }
        } catch {
            // The deadline closed the connection: the error NIO reports is that, not the cause.
            throw pending.hasTimedOut ? TimedOut() : error
        }
    }

    /// Relays messages between the client's socket (`connection`) and the upstream's until one side ends:
    /// a close frame is passed on with its code and reason; an upstream that drops its connection has the
    /// client's dropped, and a client side that ends without the client's close frame (lost, or closed by
    /// a fault) tells the upstream ``clientWentAway``. Each message and the upstream's end go to
    /// `recorder` when the proxy records.
    static func relay(
        _ connection: WebSocketConnection, _ upstream: UpstreamSocket, recorder: WebSocketRecorder? = nil
    ) async throws {
        try await upstream.channel.executeThenClose { fromUpstream, toUpstream in
            try await withThrowingTaskGroup(of: Ending.self) { group in
                group.addTask { try await Self.pass(fromUpstream, to: connection, answering: toUpstream, recorder: recorder) }
                group.addTask {
                    for await message in connection.inbound {
                        recorder?.note(.fromClient(message))
                        let frame: WebSocketFrame
                        switch message {
                        case .text(let text): frame = Self.frame(.text, ByteBuffer(string: text))
                        case .binary(let bytes): frame = Self.frame(.binary, ByteBuffer(bytes: bytes))
                        }
                        do {
                            try await toUpstream.write(frame)
                        } catch {
                            return Task.isCancelled ? .cancelled : .upstreamFailed
                        }
                    }
                    // The recorded session ends with the client's: the upstream's answer to the close below
                    // is not something it said on its own.
                    recorder?.finish()
                    return .clientEnded
                }
                let first = try await group.next()
                defer { group.cancelAll() }
                switch first {
                case .upstreamEnded?: return
                case .upstreamFailed?:
                    await connection.drop()
                    return
                case .clientEnded?, .cancelled?, nil: recorder?.finish()
                }
                // The client's side ended, or the session was cancelled: the transport cancels it once the
                // client's connection is over, and when the server stops. What the inbound holds says which.
                // Each close is written on the channel itself: the writer refuses a cancelled task's writes.
                let channel = upstream.channel.channel
                if let close = connection.inbound.closedWith {
                    // The client closed: the upstream gets its code and reason, and 2 s to answer (the client's
                    // own close was answered at once, so nobody waits on this but the upstream).
                    try? await channel.writeAndFlush(Self.closeFrame(close)).get()
                    guard !Task.isCancelled else { return }
                    group.addTask {
                        try await Task.sleep(for: .seconds(2))
                        return .cancelled
                    }
                    _ = try await group.next()
                } else if connection.inbound.isFinished {
                    // The client's side ended without a close frame of the client's (its connection was lost,
                    // or the mock closed it): the relay, which is the upstream's client, goes away. 1001 every
                    // time, because which of the two happened first is a race the upstream should not see.
                    try? await channel.writeAndFlush(Self.closeFrame(Self.clientWentAway)).get()
                } else {
                    // The server stops: the upstream is told so, and the session closes the client's side with 1001.
                    try? await channel.writeAndFlush(Self.closeFrame(WebSocketClose(code: 1001, reason: "the server stops")))
                        .get()
                    throw CancellationError()
                }
            }
        }
    }

    /// How one direction of the relay ended.
    enum Ending: Sendable {
        /// The upstream closed or dropped its socket (the client's has gone the same way).
        case upstreamEnded
        /// A message could not be written to the upstream: its connection is gone.
        case upstreamFailed
        /// The client's messages ended: it closed, or its connection was lost.
        case clientEnded
        /// The session was cancelled: the server stops.
        case cancelled
    }

    /// The upstream's messages to the client; its pings answered, its close passed on and answered.
    static func pass(
        _ inbound: NIOAsyncChannelInboundStream<WebSocketFrame>, to connection: WebSocketConnection,
        answering outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>, recorder: WebSocketRecorder? = nil
    ) async throws -> Ending {
        /// The upstream broke the protocol: both sides are closed with `close`, as the mock's own sockets
        /// close a client's (RFC 6455 §7.1.7: "fail the WebSocket connection"), and nothing of the frame is
        /// passed on or recorded.
        func fail(_ code: UInt16, _ reason: String) async -> Ending {
            let close = WebSocketClose(code: code, reason: reason)
            try? await outbound.write(Self.closeFrame(close))
            recorder?.note(.upstreamClosed(close))
            await connection.close(close)
            return .upstreamEnded
        }
        do {
            for try await frame in inbound {
                // A server's frames are never masked (RFC 6455 §5.1: the client must fail the connection),
                // and no extension was agreed that could give the reserved bits a meaning.
                if frame.maskKey != nil { return await fail(1002, "the upstream sent a masked frame") }
                if frame.rsv1 || frame.rsv2 || frame.rsv3 {
                    return await fail(1002, "the upstream set reserved bits, and no extension was agreed")
                }
                switch frame.opcode {
                case .text:
                    // Passed on only as sent: a text message that is not UTF-8 ends both sides with 1007
                    // (RFC 6455 §8.1), as the mock's own sockets end a client's, rather than arrive repaired.
                    guard let text = String(validating: frame.unmaskedData.readableBytesView, as: UTF8.self) else {
                        return await fail(1007, "the upstream sent a text message that is not UTF-8")
                    }
                    recorder?.note(.fromUpstream(.text(text)))
                    try await connection.send(.text(text))
                case .binary:
                    let bytes = Array(frame.unmaskedData.readableBytesView)
                    recorder?.note(.fromUpstream(.binary(bytes)))
                    try await connection.send(.binary(bytes))
                case .ping: try await outbound.write(Self.frame(.pong, frame.unmaskedData))
                case .connectionClose:
                    var payload = frame.unmaskedData
                    let code = payload.readInteger(as: UInt16.self)
                    let reason = payload.readString(length: payload.readableBytes) ?? ""
                    // Answered with the same code, as RFC 6455 §5.5.1 has it; an empty close with 1000.
                    try? await outbound.write(Self.closeFrame(WebSocketClose(code: code ?? 1000)))
                    // A code a peer may not send (1005, 1006, 1015) is passed on as 1000.
                    let passed = code.map { WebSocketClose.isSendable(Int($0)) ? $0 : 1000 } ?? 1000
                    recorder?.note(.upstreamClosed(WebSocketClose(code: passed, reason: reason)))
                    await connection.close(WebSocketClose(code: passed, reason: reason))
                    return .upstreamEnded
                case .pong, .continuation: continue  // continuations: the aggregator has joined them already
                default: return await fail(1002, "the upstream sent an opcode RFC 6455 reserves")
                }
            }
        } catch let error as NIOWebSocketError {
            // A frame NIO's decoder refused: over the size limit, or a control frame too long or fragmented.
            return await fail(
                error == .invalidFrameLength ? 1009 : 1002, "the upstream sent a frame that breaks RFC 6455: \(error)")
        } catch let error as NIOWebSocketFrameAggregator.Error {
            let tooLarge = error == .accumulatedFrameSizeIsTooLarge || error == .tooManyFragments
            return await fail(tooLarge ? 1009 : 1002, "the upstream's fragments break RFC 6455: \(error)")
        } catch is WebSocketClosedError {
            // The client's side is gone (it closed, or a fault struck): the upstream is told the client left.
            try? await outbound.write(Self.closeFrame(Self.clientWentAway))
            return .upstreamEnded
        } catch {
            // The upstream broke the protocol or its connection failed (the client's socket goes the same
            // way), or the session was cancelled (below).
        }
        if Task.isCancelled { return .cancelled }
        recorder?.note(.upstreamDropped)
        await connection.drop()
        return .upstreamEnded
    }

    /// What the upstream is told when the client's side ends without the client's own close frame.
    static let clientWentAway = WebSocketClose(code: 1001, reason: "the client went away")

    /// A frame as a client sends it: masked (RFC 6455 §5.3).
    static func frame(_ opcode: WebSocketOpcode, _ data: ByteBuffer) -> WebSocketFrame {
        WebSocketFrame(fin: true, opcode: opcode, maskKey: .random(), data: data)
    }

    static func closeFrame(_ close: WebSocketClose) -> WebSocketFrame {
        var data = ByteBuffer()
        data.writeInteger(close.code)
        data.writeString(close.reason)
        return frame(.connectionClose, data)
    }

    /// Whether `host` is an IP address (TLS sends no server name for one).
    static func isAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }
}

/// The upstream's socket while the client's `101` is on its way: closed when the answer is dropped unsent
/// (a fault answered instead, or the client left), so that no upstream connection outlives its client.
final class UpstreamSocket: Sendable {
    let channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>

    init(_ channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>) { self.channel = channel }

    deinit { channel.channel.close(promise: nil) }
}
