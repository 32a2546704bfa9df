import Foundation
import HammockJSON
import HammockServer
import HammockTesting
import HammockURLSession
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Plain URLSession code against a mock server in process, through the configuration the server makes:
/// no socket, no global registration.
@Suite("URLSession in process")
struct URLSessionInProcessTests {
    static let people = MockResource("people", fields: ["name": .string, "numberOfKids": .integer])

    static func server(_ options: MockServer.Options = MockServer.Options()) async throws -> MockServer {
        try await MockServer(resources: [people], options: options)
    }

    @Test("Data tasks: GET, POST with a JSON body, status, headers and body as over a socket")
    func dataTasks() async throws {
        let server = try await Self.server()
        let session = URLSession(configuration: server.urlSessionConfiguration())
        let base = server.inProcessURL
        #expect(base.host?.hasSuffix(".hammock.invalid") == true)
        var post = URLRequest(url: base.appendingPathComponent("people"))
        post.httpMethod = "POST"
        post.setValue("application/json", forHTTPHeaderField: "Content-Type")
        post.httpBody = Data(#"{"name":"ada","numberOfKids":2}"#.utf8)
        let (created, createdResponse) = try await session.data(for: post)
        let http = try #require(createdResponse as? HTTPURLResponse)
        #expect(http.statusCode == 201)
        #expect(http.value(forHTTPHeaderField: "Location") == "/people/1")
        #expect(try JSON(parsing: [UInt8](created))["name"] == "ada")
        let (listed, listedResponse) = try await session.data(from: base.appendingPathComponent("people"))
        #expect((listedResponse as? HTTPURLResponse)?.value(forHTTPHeaderField: "ETag") != nil)
        #expect(try JSON(parsing: [UInt8](listed)).arrayValue?.count == 1)
        var query = try #require(URLComponents(url: base.appendingPathComponent("people"), resolvingAgainstBaseURL: false))
        query.queryItems = [URLQueryItem(name: "name_like", value: "AD")]
        let (found, _) = try await session.data(from: try #require(query.url))
        #expect(try JSON(parsing: [UInt8](found)).arrayValue?.count == 1)
        let (_, missing) = try await session.data(from: base.appendingPathComponent("people/9"))
        #expect((missing as? HTTPURLResponse)?.statusCode == 404)
        #expect(
            (missing as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("application/problem+json")
                == true)
        // The server saw every request, as it sees them over HTTP.
        #expect(server.journal.entries.count == 4)
    }

    @Test("A header name that is no token is the socket's 400 in process too, and journaled; a body gets its Content-Length")
    func readAsOffASocket() async throws {
        let server = try await Self.server()
        let session = URLSession(configuration: server.urlSessionConfiguration())
        var bad = URLRequest(url: server.inProcessURL.appendingPathComponent("people"))
        bad.setValue("1", forHTTPHeaderField: "no spaces allowed")
        let (body, response) = try await session.data(for: bad)
        #expect((response as? HTTPURLResponse)?.statusCode == 400)
        let detail = try JSON(parsing: [UInt8](body))["detail"]?.stringValue ?? ""
        #expect(detail.lowercased() == "'no spaces allowed' is not a header field name", "\(detail)")
        #expect(server.journal.entries.count == 1)
        // Before, the field was dropped without a word and the request answered 200.
        var post = URLRequest(url: server.inProcessURL.appendingPathComponent("people"))
        post.httpMethod = "POST"
        post.setValue("application/json", forHTTPHeaderField: "Content-Type")
        post.httpBody = Data(#"{"name":"ada"}"#.utf8)
        _ = try await session.data(for: post)
        #expect(server.journal.entries.last?.request.headerFields[.contentLength] == "14")
    }

    @Test("A body sent as a stream arrives whole; one past the server's limit gets its 413")
    func streamedBodies() async throws {
        let server = try await Self.server(MockServer.Options(maximumBodySize: 1000))
        let session = URLSession(configuration: server.urlSessionConfiguration())
        var upload = URLRequest(url: server.inProcessURL.appendingPathComponent("people"))
        upload.httpMethod = "POST"
        upload.setValue("application/json", forHTTPHeaderField: "Content-Type")
        upload.httpBodyStream = InputStream(data: Data(#"{"name":"streamed"}"#.utf8))
        let (_, response) = try await session.data(for: upload)
        #expect((response as? HTTPURLResponse)?.statusCode == 201)
        #expect(try await server.respond(to: MockRequest(.get, "/people/1")).json()["name"] == "streamed")
        var large = upload
        large.httpBodyStream = InputStream(
            data: Data(#"{"name":""#.utf8 + Data(repeating: UInt8(ascii: "a"), count: 5000) + Data(#""}"#.utf8)))
        let (_, tooLarge) = try await session.data(for: large)
        #expect((tooLarge as? HTTPURLResponse)?.statusCode == 413)
    }

    @Test("Upload tasks: a body from data and from a file arrive whole")
    func uploadTasks() async throws {
        let server = try await Self.server()
        let session = URLSession(configuration: server.urlSessionConfiguration())
        var post = URLRequest(url: server.inProcessURL.appendingPathComponent("people"))
        post.httpMethod = "POST"
        post.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let (_, fromData) = try await session.upload(for: post, from: Data(#"{"name":"from data"}"#.utf8))
        #expect((fromData as? HTTPURLResponse)?.statusCode == 201)
        let file = URL(fileURLWithPath: TemporaryFiles.directory("upload") + "person.json")
        try Data(#"{"name":"from a file","numberOfKids":3}"#.utf8).write(to: file)
        let (_, fromFile) = try await session.upload(for: post, fromFile: file)
        #expect((fromFile as? HTTPURLResponse)?.statusCode == 201)
        #expect(try await server.respond(to: MockRequest(.get, "/people/1")).json()["name"] == "from data")
        #expect(try await server.respond(to: MockRequest(.get, "/people/2")).json()["numberOfKids"] == 3)
        // A streamed upload whose request carries its stream.
        var streamed = post
        streamed.httpBodyStream = InputStream(data: Data(#"{"name":"streamed upload"}"#.utf8))
        let (_, fromStream) = try await Self.streamedUpload(streamed, to: server)
        #expect((fromStream as? HTTPURLResponse)?.statusCode == 201)
        #expect(try await server.respond(to: MockRequest(.get, "/people/3")).json()["name"] == "streamed upload")
        #if canImport(FoundationNetworking)
        // One whose stream would come from the session's delegate: FoundationNetworking gives a protocol of
        // one's own no way to ask for it, so the task fails rather than post an empty body.
        let error = await #expect(throws: URLError.self) {
            _ = try await Self.streamedUpload(post, to: server)
        }
        #expect(error?.code == .cannotDecodeRawData)
        #expect(server.journal.count(matching: RequestPattern(.post, "/people")) == 3)
        #endif
    }

    /// Runs a streamed upload task for `request` to its end, on a session whose delegate hears the end (a
    /// streamed upload has no async method), and returns what it reported.
    static func streamedUpload(_ request: URLRequest, to server: MockServer) async throws -> (Data, URLResponse?) {
        let finished = FinishedTask()
        let session = URLSession(configuration: server.urlSessionConfiguration(), delegate: finished, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        return try await withCheckedThrowingContinuation { continuation in
            finished.continuation.withLock { $0 = continuation }
            session.uploadTask(withStreamedRequest: request).resume()
        }
    }

    #if canImport(FoundationNetworking)
    @Test("On Linux a download task fails with an error instead of trapping in FoundationNetworking")
    func download() async throws {
        let server = try await Self.server()
        _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": "ada"]))
        let session = URLSession(configuration: server.urlSessionConfiguration())
        let error = await #expect(throws: URLError.self) {
            _ = try await session.download(from: server.inProcessURL.appendingPathComponent("people/1"))
        }
        #expect(error?.code == .unsupportedURL)
        // The session still works for data tasks.
        #expect(try await session.data(from: server.inProcessURL.appendingPathComponent("people/1")).0.isEmpty == false)
    }
    #else
    @Test("A download task writes the answer to a file")
    func download() async throws {
        let server = try await Self.server()
        _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": "ada"]))
        let session = URLSession(configuration: server.urlSessionConfiguration())
        let (file, response) = try await session.download(from: server.inProcessURL.appendingPathComponent("people/1"))
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        let data = try Data(contentsOf: file)
        #expect(try JSON(parsing: [UInt8](data))["name"] == "ada")
        try? FileManager.default.removeItem(at: file)
    }
    #endif

    @Test("A connection fault is the URLError a real network gives; a status fault is its status")
    func faults() async throws {
        let server = try await Self.server()
        let session = URLSession(configuration: server.urlSessionConfiguration())
        server.setFaults([try Fault("GET /people", effect: .connection(.reset))])
        let error = await #expect(throws: URLError.self) {
            _ = try await session.data(from: server.inProcessURL.appendingPathComponent("people"))
        }
        #expect(error?.code == InProcessNetwork.urlError(for: .reset).code)
        server.setFaults([try Fault("GET /people", effect: .status(503, retryAfter: 2))])
        let (_, response) = try await session.data(from: server.inProcessURL.appendingPathComponent("people"))
        #expect((response as? HTTPURLResponse)?.statusCode == 503)
        #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Retry-After") == "2")
    }

    @Test("Servers in parallel tests each answer only their own session's requests", arguments: 0..<6)
    func parallelServers(index: Int) async throws {
        let server = try await Self.server()
        let session = URLSession(configuration: server.urlSessionConfiguration())
        for number in 0..<(index + 3) {
            var post = URLRequest(url: server.inProcessURL.appendingPathComponent("people"))
            post.httpMethod = "POST"
            post.setValue("application/json", forHTTPHeaderField: "Content-Type")
            post.httpBody = Data(#"{"name":"test \#(index) person \#(number)"}"#.utf8)
            _ = try await session.data(for: post)
        }
        let (data, _) = try await session.data(from: server.inProcessURL.appendingPathComponent("people"))
        let names = try JSON(parsing: [UInt8](data)).arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
        #expect(names.count == index + 3)
        #expect(names.allSatisfy { $0.hasPrefix("test \(index) ") })
        #expect(server.journal.entries.count == index + 4)
    }

    @Test("Two hundred requests at once on one session, on a busy machine, each get their own answer")
    func concurrentRequests() async throws {
        let server = try await Self.server()
        for index in 0..<20 { _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": .string("p\(index)")])) }
        let session = URLSession(configuration: server.urlSessionConfiguration())
        let base = server.inProcessURL
        let answers = try await withBusyMachine {
            try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for index in 0..<200 {
                    group.addTask {
                        let id = index % 20 + 1
                        let (data, _) = try await session.data(from: base.appendingPathComponent("people/\(id)"))
                        return (id, try JSON(parsing: [UInt8](data))["name"]?.stringValue)
                    }
                }
                var answers: [(Int, String?)] = []
                for try await answer in group { answers.append(answer) }
                return answers
            }
        }
        #expect(answers.count == 200)
        #expect(answers.allSatisfy { $0.1 == "p\($0.0 - 1)" })
    }

    @Test("Latency holds the answer on the server's clock; cancelling the task reaches the server and ends its wait")
    func latencyAndCancel() async throws {
        let clock = ManualClock()
        let server = try await MockServer(
            resources: [Self.people], options: MockServer.Options(latency: Latency(.seconds(2)...(.seconds(2)))), clock: clock)
        let session = URLSession(configuration: server.urlSessionConfiguration())
        let url = server.inProcessURL.appendingPathComponent("people")
        async let answered = session.data(from: url)
        #expect(await clock.waitForSleepers(1))  // the answer waits on the server's clock
        clock.advance(by: .seconds(2))
        #expect((try await answered.1 as? HTTPURLResponse)?.statusCode == 200)

        let task = session.dataTask(with: url)
        task.resume()
        #expect(await clock.waitForSleepers(1))
        task.cancel()
        // The server's work was cancelled: nothing waits on its clock any more, and no answer came.
        #expect(await eventually { clock.sleeperCount == 0 })
        #expect(await eventually { task.state == .completed })
        #expect(task.response == nil)
    }

    @Test("Hosts under .hammock.invalid are taken, a live server's or not; other requests are left to the network")
    func canInit() async throws {
        let server = try await Self.server()
        #expect(HammockURLProtocol.canInit(with: URLRequest(url: server.inProcessURL)))
        #expect(!HammockURLProtocol.canInit(with: URLRequest(url: try #require(URL(string: "http://example.com/people")))))
        // A host no live server has is still ours: it fails at once instead of going to the network.
        #expect(
            HammockURLProtocol.canInit(
                with: URLRequest(url: try #require(URL(string: "http://00000000-0000-0000-0000-000000000000.hammock.invalid/")))))
        // The same server keeps its host.
        #expect(server.inProcessURL == server.inProcessURL)
    }

    /// A helper as tests write them: it returns the app's session and base URL, and drops the server.
    static func sessionWithoutItsServer() async throws -> (URLSession, URL, weakServer: WeakServer) {
        let server = try await Self.server()
        return (URLSession(configuration: server.urlSessionConfiguration()), server.inProcessURL, WeakServer(server))
    }

    final class WeakServer: Sendable {
        weak let server: MockServer?
        init(_ server: MockServer) { self.server = server }
    }

    @Test("A session whose server was released fails at once with an error that says so, not with DNS")
    func releasedServer() async throws {
        let (session, base, weakServer) = try await Self.sessionWithoutItsServer()
        #expect(await eventually { weakServer.server == nil })
        let error = try await #require(throws: URLError.self) {
            try await session.data(from: base.appendingPathComponent("people"))
        }
        #expect(error.code == .cannotConnectToHost)
        #expect(error.localizedDescription.contains("has been released"))
        #expect(error.localizedDescription.contains("Keep a reference to the MockServer"))
    }
}

/// Collects a task's body and ends a continuation when the task completes.
final class FinishedTask: NSObject, URLSessionDataDelegate, Sendable {
    let continuation = Mutex<CheckedContinuation<(Data, URLResponse?), any Error>?>(nil)
    let body = Mutex(Data())

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        body.withLock { $0.append(data) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let waiting = continuation.withLock { continuation in
            defer { continuation = nil }
            return continuation
        }
        if let error {
            waiting?.resume(throwing: error)
        } else {
            waiting?.resume(returning: (body.withLock { $0 }, task.response))
        }
    }
}
