import Foundation
import HTTPTypes
import HammockClient
import Synchronization
import Testing

/// The streamed body: its buffer and backpressure, its single reading, and the three ways of reading
/// text out of it (lines, Server-Sent Events, JSON lines) whatever the chunking.
@Suite("Streamed bodies")
struct BodyStreamTests {
    static func chunks(_ pieces: [String]) -> BodyStream {
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        for piece in pieces { continuation.yield(Array(piece.utf8)) }
        continuation.finish()
        return BodyStream(stream)
    }

    static func collect<S: AsyncSequence>(_ sequence: S) async throws -> [S.Element] {
        var all: [S.Element] = []
        for try await element in sequence { all.append(element) }
        return all
    }

    @Test("A writer waits while the reader is more than the buffer behind, and goes on as it reads")
    func backpressure() async throws {
        let (stream, writer) = BodyStream.makeStream(bufferSize: 10)
        let written = Atomic<Int>(0)
        let producer = Task {
            for _ in 0..<100 {
                try await writer.write([UInt8](repeating: 1, count: 4))
                written.add(1, ordering: .relaxed)
            }
            writer.finish()
        }
        // Nothing read: the writer stops once more than 10 bytes wait (the third chunk of 4 crosses).
        try await Task.sleep(for: .milliseconds(100))
        let early = written.load(ordering: .relaxed)
        #expect(early <= 3)
        let total = try await stream.collect(upTo: 1 << 20).count
        #expect(total == 400)
        try await producer.value
        let all = written.load(ordering: .relaxed)
        #expect(all == 100)
    }

    @Test("A reader that drops the stream stops the writer: its next write throws and the producer is told")
    func droppedReader() async throws {
        let terminated = Atomic<Bool>(false)
        var made: (stream: BodyStream, writer: BodyStream.Writer)? = BodyStream.makeStream(
            bufferSize: 4, onTermination: { terminated.store(true, ordering: .relaxed) })
        let writer = try #require(made?.writer)
        do {
            var iterator = try #require(made?.stream).makeAsyncIterator()
            try await writer.write([1, 2])
            #expect(try await iterator.next() == [1, 2])
        }
        made = nil  // every copy of the stream and its iterator gone
        let told = terminated.load(ordering: .relaxed)
        #expect(told)
        await #expect(throws: BodyStreamError.readerGone) { try await writer.write([3]) }
    }

    @Test("A reading task cancelled while it waits ends with CancellationError and tells the producer")
    func cancelledReader() async throws {
        let terminated = Atomic<Bool>(false)
        let (stream, _) = BodyStream.makeStream(onTermination: { terminated.store(true, ordering: .relaxed) })
        let reader = Task { try await stream.collect(upTo: 100) }
        try await Task.sleep(for: .milliseconds(20))
        reader.cancel()
        await #expect(throws: CancellationError.self) { try await reader.value }
        let told = terminated.load(ordering: .relaxed)
        #expect(told)
    }

    @Test("A writer waiting on a full buffer ends with CancellationError when its task is cancelled, at any moment")
    func cancelledWriter() async throws {
        // Cancelled at once and after a while: the handler may run before or after the writer waits.
        for delay in [0, 1, 5] {
            let (stream, writer) = BodyStream.makeStream(bufferSize: 1)
            let producer = Task {
                try await writer.write([1, 2])  // past the buffer: waits for a reader that never reads
            }
            if delay > 0 { try await Task.sleep(for: .milliseconds(delay)) }
            producer.cancel()
            await #expect(throws: CancellationError.self) { try await producer.value }
            _ = stream
        }
    }

    @Test("A writer that finishes with an error ends the reader with it, after the chunks before it")
    func failedWriter() async throws {
        struct Cut: Error {}
        let (stream, writer) = BodyStream.makeStream()
        try await writer.write([1])
        writer.finish(throwing: Cut())
        var iterator = stream.makeAsyncIterator()
        #expect(try await iterator.next() == [1])
        await #expect(throws: Cut.self) { try await iterator.next() }
    }

