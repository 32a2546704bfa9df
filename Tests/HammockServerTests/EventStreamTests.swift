import Foundation
import HTTPTypes
import HammockHTTPServer
import HammockJSON
import HammockServer
import HammockTestSupport
import Testing

/// Streamed bodies, and the journal's entries as Server-Sent Events at `/__hammock/events`.
@Suite("Streamed bodies and the events stream")
struct EventStreamTests {
    /// The `data:` lines of the events in `text`, parsed.
    func events(in text: String) -> [JSON] {
        text.components(separatedBy: "\n").compactMap { line in
            guard line.hasPrefix("data: ") else { return nil }
            return try? JSON(parsing: Array(line.dropFirst(6).utf8))
        }
    }

    @Test("Over a real connection the events stream sends each new request as it is answered, and ends when the server stops")
    func eventsOverHTTP() async throws {
        let server = try await Fixtures.server()
        let port = try await server.start(host: "127.0.0.1", port: 0)
        do {
            try await readEvents(from: server, port: port)
        } catch {
            await server.stop()
            throw error
        }
    }

    /// The body of ``eventsOverHTTP()``, which stops the server itself to see the stream end.
    func readEvents(from server: MockServer, port: Int) async throws {
        let connection = try RawConnection(port: port)
        await connection.send("GET /__hammock/events?method=POST HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let head = await connection.read(until: ": connected")
        #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(head.lowercased().contains("content-type: text/event-stream"))
        #expect(head.lowercased().contains("transfer-encoding: chunked"))
        #expect(!head.lowercased().contains("content-length"))
        let client = LoopbackClient(port: port)
        _ = try await client.send("GET", "/people")
        _ = try await client.send("POST", "/people", json: ["name": "ada"])
        let first = await connection.read(until: "\n\n")
        let received = events(in: first)
        #expect(received.count == 1)
        #expect(received.first?["request"]?["method"] == "POST")
        #expect(received.first?["response"]?["status"] == 201)
        #expect(first.contains("event: request"))
        #expect(first.contains("id: 2"))
        // Stopping ends the stream with its last chunk and closes the connection.
        await server.stop()
        let (rest, closed) = await connection.readUntilClosed()
        #expect(closed)
        #expect(String(decoding: rest, as: UTF8.self).hasSuffix("0\r\n\r\n"))
        #expect(await eventually { server.journal.subscriberCount == 0 })
    }

    @Test("A client that leaves the events stream ends its subscription")
    func clientLeaves() async throws {
        let server = try await Fixtures.server()
        try await server.whileServing { port in
            var connection: RawConnection? = try RawConnection(port: port)
            await connection?.send("GET /__hammock/events HTTP/1.1\r\nHost: localhost\r\n\r\n")
            _ = await connection?.read(until: ": connected")
            #expect(server.journal.subscriberCount == 1)
            connection = nil  // closes the socket
            // The server notices at the next event it writes.
            #expect(await eventually { server.journal.subscriberCount == 0 })
            _ = try await LoopbackClient(port: port).send("GET", "/people")
        }
    }

    @Test("Last-Event-ID replays the kept entries after it, then goes on live, without repeating one")
    func replay() async throws {
        let server = try await Fixtures.server()
        for index in 1...3 { _ = await server.send(.post, "/people", json: ["name": .string("p\(index)")]) }
        var fields = HTTPFields()
        fields[HTTPField.Name("Last-Event-ID")!] = "1"
        let response = await server.respond(to: MockRequest(.get, "/__hammock/events", headerFields: fields))
        #expect(response.status == .ok && response.headerFields[.contentType] == "text/event-stream")
        let stream = try #require(response.stream)
        let (chunks, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        let reader = Task { try await stream.write(to: BodyWriter { continuation.yield($0) }) }
        defer { reader.cancel() }
        var iterator = chunks.makeAsyncIterator()
        let opening = String(decoding: await iterator.next() ?? [], as: UTF8.self)
        #expect(events(in: opening).map { $0["id"] } == [2, 3])
        _ = await server.send(.get, "/people/1")
        let live = String(decoding: await iterator.next() ?? [], as: UTF8.self)
        #expect(events(in: live).map { $0["id"] } == [4])
        #expect(await server.send(.get, "/__hammock/events?status=abc").0.status == .badRequest)
    }

    @Test("A route's streamed body reaches an HTTP client whole; HEAD sends none; HTTP/1.0 ends it by closing")
    func streamedRoute() async throws {
        let server = try await Fixtures.server()
        try server.route(.get, "/countdown") { _ in
            let (chunks, writer) = AsyncStream.makeStream(of: [UInt8].self)
            for number in [3, 2, 1] { writer.yield(Array("\(number)\n".utf8)) }
            writer.finish()
            return MockResponse(status: .ok, headerFields: [.contentType: "text/plain"], stream: StreamingBody(chunks))
        }
        try await server.whileServing { port in
            let client = LoopbackClient(port: port)
            let reply = try await client.send("GET", "/countdown")
            #expect(reply.status == 200 && String(decoding: reply.body, as: UTF8.self) == "3\n2\n1\n")
            let head = try await client.send("HEAD", "/countdown")
            #expect(head.status == 200 && head.body.isEmpty)
            let old = try RawConnection(port: port)
            await old.send("GET /countdown HTTP/1.0\r\n\r\n")
            let (bytes, closed) = await old.readUntilClosed()
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(closed && text.hasPrefix("HTTP/1.0 200 OK") && text.hasSuffix("\r\n\r\n3\n2\n1\n"))
            #expect(!text.lowercased().contains("transfer-encoding"))
        }
        // In process the caller reads the stream; the journal counts no body for it.
        let response = await server.respond(to: MockRequest(.get, "/countdown"))
        #expect(try await response.stream?.collect() == Array("3\n2\n1\n".utf8))
        #expect(server.journal.entries.last?.responseBodySize == 0)
    }
}
