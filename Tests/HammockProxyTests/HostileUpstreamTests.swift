import Foundation
import HTTPTypes
import HammockHTTPServer
import HammockJSON
import HammockProxy
import HammockServer
import HammockWire
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// A backend that answers every request with the same bytes, as written, then closes: what a server no
/// one here wrote can send a proxy when it goes wrong. (`scripts/reliability --only backend` runs the
/// longer list over the socket: smuggling, lengths, floods, answers that never end.)
final class RawUpstream: Sendable {
    let channel: any Channel
    func url() throws -> URL { try #require(URL(string: "http://127.0.0.1:\(channel.localAddress?.port ?? 0)")) }

    private final class Answer: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let answer: @Sendable (String) -> [UInt8]
        let closes: Bool
        private var head: [UInt8] = []
        private var answered = false

        init(_ answer: @escaping @Sendable (String) -> [UInt8], closes: Bool) {
            self.answer = answer
            self.closes = closes
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !answered else { return }  // a WebSocket's frames after the handshake: read and dropped
            head += unwrapInboundIn(data).readableBytesView
            guard head.count >= 4, head.suffix(4) == Array("\r\n\r\n".utf8) else { return }
            answered = true
            let bytes = answer(String(decoding: head, as: UTF8.self))
            let closes = self.closes
            context.writeAndFlush(NIOAny(context.channel.allocator.buffer(bytes: bytes))).assumeIsolated()
                .whenComplete { _ in if closes { context.close(promise: nil) } }
        }
    }

    /// A backend answering `bytes` to the first request on each connection, then closing it.
    convenience init(answering bytes: String) async throws {
        let answer = Array(bytes.utf8)
        try await self.init(closes: true) { _ in answer }
    }

    /// A backend answering what `answer` makes of the first request's head on each connection; one that
    /// does not close leaves that to the proxy.
    init(closes: Bool, answer: @escaping @Sendable (String) -> [UInt8]) async throws {
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Answer(answer, closes: closes))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    /// A right `101` to the WebSocket handshake in `head`: `Sec-WebSocket-Accept` made from its key.
    static func webSocketHandshake(_ head: String) -> [UInt8] {
        let key =
            head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-key:") }
            .map { $0.dropFirst("sec-websocket-key:".count).trimmingCharacters(in: .whitespaces) } ?? ""
        return Array(
            ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: \(WebSocketHandshake.accept(forKey: key))\r\n\r\n").utf8)
    }

    func stop() async { try? await channel.close() }
}

/// A webhook's receiver that, after the head of its answer, sends without end as fast as it is read, or
/// drips a byte every 50 ms of a body it says is 1,000 bytes long; it notes when the sender closes.
final class EndlessReceiver: Sendable {
    enum Manner: Sendable { case flood, drip }

    private final class Count: Sendable {
        let value = Atomic(0)
    }

    let channel: any Channel
    private let closedCount = Count()
    /// Connections the sender has closed.
    var closed: Int { closedCount.value.load(ordering: .relaxed) }

    private final class Sender: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let manner: Manner
        let closed: @Sendable () -> Void
        private var started = false
        private var drip: Scheduled<Void>?

