import AsyncHTTPClient
import Foundation
import HTTPTypes
import HammockHTTPServer
import HammockJSON
import HammockProxy
import HammockServer
import HammockTestSupport
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

/// Uploads larger than the mock's body limit go through the proxy as they arrive: a photo or a backup sent
/// to the real backend is no 413 of the mock's, and the mock holds a window of it, never the whole. Every
/// route of the mock's own keeps the limit.
@Suite("Proxying uploads larger than the body limit", .serialized, .timeLimit(.minutes(2)))
struct StreamedUploadTests {
    /// 64 KiB: small enough that a few hundred KiB cross it many times over.
    static let limit = 64 << 10

    /// `count` bytes of printable text in a pattern that shows a piece out of place.
    static func pattern(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(ascii: "a") + UInt8(($0 / 7 + $0) % 26) }
    }

    /// A mock of people with a small body limit, forwarding the rest to `upstream`, on loopback.
    static func withProxy(
        to upstream: URL, recording: ProxyRecording? = nil, _ body: (MockServer, String) async throws -> Void
    ) async throws {
        let people = MockResource("people", fields: ["name": .string])
        let server = try await MockServer(resources: [people], options: MockServer.Options(maximumBodySize: limit))
        server.addRoutes(try ProxyRoutes(upstream: upstream, recording: recording), first: false)
        try await server.whileServing { port in try await body(server, "http://127.0.0.1:\(port)") }
    }

    static func withClient<T>(_ body: (HTTPClient) async throws -> T) async throws -> T {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let result = try await body(client)
            try await client.shutdown()
            return result
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    /// The upload `bytes` as `pieces` chunks of a stream of unknown length: sent chunked.
    static func chunked(_ bytes: [UInt8], pieces: Int) -> HTTPClientRequest.Body {
        let size = (bytes.count + pieces - 1) / pieces
        let chunks = stride(from: 0, to: bytes.count, by: size).map {
            ByteBuffer(bytes: bytes[$0..<min($0 + size, bytes.count)])
        }
        let stream = AsyncStream<ByteBuffer> { continuation in
            for chunk in chunks { continuation.yield(chunk) }
            continuation.finish()
        }
        return .stream(stream, length: .unknown)
    }

    @Test(
        "A body over the mock's limit reaches httpbin whole, with its Content-Length; the mock's own routes still refuse it with 413"
    )
    func declaredLength() async throws {
        try await withHTTPBin { upstream in
            try await Self.withProxy(to: upstream) { _, base in
                try await Self.withClient { client in
                    let upload = Self.pattern(600_000)
                    var request = HTTPClientRequest(url: base + "/anything/photos")
                    request.method = .POST
                    request.headers.add(name: "Content-Type", value: "application/octet-stream")
                    request.body = .bytes(ByteBuffer(bytes: upload))
                    let response = try await client.execute(request, timeout: .seconds(30))
                    #expect(response.status == .ok)
                    let echo = try JSON(parsing: Array(buffer: try await response.body.collect(upTo: 4 << 20)))
                    let echoed = echo["data"]?.stringValue.map { Array($0.utf8) }
                    #expect(echoed?.count == upload.count)
                    #expect(echoed == upload ? true : false, "every byte, in order")
                    #expect(echo["headers"]?["Content-Length"] == "600000", "the client's length, not chunked")
                    #expect(echo["headers"]?["Transfer-Encoding"] == nil)

                    var own = HTTPClientRequest(url: base + "/people")
                    own.method = .POST
                    own.headers.add(name: "Content-Type", value: "application/json")
                    own.body = .bytes(ByteBuffer(bytes: Array(#"{"name": ""#.utf8) + Self.pattern(100_000) + Array(#""}"#.utf8)))
                    let refused = try await client.execute(own, timeout: .seconds(30))
                    #expect(refused.status.code == 413)
                    #expect(refused.headers.first(name: "content-type") == "application/problem+json")
                }
            }
        }
    }

    @Test("A streamed upload is left out of a recording and counted: its body was never held, to match or to redact")
    func notRecorded() async throws {
        try await withHTTPBin { upstream in
            let recording = ProxyRecording()
            try await Self.withProxy(to: upstream, recording: recording) { _, base in
                try await Self.withClient { client in
                    var request = HTTPClientRequest(url: base + "/anything/backup")
                    request.method = .PUT
                    request.body = .bytes(ByteBuffer(bytes: Array("password=hunter22&".utf8) + Self.pattern(200_000)))
                    let uploaded = try await client.execute(request, timeout: .seconds(30))
                    #expect(uploaded.status == .ok)
                    _ = try await uploaded.body.collect(upTo: 1 << 20)
                    let small = try await client.execute(HTTPClientRequest(url: base + "/get"), timeout: .seconds(30))
                    #expect(small.status == .ok)
                    _ = try await small.body.collect(upTo: 1 << 20)
                }
            }
            let (configuration, summary) = recording.configuration()
            #expect(summary.exchanges == 1 && summary.skipped == 1)
            let written = String(decoding: configuration.serialized(), as: UTF8.self)
            #expect(!written.contains("hunter22") && !written.contains("/anything/backup"))
        }
    }

    /// A route of the upstream's own that reads any body as it arrives and answers its size and sum.
    struct Counting: MockRoutes {
        func endpoint(for request: MockRequest) throws -> MockEndpoint? {
            guard request.path == "/count" else { return nil }
            return MockEndpoint(methods: [.post, .put], takesStreamedBody: true) { request in
                var count = 0
                var sum = 0
                var streamed = false
                if let stream = request.bodyStream {
                    streamed = true
                    for try await piece in stream {
                        count += piece.count
                        for (offset, byte) in piece.enumerated() {
                            sum &+= Int(byte) &* ((count - piece.count + offset) % 251 + 1)
                        }
                    }
                } else {
                    count = request.body.count
                    for (offset, byte) in request.body.enumerated() { sum &+= Int(byte) &* (offset % 251 + 1) }
                }
                return MockResponse(json: ["bytes": .integer(count), "sum": .integer(sum), "streamed": .bool(streamed)])
            }
        }
        var routeTable: [RouteTableEntry] { [RouteTableEntry(methods: [.post, .put], pattern: "/count")] }
        var mayTakeStreamedBodies: Bool { true }
    }

    static func sum(_ bytes: [UInt8]) -> Int {
        var sum = 0
        for (offset, byte) in bytes.enumerated() { sum &+= Int(byte) &* (offset % 251 + 1) }
        return sum
    }

    @Test(
        "A chunked upload of 3 MiB streams through the proxy into a route of the upstream that takes streamed bodies, whole and in order"
    )
    func chunkedThroughTwoServers() async throws {
        let backend = try await MockServer(
            resources: [], options: MockServer.Options(maximumBodySize: Self.limit), routes: [Counting()])
        try await backend.whileServing { backendPort in
            try await Self.withProxy(to: try #require(URL(string: "http://127.0.0.1:\(backendPort)"))) { server, base in
                try await Self.withClient { client in
                    let upload = Self.pattern(3 << 20)
                    var request = HTTPClientRequest(url: base + "/count")
                    request.method = .PUT
                    request.body = Self.chunked(upload, pieces: 97)
                    let response = try await client.execute(request, timeout: .seconds(60))
                    #expect(response.status == .ok)
                    let answer = try JSON(parsing: Array(buffer: try await response.body.collect(upTo: 1 << 16)))
                    #expect(answer["bytes"] == .integer(3 << 20))
                    #expect(answer["sum"] == .integer(Self.sum(upload)))
                    #expect(answer["streamed"] == true, "the backend read it as it arrived too")

                    // Within the limit, the same route gets the body whole.
                    var small = HTTPClientRequest(url: base + "/count")
                    small.method = .POST
                    small.body = .bytes(ByteBuffer(bytes: Self.pattern(1000)))
                    let whole = try JSON(
                        parsing: Array(buffer: try await client.execute(small, timeout: .seconds(30)).body.collect(upTo: 1 << 16))
                    )
                    #expect(whole["bytes"] == 1000 && whole["streamed"] == false)
                    // The journal has the exchange, without the body it never held.
                    let entry = try #require(server.journal.entries.first { $0.method == .put })
                    #expect(entry.path == "/count" && entry.status == .ok)
                }
            }
        }
    }

    @Test(
        "Over HTTP/2 with TLS, an upload larger than the limit streams through on its own stream while another stream is answered"
    )
    func overHTTP2() async throws {
        let backend = try await MockServer(
            resources: [], options: MockServer.Options(maximumBodySize: Self.limit), routes: [Counting()])
        let backendPort = try await backend.start(host: "127.0.0.1", port: 0)
        let authority = try LocalCertificateAuthority.make()
        let server = try await MockServer(
            resources: [MockResource("people", fields: ["name": .string])],
            options: MockServer.Options(maximumBodySize: Self.limit))
        server.addRoutes(
            try ProxyRoutes(upstream: try #require(URL(string: "http://127.0.0.1:\(backendPort)"))), first: false)
        let port = try await server.start(port: 0, tls: try authority.issue(for: ["127.0.0.1"]))
        do {
            try await HTTPSTests.withClient(trusting: authority.certificatePEM) { client in
                let upload = Self.pattern(1 << 20)
                var request = HTTPClientRequest(url: "https://127.0.0.1:\(port)/count")
                request.method = .POST
                request.body = Self.chunked(upload, pieces: 33)
                async let other = client.execute(
                    HTTPClientRequest(url: "https://127.0.0.1:\(port)/people"), timeout: .seconds(30))
                let response = try await client.execute(request, timeout: .seconds(60))
                #expect(response.version == .http2)
                let answer = try JSON(parsing: Array(buffer: try await response.body.collect(upTo: 1 << 16)))
                #expect(answer["bytes"] == .integer(1 << 20))
                #expect(answer["sum"] == .integer(Self.sum(upload)))
                #expect(try await other.status == .ok)
            }
            await server.stop()
            await backend.stop()
        } catch {
            await server.stop()
            await backend.stop()
            throw error
        }
    }

    @Test(
        "A client that leaves during a streamed answer stops the upstream's request: the backend's stream ends, no connection is left waiting"
    )
    func clientLeavesMidAnswer() async throws {
        let ended = Mutex<[String]>([])
        struct Endless: MockRoutes {
            let ended: @Sendable (String) -> Void
            func endpoint(for request: MockRequest) throws -> MockEndpoint? {
                guard request.path == "/ticks" else { return nil }
                return MockEndpoint(methods: [.get]) { _ in
                    MockResponse(
                        status: .ok, headerFields: [.contentType: "text/plain"],
                        stream: StreamingBody { writer in
                            do {
                                // A tick each 10 ms for up to a minute, about 100 KiB: far more than the
                                // client reads.
                                for tick in 0..<6000 {
                                    try await writer.write(Array(repeating: UInt8(ascii: "a") + UInt8(tick % 26), count: 16))
                                    try await Task.sleep(for: .milliseconds(10))
                                }
                                ended("whole")
                            } catch {
                                ended("stopped")
                                throw error
                            }
                        })
                }
            }
            var routeTable: [RouteTableEntry] { [] }
        }
        let backend = try await MockServer(resources: [], routes: [Endless { note in ended.withLock { $0.append(note) } }])
        try await backend.whileServing { backendPort in
            try await Self.withProxy(to: try #require(URL(string: "http://127.0.0.1:\(backendPort)"))) { _, base in
                // curl reads for half a second, then leaves.
                let (output, status) = try await runToEnd(["curl", "-s", "--max-time", "0.5", base + "/ticks"])
                #expect(status == 28, "curl timed out, as asked")
                #expect(output.utf8.count >= 16, "the answer streamed through before the client left")
                #expect(await eventually { ended.withLock { $0 } == ["stopped"] }, "the backend's stream was stopped")
            }
        }
    }

    struct Failing: Error {}

    @Test("A client that fails mid-upload cuts the upstream's request, and the mock goes on answering")
    func cutMidUpload() async throws {
        let seen = Mutex<[String]>([])
        struct Watching: MockRoutes {
            let seen: @Sendable (String) -> Void
            func endpoint(for request: MockRequest) throws -> MockEndpoint? {
                guard request.path == "/watch" else { return nil }
                return MockEndpoint(methods: [.post], takesStreamedBody: true) { request in
                    do {
                        var count = 0
                        for try await piece in request.bodyStream ?? RequestBodyStream(length: 0) { count += piece.count }
                        seen("whole \(count)")
                    } catch {
                        seen("cut")
                        throw error
                    }
                    return MockResponse(status: .noContent)
                }
            }
            var routeTable: [RouteTableEntry] { [] }
            var mayTakeStreamedBodies: Bool { true }
        }
        let backend = try await MockServer(
            resources: [], options: MockServer.Options(maximumBodySize: Self.limit),
            routes: [Watching { note in seen.withLock { $0.append(note) } }])
        try await backend.whileServing { backendPort in
            try await Self.withProxy(to: try #require(URL(string: "http://127.0.0.1:\(backendPort)"))) { _, base in
                try await Self.withClient { client in
                    // 256 KiB sent, then the client's body fails: AsyncHTTPClient drops the connection.
                    let first = ByteBuffer(bytes: Self.pattern(256 << 10))
                    let pieces = AsyncThrowingStream<ByteBuffer, any Error> { continuation in
                        continuation.yield(first)
                        continuation.finish(throwing: Failing())
                    }
                    var request = HTTPClientRequest(url: base + "/watch")
                    request.method = .POST
                    request.body = .stream(pieces, length: .known(Int64(1 << 20)))
                    await #expect(throws: (any Error).self) { try await client.execute(request, timeout: .seconds(30)) }
                    #expect(await eventually { seen.withLock { $0 } == ["cut"] }, "the upstream's route saw its body cut")
                    // The mock still answers, on a new connection.
                    let after = try await client.execute(HTTPClientRequest(url: base + "/people"), timeout: .seconds(30))
                    #expect(after.status == .ok)
                }
            }
        }
    }
}
