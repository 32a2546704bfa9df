import AsyncHTTPClient
import Foundation
import HammockJSON
import HammockServer
import HammockTestSupport
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization
import Testing

@testable import HammockHTTPServer

/// Streams whose request came whole in its HEADERS frame are answered from the connection's frames
/// (`HTTP2StreamRouter`), the others through a stream channel each. The tests mix both on one connection
/// and ask of the frames path what a channel gave: backpressure from a client that does not read, the end
/// of a body when the client resets its stream, and the head NIO's codec would have made.
@Suite("HTTP/2 streams answered from frames beside streams with a channel", .serialized, .timeLimit(.minutes(2)))
struct HTTP2FrameStreamTests {
    @Test("Requests with and without a body interleave on one connection, and each stream gets its own answer")
    func interleaved() async throws {
        try await HTTP2Tests.withServer { server, base, _, rootPEM in
            let statuses = try await HTTP2Tests.withClient(trusting: rootPEM) { client in
                try await withThrowingTaskGroup(of: (String, Int).self) { group in
                    for index in 0..<90 {
                        group.addTask {
                            switch index % 3 {
                            case 0:
                                let answer = try await HTTP2Tests.exchange(client, .GET, "\(base)/people/\(index % 5 + 1)")
                                #expect(answer.version == .http2)
                                let name = try JSON(parsing: Array(answer.body.utf8))["name"]?.stringValue
                                #expect(name == "Person \(index % 5 + 1)")
                                return ("GET", answer.status)
                            case 1:
                                let answer = try await HTTP2Tests.exchange(
                                    client, .POST, "\(base)/people", body: #"{"name":"New \#(index)"}"#)
                                #expect(answer.version == .http2)
                                return ("POST", answer.status)
                            default:
                                let answer = try await HTTP2Tests.exchange(client, .HEAD, "\(base)/people/2")
                                #expect(answer.body.isEmpty && answer.fields["content-length"] != nil)
                                return ("HEAD", answer.status)
                            }
                        }
                    }
                    return try await group.reduce(into: [String: [Int]]()) { $0[$1.0, default: []].append($1.1) }
                }
            }
            #expect(statuses["GET"] == Array(repeating: 200, count: 30))
            #expect(statuses["POST"] == Array(repeating: 201, count: 30))
            #expect(statuses["HEAD"] == Array(repeating: 200, count: 30))
            // One connection carried all of them: the journal names one peer.
            #expect(Set(server.journal.entries.compactMap(\.peer)).count == 1)
            let list = try await HTTP2Tests.withClient(trusting: rootPEM) { client in
                try await HTTP2Tests.exchange(client, .GET, "\(base)/people")
            }
            #expect(try JSON(parsing: Array(list.body.utf8)).arrayValue?.count == 35)
        }
    }

    @Test(
        "A client that reads none of an endless answer holds its producer back, another stream is answered meanwhile, and resetting the stream stops the producer"
    )
    func backpressureAndReset() async throws {
        let produced = Mutex(0)
        let stopped = Mutex(false)
        let chunk = [UInt8](repeating: 0x61, count: 64 << 10)
        try await HTTP2Tests.withServer { server, base, _, rootPEM in
            try server.route(.get, "/endless") { _ in
                MockResponse(
                    status: .ok,
                    stream: StreamingBody { writer in
                        do {
                            while true {
                                try await writer.write(chunk)
                                produced.withLock { $0 += chunk.count }
                            }
                        } catch {
                            stopped.withLock { $0 = true }
                            throw error
                        }
                    })
            }
            try await HTTP2Tests.withClient(trusting: rootPEM) { client in
                let reader = Task {
                    let response = try await client.execute(HTTPClientRequest(url: "\(base)/endless"), timeout: .seconds(30))
                    #expect(response.version == .http2 && response.status == .ok)
                    // Reads nothing, and waits to be cancelled.
                    try await Task.sleep(for: .seconds(60))
                }
                #expect(await eventually { produced.withLock { $0 } > 0 })
                try await Task.sleep(for: .milliseconds(300))
                // The stream's window (64 KiB) and the connection's buffers, not hundreds of megabytes.
                #expect(
                    produced.withLock { $0 } < 16 << 20, "\(produced.withLock { $0 }) bytes produced for a client that read none")
                let beside = try await HTTP2Tests.exchange(client, .GET, "\(base)/people/1")
                #expect(beside.version == .http2 && beside.status == 200)
                #expect(!stopped.withLock { $0 })
                reader.cancel()
                _ = await reader.result
                #expect(await eventually { stopped.withLock { $0 } })
                // The connection goes on serving.
                #expect(try await HTTP2Tests.exchange(client, .GET, "\(base)/people/2").status == 200)
            }
        }
    }

