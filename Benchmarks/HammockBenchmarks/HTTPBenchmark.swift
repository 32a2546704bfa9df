import Foundation
import HTTPTypes
import HammockHTTPServer
import HammockSQLite
import HammockServer

/// Servers measured with wrk, judged by their CPU time per request (requests per second as a second
/// figure), each against a bare SwiftNIO handler answering the same bytes in the same run.
///
/// Three tables:
/// - the ceiling: one record's bytes from bare NIO, bare Hummingbird, Hammock's HTTP layer answering a
///   fixed response, and the whole mock on the memory store;
/// - every workload on each store against bare NIO;
/// - `hammock serve` as a process, with a log line per request and with `--quiet`.
enum HTTPBenchmark {
    struct Options {
        var seconds: Int
        var connections: Int
        var rounds: Int
        var storeNames: [String]
        /// Other `hammock` binaries (an older build) measured beside this one's in the serve table.
        var compare: [String] = []
    }

    /// A server to measure: where it listens, and how much CPU it has used so far.
    struct Target {
        var name: String
        var port: Int
        var cpuSeconds: @Sendable () -> Double
    }

    /// The best of a target's runs: the least CPU per request, the most requests per second.
    struct Measurement {
        var server: String
        var workload: String
        var cpuMicroseconds = Double.infinity
        var requestsPerSecond = 0.0
    }

    static func run(_ options: Options) async throws {
        let directory = NSTemporaryDirectory() + "hammock-bench-\(UUID().uuidString)/"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let postBody: JSON = ["name": "john", "numberOfKids": 1]
        let script = directory + "post.lua"
        try Data(
            """
            wrk.method = "POST"
            wrk.body = '\(postBody.serializedString())'
            wrk.headers["Content-Type"] = "application/json"
            """.utf8
        ).write(to: URL(fileURLWithPath: script))

        var tables: [(title: String, rows: [Measurement])] = []
        for storeName in options.storeNames {
            let mock = try await makeMock(storeName: storeName, directory: directory)
            let one = await mock.respond(to: MockRequest(.get, "/people/42"))
            let list = await mock.respond(to: MockRequest(.get, "/people"))
            let created = await mock.respond(to: MockRequest(.post, "/people", json: postBody))
            let bare = try await BareNIOServer.start(one: one, list: list, created: created)
            let mockPort = try await mock.start(port: 0)
            let bareTarget = Target(name: "bare SwiftNIO", port: bare.port, cpuSeconds: CPUTime.ofThisProcess)
            let mockTarget = Target(name: "Hammock, \(storeName)", port: mockPort, cpuSeconds: CPUTime.ofThisProcess)

            if storeName == options.storeNames.first {
                // The ceiling: the same record's bytes through each layer.
                let hummingbird = try await BareHummingbirdServer.start(one: one, list: list, created: created)
                let fixed = try await MockServer(routes: [FixedRoute(response: one)])
                let fixedPort = try await fixed.start(port: 0)
                let targets = [
                    bareTarget,
                    Target(name: "bare Hummingbird router", port: hummingbird.port, cpuSeconds: CPUTime.ofThisProcess),
                    Target(name: "Hammock's HTTP layer, a fixed response", port: fixedPort, cpuSeconds: CPUTime.ofThisProcess),
                    mockTarget,
                ]
                let rows = try await measure(targets, workload: "GET /people/42", path: "/people/42", options: options)
                tables.append(("The ceiling: one record's bytes", rows))
                await fixed.stop()
                await hummingbird.stop()
            }

            var rows: [Measurement] = []
            for (workload, path, script) in [
                ("GET /people/42", "/people/42", nil), ("GET /people (100)", "/people", nil),
                ("POST /people", "/people", script),
            ] {
                rows += try await measure(
                    [bareTarget, mockTarget], workload: workload, path: path, script: script, options: options)
            }
            tables.append(("Every workload on \(storeName)", rows))
            await mock.stop()
            await bare.stop()
        }
        if let served = try await measureServe(directory: directory, options: options) {
            tables.append(("`hammock serve` (memory store): --quiet against a log line per request", served))
        }

        for table in tables {
            print("\n### \(table.title)\n")
            print("| server | workload | CPU µs / request | req/s | CPU / first row |")
            print("|---|---|---:|---:|---:|")
            var first: [String: Double] = [:]
            for row in table.rows {
                let floor = first[row.workload] ?? row.cpuMicroseconds
                first[row.workload] = floor
                print(
                    "| \(row.server) | \(row.workload) | \(String(format: "%.1f", row.cpuMicroseconds)) | "
                        + "\(Int(row.requestsPerSecond.rounded())) | \(String(format: "%.2f", row.cpuMicroseconds / floor)) |")
            }
        }
    }

    /// The mock with 100 people on `storeName`, logging nothing.
    static func makeMock(
        storeName: String, directory: String, options: MockServer.Options = MockServer.Options()
    ) async throws -> MockServer {
        let people = MockResource(
            "people", fields: ["name": .string, "numberOfKids": .integer, "kilometersWalked": .float, "avatar": .blob])
        let store: any MockStore =
            storeName == "memory" ? MemoryStore() : try SQLiteStore(path: directory + "bench-\(storeName).sqlite")
        let mock = try await MockServer(resources: [people], store: store, options: options)
        let seed = JSON.array(
            (1...100).map { ["name": .string("person \($0)"), "numberOfKids": .integer($0 % 4), "kilometersWalked": 1.5] })
        try await mock.addData(seed, for: "people")
        return mock
    }