        init(_ manner: Manner, closed: @escaping @Sendable () -> Void) {
            self.manner = manner
            self.closed = closed
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !started else { return }
            started = true
            switch manner {
            case .flood:
                context.write(NIOAny(ByteBuffer(string: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")), promise: nil)
                flood(context: context)
            case .drip:
                context.writeAndFlush(NIOAny(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")), promise: nil)
                dripOne(context: context)
            }
        }

        private func dripOne(context: ChannelHandlerContext) {
            drip = context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(50)) {
                guard context.channel.isActive else { return }
                context.writeAndFlush(NIOAny(ByteBuffer(string: "d")), promise: nil)
                self.dripOne(context: context)
            }
        }

        private func flood(context: ChannelHandlerContext) {
            let chunk = ByteBuffer(string: "10000\r\n" + String(repeating: "e", count: 65536) + "\r\n")
            while context.channel.isActive && context.channel.isWritable {
                context.write(NIOAny(chunk), promise: nil)
                context.flush()
            }
        }

        func channelWritabilityChanged(context: ChannelHandlerContext) {
            if manner == .flood, context.channel.isWritable { flood(context: context) }
        }

        func channelInactive(context: ChannelHandlerContext) {
            drip?.cancel()
            closed()
        }
    }

    init(_ manner: Manner) async throws {
        let count = closedCount
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        Sender(manner) { count.value.add(1, ordering: .relaxed) })
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    func url() throws -> URL { try #require(URL(string: "http://127.0.0.1:\(channel.localAddress?.port ?? 0)/hook")) }

    func stop() async { try? await channel.close() }
}

@Suite("Peers that break HTTP: a backend behind the proxy, a webhook's receiver", .timeLimit(.minutes(1)))
struct HostileUpstreamTests {
    /// What the mock answers `GET /x` with, proxied to a backend that answers `bytes`.
    static func proxied(_ bytes: String) async throws -> MockResponse {
        let upstream = try await RawUpstream(answering: bytes)
        do {
            let response = try await withServer(try await MockServer(resources: [])) { server in
                server.addRoutes(try ProxyRoutes(upstream: try upstream.url(), timeout: .seconds(10)), first: false)
                return await server.respond(to: MockRequest(.get, "/x"))
            }
            await upstream.stop()
            return response
        } catch {
            await upstream.stop()
            throw error
        }
    }

    @Test("An answer that is not HTTP/1.1 is a 502 that says the backend was reached and what was wrong")
    func notHTTP() async throws {
        for bytes in [
            "HTX/1.1 2OO OK\r\nContent-Length: 2\r\n\r\nok",
            "HTTP/1.1 200 OK\r\nX-Evil: a\rSet-Cookie: smuggled=1\r\nContent-Length: 2\r\n\r\nok",
            "ok\n",
        ] {
            let response = try await Self.proxied(bytes)
            #expect(response.status == .badGateway, "\(bytes.debugDescription)")
            #expect(response.headerFields[.contentType] == "application/problem+json")
            let detail = try response.json()["detail"]?.stringValue ?? ""
            #expect(detail.contains("answered with what is not HTTP/1.1"), "\(detail)")
            #expect(response.headerFields[.setCookie] == nil)
        }
    }

    @Test("A 101 to a request that asked for no upgrade is a 502 naming the backend, not the mock's own 500")
    func unaskedUpgrade() async throws {
        let response = try await Self.proxied(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: evil\r\nConnection: Upgrade\r\n\r\nHTTP/1.1 200 OK\r\n\r\n")
        #expect(response.status == .badGateway)
        let problem = try response.json()
        #expect(problem["detail"]?.stringValue?.contains("answered 101 to a request that asked to switch no protocol") == true)
        #expect(problem["upstream"] != nil)
    }

    @Test("An interim 103 before the answer is passed by: the client gets the final 200")
    func earlyHints() async throws {
        let response = try await Self.proxied(
            "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        #expect(response.status == .ok)
        #expect(response.body == Array("ok".utf8))
    }

    @Test(
        "A backend that breaks RFC 6455 after its handshake (a masked frame, a reserved opcode or bit, a control frame too long) has the client's socket closed with 1002, and nothing of the frame reaches it"
    )
    func brokenWebSocketFrames() async throws {
        let smuggled = Array("smuggled".utf8)
        let frames: [(String, [UInt8])] = [
            ("masked", [0x81, 0x88, 0, 0, 0, 0] + smuggled),
            ("reserved opcode", [0x83, 0x08] + smuggled),
            ("reserved bit", [0xC1, 0x08] + smuggled),
            ("a ping of 126 bytes", [0x89, 0x7E, 0x00, 0x7E] + [UInt8](repeating: 0x73, count: 126)),
        ]
        for (name, frame) in frames {
            let upstream = try await RawUpstream(closes: false) { head in RawUpstream.webSocketHandshake(head) + frame }
            do {
                try await withServer(try await MockServer(resources: [])) { server in
                    server.addRoutes(try ProxyRoutes(upstream: try upstream.url(), timeout: .seconds(10)), first: false)
                    let socket = try await server.connectWebSocket("/ws")
                    var messages: [WebSocketMessage] = []
                    for await message in socket.messages { messages.append(message) }
                    #expect(messages.isEmpty, "\(name)")
                    #expect(socket.closedWith?.code == 1002, "\(name): \(String(describing: socket.closedWith))")
                }
                await upstream.stop()
            } catch {
                await upstream.stop()
                throw error
            }
        }
    }

    @Test(
        "A webhook's receiver that answers without end, or drips its body, is read up to 64 KiB and within the attempt's timeout, then its connection is closed"
    )
    func endlessWebhookAnswers() async throws {
        for manner in [EndlessReceiver.Manner.flood, .drip] {
            let receiver = try await EndlessReceiver(manner)
            do {
                // 3 s, not 1: a loaded full run (8 suites at once) once took more than a second to bring the
                // receiver's head, and the attempt ended before the body this test is about.
                let client = try WebhookClient(timeout: .seconds(3))
                let answer = try await client.send(
                    WebhookRequest(method: .post, url: try receiver.url(), headerFields: [:], body: Array("{}".utf8)))
                #expect(answer.status == .ok, "\(manner)")
                switch manner {
                case .flood: #expect(answer.body.count == WebhookClient.bodyLimit)
                case .drip: #expect(answer.body.count < 1000 && answer.body.allSatisfy { $0 == UInt8(ascii: "d") })
                }
                // The receiver sees its connection closed: nothing is left reading it.
                for _ in 0..<100 where receiver.closed == 0 { try await Task.sleep(for: .milliseconds(50)) }
                #expect(receiver.closed == 1, "\(manner)")
                await receiver.stop()
            } catch {
                await receiver.stop()
                throw error
            }
        }
    }

    @Test(
        "A proxy that leads back to its own mock answers 508 at once, naming the loop, for a request and a WebSocket; a chain of two mocks is no loop"
    )
    func proxyLoop() async throws {
        let server = try await MockServer(resources: [])
        do {
            let port = try await server.start(host: "127.0.0.1", port: 0)
            let own = try #require(URL(string: "http://127.0.0.1:\(port)"))
            server.addRoutes(try ProxyRoutes(upstream: own, timeout: .seconds(10)), first: false)
            let looped = await server.respond(to: MockRequest(.get, "/anything"))
            #expect(looped.status.code == 508)
            #expect(looped.headerFields[.contentType] == "application/problem+json")
            #expect(try looped.json()["detail"]?.stringValue?.contains("the proxy leads to itself") == true)
            // One round: the first hop forwarded, the second refused; two requests in the journal, not hundreds.
            #expect(server.journal.entries.count == 2)

            var handshake = MockRequest(.get, "/socket")
            handshake.headerFields[.upgrade] = "websocket"
            handshake.headerFields[.connection] = "Upgrade"
            handshake.headerFields[.secWebSocketKey] = "dGhlIHNhbXBsZSBub25jZQ=="
            handshake.headerFields[.secWebSocketVersion] = "13"
            #expect(await server.respond(to: handshake).status.code == 508)
            await server.stop()
        } catch {
            await server.stop()
            throw error
        }

        // Two mocks in one process, the first in front of the second: each hop has its own name.
        let back = try await MockServer(resources: [MockResource("people", fields: ["name": .string])])
        let middle = try await MockServer(resources: [])
        let front = try await MockServer(resources: [])
        do {
            let port = try await back.start(host: "127.0.0.1", port: 0)
            let middlePort = try await middle.start(host: "127.0.0.1", port: 0)
            middle.addRoutes(
                try ProxyRoutes(upstream: try #require(URL(string: "http://127.0.0.1:\(port)")), timeout: .seconds(10)),
                first: false)
            front.addRoutes(
                try ProxyRoutes(upstream: try #require(URL(string: "http://127.0.0.1:\(middlePort)")), timeout: .seconds(10)),
                first: false)
            let answer = await front.respond(to: MockRequest(.get, "/people"))
            #expect(answer.status == .ok)
            await middle.stop()
            await front.stop()
            await back.stop()
        } catch {
            await middle.stop()
            await front.stop()
            await back.stop()
            throw error
        }
    }
}