    @Test(
        "A stream whose client stops reading its streamed body stalls and is reset at the idle timeout, while the connection's other streams carry on"
    )
    func stalledStreamIsReset() async throws {
        let stopped = Mutex(false)
        let chunk = [UInt8](repeating: 0x62, count: 16 << 10)
        // The idle timeout is also the TLS handshake's bound: 2 s leaves a loaded machine room for it.
        try await HTTP2Tests.withServer(limits: ConnectionLimits(idleTimeout: .seconds(2))) { server, base, _, rootPEM in
            try server.route(.get, "/endless") { _ in
                MockResponse(
                    status: .ok,
                    stream: StreamingBody { writer in
                        do {
                            while true { try await writer.write(chunk) }
                        } catch {
                            stopped.withLock { $0 = true }
                            throw error
                        }
                    })
            }
            try await HTTP2Tests.withClient(trusting: rootPEM) { client in
                let response = try await client.execute(HTTPClientRequest(url: "\(base)/endless"), timeout: .seconds(30))
                #expect(response.version == .http2 && response.status == .ok)
                // The client reads nothing and does not cancel: only the server can end the stream.
                let started = ContinuousClock.now
                while !stopped.withLock({ $0 }), ContinuousClock.now - started < .seconds(20) {
                    #expect(try await HTTP2Tests.exchange(client, .GET, "\(base)/people/1").status == 200)
                    try await Task.sleep(for: .milliseconds(200))
                }
                // Reading a stream that was not reset would wait for ever.
                guard stopped.withLock({ $0 }) else {
                    Issue.record("the unread stream was still being produced after 20 s")
                    return
                }
                var received = 0
                do {
                    for try await piece in response.body { received += piece.readableBytes }
                    Issue.record("the stalled stream ended as if complete after \(received) bytes")
                } catch {
                    // Reset: what was buffered arrived, then the stream failed.
                }
                #expect(try await HTTP2Tests.exchange(client, .GET, "\(base)/people/2").status == 200)
            }
        }
    }

