import Foundation

/// What one wrk run measured.
struct WrkResult {
    var requests: Int
    var requestsPerSecond: Double
    /// The 50th and 99th percentile latency in seconds, when wrk was asked for them.
    var p50: Double?
    var p99: Double?
}

/// Runs wrk against a URL (`-t1`, keep-alive connections) and reads how many requests it made.
///
/// wrk writes to a temporary file, read once it has exited: no thread of the cooperative pool waits
/// on a pipe for the length of the run (there are two on this machine).
enum Wrk {
    static func run(
        url: String, seconds: Int, connections: Int, script: String? = nil, latency: Bool = false
    ) async throws -> WrkResult {
        let outputPath = NSTemporaryDirectory() + "hammock-wrk-\(UUID().uuidString).txt"
        guard FileManager.default.createFile(atPath: outputPath, contents: nil),
            let output = FileHandle(forWritingAtPath: outputPath)
        else { throw BenchmarkError("cannot create \(outputPath)") }
        defer { try? FileManager.default.removeItem(atPath: outputPath) }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        var arguments = ["wrk", "-t1", "-c\(connections)", "-d\(seconds)s"]
        if let script { arguments += ["-s", script] }
        if latency { arguments.append("--latency") }
        process.arguments = arguments + [url]
        process.standardOutput = output
        process.standardError = output
        let finished = AsyncStream<Void>.makeStream()
        process.terminationHandler = { _ in
            finished.continuation.yield()
            finished.continuation.finish()
        }
        try process.run()
        for await _ in finished.stream { break }
        try output.close()
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let lines = text.split(separator: "\n")
        guard process.terminationStatus == 0,
            let rateLine = lines.first(where: { $0.hasPrefix("Requests/sec:") }),
            let rate = Double(rateLine.split(separator: " ").last ?? ""),
            let countLine = lines.first(where: { $0.contains(" requests in ") }),
            let count = Int(countLine.split(separator: " ").first ?? "")
        else {
            throw BenchmarkError("wrk failed for \(url):\n\(text)")
        }
        if let errors = lines.first(where: { $0.contains("Non-2xx") || $0.contains("Socket errors") }) {
            FileHandle.standardError.write(Data("warning: \(url): \(errors)\n".utf8))
        }
        return WrkResult(
            requests: count, requestsPerSecond: rate, p50: percentile("50%", in: lines), p99: percentile("99%", in: lines))
    }

    /// `     99%   12.34ms` in wrk's latency distribution, in seconds.
    static func percentile(_ label: String, in lines: [Substring]) -> Double? {
        guard let line = lines.first(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix(label) }),
            let text = line.split(separator: " ").last
        else { return nil }
        for (unit, scale) in [("us", 1e-6), ("ms", 1e-3), ("s", 1.0)] where text.hasSuffix(unit) {
            return Double(text.dropLast(unit.count)).map { $0 * scale }
        }
        return nil
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
