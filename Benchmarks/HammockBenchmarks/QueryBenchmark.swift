import Foundation
import HammockJSON
import HammockTestSupport

/// List queries through `hammock serve` on generated people (`--seed 1`), at each record count and on
/// each store, in one run: the first answer of each query (cold: its indexes, if any, not yet built),
/// then for each workload wrk's rate, p50 and p99 at `connections`, and the CPU per request of the
/// server and (PostgreSQL) of the database's processes. The ratio is to `GET /people/:id` in the same
/// run and store. Writes (`POST`, `PATCH` of a random record) come last, so the reads see the data as
/// generated.
enum QueryBenchmark {
    struct Workload {
        var name: String
        var path: String
        /// A wrk Lua script (for writes).
        var script: String?
        var isList: Bool { path.contains("?") }
    }

    static func workloads(records: Int, directory: String) throws -> [Workload] {
        let post = directory + "post.lua"
        try Data(
            """
            wrk.method = "POST"
            wrk.body = '{"name":"John Doe","email":"john@example.com","numberOfKids":1,"kilometersWalked":2.5}'
            wrk.headers["Content-Type"] = "application/json"
            """.utf8
        ).write(to: URL(fileURLWithPath: post))
        let patch = directory + "patch.lua"
        // A random record and a random number of kids: the write moves the record in that field's index.
        try Data(
            """
            math.randomseed(7)
            request = function()
              local body = '{"numberOfKids":' .. math.random(0, 4) .. '}'
              return wrk.format("PATCH", "/people/" .. math.random(1, \(records)),
                {["Content-Type"] = "application/json"}, body)
            end
            """.utf8
        ).write(to: URL(fileURLWithPath: patch))
        // Forty needles in turn, more than a table keeps answers for (16): every request is planned and
        // counted anew, as a first answer is.
        let rotatingSearch = directory + "search.lua"
        try Data(
            """
            names = {"lee", "garcia", "smith", "novak", "okafor", "tanaka", "moreau", "rossi", "kowalski", "haddad",
              "johansson", "silva", "nguyen", "patel", "cohen", "fischer", "kim", "larsen", "mendes", "park",
              "quispe", "reyes", "sato", "torres", "usman", "vargas", "walsh", "xu", "young", "zhang", "abbott",
              "becker", "costa", "diaz", "evans", "ferreira", "gomez", "hughes", "ito", "jensen"}
            counter = 0
            request = function()
              counter = counter + 1
              return wrk.format("GET", "/people?q=" .. names[counter % #names + 1] .. "&_page=2&_per_page=20")
            end
            """.utf8
        ).write(to: URL(fileURLWithPath: rotatingSearch))
        let rotatingFilter = directory + "filter.lua"
        try Data(
            """
            needles = {"an", "ar", "el", "mar", "ia", "on", "ra", "en"}
            counter = 0
            request = function()
              counter = counter + 1
              local kids = counter % 5
              local needle = needles[math.floor(counter / 5) % #needles + 1]
              return wrk.format("GET", "/people?numberOfKids=" .. kids .. "&name_like=" .. needle
                .. "&_sort=-kilometersWalked&_page=5&_per_page=20")
            end
            """.utf8
        ).write(to: URL(fileURLWithPath: rotatingFilter))
        return [
            Workload(name: "GET /people/:id", path: "/people/\(records / 2)"),
            Workload(name: "equality filter, page of 20", path: "/people?numberOfKids=3&_page=5&_per_page=20"),
            Workload(
                name: "filtered page with total (equality + _like + sort on another field)",
                path: "/people?numberOfKids=3&name_like=an&_sort=-kilometersWalked&_page=5&_per_page=20"),
            Workload(name: "sort on name, page of 20", path: "/people?_sort=name&_page=5&_per_page=20"),
            Workload(name: "q search with total, page of 20", path: "/people?q=silva&_page=2&_per_page=20"),
            Workload(
                name: "filtered page, 40 conditions in turn (none kept)",
                path: "/people?numberOfKids=1&name_like=ar&_sort=-kilometersWalked&_page=5&_per_page=20",
                script: rotatingFilter),
            Workload(
                name: "q search, 40 needles in turn (none kept)", path: "/people?q=garcia&_page=2&_per_page=20",
                script: rotatingSearch),
            Workload(name: "POST /people", path: "/people", script: post),
            Workload(name: "PATCH /people/:id (random)", path: "/people/1", script: patch),
        ]
    }

    struct Result {
        var requestsPerSecond = 0.0
        var p50: Double?
        var p99: Double?
        var cpuMicroseconds = 0.0
        var databaseMicroseconds = 0.0
        var first: Double?
        /// The least and the most CPU per request over the windows, when there were several.
        var cpuRange: (least: Double, most: Double)?
    }

