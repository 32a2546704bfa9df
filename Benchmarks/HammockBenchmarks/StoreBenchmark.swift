import Foundation
import HammockJSON
import HammockTestSupport

/// PostgreSQL beside SQLite through `hammock serve` on 100,000 records, in one run: `GET /people/:id`,
/// a filtered page with its total, and `POST /people`. For each, CPU time per request counting every
/// process that works for it (the server, and for PostgreSQL the database server's processes too), and
/// wrk's p50 and p99. The best of the rounds; the PostgreSQL/SQLite ratio per workload.
///
/// The database is a throwaway cluster on this machine (`ThrowawayPostgres`: fsync off, as a CI cluster
/// would run; SQLite runs in WAL mode with `synchronous = NORMAL`, which does not sync per commit either).
enum StoreBenchmark {
    static let workloads: [(name: String, path: String, isPost: Bool)] = [
        ("GET /people/:id", "/people/50000", false),
        ("filtered page with total", "/people?numberOfKids=3&name_like=amy&_sort=-kilometersWalked&_page=5&_per_page=20", false),
        ("POST /people", "/people", true),
    ]

    struct Result {
        var cpuMicroseconds = Double.infinity
        /// Of `cpuMicroseconds`, what the database server's processes spent.
        var databaseMicroseconds = 0.0
        var requestsPerSecond = 0.0
        var p50: Double?
        var p99: Double?
        /// Latency at light load (4 connections): what one client waits, not the queue of a saturated machine.
        var lightP50: Double?
        var lightP99: Double?
    }

