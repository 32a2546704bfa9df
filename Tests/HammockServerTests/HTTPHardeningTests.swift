import Foundation
import HammockHTTPServer
import HammockServer
import HammockTestSupport
import Testing

/// What the HTTP layer does with requests no well-behaved client sends, over real sockets: every
/// rejection is a problem+json body, and every connection it ends is closed on the server's side.
@Suite("HTTP layer against hostile clients", .timeLimit(.minutes(2)))
struct HTTPHardeningTests {
    /// A running server on a free port; stopped at the end even when the body fails.
    func withServer(
        limits: ConnectionLimits = ConnectionLimits(),
        options: MockServer.Options = MockServer.Options(maximumBodySize: 4096),
        _ body: (MockServer, Int) async throws -> Void
    ) async throws {
        let server = try await MockServer(resources: [Fixtures.people], options: options)
        try await server.whileServing(limits: limits) { port in try await body(server, port) }
    }

    /// Sends `request` on a new connection and returns the one response, checking that the server
    /// closed the connection after it.
    func rejection(_ request: [UInt8], port: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws -> RawResponse {
        let connection = try RawConnection(port: port)
        await connection.send(request)
        let (bytes, closed) = await connection.readUntilClosed()
        #expect(closed, "the server kept the connection open", sourceLocation: sourceLocation)
        let responses = RawResponse.parse(bytes)
        #expect(responses.count == 1, "\(String(decoding: bytes, as: UTF8.self))", sourceLocation: sourceLocation)
        let response = try #require(responses.first, sourceLocation: sourceLocation)
        #expect(response.header("Content-Type") == "application/problem+json", sourceLocation: sourceLocation)
        #expect(response.header("Connection") == "close", sourceLocation: sourceLocation)
        #expect(response.json?["status"] == .integer(response.status), sourceLocation: sourceLocation)
        return response
    }

    func text(_ string: String) -> [UInt8] { Array(string.utf8) }

    @Test(
        "Requests the HTTP decoder rejects get a problem body, and the connection closes",
        arguments: [
            ("BR@W / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400),
            ("POST /people HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nxx\r\n0\r\n\r\n", 400),
            ("GET /peo\u{0}ple HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n", 400),
            ("GET / HTTP/7.3\r\nHost: x\r\n\r\n", 400),
            ("GET /people HTTP/1.1\r\n\r\n", 400),  // no Host
            ("GET /people HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
            ("GET * HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ])
    func malformed(request: String, status: Int) async throws {
        try await withServer { _, port in
            let response = try await rejection(text(request), port: port)
            #expect(response.status == status)
            #expect(response.header("Access-Control-Allow-Origin") == "*")  // a browser can read why
        }
    }

    @Test("A header block over the limit or too many header fields is a 431")
    func headerLimits() async throws {
        try await withServer { _, port in
            let huge = "GET /people HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "a", count: 1 << 20) + "\r\n\r\n"
            #expect(try await rejection(text(huge), port: port).status == 431)
            let many = "GET /people HTTP/1.1\r\nHost: x\r\n" + (0..<1_001).map { "X-\($0): v\r\n" }.joined() + "\r\n"
            #expect(try await rejection(text(many), port: port).status == 431)
            // Within the limits, the same request is served.
            let fine = "GET /people HTTP/1.1\r\nHost: x\r\n" + (0..<50).map { "X-\($0): v\r\n" }.joined() + "\r\n"
            let connection = try RawConnection(port: port)
            await connection.send(text(fine))
            #expect(await connection.readResponses(1).first?.status == 200)
        }
    }

    @Test("A body over the limit is a 413 before it is read, with Connection: close honoured")
    func bodyTooLarge() async throws {
        try await withServer { server, port in
            let body = "{\"name\": \"" + String(repeating: "x", count: 100_000) + "\"}"
            let declared = text(
                "POST /people HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
                    + body)
            let response = try await rejection(declared, port: port)
            #expect(response.status == 413 && response.json?["limit"] == 4096)
            // Chunked: no length up front, stopped once the limit is passed.
            let chunk = String(repeating: "y", count: 3000)
            let chunked = text(
                "POST /people HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "BB8\r\n\(chunk)\r\nBB8\r\n\(chunk)\r\n0\r\n\r\n")
            #expect(try await rejection(chunked, port: port).status == 413)
            #expect(await server.respond(to: MockRequest(.get, "/people")).body == Array("[]".utf8))  // nothing stored
        }
    }

    #if os(Linux)
    @Test("Connections ended by an error are closed on the server's side: no descriptor is left behind")
    func noLeakedSockets() async throws {
        try await withServer(limits: ConnectionLimits(lingerTimeout: .milliseconds(500))) { _, port in
            let huge = text("GET /people HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "a", count: 1 << 20) + "\r\n\r\n")
            let body = String(repeating: "x", count: 200_000)
            let tooLarge = text(
                "POST /people HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body)
            for _ in 0..<20 {
                for request in [huge, tooLarge] {
                    let connection = try RawConnection(port: port)
                    await connection.send(request)
                    _ = await connection.readUntilClosed()
                }
            }
            #expect(await eventually { openServerSockets(port: port) == 0 })
            // A client that never closes its side is let go after the linger timeout.
            let stubborn = try RawConnection(port: port)
            await stubborn.send(huge)
            #expect(await stubborn.readResponses(1).first?.status == 431)
            #expect(await eventually { openServerSockets(port: port) == 0 })
            withExtendedLifetime(stubborn) {}
        }
    }
    #endif

    @Test("A request that does not arrive in time gets 408, and an idle connection is closed")
    func timeouts() async throws {
        // The idle timeout is longer than the request timeout: on a loaded machine the first bytes of a
        // slow request may reach the server a few hundred milliseconds after it accepted the connection,
        // which must not count as idleness.
        let limits = ConnectionLimits(idleTimeout: .seconds(1), requestTimeout: .milliseconds(300))
        try await withServer(limits: limits) { _, port in
            // Slowloris: a head that never ends.
            let slow = try RawConnection(port: port)
            await slow.send("GET /people HTTP/1.1\r\nHost: x\r\n")
            for _ in 0..<3 {
                try await Task.sleep(for: .milliseconds(150))
                await slow.send("X-Slow: 1\r\n")
            }
            let (bytes, closed) = await slow.readUntilClosed()
            #expect(closed)
            #expect(RawResponse.parse(bytes).first?.status == 408, "\(String(decoding: bytes, as: UTF8.self))")
            // A body that stops half way.
            let stalled = try RawConnection(port: port)
            await stalled.send("POST /people HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\n\r\n{\"name\":")
            let stalledBytes = await stalled.readUntilClosed().bytes
            #expect(RawResponse.parse(stalledBytes).first?.status == 408, "\(String(decoding: stalledBytes, as: UTF8.self))")
            // Idle: connected, nothing sent, closed without a response.
            let idle = try RawConnection(port: port)
            let (idleBytes, idleClosed) = await idle.readUntilClosed()
            #expect(idleClosed && idleBytes.isEmpty)
            // Between requests on a kept-alive connection, too.
            let kept = try RawConnection(port: port)
            await kept.send("GET /people HTTP/1.1\r\nHost: x\r\n\r\n")
            let (keptBytes, keptClosed) = await kept.readUntilClosed()
            let received = String(decoding: keptBytes, as: UTF8.self)
            #expect(RawResponse.parse(keptBytes).map(\.status) == [200] && keptClosed, "\(received)")
        }
    }

    @Test("A well-behaved client is served while slow clients hold connections")
    func servedDuringSlowloris() async throws {
        let limits = ConnectionLimits(requestTimeout: .seconds(5))
        try await withServer(limits: limits) { _, port in
            var slow: [RawConnection] = []
            for _ in 0..<50 {
                let connection = try RawConnection(port: port)
                await connection.send("GET /people HTTP/1.1\r\nHost: x\r\nX-A: ")
                slow.append(connection)
            }
            let client = LoopbackClient(port: port)
            for _ in 0..<10 { #expect(try await client.send("GET", "/people").status == 200) }
            withExtendedLifetime(slow) {}
        }
    }

    @Test("A response's head is written as HTTP/1.1 frames it: status line, the fields once each, Content-Length, no chunking")
    func responseFraming() async throws {
        try await withServer { server, port in
            _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": "ada"]))
            let connection = try RawConnection(port: port)
            await connection.send(
                "GET /people/1 HTTP/1.1\r\nHost: x\r\n\r\nHEAD /people/1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let (bytes, closed) = await connection.readUntilClosed()
            #expect(closed)
            let text = String(decoding: bytes, as: UTF8.self)
            let headEnd = try #require(text.range(of: "\r\n\r\n"))
            let lines = text[..<headEnd.lowerBound].components(separatedBy: "\r\n")
            #expect(lines.first == "HTTP/1.1 200 OK")
            let names = lines.dropFirst().compactMap { $0.split(separator: ":").first.map { $0.lowercased() } }
            #expect(names.count == Set(names).count, "a field written twice: \(names)")
            #expect(!names.contains("transfer-encoding") && !names.contains("connection"))
            let length = try #require(
                lines.first { $0.lowercased().hasPrefix("content-length: ") }.flatMap { Int($0.dropFirst(16)) })
            let bodyAndRest = Array(text[headEnd.upperBound...].utf8)
            let body = try #require(try JSON(parsing: Array(bodyAndRest.prefix(length))).objectValue)
            #expect(body["name"] == "ada")
            #expect(length == JSON.object(body).serialized().count)
            // HEAD: the same Content-Length, no body, and the connection closes as asked.
            let head = String(decoding: bodyAndRest.dropFirst(length), as: UTF8.self)
            #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(head.contains("\r\nContent-Length: \(length)\r\n"))
            #expect(head.contains("\r\nConnection: close\r\n"))
            #expect(text.hasSuffix("\r\n\r\n"))
        }
    }

    @Test("Pipelined requests are answered in order on one connection, errors included")
    func pipelining() async throws {
        try await withServer { _, port in
            let connection = try RawConnection(port: port)
            let create =
                "POST /people HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 14\r\n\r\n{\"name\":\"ada\"}"
            await connection.send(
                create + "GET /people/1 HTTP/1.1\r\nHost: x\r\n\r\nGET /nothing HTTP/1.1\r\nHost: x\r\n\r\n"
                    + "GET /people HTTP/1.1\r\nHost: x\r\n\r\nBR@W / HTTP/1.1\r\n\r\n")
            let responses = await connection.readResponses(5)
            #expect(responses.map(\.status) == [201, 200, 404, 200, 400])
            #expect(responses[1].json?["name"] == "ada")
            #expect(await connection.readUntilClosed().closed)
        }
    }

    /// Waits before answering `/slow`; everything else goes straight on.
    struct SlowPath: MockMiddleware {
        func handle(_ request: MockRequest, next: (MockRequest) async throws -> MockResponse) async throws -> MockResponse {
            if request.path == "/slow" { try await Task.sleep(for: .milliseconds(100)) }
            return try await next(request)
        }
    }

    @Test("Thousands of pipelined requests queued behind a slow one are answered in order, without deep recursion")
    func pipelinedBehindSlow() async throws {
        let server = try await MockServer(resources: [Fixtures.people], middleware: [SlowPath()])
        _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": "ada"]))
        try await server.whileServing { port in
            let connection = try RawConnection(port: port)
            let count = 3000
            var text = "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"
            for _ in 0..<count { text += "GET /people/1 HTTP/1.1\r\nHost: x\r\n\r\n" }
            await connection.send(text)
            let responses = await connection.readResponses(count + 1, timeout: .seconds(30))
            #expect(responses.count == count + 1)
            #expect(responses.first?.status == 404)
            #expect(responses.dropFirst().allSatisfy { $0.status == 200 })
        }
    }

    @Test("Expect: 100-continue gets 100 before the body; HTTP/1.0 closes unless asked to keep alive")
    func continueAndVersions() async throws {
        try await withServer { _, port in
            let connection = try RawConnection(port: port)
            await connection.send(
                "POST /people HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n"
            )
            #expect(await connection.readResponses(1, timeout: .seconds(5)).first?.status == 100)
            await connection.send("{\"name\":\"bo\"}")
            #expect(await connection.readResponses(1).first?.status == 201)
            // A body over the limit is refused at the head, so the client never sends it.
            let refused = try RawConnection(port: port)
            await refused.send("POST /people HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 999999\r\n\r\n")
            #expect(RawResponse.parse(await refused.readUntilClosed().bytes).map(\.status) == [413])

            let old = try RawConnection(port: port)
            await old.send("GET /people HTTP/1.0\r\n\r\n")
            let (bytes, closed) = await old.readUntilClosed()
            #expect(RawResponse.parse(bytes).first?.status == 200 && closed)
            let keepAlive = try RawConnection(port: port)
            await keepAlive.send("GET /people HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /people/1 HTTP/1.0\r\n\r\n")
            let answers = await keepAlive.readResponses(2)
            #expect(answers.map(\.status) == [200, 200])
            #expect(answers.first?.header("Connection") == "keep-alive")
        }
    }

    /// Says when a request reaches the middleware chain.
    struct Arrival: MockMiddleware {
        let continuation: AsyncStream<Void>.Continuation

        func handle(_ request: MockRequest, next: (MockRequest) async throws -> MockResponse) async throws -> MockResponse {
            continuation.yield()
            return try await next(request)
        }
    }

    @Test("Stopping lets requests in flight finish, then closes every connection")
    func gracefulStop() async throws {
        let options = MockServer.Options(latency: Latency(.milliseconds(200)...(.milliseconds(200))))
        let arrivals = AsyncStream<Void>.makeStream()
        let server = try await MockServer(
            resources: [Fixtures.people], options: options, middleware: [Arrival(continuation: arrivals.continuation)])
        let port = try await server.start(port: 0)
        let busy = try RawConnection(port: port)
        await busy.send("GET /people HTTP/1.1\r\nHost: x\r\n\r\n")
        let idle = try RawConnection(port: port)
        // Stop once the request is in the server's hands (not after a guess at how long that takes).
        for await _ in arrivals.stream { break }
        await server.stop()
        let (bytes, closed) = await busy.readUntilClosed()
        #expect(RawResponse.parse(bytes).first?.status == 200)
        #expect(closed)
        #expect(await idle.readUntilClosed().closed)
        #expect(throws: (any Error).self) { try RawConnection(port: port) }
    }
}
