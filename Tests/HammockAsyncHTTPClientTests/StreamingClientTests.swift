import Foundation
import HTTPTypes
import HammockAsyncHTTPClient
import HammockClient
import HammockHTTPServer
import HammockJSON
import HammockServer
import HammockTestSupport
import HammockTesting
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

struct Tick: Codable, Equatable, Sendable {
    var n: Int
}

/// Streaming methods of a generated client: the return type chooses the reading.
@API
protocol Streams: Sendable {
    @GET("/ticks")
    func ticks() async throws -> ServerSentEvents

    @GET("/ticks")
    func tickResponse() async throws -> StreamedResponse

    @GET("/numbers")
    func numbers() async throws -> JSONLines<Tick>

    @GET("/numbers")
    func numberLines() async throws -> TextLines

    @GET("/numbers")
    func numberChunks() async throws -> BodyStream

    @GET("/report")
    func report() async throws -> DownloadedFile

    @PUT("/upload")
    @Body("file")
    func upload(file: URL) async throws -> JSON

    @POST("/note")
    @Body("text")
    func note(text: String) async throws -> JSON
}

/// Bodies read as they arrive, on each transport of the package: over loopback with URLSession and
/// AsyncHTTPClient, and in process: event stubs, throttled answers, file stubs, writers that never end.
@Suite("Streaming on every transport")
struct StreamingClientTests {
    enum Road: String, CaseIterable, CustomStringConvertible, Sendable, Codable {
        case urlSession = "URLSession"
        case asyncHTTPClient = "AsyncHTTPClient"
        case inProcess = "in process"
        var description: String { rawValue }
    }