    static func run(records: Int, seconds: Int, connections: Int, rounds: Int) async throws {
        let executable = try QueryBenchmark.hammockExecutable()
        let directory = NSTemporaryDirectory() + "hammock-store-bench-\(UUID().uuidString)/"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configurationPath = directory + "people.json"
        try Data(QueryBenchmark.configuration(records: records).serialized()).write(to: URL(fileURLWithPath: configurationPath))
        let script = directory + "post.lua"
        try Data(
            """
            wrk.method = "POST"
            wrk.body = '{"name":"john","numberOfKids":1,"kilometersWalked":2.5}'
            wrk.headers["Content-Type"] = "application/json"
            """.utf8
        ).write(to: URL(fileURLWithPath: script))

        // Its own cluster, removed at the end (and by its watcher if this process ends first).
        let cluster = try await ThrowawayPostgres.make()
        var results: [String: [String: Result]] = [:]
        for storeName in ["sqlite", "postgres"] {
            let store = storeName == "sqlite" ? "sqlite:\(directory)people.sqlite" : cluster.url()
            let logPath = directory + "serve-\(storeName).log"
            FileManager.default.createFile(atPath: logPath, contents: nil)
            guard let log = FileHandle(forWritingAtPath: logPath) else { throw BenchmarkError("cannot write \(logPath)") }
            let process = Process()
            process.executableURL = executable
            process.arguments = ["serve", configurationPath, "--port", "0", "--store", store, "--quiet"]
            var environment = ProcessInfo.processInfo.environment
            environment["PGPASSWORD"] = cluster.password
            process.environment = environment
            process.standardOutput = log
            process.standardError = log
            try process.run()
            defer { if process.isRunning { process.interrupt() } }
            let port = try await HTTPBenchmark.waitForPort(logPath: logPath, process: process, seconds: 600)
            let database = storeName == "postgres" ? cluster.directory + "data/postmaster.pid" : nil
            for (name, path, isPost) in workloads {
                let url = "http://127.0.0.1:\(port)\(path)"
                let wrkScript = isPost ? script : nil
                _ = try await Wrk.run(url: url, seconds: 1, connections: connections, script: wrkScript)
                var best = Result()
                for _ in 0..<rounds {
                    let before = cpu(server: process.processIdentifier, databasePIDFile: database)
                    let run = try await Wrk.run(
                        url: url, seconds: seconds, connections: connections, script: wrkScript, latency: true)
                    let after = cpu(server: process.processIdentifier, databasePIDFile: database)
                    let spent = after.total(since: before)
                    let perRequest = spent / Double(max(run.requests, 1)) * 1e6
                    if perRequest < best.cpuMicroseconds {
                        best.cpuMicroseconds = perRequest
                        let server =
                            after.seconds[process.processIdentifier, default: 0]
                            - before.seconds[process.processIdentifier, default: 0]
                        best.databaseMicroseconds = (spent - server) / Double(max(run.requests, 1)) * 1e6
                    }
                    if run.requestsPerSecond > best.requestsPerSecond {
                        best.requestsPerSecond = run.requestsPerSecond
                        best.p50 = run.p50
                        best.p99 = run.p99
                    }
                }
                let light = try await Wrk.run(url: url, seconds: seconds, connections: 4, script: wrkScript, latency: true)
                best.lightP50 = light.p50
                best.lightP99 = light.p99
                results[storeName, default: [:]][name] = best
            }
            process.interrupt()
            process.waitUntilExit()
        }
        try? await cluster.remove()

        print(
            "\n### PostgreSQL beside SQLite on \(records) records (`hammock serve --quiet`, wrk -t1 -c\(connections), "
                + "\(seconds) s, best of \(rounds))\n")
        print(
            "| workload | store | req/s | p50 | p99 | p50, p99 at 4 connections | CPU/request: server + database | PostgreSQL / SQLite |"
        )
        print("|---|---|---:|---:|---:|---:|---:|---:|")
        for (name, _, _) in workloads {
            for storeName in ["sqlite", "postgres"] {
                guard let result = results[storeName]?[name] else { continue }
                let ratio =
                    storeName == "postgres"
                    ? results["sqlite"]?[name].map { String(format: "%.2f", result.cpuMicroseconds / $0.cpuMicroseconds) } ?? "-"
                    : ""
                print(
                    "| \(name) | \(storeName) | \(Int(result.requestsPerSecond)) | \(QueryBenchmark.milliseconds(result.p50)) | "
                        + "\(QueryBenchmark.milliseconds(result.p99)) | "
                        + "\(QueryBenchmark.milliseconds(result.lightP50)), \(QueryBenchmark.milliseconds(result.lightP99)) | "
                        + String(
                            format: "%.0f µs = %.0f + %.0f", result.cpuMicroseconds,
                            result.cpuMicroseconds - result.databaseMicroseconds,
                            result.databaseMicroseconds) + " | \(ratio) |")
            }
        }
    }

    /// CPU seconds of the server and of every process of the database cluster (the postmaster and its
    /// children: a backend per connection, the WAL writer, the checkpointer), by process.
    struct Sample {
        var seconds: [Int32: Double]

        /// The CPU spent since `earlier`: per process, so that a backend started meanwhile counts whole.
        func total(since earlier: Sample) -> Double {
            seconds.reduce(0) { sum, entry in sum + max(0, entry.value - (earlier.seconds[entry.key] ?? 0)) }
        }
    }

    static func cpu(server: Int32, databasePIDFile: String?) -> Sample {
        var seconds = [server: CPUTime.ofProcess(server)]
        guard let databasePIDFile, let text = try? String(contentsOfFile: databasePIDFile, encoding: .utf8),
            let line = text.split(separator: "\n").first, let postmaster = Int32(line)
        else { return Sample(seconds: seconds) }
        seconds[postmaster] = CPUTime.ofProcess(postmaster)
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), parent(of: pid) == postmaster else { continue }
            seconds[pid] = CPUTime.ofProcess(pid)
        }
        return Sample(seconds: seconds)
    }

    /// The parent process of `pid`, from `/proc/PID/stat` (field 4, after the command in parentheses).
    static func parent(of pid: Int32) -> Int32? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? Int32(fields[1]) : nil
    }
}