    /// `rounds` windows of `seconds` each per workload; the one with the median CPU per request is printed,
    /// with the least and the most.
    static func run(recordCounts: [Int], seconds: Int, rounds: Int, connections: Int, storeNames: [String]) async throws {
        let executable = try hammockExecutable()
        let cluster = storeNames.contains("postgres") ? try await ThrowawayPostgres.make() : nil
        for records in recordCounts {
            let directory = NSTemporaryDirectory() + "hammock-query-bench-\(UUID().uuidString)/"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let configurationPath = directory + "people.json"
            try Data(generatedConfiguration(records: records).serialized()).write(to: URL(fileURLWithPath: configurationPath))
            let workloads = try workloads(records: records, directory: directory)
            print(
                "\n### List queries on \(records) generated people (`hammock serve --seed 1 --quiet`, wrk -t1 "
                    + "-c\(connections), \(rounds) windows of \(seconds) s each, the median one; CPU's least and most "
                    + "in brackets)\n")
            print("| store | workload | first answer | req/s | p50 | p99 | CPU/request | rate / by id |")
            print("|---|---|---:|---:|---:|---:|---:|---:|")
            for storeName in storeNames {
                let namespace = "bench\(records)"
                let store: String
                switch storeName {
                case "sqlite": store = "sqlite:\(directory)people.sqlite"
                case "postgres":
                    guard let cluster else { continue }
                    store = cluster.url() + "?namespace=\(namespace)"
                default: store = "memory"
                }
                let logPath = directory + "serve-\(storeName).log"
                let started = ContinuousClock.now
                let server = try ChildProcess(
                    executable.path, ["serve", configurationPath, "--port", "0", "--store", store, "--seed", "1", "--quiet"],
                    adding: cluster.map { ["PGPASSWORD": $0.password] } ?? [:], output: .file(logPath),
                    errors: .sameAsOutput)
                defer { server.interrupt() }
                let port = try await HTTPBenchmark.waitForPort(logPath: logPath, isRunning: { server.isRunning }, seconds: 1_800)
                let loading = ContinuousClock.now - started
                let loadedRSS = residentMegabytes(server.processIdentifier)
                let database = storeName == "postgres" ? cluster.map { $0.directory + "data/postmaster.pid" } : nil
                var results: [(Workload, Result)] = []
                // Cold first: each list query once, in order, before any warm-up built what it needs.
                var firsts: [String: Double] = [:]
                for workload in workloads where workload.isList {
                    firsts[workload.name] = try await firstAnswer("http://127.0.0.1:\(port)\(workload.path)")
                }
                for workload in workloads {
                    let url = "http://127.0.0.1:\(port)\(workload.path)"
                    // Requests wrk gave up on (its 2 s timeout) are still being answered: the next workload
                    // starts once the server (and the database) is idle, or their backlog is measured in it.
                    await settle(server: server.processIdentifier, databasePIDFile: database)
                    _ = try await Wrk.run(url: url, seconds: 1, connections: connections, script: workload.script)
                    // Several windows, the median one kept: this machine has stretches of seconds in which
                    // everything runs about 1.5x slower (two builds measured in turn were slow together),
                    // and one window that fell in one made POST at a million records 93 µs instead of 57.
                    var windows: [Result] = []
                    for _ in 0..<max(1, rounds) {
                        let before = StoreBenchmark.cpu(server: server.processIdentifier, databasePIDFile: database)
                        let run = try await Wrk.run(
                            url: url, seconds: seconds, connections: connections, script: workload.script, latency: true)
                        let after = StoreBenchmark.cpu(server: server.processIdentifier, databasePIDFile: database)
                        let spent = after.total(since: before)
                        let serverSpent =
                            after.seconds[server.processIdentifier, default: 0]
                            - before.seconds[server.processIdentifier, default: 0]
                        var window = Result()
                        window.requestsPerSecond = run.requestsPerSecond
                        window.p50 = run.p50
                        window.p99 = run.p99
                        window.cpuMicroseconds = spent / Double(max(run.requests, 1)) * 1e6
                        window.databaseMicroseconds = (spent - serverSpent) / Double(max(run.requests, 1)) * 1e6
                        windows.append(window)
                    }
                    windows.sort { $0.cpuMicroseconds < $1.cpuMicroseconds }
                    var result = windows[windows.count / 2]
                    result.cpuRange =
                        windows.count > 1 ? (windows[0].cpuMicroseconds, windows[windows.count - 1].cpuMicroseconds) : nil
                    result.first = firsts[workload.name]
                    results.append((workload, result))
                }
                let byID = results.first?.1.requestsPerSecond ?? 1
                for (workload, result) in results {
                    var cpu =
                        result.databaseMicroseconds > 0.5
                        ? String(
                            format: "%.0f µs (%.0f + %.0f db)", result.cpuMicroseconds,
                            result.cpuMicroseconds - result.databaseMicroseconds, result.databaseMicroseconds)
                        : String(format: "%.0f µs", result.cpuMicroseconds)
                    if let range = result.cpuRange { cpu += String(format: " [%.0f-%.0f]", range.least, range.most) }
                    let first = result.first.map { String(format: "%.1f ms", $0 * 1000) } ?? ""
                    print(
                        "| \(storeName) | \(workload.name) | \(first) | \(Int(result.requestsPerSecond)) | "
                            + "\(milliseconds(result.p50)) | \(milliseconds(result.p99)) | \(cpu) | "
                            + String(format: "%.2f", result.requestsPerSecond / byID) + " |")
                }
                let finalRSS = residentMegabytes(server.processIdentifier)
                print(
                    "| \(storeName) | *load (generate \(records))* | \(String(format: "%.1f s", Double(loading.components.seconds) + Double(loading.components.attoseconds) / 1e18)) "
                        + "| | | | | RSS \(loadedRSS) MB loaded, \(finalRSS) MB after the queries |")
                server.interrupt()
                _ = await server.termination()
            }
        }
        try? await cluster?.remove()
    }