    /// A server with the streaming routes, and a client reaching it by `road`; `body` runs, then the server stops.
    static func withClient(
        _ road: Road, directory: String? = nil, _ body: (RestClient, MockServer) async throws -> Void
    ) async throws {
        let directory = directory ?? TemporaryFiles.directory("client-stream")
        try Data((0..<50_000).map { UInt8($0 % 251) }).write(to: URL(fileURLWithPath: directory + "report.bin"))
        try Data(
            #"""
            {"requestTimeout": 300, "routes": [
              {"method": "GET", "path": "/ticks", "repeat": true, "events": [
                {"event": "tick", "data": {"n": 1}, "delay": 5}, {"event": "tick", "data": {"n": 2}, "delay": 5}]},
              {"method": "GET", "path": "/report", "file": "report.bin",
               "headers": {"Content-Disposition": "attachment; filename=\"report.bin\""}},
              {"method": "GET", "path": "/missing", "status": 404, "body": {"title": "no such thing"}}
            ]}
            """#.utf8
        ).write(to: URL(fileURLWithPath: directory + "mock.json"))
        // A request timeout of 300 s, not 30 (in the file for the in-process road, given to `start` below
        // for the network ones): what these tests check is what streams, and in a full run
        // the client's task waited 10 to 15 s for a turn on the two cooperative threads after each chunk of
        // a file was read (measured: up to 15.3 s between the read and the task going on, in each of three
        // runs), so a 900 KB upload in four chunks outlasted 30 s once in about three runs.
        let server = try await MockServer(
            configuration: ServerConfiguration(contentsOfFile: directory + "mock.json"), store: MemoryStore())
        try server.route(.get, "/numbers") { _ in
            MockResponse(
                status: .ok, headerFields: [.contentType: "application/x-ndjson"],
                stream: StreamingBody { writer in
                    for n in 1...3 { try await writer.write("{\"n\": \(n)}\n") }
                })
        }
        let transport: any HTTPTransport
        let base: URL
        switch road {
        case .urlSession, .asyncHTTPClient:
            // The file's limits are the CLI's to apply: `start` takes its own (30 s without them), which is
            // why the 300 s above did not reach the socket and a CI-loaded run still got 408.
            let port = try await server.start(host: "127.0.0.1", port: 0, limits: ConnectionLimits(requestTimeout: .seconds(300)))
            base = try #require(URL(string: "http://127.0.0.1:\(port)"))
            transport = road == .urlSession ? URLSessionTransport() : AsyncHTTPClientTransport()
        case .inProcess:
            base = try #require(URL(string: "http://mock"))
            transport = MockServerTransport(server: server)
        }
        do {
            try await body(RestClient(baseURL: base, transport: transport), server)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test(
        "An endless event stream yields its events as they come, and reading stops when the reader does", arguments: Road.allCases
    )
    func endlessEvents(road: Road) async throws {
        try await Self.withClient(road) { client, _ in
            // The stub repeats for ever: reading it whole would never return, so each event that
            // comes out came out as it arrived.
            var events: [ServerSentEvents.Event] = []
            for try await event in try await client.stream(RequestBuilder(.get, "/ticks")).serverSentEvents {
                events.append(event)
                if events.count == 5 { break }
            }
            #expect(events.map(\.event) == Array(repeating: "tick", count: 5))
            #expect(try events.map { try $0.decode(Tick.self).n } == [1, 2, 1, 2, 1])
        }
    }

    @Test(
        "A generated client's return type chooses the reading: events, lines, JSON lines, chunks, a file",
        arguments: Road.allCases)
    func generatedMethods(road: Road) async throws {
        try await Self.withClient(road) { client, _ in
            let api = StreamsClient(client: client)
            var first: ServerSentEvents.Event?
            for try await event in try await api.ticks() {
                first = event
                break
            }
            #expect(first?.data == #"{"n":1}"#)
            let response = try await api.tickResponse()
            #expect(response.headerFields[.contentType] == "text/event-stream")
            var numbers: [Tick] = []
            for try await tick in try await api.numbers() { numbers.append(tick) }
            #expect(numbers == [Tick(n: 1), Tick(n: 2), Tick(n: 3)])
            var lines: [String] = []
            for try await line in try await api.numberLines() { lines.append(line) }
            #expect(lines == [#"{"n": 1}"#, #"{"n": 2}"#, #"{"n": 3}"#])
            let bytes = try await api.numberChunks().collect(upTo: 1000)
            #expect(String(decoding: bytes, as: UTF8.self) == "{\"n\": 1}\n{\"n\": 2}\n{\"n\": 3}\n")
            let file = try await api.report()
            defer { try? FileManager.default.removeItem(at: file.url) }
            #expect(file.byteCount == 50_000 && file.suggestedFilename == "report.bin")
            #expect(try Data(contentsOf: file.url) == Data((0..<50_000).map { UInt8($0 % 251) }))
            let mode = try FileManager.default.attributesOfItem(atPath: file.url.path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }
    }

    @Test(
        "A file URL body is read from disk as it is sent and a String body goes as text, on every transport",
        arguments: Road.allCases)
    func uploads(road: Road) async throws {
        try await Self.withClient(road) { client, server in
            try server.route(.put, "/upload") { route in
                let body = route.request.body
                return MockResponse(json: [
                    "count": .integer(body.count), "sum": .integer(body.reduce(0) { $0 &+ Int($1) }),
                    "type": .string(route.request.headerFields[.contentType] ?? ""),
                    "length": .string(route.request.headerFields[.contentLength] ?? ""),
                ])
            }
            try server.route(.post, "/note") { route in
                MockResponse(json: [
                    "text": .string(String(decoding: route.request.body, as: UTF8.self)),
                    "type": .string(route.request.headerFields[.contentType] ?? ""),
                ])
            }
            // Under the mock's 1 MiB body limit, and several of the 256 KiB chunks a file is read in.
            let bytes = (0..<900_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            let file = URL(fileURLWithPath: TemporaryFiles.directory("upload") + "photo.bin")
            try Data(bytes).write(to: file)
            let api = StreamsClient(client: client)
            let echo = try await api.upload(file: file)
            #expect(echo["count"] == .integer(900_000) && echo["length"] == "900000", "\(echo)")
            #expect(echo["sum"] == .integer(bytes.reduce(0) { $0 &+ Int($1) }))
            #expect(echo["type"] == "application/octet-stream")
            let note = try await api.note(text: "héllo \"world\"")
            #expect(note["text"] == "héllo \"world\"" && note["type"] == "text/plain; charset=utf-8", "\(note)")
            // What cannot be a body is refused before anything is sent.
            let fifo = TemporaryFiles.directory("upload-fifo") + "pipe"
            #expect(mkfifo(fifo, 0o600) == 0)
            do {
                _ = try await api.upload(file: URL(fileURLWithPath: fifo))
                Issue.record("a FIFO was sent")
            } catch let error as RestError {
                guard case .encoding(let underlying) = error.reason else {
                    Issue.record("\(error)")
                    return
                }
                #expect(underlying is UploadFileError)
            }
        }
    }

    @Test(
        "Upload progress: a file body reports each chunk read up to its size, a body of bytes reports once whole, on every transport",
        arguments: Road.allCases)
    func uploadProgress(road: Road) async throws {
        try await Self.withClient(road) { client, server in
            try server.route(.put, "/upload") { route in MockResponse(json: ["count": .integer(route.request.body.count)]) }
            try server.route(.post, "/note") { route in MockResponse(json: ["count": .integer(route.request.body.count)]) }
            let bytes = (0..<900_000).map { UInt8(truncatingIfNeeded: $0 &* 3) }
            let file = URL(fileURLWithPath: TemporaryFiles.directory("upload-progress") + "photo.bin")
            try Data(bytes).write(to: file)
            let api = StreamsClient(client: client)
            let sent = Mutex<[(total: Int, expected: Int?)]>([])
            let reporter = TransferReporter { event in
                if case .requestBytesSent(let total, let expected) = event { sent.withLock { $0.append((total, expected)) } }
            }
            let echo = try await TransferProgress.$reporter.withValue(reporter) { try await api.upload(file: file) }
            #expect(echo["count"] == .integer(900_000))
            let fileEvents = sent.withLock { $0 }
            if road == .urlSession {
                // An upload task from the file: URLSession's own progress, rising to the whole file.
                #expect(fileEvents.count > 1 && fileEvents.last?.total == 900_000, "\(fileEvents)")
                #expect(zip(fileEvents, fileEvents.dropFirst()).allSatisfy { $0.total <= $1.total }, "\(fileEvents.map(\.total))")
            } else {
                // 256 KiB chunks: four of them, rising to the whole file.
                #expect(fileEvents.map(\.total) == [262_144, 524_288, 786_432, 900_000], "\(fileEvents)")
            }
            #expect(fileEvents.allSatisfy { $0.expected == 900_000 })
            sent.withLock { $0 = [] }
            _ = try await TransferProgress.$reporter.withValue(reporter) { try await api.note(text: "twelve bytes") }
            #expect(sent.withLock { $0.map(\.total) } == [12])
        }
    }

    @Test(
        "A download cut off mid-body keeps what arrived, and resuming asks for the rest and completes the same file",
        arguments: Road.allCases)
    func resumedDownload(road: Road) async throws {
        try await Self.withClient(road) { client, server in
            let whole = (0..<50_000).map { UInt8($0 % 251) }
            server.setFaults([try Fault("GET /report", effect: .connection(.truncate))])
            let error = await #expect(throws: RestError.self) { try await client.download(RequestBuilder(.get, "/report")) }
            let partial = try #require(error?.partialDownload, "\(String(describing: error))")
            defer { try? FileManager.default.removeItem(at: partial.url) }
            #expect(partial.byteCount > 0 && partial.byteCount < 50_000)
            #expect(partial.etag != nil && partial.suggestedFilename == "report.bin")
            #expect(try Data(contentsOf: partial.url) == Data(whole.prefix(partial.byteCount)))
            server.setFaults([])
            server.journal.clear()
            let file = try await client.download(RequestBuilder(.get, "/report"), resuming: partial)
            #expect(file.url == partial.url && file.byteCount == 50_000)
            #expect(try Data(contentsOf: file.url) == Data(whole))
            // One request, for the rest only, conditional on the same body.
            let sent = server.journal.entries.map(\.request)
            #expect(sent.count == 1)
            #expect(sent.first?.headerFields[.range] == "bytes=\(partial.byteCount)-")
            #expect(sent.first?.headerFields[.ifRange] == partial.etag)
            // Everything already there: the server's 416 names the size, and the file is the download.
            var complete = partial
            complete.byteCount = 50_000
            #expect(try await client.download(RequestBuilder(.get, "/report"), resuming: complete).byteCount == 50_000)
        }
    }

    @Test(
        "A partial download whose file is not what it says (another size, a link, a directory, extremes) is refused before anything is sent"
    )
    func resumeRefusesAForeignFile() async throws {
        try await Self.withClient(.inProcess) { client, server in
            let directory = TemporaryFiles.directory("resume-foreign")
            let url = URL(fileURLWithPath: directory + "partial.bin")
            try Data(repeating: 1, count: 100).write(to: url)
            let link = URL(fileURLWithPath: directory + "link.bin")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)
            server.journal.clear()
            for partial in [
                PartialDownload(url: url, byteCount: 99), PartialDownload(url: url, byteCount: -1),
                PartialDownload(url: url, byteCount: .max), PartialDownload(url: link, byteCount: 100),
                PartialDownload(url: URL(fileURLWithPath: directory), byteCount: 100),
                PartialDownload(url: URL(fileURLWithPath: directory + "missing.bin"), byteCount: 0),
            ] {
                let error = await #expect(throws: RestError.self) {
                    try await client.download(RequestBuilder(.get, "/report"), resuming: partial)
                }
                #expect(error?.kind == .invalidRequest, "\(partial)")
            }
            #expect(server.journal.entries.isEmpty)
            #expect(try Data(contentsOf: url) == Data(repeating: 1, count: 100))
        }
    }

    @Test(
        "A resumption whose validator no longer matches gets the whole body, which replaces the bytes on disk",
        arguments: Road.allCases)
    func resumedDownloadOfAChangedBody(road: Road) async throws {
        try await Self.withClient(road) { client, _ in
            let url = URL(fileURLWithPath: TemporaryFiles.directory("resume-changed") + "partial.bin")
            try Data(repeating: 0xFF, count: 1_000).write(to: url)
            let stale = PartialDownload(url: url, byteCount: 1_000, etag: "\"an-older-version\"")
            let file = try await client.download(RequestBuilder(.get, "/report"), resuming: stale)
            #expect(file.byteCount == 50_000)
            #expect(try Data(contentsOf: url) == Data((0..<50_000).map { UInt8($0 % 251) }))
        }
    }

    @Test("A throttled answer arrives in several chunks, the same bytes as whole", arguments: Road.allCases)
    func throttled(road: Road) async throws {
        try await Self.withClient(road) { client, server in
            // 4,000 bytes at 4,000 B/s: twenty slices of 200 bytes, one each twentieth of a second, over
            // a second. (At 20,000 B/s, two slices came in one read under the whole suite's load; over
            // half a second, once, all ten: the reading side starved that long on two busy cores.)
            let block = (0..<4000).map { UInt8($0 % 251) }
            try server.route(.get, "/block") { _ in MockResponse(status: .ok, body: block) }
            server.setFaults([try Fault("GET /block", effect: .bandwidth(4_000))])
            var chunks = 0
            var bytes: [UInt8] = []
            for try await chunk in try await client.stream(RequestBuilder(.get, "/block")).body {
                chunks += 1
                bytes += chunk
            }
            #expect(bytes == block)
            #expect(chunks >= 2, "\(chunks) chunk(s)")
        }
    }

    @Test("A non-2xx answer to a streamed call throws unacceptableStatus with its body", arguments: Road.allCases)
    func errorStatus(road: Road) async throws {
        try await Self.withClient(road) { client, _ in
            do {
                _ = try await client.stream(RequestBuilder(.get, "/missing"))
                Issue.record("a 404 streamed")
            } catch let error as RestError {
                #expect(error.reason.isUnacceptableStatus && error.status?.code == 404)
                #expect(String(decoding: error.body ?? [], as: UTF8.self).contains("no such thing"))
            }
        }
    }

    @Test("A request's size limit holds as the body arrives, below and above the transport's own", arguments: Road.allCases)
    func sizeLimit(road: Road) async throws {
        try await Self.withClient(road) { client, _ in
            var small = RequestBuilder(.get, "/report")
            small.maximumResponseSize = 10_000
            do {
                _ = try await client.send(small)
                Issue.record("50,000 bytes passed a 10,000-byte limit")
            } catch let error as RestError {
                guard case .transport(let underlying) = error.reason else {
                    Issue.record("\(error)")
                    return
                }
                #expect(underlying as? BodyStreamError == .tooLarge(limit: 10_000))
            }
            await #expect(throws: RestError.self) { try await client.download(small) }
            var exact = RequestBuilder(.get, "/report")
            exact.maximumResponseSize = 50_000
            #expect(try await client.send(exact).body.count == 50_000)
        }
    }

    @Test("Cancelling the reading task ends a stream that would never end, on every transport", arguments: Road.allCases)
    func cancelReader(road: Road) async throws {
        try await Self.withClient(road) { client, _ in
            let response = try await client.stream(RequestBuilder(.get, "/ticks"))
            let count = Atomic<Int>(0)
            let reader = Task {
                for try await _ in response.serverSentEvents { count.add(1, ordering: .relaxed) }
            }
            #expect(await eventually { count.load(ordering: .relaxed) >= 2 })
            reader.cancel()
            do {
                try await reader.value
                Issue.record("an endless stream ended by itself")
            } catch {
                #expect((error as? RestError)?.reason.isCancelled == true || error is CancellationError, "\(error)")
            }
        }
    }

    /// The roads that hold a slow reader's body back: not URLSession on Linux, whose data tasks
    /// FoundationNetworking cannot pause safely (`URLSessionTransport.stream(_:body:)`).
    static var backpressured: [Road] {
        #if canImport(FoundationNetworking)
        [.asyncHTTPClient, .inProcess]
        #else
        Road.allCases
        #endif
    }

    @Test("A slow reader holds the server's writer back instead of filling memory", arguments: Self.backpressured)
    func slowReader(road: Road) async throws {
        try await Self.withClient(road) { client, server in
            let produced = Atomic<Int>(0)
            let chunk = [UInt8](repeating: 0x61, count: 64 << 10)
            try server.route(.get, "/endless") { _ in
                MockResponse(
                    status: .ok,
                    stream: StreamingBody { writer in
                        while true {
                            try await writer.write(chunk)
                            produced.add(chunk.count, ordering: .relaxed)
                        }
                    })
            }
            let response = try await client.stream(RequestBuilder(.get, "/endless"))
            var iterator = response.body.makeAsyncIterator()
            _ = try await iterator.next()
            #expect(await eventually { produced.load(ordering: .relaxed) > 0 })
            // Nothing more read: the writer stops once the buffers between are full. Without
            // backpressure it would produce hundreds of megabytes in this time.
            try await Task.sleep(for: .milliseconds(300))
            let total = produced.load(ordering: .relaxed)
            #expect(total < 32 << 20, "\(total) bytes produced")
        }
    }
}

extension RestError.Reason {
    var isUnacceptableStatus: Bool {
        if case .unacceptableStatus = self { return true }
        return false
    }

    var isCancelled: Bool {
        if case .cancelled = self { return true }
        return false
    }
}

/// Streaming against httpbin, a server no one here wrote: its NDJSON stream, its drip, its chunked bytes.
@Suite("Streaming against httpbin", .timeLimit(.minutes(1)))
struct StreamingHTTPBinTests {
    struct Streamed: Decodable, Equatable {
        var id: Int
        var url: String
    }

    @Test("httpbin's /stream, /drip and /stream-bytes read as they arrive, on URLSession and AsyncHTTPClient")
    func httpbin() async throws {
        try await withHTTPBin { url in
            for transport in [URLSessionTransport() as any HTTPTransport, AsyncHTTPClientTransport()] {
                // gunicorn closes a kept-alive connection after a chunked answer without saying so; under
                // load AsyncHTTPClient reused one and met remoteConnectionClosed before any head. A retry of
                // the GET, as an app would configure, goes through the streamed call's interceptors too.
                let client = RestClient(
                    baseURL: url, transport: transport, interceptors: [RetryPolicy(maximumAttempts: 2, initialDelay: .zero)])
                // Newline-delimited JSON, one object per line.
                var ids: [Int] = []
                for try await item in try await client.stream(RequestBuilder(.get, "/stream/5")).jsonLines(of: Streamed.self) {
                    ids.append(item.id)
                    #expect(item.url.hasSuffix("/stream/5"))
                }
                #expect(ids == [0, 1, 2, 3, 4], "\(transport)")
                // Four bytes dripped over 0.8 s: they arrive in pieces, not at the end as one.
                var drip = RequestBuilder(.get, "/drip")
                drip.addQuery("duration", 0.8)
                drip.addQuery("numbytes", 4)
                drip.addQuery("delay", 0)
                var chunks = 0
                var total = 0
                for try await chunk in try await client.stream(drip).body {
                    chunks += 1
                    total += chunk.count
                }
                #expect(total == 4 && chunks >= 2, "\(chunks) chunk(s) of \(total) bytes on \(transport)")
                // Chunked random bytes, seeded: streamed, they are the bytes a whole read gets.
                var bytes = RequestBuilder(.get, "/stream-bytes/100000")
                bytes.addQuery("seed", 7)
                bytes.addQuery("chunk_size", 4096)
                let whole = try await client.send(bytes).body
                let streamed = try await client.stream(bytes).body.collect(upTo: 1 << 20)
                #expect(whole.count == 100_000 && streamed == whole, "\(transport)")
            }
        }
    }
}

#if os(Linux)
/// A download larger than memory should hold: written to disk as it arrives, on each transport.
@Suite("Downloads in flat memory")
struct FlatDownloadTests {
    /// The process's resident memory, from `/proc/self/statm`.
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let pages = text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Downloads `total` bytes from a writer route through `road`; prints and returns the peak growth
    /// of resident memory during the download.
    static func peakGrowth(downloading total: Int, through road: StreamingClientTests.Road) async throws -> Int {
        let server = try await MockServer()
        let chunk = [UInt8](repeating: 0x7A, count: 64 << 10)
        try server.route(.get, "/big") { _ in
            MockResponse(
                status: .ok, headerFields: [.contentType: "application/octet-stream"],
                stream: StreamingBody(length: total) { writer in
                    for _ in 0..<(total / chunk.count) { try await writer.write(chunk) }
                })
        }
        let client: RestClient
        switch road {
        case .inProcess:
            client = RestClient(baseURL: URL(string: "http://mock")!, transport: MockServerTransport(server: server))
        case .urlSession, .asyncHTTPClient:
            let port = try await server.start(host: "127.0.0.1", port: 0)
            let transport: any HTTPTransport = road == .urlSession ? URLSessionTransport() : AsyncHTTPClientTransport()
            client = RestClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!, transport: transport)
        }
        let before = residentBytes()
        let peak = Mutex(before)
        let sampler = Task {
            while !Task.isCancelled {
                let now = residentBytes()
                peak.withLock { $0 = max($0, now) }
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
        let file = try await client.download(RequestBuilder(.get, "/big"))
        sampler.cancel()
        await server.stop()
        let size = (try? FileManager.default.attributesOfItem(atPath: file.url.path)[.size] as? Int) ?? -1
        try? FileManager.default.removeItem(at: file.url)
        guard size == total, file.byteCount == total else {
            print("\(road): the file holds \(size) bytes, not \(total)")
            return .max
        }
        let growth = peak.withLock { $0 } - before
        print("\(road): resident memory grew by \(growth >> 20) MB for \(total >> 20) MB")
        return growth
    }

    /// URLSession is left out on Linux: FoundationNetworking's data tasks cannot be paused safely, so
    /// its body is not held back by a slow reader (measured in docs/benchmarks.md, "Downloads").
    @Test(
        "256 MB downloaded to disk with resident memory growing under 64 MB",
        arguments: StreamingClientTests.backpressured)
    func flat(road: StreamingClientTests.Road) async {
        // In a process of its own: other tests running in parallel would move this one's numbers.
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent, \.standardErrorContent]) {
            [road] in
            do {
                let growth = try await FlatDownloadTests.peakGrowth(downloading: 256 << 20, through: road)
                exit(growth < 64 << 20 ? 0 : 1)
            } catch {
                print("\(road): \(error)")
                exit(1)
            }
        }
        let output = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("resident memory grew by"), "\(output)\(errors)")
        print(output)
    }
}
#endif
