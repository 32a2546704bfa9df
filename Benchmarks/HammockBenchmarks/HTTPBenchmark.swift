import Foundation
import HammockHTTPServer
import HammockSQLite
import HammockServer
import Hummingbird
import Logging
import NIOCore

/// The mock server on SQLite against a bare Hummingbird router answering the same bytes, with wrk.
enum HTTPBenchmark {
    static func run(seconds: Int, connections: Int, storeNames: [String]) async throws -> [Row] {
        var rows: [Row] = []
        for name in storeNames { rows += try await run(seconds: seconds, connections: connections, storeName: name) }
        return rows
    }

    static func run(seconds: Int, connections: Int, storeName: String) async throws -> [Row] {
        let directory = NSTemporaryDirectory() + "hammock-bench-\(UUID().uuidString)/"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let people = MockResource(
            "people", fields: ["name": .string, "numberOfKids": .integer, "kilometersWalked": .float, "avatar": .blob])
        let store: any MockStore = storeName == "memory" ? MemoryStore() : try SQLiteStore(path: directory + "bench.sqlite")
        let mock = try await MockServer(resources: [people], store: store)
        let seed = JSON.array(
            (1...100).map { ["name": .string("person \($0)"), "numberOfKids": .integer($0 % 4), "kilometersWalked": 1.5] })
        try await mock.addData(seed, for: "people")

        // The bare handler answers exactly what the mock answers.
        let one = await mock.respond(to: MockRequest(.get, "/people/42"))
        let list = await mock.respond(to: MockRequest(.get, "/people"))
        let postBody: JSON = ["name": "john", "numberOfKids": 1]
        let created = await mock.respond(to: MockRequest(.post, "/people", json: postBody))
        let bare = try await BareServer.start(one: one, list: list, created: created)
        let mockPort = try await mock.start(port: 0)
        defer { Task { await mock.stop() } }

        let script = directory + "post.lua"
        try Data(
            """
            wrk.method = "POST"
            wrk.body = '\(postBody.serializedString())'
            wrk.headers["Content-Type"] = "application/json"
            """.utf8
        ).write(to: URL(fileURLWithPath: script))

        var rows: [Row] = []
        let cases: [(String, String, String?)] = [
            ("GET /people/:id", "/people/42", nil),
            ("GET /people (100 records)", "/people", nil),
            ("POST /people", "/people", script),
        ]
        for (name, path, script) in cases {
            // Alternate baseline and subject twice and keep each one's better run, to even out drift.
            var subject = 0.0
            var baseline = 0.0
            for _ in 0..<2 {
                baseline = max(
                    baseline,
                    try await Wrk.requestsPerSecond(
                        url: "http://127.0.0.1:\(bare.port)\(path)", seconds: seconds, connections: connections, script: script))
                subject = max(
                    subject,
                    try await Wrk.requestsPerSecond(
                        url: "http://127.0.0.1:\(mockPort)\(path)", seconds: seconds, connections: connections, script: script))
            }
            rows.append(
                Row(name: "\(name) on \(storeName) vs bare Hummingbird", value: subject, baseline: baseline, unit: "req/s"))
        }
        await bare.stop()
        return rows
    }
}

/// A Hummingbird router that returns fixed bytes: the ceiling for any server built on it.
struct BareServer {
    let port: Int
    let stop: @Sendable () async -> Void

    static func start(one: MockResponse, list: MockResponse, created: MockResponse) async throws -> BareServer {
        let router = Router()
        @Sendable func response(_ mock: MockResponse) -> Response {
            Response(
                status: mock.status, headers: mock.headerFields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: mock.body)))
        }
        router.get("/people/:id") { _, _ in response(one) }
        router.get("/people") { _, _ in response(list) }
        router.post("/people") { request, _ in
            _ = try await request.body.collect(upTo: 1 << 20)
            return response(created)
        }
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let application = Application(
            router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) },
            logger: Logger(label: "bare", factory: { _ in SwiftLogNoOpLogHandler() }))
        let task = Task { try await application.run() }
        var port = 0
        for await value in ports {
            port = value
            break
        }
        return BareServer(port: port, stop: { task.cancel() })
    }
}
