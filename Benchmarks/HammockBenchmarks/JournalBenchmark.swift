import Foundation
import HammockHTTPServer
import HammockServer

/// What the request journal costs: `GET /people/42` from mocks in this process with the journal off, on
/// (the default), and on with five times the default's entries, measured with wrk in alternating rounds
/// (CPU time per request, and the ratio to off); then the same in process, without sockets.
enum JournalBenchmark {
    static func run(_ options: HTTPBenchmark.Options) async throws {
        let directory = NSTemporaryDirectory() + "hammock-bench-journal-\(UUID().uuidString)/"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let on = try await HTTPBenchmark.makeMock(storeName: "memory", directory: directory)
        let off = try await HTTPBenchmark.makeMock(
            storeName: "memory", directory: directory, options: MockServer.Options(journal: .off))
        let large = try await HTTPBenchmark.makeMock(
            storeName: "memory", directory: directory, options: MockServer.Options(journal: RequestJournal.Limits(entries: 5_000))
        )
        let largePort = try await large.start(port: 0)
        let onPort = try await on.start(port: 0)
        let offPort = try await off.start(port: 0)
        let targets = [
            HTTPBenchmark.Target(name: "journal off", port: offPort, cpuSeconds: CPUTime.ofThisProcess),
            HTTPBenchmark.Target(name: "journal on (default, 1,000 entries)", port: onPort, cpuSeconds: CPUTime.ofThisProcess),
            HTTPBenchmark.Target(name: "journal on, 5,000 entries", port: largePort, cpuSeconds: CPUTime.ofThisProcess),
        ]
        let rows = try await HTTPBenchmark.measure(targets, workload: "GET /people/42", path: "/people/42", options: options)
        await on.stop()
        await off.stop()
        await large.stop()
        print("\n### The request journal: on against off, memory store\n")
        print("| server | workload | CPU µs / request | req/s | CPU / journal off |")
        print("|---|---|---:|---:|---:|")
        for row in rows {
            print(
                "| \(row.server) | \(row.workload) | \(String(format: "%.1f", row.cpuMicroseconds)) | "
                    + "\(Int(row.requestsPerSecond.rounded())) | \(String(format: "%.3f", row.cpuMicroseconds / rows[0].cpuMicroseconds)) |"
            )
        }
        print("\njournal entries kept: \(on.journal.entries.count) of \(on.journal.limits.entries)")

        // The same two mocks in process, where no socket adds noise: the journal's cost in microseconds,
        // then as a share of the whole HTTP request measured above.
        let request = MockRequest(.get, "/people/42")
        var best = [Double.infinity, Double.infinity]
        let iterations = 200_000
        for _ in 0..<options.rounds {
            for (index, mock) in [off, on].enumerated() {
                let before = CPUTime.ofThisProcess()
                for _ in 0..<iterations { _ = await mock.respond(to: request) }
                best[index] = min(best[index], (CPUTime.ofThisProcess() - before) * 1e6 / Double(iterations))
            }
        }
        let cost = best[1] - best[0]
        print("\n### In process, best of \(options.rounds) rounds of \(iterations) (CPU µs per request)\n")
        print("| journal off | journal on | the journal's cost | as a share of the HTTP request (journal off) |")
        print("|---:|---:|---:|---:|")
        print(
            "| \(String(format: "%.3f", best[0])) | \(String(format: "%.3f", best[1])) | \(String(format: "%.3f", cost)) | "
                + "\(String(format: "%.1f%%", cost / rows[0].cpuMicroseconds * 100)) |")
    }
}
