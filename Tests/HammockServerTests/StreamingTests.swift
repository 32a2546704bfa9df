import Foundation
import HTTPTypes
import HammockHTTPServer
import HammockJSON
import HammockServer
import HammockTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Bodies that stream: Server-Sent Events stubs, files from disk, writers with backpressure, and a
/// 100 MB answer in flat memory.
@Suite("Streamed answers")
struct StreamingTests {
    static func configured(_ routes: String, clock: ManualClock? = nil, in directory: String? = nil) async throws -> MockServer {
        let directory = directory ?? TemporaryFiles.directory("stream")
        try Data(#"{"routes": \#(routes)}"#.utf8).write(to: URL(fileURLWithPath: directory + "mock.json"))
        let configuration = try ServerConfiguration(contentsOfFile: directory + "mock.json")
        if let clock { return try await MockServer(configuration: configuration, store: MemoryStore(), clock: clock) }
        return try await MockServer(configuration: configuration, store: MemoryStore())
    }

    static let ticks = #"""
        [{"method": "GET", "path": "/ticks", "events": [
            {"event": "tick", "id": "1", "data": {"n": 1, "who": "{{query.who}}"}},
            {"event": "tick", "id": "2", "data": {"n": 2}, "delay": 200},
            {"data": "last\nline", "retry": 5000, "delay": 100}]}]
        """#

    static let tickText =
        "event: tick\nid: 1\ndata: {\"n\":1,\"who\":\"ada\"}\n\n" + "event: tick\nid: 2\ndata: {\"n\":2}\n\n"
        + "retry: 5000\ndata: last\ndata: line\n\n"

    @Test("An events stub sends each event after its delay on the server's clock, placeholders filled, then ends")
    func eventsInProcess() async throws {
        let clock = ManualClock()
        let server = try await Self.configured(Self.ticks, clock: clock)
        let response = await server.respond(to: MockRequest(.get, "/ticks?who=ada"))
        #expect(response.headerFields[.contentType] == "text/event-stream" && response.headerFields[.cacheControl] == "no-cache")
        let stream = try #require(response.stream)
        let (chunks, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        let reader = Task {
            try await stream.write(to: BodyWriter { continuation.yield($0) })
            continuation.finish()
        }
        var iterator = chunks.makeAsyncIterator()
        let first = String(decoding: await iterator.next() ?? [], as: UTF8.self)
        #expect(first == "event: tick\nid: 1\ndata: {\"n\":1,\"who\":\"ada\"}\n\n")
        #expect(await eventually { clock.sleeperCount == 1 })
        clock.advance(by: .milliseconds(199))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .milliseconds(1))
        #expect(String(decoding: await iterator.next() ?? [], as: UTF8.self) == "event: tick\nid: 2\ndata: {\"n\":2}\n\n")
        #expect(await eventually { clock.sleeperCount == 1 })
        clock.advance(by: .milliseconds(100))
        #expect(String(decoding: await iterator.next() ?? [], as: UTF8.self) == "retry: 5000\ndata: last\ndata: line\n\n")
        #expect(await iterator.next() == nil)
        try await reader.value
    }

    @Test("Over loopback URLSession reads the event stream whole, sent chunked")
    func eventsOverLoopback() async throws {
        let server = try await Self.configured(Self.ticks)
        try await server.whileServing { port in
            let reply = try await LoopbackClient(port: port).send("GET", "/ticks?who=ada")
            #expect(reply.status == 200 && reply.header("Content-Type") == "text/event-stream")
            #expect(String(decoding: reply.body, as: UTF8.self) == Self.tickText)
            let raw = try RawConnection(port: port)
            await raw.send("GET /ticks?who=ada HTTP/1.1\r\nHost: x\r\n\r\n")
            let text = await raw.read(until: "0\r\n\r\n")
            #expect(text.contains("Transfer-Encoding: chunked") && text.hasSuffix("0\r\n\r\n"))
        }
    }

    @Test("A repeating stream goes on until the server stops, which ends it with its last chunk")
    func repeatingUntilStop() async throws {
        let server = try await Self.configured(
            #"[{"method": "GET", "path": "/beat", "repeat": true, "events": [{"data": "beat", "delay": 5}]}]"#)
        // whileServing stops the server whatever happens; the stop inside is the one under test.
        try await server.whileServing { port in
            let raw = try RawConnection(port: port)
            await raw.send("GET /beat HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await raw.read(until: "data: beat").contains("data: beat"))
            let stop = Task {
                try await Task.sleep(for: .milliseconds(100))
                await server.stop()
            }
            let rest = await raw.readToEnd()
            try await stop.value
            let text = String(decoding: rest.bytes, as: UTF8.self)
            #expect(text.components(separatedBy: "data: beat").count > 3, "it repeats")
            #expect(rest.end == .closed && text.hasSuffix("0\r\n\r\n"))
        }
    }

    @Test("Repeating events with no delay, an empty list, and values out of range are refused with the key")
    func eventMistakes() async throws {
        for (routes, message) in [
            (
                #"[{"method": "GET", "path": "/a", "repeat": true, "events": [{"data": 1}]}]"#,
                "routes[0].events: a repeating event stream needs a delay"
            ),
            (#"[{"method": "GET", "path": "/a", "events": []}]"#, "routes[0].events: expected a non-empty array of events"),
            (#"[{"method": "GET", "path": "/a", "events": [{"data": 1, "when": 3}]}]"#, "routes[0].events[0].when: unknown key"),
            (#"[{"method": "GET", "path": "/a", "text": "x", "repeat": true}]"#, "routes[0].repeat: belongs to events"),
            (
                #"[{"method": "GET", "path": "/a", "repeat": "yes", "events": [{"data": 1, "delay": 5}]}]"#,
                "routes[0].repeat: expected true or false"
            ),
            (#"[{"method": "GET", "path": "/a", "events": [{"data": 1, "delay": -1}]}]"#, "routes[0].events[0].delay"),
            (
                #"[{"method": "GET", "path": "/a", "events": [{"data": 1, "delay": 9223372036854775807}]}]"#,
                "routes[0].events[0].delay"
            ),
            (#"[{"method": "GET", "path": "/a", "events": [{"data": 1, "retry": -5}]}]"#, "routes[0].events[0].retry"),
            (#"[{"method": "GET", "path": "/a", "events": [{"event": "x"}]}]"#, "routes[0].events[0].data: missing"),
        ] {
            let error = await #expect(throws: ConfigurationError.self) { try await Self.configured(routes) }
            #expect(error?.description.contains(message) == true, "\(error?.description ?? "accepted")")
        }
    }

    /// A server whose `GET path` answers `file`, written first in a directory of its own with `bytes`
    /// bytes (`n × step`, truncated): the server, the bytes and the directory.
    static func fileStub(
        _ path: String, file: String, bytes: Int, step: Int
    ) async throws -> (MockServer, [UInt8], String) {
        let directory = TemporaryFiles.directory("file")
        let contents = (0..<bytes).map { UInt8(truncatingIfNeeded: $0 &* step) }
        try Data(contents).write(to: URL(fileURLWithPath: directory + file))
        let server = try await configured(#"[{"method": "GET", "path": "\#(path)", "file": "\#(file)"}]"#, in: directory)
        return (server, contents, directory)
    }

    @Test(
        "A file stub answers one byte range with 206, a range past the end with 416, and the whole file for several ranges, a stale If-Range or a malformed Range"
    )
    func fileRanges() async throws {
        let (server, contents, _) = try await Self.fileStub("/video", file: "video.bin", bytes: 100_000, step: 7)
        try await server.whileServing { port in
            let client = LoopbackClient(port: port)
            let whole = try await client.send("GET", "/video")
            #expect(whole.status == 200 && whole.header("Accept-Ranges") == "bytes")
            let etag = try #require(whole.header("ETag"))
            let lastModified = try #require(whole.header("Last-Modified"))
            for (range, part) in [
                ("bytes=0-9", 0..<10), ("bytes=99990-", 99_990..<100_000), ("bytes=-5", 99_995..<100_000),
                ("bytes=50000-99999999", 50_000..<100_000), ("bytes=-999999", 0..<100_000), ("BYTES=7-7", 7..<8),
            ] {
                let reply = try await client.send("GET", "/video", headers: ["Range": range])
                #expect(reply.status == 206, "\(range)")
                let same = reply.body == Array(contents[part])
                #expect(same, "\(range): \(reply.body.count) bytes")
                #expect(reply.header("Content-Range") == "bytes \(part.lowerBound)-\(part.upperBound - 1)/100000", "\(range)")
                #expect(reply.header("Content-Length") == String(part.count), "\(range)")
            }
            for range in ["bytes=100000-", "bytes=-0", "bytes=99999999999999999999-"] {
                let reply = try await client.send("GET", "/video", headers: ["Range": range])
                #expect(reply.status == 416, "\(range)")
                #expect(reply.header("Content-Range") == "bytes */100000", "\(range)")
                #expect(reply.json?["size"] == 100_000)
            }
            // Ignored: the whole file, 200.
            for headers in [
                ["Range": "bytes=0-1,5-6"], ["Range": "items=0-5"], ["Range": "bytes=9-3"], ["Range": "bytes=a-b"],
                ["Range": "bytes=-"], ["Range": "bytes = 0-9"], ["Range": "bytes=0-9", "If-Range": "\"another\""],
                ["Range": "bytes=0-9", "If-Range": "W/\(etag)"],
                ["Range": "bytes=0-9", "If-Range": "Tue, 01 Jan 2019 00:00:00 GMT"],
            ] {
                let reply = try await client.send("GET", "/video", headers: headers)
                let whole = reply.body == contents
                #expect(reply.status == 200 && whole, "\(headers)")
            }
            // A matching If-Range, by tag or by date, keeps the range.
            for condition in [etag, lastModified] {
                let reply = try await client.send("GET", "/video", headers: ["Range": "bytes=10-19", "If-Range": condition])
                #expect(reply.status == 206 && reply.body == Array(contents[10..<20]), "\(condition)")
            }
        }
    }

    @Test("A file stub streams from disk with its Content-Length, keeps the connection open, and HEAD gives the length")
    func fileStub() async throws {
        let (server, contents, directory) = try await Self.fileStub("/photo", file: "photo.jpg", bytes: 200_000, step: 31)
        try await server.whileServing { port in
            let raw = try RawConnection(port: port)
            // Two pipelined on one connection: the first body's length frames it, and the second follows.
            await raw.send("GET /photo HTTP/1.1\r\nHost: x\r\n\r\nGET /photo HTTP/1.1\r\nHost: x\r\n\r\n")
            let replies = await raw.readResponses(2)
            #expect(replies.count == 2)
            #expect(replies.first?.header("Content-Type") == "image/jpeg")
            #expect(replies.map { $0.header("Content-Length") } == ["200000", "200000"])
            #expect(replies.allSatisfy { $0.body == contents && $0.header("Transfer-Encoding") == nil })
            let head = try RawConnection(port: port)
            await head.send("HEAD /photo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let headReply = await head.readToEnd()
            let headText = String(decoding: headReply.bytes, as: UTF8.self)
            #expect(headText.contains("Content-Length: 200000\r\n") && headText.hasSuffix("\r\n\r\n"))
            // The file went away after loading: a 500 that says so, not a hang or a crash.
            try FileManager.default.removeItem(atPath: directory + "photo.jpg")
            let gone = try await LoopbackClient(port: port).send("GET", "/photo")
            #expect(gone.status == 500 && gone.json?["detail"]?.stringValue?.contains("photo.jpg") == true)
        }
    }

    @Test("A file replaced by a FIFO between the answer and its sending fails the body, never blocks it", .timeLimit(.minutes(1)))
    func fileBecomesFIFO() async throws {
        let directory = TemporaryFiles.directory("fifo")
        let path = directory + "report.csv"
        try Data("a,b\n".utf8).write(to: URL(fileURLWithPath: path))
        let body = try StreamingBody.file(at: path)
        try FileManager.default.removeItem(atPath: path)
        #expect(mkfifo(path, 0o600) == 0)
        // Before, opening it waited for a writer for good, holding a thread of the file queue.
        await #expect(throws: FileBodyError.self) { _ = try await body.collect() }
    }

    /// The server's resident memory, from `/proc/self/statm`.
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let pages = text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    #if os(Linux)
    @Test("100 MB chunked from a writer and 100 MB from a file reach a client with the server's memory growing under 50 MB")
    func hundredMegabytes() async {
        // In a process of its own: other tests running in parallel would move this one's numbers.
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            let chunk = [UInt8](repeating: 0x7A, count: 64 << 10)
            let total = 100 << 20
            let directory = TemporaryFiles.directory("big")
            let file = directory + "big.bin"
            _ = FileManager.default.createFile(atPath: file, contents: nil)
            let handle = FileHandle(forWritingAtPath: file)
            try? handle?.truncate(atOffset: UInt64(total))  // sparse: the disk holds none of it
            try? handle?.close()
            let server = try await StreamingTests.configured(
                #"[{"method": "GET", "path": "/file", "file": "big.bin"}]"#, in: directory)
            try server.route(.get, "/chunked") { _ in
                MockResponse(
                    status: .ok,
                    stream: StreamingBody { writer in
                        for _ in 0..<(total / chunk.count) { try await writer.write(chunk) }
                    })
            }
            let port = try await server.start(host: "127.0.0.1", port: 0)
            let before = StreamingTests.residentBytes()
            let peak = Mutex(before)
            let sampler = Task {
                while !Task.isCancelled {
                    let now = StreamingTests.residentBytes()
                    peak.withLock { $0 = max($0, now) }
                    try? await Task.sleep(for: .milliseconds(5))
                }
            }
            for path in ["/chunked", "/file"] {
                let raw = try RawConnection(port: port)
                await raw.send("GET \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                let received = await raw.readToEnd(keep: false)
                // Head and framing on top of the body.
                guard received.end == .closed, received.count > total, received.count < total + 2 << 20 else {
                    print("\(path): \(received.count) bytes, \(received.end)")
                    exit(1)
                }
            }
            sampler.cancel()
            await server.stop()
            let growth = peak.withLock { $0 } - before
            print("resident memory grew by \(growth >> 20) MB")
            exit(growth < 50 << 20 ? 0 : 1)
        }
        let output = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
        #expect(output.contains("resident memory grew by"), "\(output)")
        print(output)
    }
    #endif

    @Test("A writer's body waits for a client that does not read: the producer is held back by the socket")
    func backpressure() async throws {
        let server = try await MockServer()
        let produced = Counter()
        let chunk = [UInt8](repeating: 0x61, count: 64 << 10)
        try server.route(.get, "/endless") { _ in
            MockResponse(
                status: .ok,
                stream: StreamingBody { writer in
                    while true {
                        try await writer.write(chunk)
                        produced.add(chunk.count)
                    }
                })
        }
        try await server.whileServing { port in
            let raw = try RawConnection(port: port)
            await raw.send("GET /endless HTTP/1.1\r\nHost: x\r\n\r\n")
            // The client reads nothing: the producer stops once the socket buffers are full. Without
            // backpressure it would have produced hundreds of megabytes in this time.
            #expect(await eventually { produced.value > 0 })
            try await Task.sleep(for: .milliseconds(300))
            #expect(produced.value < 64 << 20, "\(produced.value) bytes produced for a client that read none")
        }
    }
}

/// Counts bytes from a producer.
final class Counter: Sendable {
    private let state = Mutex(0)
    func add(_ count: Int) { state.withLock { $0 += count } }
    var value: Int { state.withLock { $0 } }
}
