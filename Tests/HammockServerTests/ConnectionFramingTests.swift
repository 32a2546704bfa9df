import Foundation
import HTTPTypes
import HammockHTTPServer
import HammockJSON
import HammockServer
import HammockTestSupport
import Testing

/// A connection stays in step with its client whatever the client asks for: an upgrade the server does
/// not speak, `CONNECT`, answers it never reads, a request cut in half, and statuses that carry no body.
/// Each case was found by a hostile client; before the fixes, the connection stopped answering or the
/// next response was read as part of the one before.
@Suite("Connections stay in step with their clients", .timeLimit(.minutes(2)))
struct ConnectionFramingTests {
    func withServer(
        limits: ConnectionLimits = ConnectionLimits(),
        stubs: [StubRoute] = [],
        _ body: (MockServer, Int) async throws -> Void
    ) async throws {
        let server = try await MockServer(resources: [Fixtures.people])
        server.addStubs(stubs)
        _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": "ada"]))
        try await server.whileServing(limits: limits) { port in try await body(server, port) }
    }

    static let next = "GET /people/1 HTTP/1.1\r\nHost: x\r\n\r\n"

    @Test("A client that closes its side after its requests (a half-close) gets every answer, then the close")
    func halfClose() async throws {
        try await withServer { _, port in
            let connection = try RawConnection(port: port)
            await connection.send(Self.next + Self.next + "GET /peo")
            connection.shutdownOutput()
            let outcome = await connection.readToEnd()
            let text = String(decoding: outcome.bytes, as: UTF8.self)
            #expect(text.components(separatedBy: "HTTP/1.1 200 OK").count == 3, "\(text)")
            #expect(outcome.end == .closed)
            // A request cut by the close gets nothing, and an error after it no linger.
            let cut = try RawConnection(port: port)
            await cut.send("POST /people HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{")
            cut.shutdownOutput()
            let ended = await cut.readToEnd(timeout: .seconds(5))
            #expect(ended.end == .closed && ended.bytes.isEmpty, "\(String(decoding: ended.bytes, as: UTF8.self))")
        }
    }

    @Test(
        "An upgrade the server does not speak is ignored: the request is answered and the connection goes on",
        arguments: [
            "GET /people HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
            "GET /people HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n",
            "GET /people HTTP/1.1\r\nHost: x\r\nconnection: keep-alive, upgrade\r\nupgrade: foo/2\r\n\r\n",
            "GET /people HTTP/1.1\r\nHost: x\r\nProxy-Connection: upgrade\r\nUpgrade: foo\r\n\r\n",
            "POST /people HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade: h2c\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{\"name\":\"bo\"}",
            "POST /people HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade: h2c\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nd\r\n{\"name\":\"cy\"}\r\n0\r\n\r\n",
            // Near misses that never stopped the decoder must not be taken for upgrades either.
            "GET /people HTTP/1.1\r\nHost: x\r\nConnection: upgradeable\r\nUpgrade: websocket\r\n\r\n",
            "GET /people HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\n\r\n",
            "GET /people HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n\r\n",
        ])
    func ignoredUpgrade(request: String) async throws {
        try await withServer { _, port in
            // All at once, then with the next request cut in two: a decoder replaced at the wrong moment
            // would lose the first half.
            let together = try RawConnection(port: port)
            await together.send(request + Self.next + Self.next)
            let answers = await together.readResponses(3)
            #expect(answers.count == 3, "\(answers.map(\.status))")
            #expect(answers.first.map { (200...201).contains($0.status) } == true)
            #expect(answers.first?.header("Upgrade") == nil)
            #expect(answers.dropFirst().allSatisfy { $0.status == 200 && $0.json?["name"] == "ada" })

            let split = try RawConnection(port: port)
            let cut = Self.next.index(Self.next.startIndex, offsetBy: 9)
            await split.send(request + Self.next[..<cut])
            #expect(await split.readResponses(1).count == 1)
            await split.send(String(Self.next[cut...]))
            let rest = await split.readResponses(1)
            #expect(rest.first?.status == 200 && rest.first?.json?["name"] == "ada", "\(rest.map(\.status))")
        }
    }

    @Test("CONNECT gets a 405 problem and the connection closes, whatever the client sends after it")
    func connect() async throws {
        try await withServer(limits: ConnectionLimits(lingerTimeout: .milliseconds(300))) { _, port in
            let connection = try RawConnection(port: port)
            await connection.send("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
            let answer = try #require(await connection.readResponses(1).first)
            #expect(answer.status == 405)
            #expect(answer.header("Content-Type") == "application/problem+json")
            #expect(answer.header("Allow") != nil)
            // Tunnel bytes after it are read and dropped until the connection closes.
            await connection.send([UInt8](repeating: 0x16, count: 1 << 20))
            #expect(await connection.readUntilClosed().closed)
        }
    }

    @Test("A client that pipelines many large answers and reads none gets every one, in order, when it reads")
    func clientThatNeverReads() async throws {
        let server = try await MockServer(resources: [Fixtures.people])
        let big = String(repeating: "x", count: 20_000)
        for index in 0..<24 {
            _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": .string("\(index)\(big)")]))
        }
        try await server.whileServing { port in
            let connection = try RawConnection(port: port)
            let count = 40
            await connection.send(String(repeating: "GET /people HTTP/1.1\r\nHost: x\r\n\r\n", count: count) + Self.next)
            // The server answers what fits in the socket, then waits for the client to read.
            try await Task.sleep(for: .milliseconds(300))
            let responses = await connection.readResponses(count + 1, timeout: .seconds(30))
            #expect(responses.count == count + 1)
            let lists = responses.prefix(count).map { $0.status == 200 && $0.json?.arrayValue?.count == 24 }
            #expect(lists == Array(repeating: true, count: count))
            let last = responses.last?.json?["name"]?.stringValue
            #expect(last?.hasPrefix("0xxx") == true && last?.count == 20_001)
        }
    }

    @Test("Half of a request after a complete one gets a 408 at the request timeout, not a silent close")
    func halfRequestAfterComplete() async throws {
        let limits = ConnectionLimits(idleTimeout: .seconds(30), requestTimeout: .milliseconds(300))
        try await withServer(limits: limits) { _, port in
            for half in ["GET /peo", "GET /people HTTP/1.1\r\n", "GET /people HTTP/1.1\r\nHost: x\r\nX-A: b"] {
                let connection = try RawConnection(port: port)
                await connection.send(Self.next + half)
                let (bytes, closed) = await connection.readUntilClosed(timeout: .seconds(20))
                #expect(closed)
                #expect(
                    RawResponse.parse(bytes).map(\.status) == [200, 408], "\(half): \(String(decoding: bytes, as: UTF8.self))")
            }
        }
    }