    @Test(
        "Streams reset at random moments, before, during and after their answers, leave the others whole and the connection serving"
    )
    func resetsAtRandom() async throws {
        try await HTTP2Tests.withServer { server, base, _, rootPEM in
            try server.route(.get, "/slow/:n") { route in
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...20)))
                return MockResponse(json: ["n": .string(route.parameters["n"] ?? "")])
            }
            try await HTTP2Tests.withClient(trusting: rootPEM) { client in
                for round in 0..<3 {
                    let outcomes = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                        var tasks: [Task<String?, Never>] = []
                        for index in 0..<100 {
                            let task = Task { () -> String? in
                                guard
                                    let answer = try? await HTTP2Tests.exchange(client, .GET, "\(base)/slow/\(index)"),
                                    answer.status == 200
                                else { return nil }
                                return try? JSON(parsing: Array(answer.body.utf8))["n"]?.stringValue
                            }
                            tasks.append(task)
                            group.addTask { (index, await task.value) }
                        }
                        // Every other stream is cancelled (AsyncHTTPClient resets it) after up to 25 ms.
                        for index in stride(from: 1, to: 100, by: 2) {
                            group.addTask {
                                try await Task.sleep(for: .milliseconds(Int.random(in: 0...25)))
                                tasks[index].cancel()
                                return (-1, nil)
                            }
                        }
                        return try await group.reduce(into: [Int: String?]()) { if $1.0 >= 0 { $0[$1.0] = $1.1 } }
                    }
                    for index in stride(from: 0, to: 100, by: 2) {
                        #expect(outcomes[index] == .some("\(index)"), "round \(round), stream \(index)")
                    }
                    // A cancelled stream that was answered anyway got its own answer, never another's.
                    for index in stride(from: 1, to: 100, by: 2) {
                        if case .some(.some(let n)) = outcomes[index] { #expect(n == "\(index)") }
                    }
                }
                #expect(try await HTTP2Tests.exchange(client, .GET, "\(base)/people/1").status == 200)
            }
        }
    }

    /// A route that takes streamed bodies and reads nothing past its first piece until it is let go.
    /// A flag set once.
    final class Flag: Sendable {
        private let value = Mutex(false)
        var isSet: Bool { value.withLock { $0 } }
        func set() { value.withLock { $0 = true } }
    }

    struct HeldSink: MockRoutes {
        let isLetGo: Flag
        func endpoint(for request: MockRequest) throws -> MockEndpoint? {
            guard request.path == "/sink" else { return nil }
            return MockEndpoint(methods: [.post], takesStreamedBody: true) { request in
                var count = 0
                if let stream = request.bodyStream {
                    for try await piece in stream {
                        count += piece.count
                        while !isLetGo.isSet { try await Task.sleep(for: .milliseconds(5)) }
                    }
                }
                return MockResponse(json: ["bytes": .integer(count)])
            }
        }
        var routeTable: [RouteTableEntry] { [RouteTableEntry(methods: [.post], pattern: "/sink")] }
        var mayTakeStreamedBodies: Bool { true }
    }

    /// An HTTP/2 client on NIO's own handler that counts the bytes of DATA that have left it: NIO holds
    /// back what the server's flow-control windows do not allow, so the count is what the server let in.
    /// (AsyncHTTPClient takes a request body into its own buffers whatever the windows say, so it cannot
    /// tell.) Everything runs on the channel's event loop; the count and the status cross to the test
    /// through a lock and a promise.
    final class UploadCounter: ChannelInboundHandler {
        typealias InboundIn = HTTP2Frame
        typealias OutboundOut = HTTP2Frame

        final class Tally: Sendable {
            let sent = Mutex(0)
        }
        let tally: Tally
        let status: EventLoopPromise<String>

        init(tally: Tally, status: EventLoopPromise<String>) {
            self.tally = tally
            self.status = status
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            if case .headers(let headers) = frame.payload, let code = headers.headers.first(name: ":status") {
                status.succeed(code)
            } else if case .rstStream(let code) = frame.payload {
                status.fail(NIOHTTP2Errors.streamClosed(streamID: frame.streamID, errorCode: code))
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            status.fail(error)
            context.close(promise: nil)
        }

        /// Sends a POST of `pieces` DATA frames of `piece` to `path`, each counted once written.
        func upload(_ piece: ByteBuffer, pieces: Int, to path: String, context: ChannelHandlerContext) {
            let headers: HPACKHeaders = [
                ":method": "POST", ":scheme": "https", ":path": path, ":authority": "127.0.0.1",
                "content-length": String(piece.readableBytes * pieces),
            ]
            let stream = HTTP2StreamID(1)
            context.write(wrapOutboundOut(HTTP2Frame(streamID: stream, payload: .headers(.init(headers: headers)))), promise: nil)
            for index in 0..<pieces {
                let promise = context.eventLoop.makePromise(of: Void.self)
                let tally = self.tally
                let size = piece.readableBytes
                promise.futureResult.whenSuccess { tally.sent.withLock { $0 += size } }
                let data = HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(piece), endStream: index == pieces - 1))
                context.write(wrapOutboundOut(HTTP2Frame(streamID: stream, payload: data)), promise: promise)
            }
            context.flush()
        }
    }

    @Test(
        "An upload on a stream whose route does not read is held back by the stream's window, and arrives whole once the route reads"
    )
    func uploadFlowControl() async throws {
        let sink = HeldSink(isLetGo: Flag())
        let tally = UploadCounter.Tally()
        let piece = ByteBuffer(repeating: 0x63, count: 16_384)  // the largest frame a peer must take
        let pieces = 1024  // 16 MiB
        try await HTTP2Tests.withServer { server, base, _, rootPEM in
            server.addRoutes(sink, first: true)
            let port = try #require(URLComponents(string: base)?.port)
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMBytes(Array(rootPEM.utf8)))]
            tls.applicationProtocols = ["h2"]
            let sslContext = try NIOSSLContext(configuration: tls)
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            let status = loop.makePromise(of: String.self)
            let channel = try await ClientBootstrap(group: loop).channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: nil))
                    try pipeline.addHandler(NIOHTTP2Handler(mode: .client))
                    try pipeline.addHandler(UploadCounter(tally: tally, status: status))
                }
            }.connect(host: "127.0.0.1", port: port).get()
            try await channel.eventLoop.submit {
                let context = try channel.pipeline.syncOperations.context(handlerType: UploadCounter.self)
                guard let counter = context.handler as? UploadCounter else { return }
                counter.upload(piece, pieces: pieces, to: "/sink", context: context)
            }.get()
            #expect(await eventually { tally.sent.withLock { $0 } > 0 })
            try await Task.sleep(for: .milliseconds(500))
            // The route read one piece. What it has not read waits in the body's buffer (256 KiB) and on
            // its stream (its 64 KiB window): nothing more is let in.
            let held = tally.sent.withLock { $0 }
            #expect(held < 1 << 20, "\(held) bytes let in for a route that read one piece")
            sink.isLetGo.set()
            #expect(try await status.futureResult.get() == "200")
            #expect(await eventually { tally.sent.withLock { $0 } == pieces * piece.readableBytes })
            try await channel.close()
        }
    }

    /// An HTTP/2 client on NIO's own handler, its header validation off so that it can send what NIO
    /// refuses, which records what became of each stream: its status, or the code of its reset.
    final class StreamOutcomes: ChannelInboundHandler {
        typealias InboundIn = HTTP2Frame
        typealias OutboundOut = HTTP2Frame

        final class Record: Sendable {
            let outcomes = Mutex<[Int: String]>([:])
        }
        let record: Record

        init(record: Record) { self.record = record }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            let id = Int(frame.streamID)
            switch frame.payload {
            case .headers(let headers):
                if let status = headers.headers.first(name: ":status") { record.outcomes.withLock { $0[id] = status } }
            case .rstStream(let code):
                record.outcomes.withLock { $0[id] = "reset \(code)" }
            default:
                break
            }
        }

        func send(_ requests: [(id: Int, fields: HPACKHeaders)], context: ChannelHandlerContext) {
            for request in requests {
                let frame = HTTP2Frame(
                    streamID: HTTP2StreamID(request.id), payload: .headers(.init(headers: request.fields, endStream: true)))
                context.write(wrapOutboundOut(frame), promise: nil)
            }
            context.flush()
        }
    }

    @Test("A stream's error is its own: a request NIO refuses is reset, and the connection's other streams are answered")
    func streamErrorIsTheStreams() async throws {
        let record = StreamOutcomes.Record()
        try await HTTP2Tests.withServer { server, base, _, rootPEM in
            try server.route(.get, "/slow") { _ in
                try await Task.sleep(for: .milliseconds(300))
                return MockResponse(json: ["slow": true])
            }
            let port = try #require(URLComponents(string: base)?.port)
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMBytes(Array(rootPEM.utf8)))]
            tls.applicationProtocols = ["h2"]
            let sslContext = try NIOSSLContext(configuration: tls)
            var configuration = NIOHTTP2Handler.ConnectionConfiguration()
            configuration.headerBlockValidation = .disabled
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).channelInitializer {
                channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: nil))
                    try pipeline.addHandler(NIOHTTP2Handler(mode: .client, connectionConfiguration: configuration))
                    try pipeline.addHandler(StreamOutcomes(record: record))
                }
            }.connect(host: "127.0.0.1", port: port).get()
            let base: HPACKHeaders = [":method": "GET", ":scheme": "https", ":authority": "127.0.0.1"]
            var slow = base
            slow.add(name: ":path", value: "/slow")
            var bad = base
            bad.add(name: ":path", value: "/people")
            bad.add(name: "X-Bad", value: "upper case")  // RFC 9113 §8.2.1: malformed, a stream error
            var after = base
            after.add(name: ":path", value: "/people/1")
            try await channel.eventLoop.submit {
                let context = try channel.pipeline.syncOperations.context(handlerType: StreamOutcomes.self)
                guard let client = context.handler as? StreamOutcomes else { return }
                client.send([(1, slow), (3, bad), (5, after)], context: context)
            }.get()
            #expect(await eventually { record.outcomes.withLock { $0.count } == 3 })
            let outcomes = record.outcomes.withLock { $0 }
            #expect(outcomes[3]?.hasPrefix("reset") == true, "\(outcomes)")
            #expect(outcomes[1] == "200" && outcomes[5] == "200", "\(outcomes)")
            #expect(channel.isActive)
            try await channel.close()
        }
    }

    @Test(
        "The head of a request that came whole is the one NIO's HTTP/2-to-HTTP/1 codec makes; what the codec refuses takes the channel's path"
    )
    func requestHeads() throws {
        let get = try #require(
            HTTP2StreamRouter.requestHead([
                ":method": "GET", ":scheme": "https", ":path": "/people?_page=2", ":authority": "localhost:8443",
                "accept": "application/json",
            ]))
        #expect(get.version == HTTPVersion(major: 2, minor: 0))
        #expect(get.method == .GET && get.uri == "/people?_page=2")
        #expect(get.headers["host"] == ["localhost:8443"])
        #expect(get.headers["accept"] == ["application/json"])
        #expect(get.headers["content-length"].isEmpty)
        // A POST whose HEADERS ended the stream has an empty body, said by its length.
        let post = try #require(
            HTTP2StreamRouter.requestHead([":method": "POST", ":scheme": "https", ":path": "/people", ":authority": "x"]))
        #expect(post.headers["content-length"] == ["0"])
        // A Host field of its own is kept, not doubled.
        let hosted = try #require(
            HTTP2StreamRouter.requestHead([
                ":method": "GET", ":scheme": "https", ":path": "/", ":authority": "a", "host": "b",
            ]))
        #expect(hosted.headers["host"] == ["b"])
        // Missing or repeated pseudo-headers, and values with spaces: nil, so NIO's codec refuses them.
        #expect(HTTP2StreamRouter.requestHead([":method": "GET", ":scheme": "https", ":authority": "x"]) == nil)
        #expect(HTTP2StreamRouter.requestHead([":method": "GET", ":path": "/", ":authority": "x"]) == nil)
        #expect(HTTP2StreamRouter.requestHead([":method": "GET", ":scheme": "https", ":path": "/"]) == nil)
        #expect(
            HTTP2StreamRouter.requestHead([
                ":method": "GET", ":method": "POST", ":scheme": "https", ":path": "/", ":authority": "x",
            ]) == nil)
        #expect(
            HTTP2StreamRouter.requestHead([":method": "GET", ":scheme": "https", ":path": "/a b", ":authority": "x"]) == nil)
    }
}
