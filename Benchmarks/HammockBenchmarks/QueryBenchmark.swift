import Foundation
import HammockJSON

/// List queries on 100,000 records, both stores, through `hammock serve`: an equality filter, a sort on
/// a field that is not the key, and a search, each a page of 20, against `GET /people/:id` in the same
/// run. Requests per second and wrk's p50 and p99 latency.
enum QueryBenchmark {
    static let workloads: [(name: String, path: String)] = [
        ("GET /people/:id", "/people/50000"),
        ("equality filter, page of 20", "/people?numberOfKids=3&_page=5&_per_page=20"),
        ("sort on name, page of 20", "/people?_sort=name&_page=5&_per_page=20"),
        ("q search, page of 20", "/people?q=amy&_page=1&_per_page=20"),
    ]

    static func run(records: Int, seconds: Int, connections: Int, storeNames: [String]) async throws {
        let executable = try hammockExecutable()
        let directory = NSTemporaryDirectory() + "hammock-query-bench-\(UUID().uuidString)/"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configurationPath = directory + "people.json"
        try Data(configuration(records: records).serialized()).write(to: URL(fileURLWithPath: configurationPath))

        print("\n### List queries on \(records) records (`hammock serve --quiet`, wrk -t1 -c\(connections), \(seconds) s)\n")
        print("| store | workload | req/s | p50 | p99 | rate / by id |")
        print("|---|---|---:|---:|---:|---:|")
        for storeName in storeNames {
            let store = storeName == "sqlite" ? "sqlite:\(directory)people.sqlite" : "memory"
            let logPath = directory + "serve-\(storeName).log"
            FileManager.default.createFile(atPath: logPath, contents: nil)
            guard let log = FileHandle(forWritingAtPath: logPath) else { throw BenchmarkError("cannot write \(logPath)") }
            let process = Process()
            process.executableURL = executable
            process.arguments = ["serve", configurationPath, "--port", "0", "--store", store, "--quiet"]
            process.standardOutput = log
            process.standardError = log
            try process.run()
            defer { if process.isRunning { process.interrupt() } }
            let port = try await HTTPBenchmark.waitForPort(logPath: logPath, process: process, seconds: 300)
            var byID: Double?
            for (name, path) in workloads {
                let url = "http://127.0.0.1:\(port)\(path)"
                _ = try await Wrk.run(url: url, seconds: 1, connections: connections)
                let result = try await Wrk.run(url: url, seconds: seconds, connections: connections, latency: true)
                if byID == nil { byID = result.requestsPerSecond }
                let ratio = byID.map { String(format: "%.2f", result.requestsPerSecond / $0) } ?? "-"
                print(
                    "| \(storeName) | \(name) | \(Int(result.requestsPerSecond)) | \(milliseconds(result.p50)) | "
                        + "\(milliseconds(result.p99)) | \(ratio) |")
            }
            process.interrupt()
            process.waitUntilExit()
        }
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

    /// People with names from a small list of first names, numbered, a few kids each.
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
