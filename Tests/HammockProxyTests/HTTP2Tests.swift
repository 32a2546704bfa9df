import AsyncHTTPClient
import Foundation
import HammockHTTPServer
import HammockJSON
import HammockServer
import HammockTestSupport
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOTLS
import Synchronization
import Testing

/// HTTP/2 on the HTTPS port, negotiated by ALPN, checked by clients no one here wrote: AsyncHTTPClient
/// (which multiplexes its requests on one connection) and curl (nghttp2). One connection handler serves
/// both protocols, so the tests ask that HTTP/2 answers be HTTP/1.1's, and that what HTTP/1.1 says by
/// closing a connection, HTTP/2 says by resetting one stream while the others carry on. One test at a
/// time: each makes TLS handshakes in a debug build of BoringSSL, and the whole suite at once added to
/// the bursts in which a loaded run of the full suite stalls.
@Suite(
    "HTTP/2: negotiated on the HTTPS port, the same answers, one stream's fault is its own", .serialized,
    .timeLimit(.minutes(2)))
struct HTTP2Tests {
    /// A server with people over HTTPS, the authority's root in a file for curl, stopped after `body`.
    static func withServer(
        limits: ConnectionLimits = ConnectionLimits(), offersHTTP2: Bool = true,
        _ body: (MockServer, _ base: String, _ root: String, _ rootPEM: String) async throws -> Void
    ) async throws {
        let authority = try LocalCertificateAuthority.make()
        let server = try await MockServer(resources: [MockResource("people", fields: ["name": .string])])
        _ = try await server.addData(JSON.array((1...5).map { ["name": .string("Person \($0)")] }), for: "people")
        var identity = try authority.issue(for: ["localhost", "127.0.0.1"])
        identity.offersHTTP2 = offersHTTP2
        let port = try await server.start(port: 0, limits: limits, tls: identity)
        let root = TemporaryFiles.path("root", extension: "pem")
        try Data(authority.certificatePEM.utf8).write(to: URL(fileURLWithPath: root))
        do {
            try await body(server, "https://127.0.0.1:\(port)", root, authority.certificatePEM)
            await server.stop()
        } catch {
            await server.stop()
            throw error
        }
    }

    /// An AsyncHTTPClient trusting `rootPEM` (``HTTPSTests/withClient(trusting:http1Only:_:)``).
    static func withClient<T>(
        trusting rootPEM: String, http1Only: Bool = false, _ body: (HTTPClient) async throws -> T
    ) async throws -> T {
        try await HTTPSTests.withClient(trusting: rootPEM, http1Only: http1Only, body)
    }

    /// What a test compares between the protocols: status, the fields both carry, the body.
    struct Answer: Equatable {
        var version: HTTPVersion
        var status: Int
        var fields: [String: String]
        var body: String
    }

