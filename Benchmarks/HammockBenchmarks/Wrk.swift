import Foundation

/// Runs wrk against a URL and reads its requests per second.
enum Wrk {
    static func requestsPerSecond(url: String, seconds: Int, connections: Int, script: String? = nil) async throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        var arguments = ["wrk", "-t1", "-c\(connections)", "-d\(seconds)s", "--latency"]
        if let script { arguments += ["-s", script] }
        process.arguments = arguments + [url]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        let finished = AsyncStream<Void>.makeStream()
        process.terminationHandler = { _ in
            finished.continuation.yield()
            finished.continuation.finish()
        }
        try process.run()
        let reader = Task.detached { output.fileHandleForReading.readDataToEndOfFile() }
        for await _ in finished.stream { break }
        let text = String(decoding: await reader.value, as: UTF8.self)
        guard process.terminationStatus == 0,
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Requests/sec:") }),
            let value = Double(line.split(separator: " ").last ?? "")
        else {
            throw BenchmarkError("wrk failed for \(url):\n\(text)")
        }
        if let errors = text.split(separator: "\n").first(where: { $0.contains("Non-2xx") || $0.contains("Socket errors") }) {
            FileHandle.standardError.write(Data("warning: \(url): \(errors)\n".utf8))
        }
        return value
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