    @Test(
        "An answer whose status forbids a body never sends one, so the next answer on the connection stays framed",
        arguments: [204, 304])
    func bodylessAnswer(status: Int) async throws {
        try await withServer { server, port in
            // A Swift route can build any response; the HTTP layer is what keeps the stream framed.
            try server.route(.get, "/empty") { _ in MockResponse(status: .init(code: status), json: ["ignored": true]) }
            let connection = try RawConnection(port: port)
            await connection.send("GET /empty HTTP/1.1\r\nHost: x\r\n\r\n" + Self.next)
            let answers = await connection.readResponses(2)
            #expect(answers.map(\.status) == [status, 200])
            #expect(answers.last?.json?["name"] == "ada")
            #expect(answers.first?.header("Content-Type") == nil)
            #expect(answers.first?.header("Content-Length") == nil)
        }
    }

    @Test(
        "A 205 says Content-Length: 0 and a 204 says none, written whole or streamed, whatever length the route set",
        arguments: [(204, nil), (205, "0")] as [(Int, String?)], [false, true])
    func framingDecidedOnce(expected: (status: Int, length: String?), streamed: Bool) async throws {
        let (status, length) = expected
        try await withServer { server, port in
            try server.route(.get, "/reset") { _ in
                MockResponse(status: .init(code: status), headerFields: [.contentLength: "7"], body: Array("ignored".utf8))
            }
            // A bandwidth fault sends the answer down the streaming path, which wrote its own head before.
            if streamed { server.setFaults([try Fault(parsing: "GET /reset bandwidth=1000000")]) }
            let connection = try RawConnection(port: port)
            await connection.send("GET /reset HTTP/1.1\r\nHost: x\r\n\r\n" + Self.next)
            let answers = await connection.readResponses(2)
            #expect(answers.map(\.status) == [status, 200])
            #expect(answers.first?.header("Content-Length") == length)
            #expect(answers.last?.json?["name"] == "ada")
        }
    }

    @Test("A stub with a status that forbids a body, or a 1xx, is refused when it is made", arguments: [100, 103, 204, 304])
    func bodylessStubRefused(status: Int) throws {
        let code = HTTPResponse.Status(code: status)
        if status >= 200 {
            // Without a body it is a fine stub.
            _ = try StubRoute(.get, "/empty", status: code)
        }
        let error = try #require(throws: StubError.self) {
            try StubRoute(.get, "/empty", status: code, body: ["ignored": true])
        }
        #expect(error.message.contains("\(status)"))
    }

    @Test(
        "A stub whose fields claim their own framing (a short Content-Length, chunked, Keep-Alive) is framed by the server, and the next answer stays in step"
    )
    func stubFramingFieldsAreTheServers() async throws {
        let lying = try StubRoute(
            .get, "/lying",
            headers: [
                (.contentLength, "2"), (.transferEncoding, "chunked"), (HTTPField.Name("Keep-Alive")!, "timeout=1"),
                (HTTPField.Name("X-Own")!, "kept"),
            ], body: ["a": 1, "b": "a longer value"])
        try await withServer(stubs: [lying]) { _, port in
            let connection = try RawConnection(port: port)
            await connection.send("GET /lying HTTP/1.1\r\nHost: x\r\n\r\n" + Self.next)
            let answers = await connection.readResponses(2)
            #expect(answers.map(\.status) == [200, 200])
            #expect(answers.first?.body == Array(#"{"a":1,"b":"a longer value"}"#.utf8))
            #expect(answers.first?.header("Content-Length") == String(answers.first?.body.count ?? -1))
            #expect(answers.first?.header("Transfer-Encoding") == nil && answers.first?.header("Keep-Alive") == nil)
            #expect(answers.first?.header("X-Own") == "kept")
            #expect(answers.last?.body.isEmpty == false)
        }
    }

    @Test("A Swift route that answers 1xx is not a final answer: the client gets a 500 problem, framed")
    func informationalIsNotFinal() async throws {
        let server = try await MockServer(resources: [Fixtures.people])
        _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": "ada"]))
        try server.route(.get, "/early") { _ in MockResponse(status: .init(code: 103), json: ["hint": true]) }
        try await server.whileServing { port in
            let connection = try RawConnection(port: port)
            await connection.send("GET /early HTTP/1.1\r\nHost: x\r\n\r\n" + Self.next)
            let answers = await connection.readResponses(2)
            #expect(answers.map(\.status) == [500, 200])
            #expect(answers.first?.header("Content-Type") == "application/problem+json")
        }
    }
}