    static func exchange(
        _ client: HTTPClient, _ method: HTTPMethod, _ url: String, body: String? = nil
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = method
        if let body {
            request.headers.add(name: "content-type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await client.execute(request, timeout: .seconds(10))
        var fields: [String: String] = [:]
        for name in ["content-type", "content-length", "etag", "location", "x-total-count"] {
            fields[name] = response.headers.first(name: name)
        }
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return Answer(
            version: response.version, status: Int(response.status.code), fields: fields, body: String(buffer: bytes))
    }

    @Test("A client that offers HTTP/2 gets it, and every answer is the one HTTP/1.1 gets: GET, HEAD, POST, DELETE, 404, 412")
    func sameAnswers() async throws {
        try await Self.withServer { _, base, _, rootPEM in
            let (http2, http1) = try await Self.withClient(trusting: rootPEM) { h2 in
                try await Self.withClient(trusting: rootPEM, http1Only: true) { h1 in
                    var answers: ([Answer], [Answer]) = ([], [])
                    // Each step on both protocols, in the same order, so the data stays alike: the second
                    // create and delete act on records of their own.
                    for client in [h2, h1] {
                        var got: [Answer] = []
                        got.append(try await Self.exchange(client, .GET, "\(base)/people/1"))
                        got.append(try await Self.exchange(client, .HEAD, "\(base)/people/2"))
                        got.append(try await Self.exchange(client, .GET, "\(base)/people?_sort=-id&_per_page=2"))
                        got.append(try await Self.exchange(client, .GET, "\(base)/nobody"))
                        var conditional = HTTPClientRequest(url: "\(base)/people/3")
                        conditional.method = .PATCH
                        conditional.headers.add(name: "if-match", value: "\"stale\"")
                        conditional.headers.add(name: "content-type", value: "application/json")
                        conditional.body = .bytes(ByteBuffer(string: #"{"name":"X"}"#))
                        let refused = try await client.execute(conditional, timeout: .seconds(10))
                        got.append(
                            Answer(
                                version: refused.version, status: Int(refused.status.code), fields: [:],
                                body: String(buffer: try await refused.body.collect(upTo: 1 << 20))))
                        if client === h2 { answers.0 = got } else { answers.1 = got }
                    }
                    return answers
                }
            }
            #expect(http2.allSatisfy { $0.version == .http2 })
            #expect(http1.allSatisfy { $0.version == .http1_1 })
            #expect(http2.map(\.status) == [200, 200, 200, 404, 412])
            for (two, one) in zip(http2, http1) {
                #expect(two.status == one.status && two.fields == one.fields && two.body == one.body)
            }
            // HEAD keeps the length of the body it does not send, on both.
            #expect(http2[1].body.isEmpty && http2[1].fields["content-length"] != nil)
            #expect(http2[3].fields["content-type"] == "application/problem+json")
            // Writes: a create is 201 with its Location, a delete 204 with no body, on HTTP/2.
            try await Self.withClient(trusting: rootPEM) { h2 in
                let created = try await Self.exchange(h2, .POST, "\(base)/people", body: #"{"name":"Eve"}"#)
                #expect(created.version == .http2 && created.status == 201)
                let location = try #require(created.fields["location"])
                let gone = try await Self.exchange(h2, .DELETE, "\(base)\(location)")
                #expect(gone.status == 204 && gone.body.isEmpty)
                #expect(try await Self.exchange(h2, .GET, "\(base)\(location)").status == 404)
            }
        }
    }

    @Test("A hundred concurrent requests are multiplexed on one connection, and each gets its own record")
    func multiplexing() async throws {
        try await Self.withServer { server, base, _, rootPEM in
            let names = try await Self.withClient(trusting: rootPEM) { client in
                try await withThrowingTaskGroup(of: (Int, String).self) { group in
                    for index in 0..<100 {
                        group.addTask {
                            let id = index % 5 + 1
                            let answer = try await Self.exchange(client, .GET, "\(base)/people/\(id)")
                            #expect(answer.version == .http2 && answer.status == 200)
                            return (id, try JSON(parsing: Array(answer.body.utf8))["name"]?.stringValue ?? "")
                        }
                    }
                    return try await group.reduce(into: [(Int, String)]()) { $0.append($1) }
                }
            }
            #expect(names.count == 100)
            #expect(names.allSatisfy { $0.1 == "Person \($0.0)" })
            // The journal names each request's peer: one address and port, so one connection.
            let peers = Set(server.journal.entries.compactMap(\.peer))
            #expect(peers.count == 1)
        }
    }

    @Test(
        "A connection fault resets only its stream: curl sees each one fail, while a request beside it on the same connection is answered"
    )
    func faultsResetOneStream() async throws {
        try await Self.withServer { server, base, root, _ in
            for (id, kind) in [(2, ConnectionFault.reset), (3, .drop), (4, .malformed), (5, .empty)] {
                server.addFault(try Fault("GET /people/\(id)", effect: .connection(kind)))
            }
            server.addFault(try Fault("GET /people", effect: .connection(.truncate)))
            var arguments = ["curl", "-s", "--http2", "--cacert", root, "--parallel"]
            for path in ["/people/2", "/people/1", "/people/3", "/people/4", "/people/5", "/people"] {
                arguments += ["-o", "/dev/null", "-w", "%{url} %{http_code} %{http_version}\\n", "\(base)\(path)"]
            }
            let (out, _) = try await runToEnd(arguments)
            let lines = Set(out.split(separator: "\n").map(String.init))
            #expect(lines.contains("\(base)/people/1 200 2"))
            for path in ["/people/2", "/people/3", "/people/4", "/people/5"] {
                #expect(lines.contains("\(base)\(path) 000 0") || lines.contains("\(base)\(path) 000 2"), "\(path): \(out)")
            }
            // A truncated body: the head arrives, then the stream is reset; curl says so (92).
            let (_, truncated) = try await runToEnd(["curl", "-s", "--http2", "--cacert", root, "\(base)/people"])
            #expect(truncated == 92)
            let peers = Set(server.journal.entries.filter { $0.request.path != "/people" }.compactMap(\.peer))
            #expect(peers.count == 1)
        }
    }

    @Test("A body over the limit is 413 on its stream, and the next request takes the same connection")
    func bodyOverTheLimit() async throws {
        try await Self.withServer { _, base, root, _ in
            let big = TemporaryFiles.path("big", extension: "json")
            try Data(repeating: UInt8(ascii: "a"), count: 3 << 20).write(to: URL(fileURLWithPath: big))
            let (out, status) = try await runToEnd([
                "curl", "-s", "--http2", "--cacert", root, "-o", "/dev/null", "-w", "%{http_code} %{num_connects}\\n",
                "-H", "content-type: application/json", "--data-binary", "@\(big)", "\(base)/people",
                "--next", "--http2", "--cacert", root, "-o", "/dev/null", "-w", "%{http_code} %{num_connects}\\n",
                "\(base)/people/1",
            ])
            #expect(status == 0)
            #expect(out == "413 1\n200 0\n")
        }
    }

    @Test("A stream whose body stops arriving gets 408 after the request timeout, and the connection stays usable")
    func requestTimeout() async throws {
        try await Self.withServer(limits: ConnectionLimits(requestTimeout: .milliseconds(300))) { _, base, _, rootPEM in
            try await Self.withClient(trusting: rootPEM) { client in
                var request = HTTPClientRequest(url: "\(base)/people")
                request.method = .POST
                request.headers.add(name: "content-type", value: "application/json")
                // Half a body, then nothing: the stream stays open on the client's side.
                let (pieces, continuation) = AsyncStream.makeStream(of: ByteBuffer.self)
                continuation.yield(ByteBuffer(string: #"{"name":"#))
                request.body = .stream(pieces, length: .unknown)
                let response = try await client.execute(request, timeout: .seconds(10))
                #expect(response.version == .http2 && response.status == .requestTimeout)
                let problem = try JSON(parsing: Array(try await response.body.collect(upTo: 1 << 16).readableBytesView))
                #expect(problem["status"] == 408)
                continuation.finish()
                #expect(try await Self.exchange(client, .GET, "\(base)/people/1").status == 200)
            }
        }
    }

    @Test("A throttled body arrives in pieces over HTTP/2, and stopping the server ends an open event stream")
    func streamsAndStop() async throws {
        let authority = try LocalCertificateAuthority.make()
        let server = try await MockServer(resources: [MockResource("people", fields: ["name": .string])])
        _ = try await server.addData(JSON.array((1...40).map { ["name": .string("Person number \($0)")] }), for: "people")
        server.addFault(try Fault("GET /people", effect: .bandwidth(20_000)))
        let port = try await server.start(port: 0, tls: try authority.issue(for: ["127.0.0.1"]))
        let base = "https://127.0.0.1:\(port)"
        do {
            try await Self.withClient(trusting: authority.certificatePEM) { client in
                let response = try await client.execute(
                    HTTPClientRequest(url: "\(base)/people?_per_page=40"), timeout: .seconds(10))
                #expect(response.version == .http2)
                var pieces = 0
                var bytes = 0
                for try await piece in response.body {
                    pieces += 1
                    bytes += piece.readableBytes
                }
                // About 2.4 KB at 20,000 B/s in slices of a twentieth of a second (1,000 bytes): several DATA frames.
                #expect(pieces >= 2)
                #expect(bytes == Int(response.headers.first(name: "content-length") ?? "") ?? -1)
                // HEAD of a streamed answer: the head alone, and the stream ends (it once stayed open).
                var head = HTTPClientRequest(url: "\(base)/people?_per_page=40")
                head.method = .HEAD
                let headAnswer = try await client.execute(head, timeout: .seconds(10))
                #expect(headAnswer.version == .http2 && headAnswer.status == .ok)
                #expect(try await headAnswer.body.collect(upTo: 1 << 16).readableBytes == 0)

                let events = try await client.execute(
                    HTTPClientRequest(url: "\(base)/__hammock/events"), timeout: .seconds(30))
                #expect(events.version == .http2 && events.status == .ok)
                let seen = Mutex("")
                let reader = Task {
                    for try await piece in events.body { seen.withLock { $0 += String(buffer: piece) } }
                }
                _ = try await Self.exchange(client, .GET, "\(base)/people/7")
                while !seen.withLock({ $0.contains("/people/7") }) { try await Task.sleep(for: .milliseconds(20)) }
                await server.stop()
                // The stream ended with the stop (not with an error the reader would throw).
                try await reader.value
            }
        } catch {
            await server.stop()
            throw error
        }
    }

    @Test("An identity that does not offer HTTP/2 serves HTTP/1.1 to a client asking for HTTP/2")
    func http1Only() async throws {
        try await Self.withServer(offersHTTP2: false) { _, base, root, _ in
            let (out, status) = try await runToEnd([
                "curl", "-s", "--http2", "--cacert", root, "-o", "/dev/null", "-w", "%{http_version} %{http_code}",
                "\(base)/people/1",
            ])
            #expect(status == 0 && out == "1.1 200")
        }
    }

    /// A TLS connection that agreed on `h2` and then speaks only what the test writes: what a client no
    /// library would send (one that never opens a stream, one that never answers a PING).
    final class RawHTTP2Client: ChannelInboundHandler, @unchecked Sendable {
        // Unchecked: `protocolAgreed` and `received` are touched only on the channel's event loop (NIO
        // calls every handler method there, and the test reads `received` through `eventLoop.submit`).
        typealias InboundIn = ByteBuffer

        let protocolAgreed: EventLoopPromise<String?>
        var received: [UInt8] = []

        init(_ promise: EventLoopPromise<String?>) { protocolAgreed = promise }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case .handshakeCompleted(let agreed) = event as? TLSUserEvent { protocolAgreed.succeed(agreed) }
            context.fireUserInboundEventTriggered(event)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            received += Array(unwrapInboundIn(data).readableBytesView)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            protocolAgreed.fail(error)
            context.close(promise: nil)
        }

        /// The frame types (RFC 9113 §4.1) in what arrived, in order.
        static func frameTypes(_ bytes: [UInt8]) -> [UInt8] {
            var types: [UInt8] = []
            var at = 0
            while at + 9 <= bytes.count {
                let length = Int(bytes[at]) << 16 | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2])
                types.append(bytes[at + 3])
                at += 9 + length
            }
            return types
        }

        static func connect(port: Int, trusting rootPEM: String) async throws -> (any Channel, RawHTTP2Client) {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMBytes(Array(rootPEM.utf8)))]
            tls.applicationProtocols = ["h2"]
            let context = try NIOSSLContext(configuration: tls)
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            let client = RawHTTP2Client(loop.makePromise())
            let channel = try await ClientBootstrap(group: loop).channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: nil))
                    try channel.pipeline.syncOperations.addHandler(client)
                }
            }.connect(host: "127.0.0.1", port: port).get()
            #expect(try await client.protocolAgreed.futureResult.get() == "h2")
            return (channel, client)
        }

        /// The client's connection preface and an empty SETTINGS frame (RFC 9113 §3.4).
        static let preface: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + [0, 0, 0, 4, 0, 0, 0, 0, 0]
    }

    @Test("An HTTP/2 connection that opens no stream is sent GOAWAY and closed after the idle timeout")
    func idleConnection() async throws {
        // 2 s: the TLS handshake must also finish within the idle timeout (HandshakeTimeout), and a loaded CI
        // run took longer than 300 ms for it, so the connection closed before HTTP/2 began.
        try await Self.withServer(limits: ConnectionLimits(idleTimeout: .seconds(2))) { _, base, _, rootPEM in
            let port = try #require(URLComponents(string: base)?.port)
            let (channel, client) = try await RawHTTP2Client.connect(port: port, trusting: rootPEM)
            // On a loaded machine the timeout may pass before the preface is written: the write then
            // fails on the closed channel, and what the server sent is the same.
            try? await channel.writeAndFlush(ByteBuffer(bytes: RawHTTP2Client.preface))
            try await channel.closeFuture.get()
            let types = try await channel.eventLoop.submit { RawHTTP2Client.frameTypes(client.received) }.get()
            #expect(types.first == 4)  // SETTINGS, the server's preface
            #expect(types.last == 7)  // GOAWAY
        }
    }

    @Test("Stopping the server does not wait for ever on an HTTP/2 client that never answers its GOAWAY's PING")
    func stopDespiteSilentClient() async throws {
        let authority = try LocalCertificateAuthority.make()
        let server = try await MockServer(resources: [])
        let limits = ConnectionLimits(requestTimeout: .milliseconds(300), lingerTimeout: .milliseconds(100))
        let port = try await server.start(port: 0, limits: limits, tls: try authority.issue(for: ["127.0.0.1"]))
        let channel: any Channel
        do {
            (channel, _) = try await RawHTTP2Client.connect(port: port, trusting: authority.certificatePEM)
        } catch {
            await server.stop()
            throw error
        }
        try? await channel.writeAndFlush(ByteBuffer(bytes: RawHTTP2Client.preface))
        // The client reads the GOAWAY and the PING and answers nothing; stop returns once the backstop
        // (request timeout and linger timeout) has closed the connection and TLS has waited its 5 s for
        // the client's close_notify.
        await server.stop()
        try await channel.closeFuture.get()
    }

    @Test("A TLS connection whose handshake never finishes is closed after the idle timeout")
    func stalledHandshake() async throws {
        try await Self.withServer(limits: ConnectionLimits(idleTimeout: .milliseconds(300))) { _, base, _, _ in
            let port = try #require(URLComponents(string: base)?.port)
            // The first byte of a handshake record (so it is not refused as plain HTTP), and nothing more.
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(host: "127.0.0.1", port: port).get()
            try await channel.writeAndFlush(ByteBuffer(bytes: [0x16]))
            try await channel.closeFuture.get()
        }
    }
}