    /// Waits (at most 120 s) until the server and the database spend under 2% of a core over half a second.
    static func settle(server: Int32, databasePIDFile: String?) async {
        for _ in 0..<240 {
            let before = StoreBenchmark.cpu(server: server, databasePIDFile: databasePIDFile)
            try? await Task.sleep(for: .milliseconds(500))
            let after = StoreBenchmark.cpu(server: server, databasePIDFile: databasePIDFile)
            if after.total(since: before) < 0.01 { return }
        }
    }

    /// The time one request takes, from connecting to the last byte (curl, on a fresh connection).
    static func firstAnswer(_ url: String) async throws -> Double {
        let (output, status) = try await runToEnd(["curl", "-s", "-o", "/dev/null", "-w", "%{time_total} %{http_code}", url])
        let parts = output.split(separator: " ")
        guard status == 0, parts.count == 2, parts[1] == "200", let seconds = Double(parts[0]) else {
            throw BenchmarkError("first request to \(url) failed: \(output)")
        }
        return seconds
    }

    /// VmRSS of `pid`, in MB.
    static func residentMegabytes(_ pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes / 1024
    }

    /// The `hammock` binary that `scripts/bench` builds beside `hammock-bench`.
    static func hammockExecutable() throws -> URL {
        guard let executable = Bundle.main.executableURL?.deletingLastPathComponent().appendingPathComponent("hammock"),
            FileManager.default.isExecutableFile(atPath: executable.path)
        else { throw BenchmarkError("no hammock binary beside hammock-bench") }
        return executable
    }

    static func milliseconds(_ seconds: Double?) -> String {
        seconds.map { String(format: "%.2f ms", $0 * 1000) } ?? "-"
    }

    /// People made up by the server (`generate`, with `--seed 1`): a full name, an email, a city, 0 to 4
    /// kids, a distance walked.
    static func generatedConfiguration(records: Int) -> JSON {
        [
            "resources": [
                [
                    "name": "people",
                    "fields": [
                        "name": "string", "email": "string", "city": "string", "numberOfKids": "integer",
                        "kilometersWalked": "float",
                    ],
                ]
            ],
            "generate": [
                "people": [
                    "count": .integer(records),
                    "fields": ["numberOfKids": ["min": 0, "max": 4], "kilometersWalked": ["min": 0, "max": 1000]],
                ]
            ],
        ]
    }

    /// People with names from a small list of first names, numbered, a few kids each (the stores
    /// benchmark's data).
    static func configuration(records: Int) -> JSON {
        let names = ["amy", "bob", "carl", "dora", "eve", "frank", "gus", "hana", "ivan", "june", "kai", "lena"]
        let people = (0..<records).map { index -> JSON in
            [
                "name": .string("\(names[(index * 7) % names.count]) \(index)"), "numberOfKids": .integer(index % 5),
                "kilometersWalked": .double(Double(index % 1000) / 4),
            ]
        }
        return [
            "resources": [
                ["name": "people", "fields": ["name": "string", "numberOfKids": "integer", "kilometersWalked": "float"]]
            ],
            "data": ["people": .array(people)],
        ]
    }
}