    @Test("A body is read once (a second reading throws alreadyRead), except one made of bytes")
    func readOnce() async throws {
        let stream = Self.chunks(["a", "b"])
        #expect(try await stream.collect(upTo: 10) == Array("ab".utf8))
        await #expect(throws: BodyStreamError.alreadyRead) { try await stream.collect(upTo: 10) }
        let bytes = BodyStream(Array("xyz".utf8))
        #expect(try await bytes.collect(upTo: 10) == Array("xyz".utf8))
        #expect(try await bytes.collect(upTo: 10) == Array("xyz".utf8))
        #expect(bytes.bytes == Array("xyz".utf8))
    }

    @Test("Collecting past the limit fails as the bytes arrive, and at once for an announced length past it")
    func collectLimit() async throws {
        await #expect(throws: BodyStreamError.tooLarge(limit: 3)) { try await Self.chunks(["ab", "cd"]).collect(upTo: 3) }
        let (stream, _) = BodyStream.makeStream(expectedLength: 10)
        // No byte needs to arrive: the announced length decides.
        await #expect(throws: BodyStreamError.tooLarge(limit: 3)) { try await stream.collect(upTo: 3) }
    }

    @Test("A file body is read in chunks of the size asked, from the start each time; a directory is refused")
    func fileBody() async throws {
        let directory = NSTemporaryDirectory() + "hammock-file-body-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/data.bin"
        let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let body = try BodyStream(contentsOf: URL(fileURLWithPath: path), chunkSize: 4096)
        #expect(body.expectedLength == 10_000 && body.isRepeatable)
        let sizes = try await Self.collect(body).map(\.count)
        #expect(sizes == [4096, 4096, 1808])
        #expect(try await body.collect(upTo: 1 << 20) == bytes)  // again, from the start
        #expect(throws: UploadFileError.self) { try BodyStream(contentsOf: URL(fileURLWithPath: directory)) }
        #expect(throws: UploadFileError.self) { try BodyStream(contentsOf: URL(fileURLWithPath: directory + "/missing")) }
    }