    /// Runs wrk against each target in turn, `rounds` times, and keeps each one's best.
    static func measure(
        _ targets: [Target], workload: String, path: String, script: String? = nil, options: Options
    ) async throws -> [Measurement] {
        var best = targets.map { Measurement(server: $0.name, workload: workload) }
        for _ in 0..<options.rounds {
            for (index, target) in targets.enumerated() {
                let before = target.cpuSeconds()
                let result = try await Wrk.run(
                    url: "http://127.0.0.1:\(target.port)\(path)", seconds: options.seconds,
                    connections: options.connections, script: script)
                let cpu = (target.cpuSeconds() - before) * 1e6 / Double(max(result.requests, 1))
                best[index].cpuMicroseconds = min(best[index].cpuMicroseconds, cpu)
                best[index].requestsPerSecond = max(best[index].requestsPerSecond, result.requestsPerSecond)
            }
        }
        return best
    }

    /// `hammock serve` (the release binary beside this one) on the memory store, logging each request to a
    /// file, against the same with `--quiet`; `nil` when the binary is not there.
    static func measureServe(directory: String, options: Options) async throws -> [Measurement]? {
        guard let executable = Bundle.main.executableURL?.deletingLastPathComponent().appendingPathComponent("hammock"),
            FileManager.default.isExecutableFile(atPath: executable.path)
        else {
            FileHandle.standardError.write(Data("warning: no hammock binary beside hammock-bench; skipping serve\n".utf8))
            return nil
        }
        let people = (1...100).map { index -> JSON in
            ["name": .string("person \(index)"), "numberOfKids": .integer(index % 4), "kilometersWalked": 1.5]
        }
        let configuration: JSON = [
            "resources": [
                [
                    "name": "people",
                    "fields": ["name": "string", "numberOfKids": "integer", "kilometersWalked": "float", "avatar": "blob"],
                ]
            ],
            "data": ["people": .array(people)],
        ]
        let configurationPath = directory + "serve.json"
        try Data(configuration.serialized()).write(to: URL(fileURLWithPath: configurationPath))

        var servers: [(Process, Target)] = []
        defer {
            for (process, _) in servers where process.isRunning { process.interrupt() }
        }
        var runs: [(name: String, binary: URL, flags: [String])] = []
        for path in options.compare {
            let binary = URL(fileURLWithPath: path)
            runs.append(("\(path) serve --quiet", binary, ["--quiet"]))
            runs.append(("\(path) serve", binary, []))
        }
        runs.append(("hammock serve --quiet", executable, ["--quiet"]))
        runs.append(("hammock serve", executable, []))
        for (name, binary, flags) in runs {
            let logPath = directory + "serve-\(servers.count).log"
            FileManager.default.createFile(atPath: logPath, contents: nil)
            guard let log = FileHandle(forWritingAtPath: logPath) else { throw BenchmarkError("cannot write \(logPath)") }
            let process = Process()
            process.executableURL = binary
            process.arguments = ["serve", configurationPath, "--port", "0", "--store", "memory"] + flags
            process.standardOutput = log
            process.standardError = log
            try process.run()
            let port = try await waitForPort(logPath: logPath, process: process)
            let pid = process.processIdentifier
            servers.append((process, Target(name: name, port: port, cpuSeconds: { CPUTime.ofProcess(pid) })))
        }
        return try await measure(servers.map(\.1), workload: "GET /people/1", path: "/people/1", options: options)
    }

    /// The port `hammock serve --port 0` announces in its banner (`http://127.0.0.1:PORT`).
    static func waitForPort(logPath: String, process: Process, seconds: Int = 10) async throws -> Int {
        try await waitForPort(logPath: logPath, isRunning: { process.isRunning }, seconds: seconds)
    }

    /// The port `hammock serve` announces in its log at `logPath`, while `isRunning`.
    static func waitForPort(logPath: String, isRunning: () -> Bool, seconds: Int = 10) async throws -> Int {
        for _ in 0..<(seconds * 20) {
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            if let range = text.range(of: "http://127.0.0.1:") {
                let digits = text[range.upperBound...].prefix { $0.isNumber }
                if let port = Int(digits) { return port }
            }
            guard isRunning() else { throw BenchmarkError("hammock serve exited:\n\(text)") }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw BenchmarkError("hammock serve did not announce its port")
    }
}

/// One path, one fixed response: Hammock's HTTP layer and pipeline with no store behind them.
struct FixedRoute: MockRoutes {
    let fixed: MockEndpoint

    init(response: MockResponse) {
        fixed = MockEndpoint(methods: [.get]) { _ in response }
    }

    func endpoint(for request: MockRequest) throws -> MockEndpoint? { fixed }

    var routeTable: [RouteTableEntry] { [RouteTableEntry(methods: [.get], pattern: "/people/:id")] }
}