    @Test(
        "Sizes at their extremes are held, never trapped on: an announced Int.max, a negative length, zero and negative buffers and limits"
    )
    func extremes() async throws {
        // A hostile Content-Length under a limit of Int.max is not one allocation.
        let (huge, writer) = BodyStream.makeStream(expectedLength: .max)
        try await writer.write([1, 2, 3])
        writer.finish()
        #expect(try await huge.collect(upTo: .max) == [1, 2, 3])
        #expect(BodyStream.makeStream(expectedLength: -5).stream.expectedLength == nil)
        let (tiny, tinyWriter) = BodyStream.makeStream(bufferSize: -1)
        let producer = Task {
            try await tinyWriter.write([1])
            tinyWriter.finish()
        }
        #expect(try await tiny.collect(upTo: 10) == [1])
        try await producer.value
        await #expect(throws: BodyStreamError.tooLarge(limit: -1)) { try await Self.chunks(["a"]).collect(upTo: -1) }
        #expect(try await Self.chunks([]).collect(upTo: 0) == [])
        await #expect(throws: BodyStreamError.lineTooLong(limit: 1)) {
            _ = try await Self.collect(Self.chunks(["ab\n"]).lines(maximumLength: 0))
        }
        await #expect(throws: BodyStreamError.lineTooLong(limit: 1)) {
            _ = try await Self.collect(Self.chunks(["data: ab\n\n"]).serverSentEvents(maximumEventSize: -3))
        }
    }

    @Test("Lines end at LF, CRLF or CR, also when the ending is split across chunks; the last needs none")
    func lines() async throws {
        let lines = try await Self.collect(Self.chunks(["one\r", "\ntwo\nthr", "ee\rfour\r\n\r\nlast"]).lines)
        #expect(lines == ["one", "two", "three", "four", "", "last"])
        let bad = try await Self.collect(BodyStream([0x61, 0xFF, 0x0A]).lines)
        #expect(bad == ["a\u{FFFD}"])
    }

    @Test("A line longer than the limit fails instead of growing without bound")
    func lineTooLong() async throws {
        await #expect(throws: BodyStreamError.lineTooLong(limit: 8)) {
            _ = try await Self.collect(Self.chunks(["12345", "67890", "\n"]).lines(maximumLength: 8))
        }
    }

    static let eventText = """
        : a comment\r
        event: greeting\r
        id: 7\r
        data: hello\r
        data:  world\r
        \r
        data: no type\r
        retry: 2500\r
        \r
        event: nothing\r
        \r
        data\r
        \r
        id\r
        data: {"n": 3}\r
        unknown: field\r
        \r
        data: cut off by the end
        """

    static let expectedEvents = [
        ServerSentEvents.Event(event: "greeting", data: "hello\n world", id: "7"),
        ServerSentEvents.Event(data: "no type", id: "7", retry: .milliseconds(2500)),
        ServerSentEvents.Event(data: "", id: "7"),
        ServerSentEvents.Event(data: #"{"n": 3}"#, id: ""),
    ]

    @Test("Server-Sent Events follow the WHATWG rules: comments, multi-line data, ids kept, empty events dropped")
    func serverSentEvents() async throws {
        let events = try await Self.collect(Self.chunks([Self.eventText]).serverSentEvents)
        #expect(events == Self.expectedEvents)
        struct N: Decodable, Equatable { var n: Int }
        #expect(try events[3].decode(N.self) == N(n: 3))
    }

    @Test("The same events come out however the bytes are cut into chunks, a byte order mark first included")
    func eventsAnyChunking() async throws {
        let bytes = [0xEF, 0xBB, 0xBF] + Array(Self.eventText.utf8)
        for size in [1, 2, 3, 5, 7, 64] {
            let pieces = stride(from: 0, to: bytes.count, by: size).map { Array(bytes[$0..<min($0 + size, bytes.count)]) }
            let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self)
            for piece in pieces { continuation.yield(piece) }
            continuation.finish()
            let events = try await Self.collect(BodyStream(stream).serverSentEvents)
            #expect(events == Self.expectedEvents, "chunks of \(size)")
        }
    }

    @Test("An event whose data grows past the limit fails, whatever its lines")
    func eventTooLarge() async throws {
        let text = String(repeating: "data: 0123456789\n", count: 20)
        await #expect(throws: BodyStreamError.lineTooLong(limit: 100)) {
            _ = try await Self.collect(Self.chunks([text]).serverSentEvents(maximumEventSize: 100))
        }
    }

    @Test("JSON lines decode one value per non-blank line; a bad line is named by its number")
    func jsonLines() async throws {
        struct Item: Decodable, Equatable { var id: Int }
        let items = try await Self.collect(
            Self.chunks(["{\"id\": 1}\n\n  \n{\"id\"", ": 2}\r\n{\"id\": 3}"]).jsonLines(of: Item.self))
        #expect(items == [Item(id: 1), Item(id: 2), Item(id: 3)])
        do {
            _ = try await Self.collect(Self.chunks(["{\"id\": 1}\n", "\n", "[oops]\n"]).jsonLines(of: Item.self))
            Issue.record("a bad line decoded")
        } catch let error as JSONLineError {
            #expect(error.line == 3 && error.excerpt == "[oops]")
        }
    }

    @Test("Mapping errors and observing chunks keep the chunks and the single reading")
    func views() async throws {
        struct Wrapped: Error { var inner: any Error }
        let seen = Mutex<[Int]>([])
        let (stream, writer) = BodyStream.makeStream()
        let view = stream.observingChunks { chunk in seen.withLock { $0.append(chunk.count) } }.mapError { Wrapped(inner: $0) }
        try await writer.write([1, 2, 3])
        writer.finish(throwing: CancellationError())
        var iterator = view.makeAsyncIterator()
        #expect(try await iterator.next() == [1, 2, 3])
        await #expect(throws: Wrapped.self) { try await iterator.next() }
        #expect(seen.withLock { $0 } == [3])
        await #expect(throws: BodyStreamError.alreadyRead) { try await stream.collect(upTo: 10) }
    }
}

/// A streamed call through interceptors: they decide on heads and error bodies as for any call.
@Suite("Streamed calls through interceptors")
struct StreamedInterceptorTests {
    /// Answers each streamed call from `answers` in turn, counting the calls and the request bodies.
    final class ScriptedTransport: HTTPTransport {
        let answers: Mutex<[(Int, [String])]>
        let calls = Atomic<Int>(0)
        let bodies = Mutex<[[UInt8]]>([])

        init(_ answers: [(Int, [String])]) { self.answers = Mutex(answers) }

        func send(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8]) {
            Issue.record("a streamed call went through send")
            return (HTTPResponse(status: .internalServerError), [])
        }

        func stream(_ request: HTTPRequest, body: BodyStream?) async throws -> (HTTPResponse, BodyStream) {
            calls.add(1, ordering: .relaxed)
            if let body { bodies.withLock { $0.append(body.bytes ?? []) } }
            let (status, pieces) = answers.withLock { $0.removeFirst() }
            return (HTTPResponse(status: .init(code: status)), BodyStreamTests.chunks(pieces))
        }
    }

    /// Records the bodies it sees come back.
    final class Spy: ClientInterceptor {
        let seen = Mutex<[(Int, Int)]>([])
        func intercept(_ request: HTTPRequest, body: [UInt8]?, next: Next) async throws -> (HTTPResponse, [UInt8]) {
            let (response, bytes) = try await next(request, body)
            seen.withLock { $0.append((response.status.code, bytes.count)) }
            return (response, bytes)
        }
    }

    @Test("A retry sees the 503 whole, sends the bytes body again, and the caller streams the 200 that followed")
    func retryThenStream() async throws {
        let transport = ScriptedTransport([(503, ["busy"]), (200, ["one\n", "two\n"])])
        let spy = Spy()
        let client = RestClient(
            baseURL: URL(string: "https://api.example.com")!, transport: transport,
            interceptors: [spy, RetryPolicy(maximumAttempts: 2, initialDelay: .zero)])
        var request = RequestBuilder(.put, "/feed")
        request.body = .bytes(Array("payload".utf8), contentType: "text/plain")
        let response = try await client.stream(request)
        var lines: [String] = []
        for try await line in response.lines { lines.append(line) }
        #expect(lines == ["one", "two"])
        #expect(transport.calls.load(ordering: .relaxed) == 2)
        #expect(transport.bodies.withLock { $0 } == [Array("payload".utf8), Array("payload".utf8)])
        // The outer interceptor saw the final 200, its body left to the caller's stream.
        #expect(spy.seen.withLock { $0.map(\.0) } == [200] && spy.seen.withLock { $0.map(\.1) } == [0])
    }

    @Test("A non-2xx answer to a streamed call reaches the interceptors and the error whole")
    func errorBody() async throws {
        let transport = ScriptedTransport([(404, ["{\"title\":", " \"gone\"}"])])
        let spy = Spy()
        let client = RestClient(baseURL: URL(string: "https://api.example.com")!, transport: transport, interceptors: [spy])
        do {
            _ = try await client.stream(RequestBuilder(.get, "/feed"))
            Issue.record("a 404 streamed")
        } catch {
            #expect(String(decoding: error.body ?? [], as: UTF8.self) == #"{"title": "gone"}"#)
        }
        #expect(spy.seen.withLock { $0.map(\.1) } == [17])
    }

    @Test("An interceptor that answers by itself is what the stream holds")
    func interceptorAnswers() async throws {
        struct Canned: ClientInterceptor {
            func intercept(_ request: HTTPRequest, body: [UInt8]?, next: Next) async throws -> (HTTPResponse, [UInt8]) {
                (HTTPResponse(status: .ok), Array("from the cache".utf8))
            }
        }
        let transport = ScriptedTransport([])
        let client = RestClient(baseURL: URL(string: "https://api.example.com")!, transport: transport, interceptors: [Canned()])
        let bytes = try await client.stream(RequestBuilder(.get, "/feed")).body.collect(upTo: 100)
        #expect(String(decoding: bytes, as: UTF8.self) == "from the cache")
        #expect(transport.calls.load(ordering: .relaxed) == 0)
    }
}
