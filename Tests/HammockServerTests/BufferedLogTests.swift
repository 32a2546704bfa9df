import Foundation
import HammockHTTPServer
import HammockServer
import HammockTestSupport
import Logging
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The request log of `hammock serve`: lines go into a buffer and a thread of their own writes them, so
/// a request never waits for the output; when the output cannot keep up, lines are dropped and counted.
@Suite("A buffered log")
struct BufferedLogTests {
    /// A file in the temporary directory, open for writing, removed by `remove()`.
    struct TemporaryFile {
        let path = TemporaryFiles.path("log", extension: "txt")
        let descriptor: Int32

        init() throws {
            descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            try #require(descriptor >= 0)
        }

        func contents() throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

        func remove() {
            _ = close(descriptor)
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    @Test("Lines are written in order, stamped as StreamLogHandler stamps them, once flush returns")
    func linesInOrder() async throws {
        let file = try TemporaryFile()
        defer { file.remove() }
        let output = BufferedLogOutput(fileDescriptor: file.descriptor, interval: .milliseconds(1))
        var logger = Logger(label: "test") { BufferedLogHandler(label: $0, output: output) }
        logger[metadataKey: "run"] = "1"
        for index in 0..<1000 { logger.info("line \(index)", source: "Tests") }
        logger.debug("below the level")
        await output.flush()

        let lines = try file.contents().split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == 1000)
        let pattern = #/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4} info test: run=1 \[Tests\] line (\d+)$/#
        let numbers = lines.compactMap { line in (try? pattern.wholeMatch(in: line)).flatMap { Int($0.output.1) } }
        #expect(numbers == Array(0..<1000))
        await output.close()
    }

    @Test("The server's line per request reads as its info message would, with the handler's metadata and level")
    func requestLines() async throws {
        let file = try TemporaryFile()
        defer { file.remove() }
        let output = BufferedLogOutput(fileDescriptor: file.descriptor, interval: .milliseconds(1))
        let people = MockResource("people", fields: ["name": .string])
        // The direct path, with metadata on the handler, and a logger above info: the last logs nothing.
        var plain = Logger(label: "hammock") { BufferedLogHandler(label: $0, output: output) }
        var tagged = plain
        tagged[metadataKey: "run"] = "7"
        plain.logLevel = .info
        var quiet = plain
        quiet.logLevel = .warning
        for logger in [plain, tagged, quiet] {
            let server = try await MockServer(resources: [people], logger: logger)
            _ = await server.respond(to: MockRequest(.get, "/people/12"))
        }
        await output.flush()
        let lines = try file.contents().split(separator: "\n").map { $0.drop { $0 != " " }.dropFirst() }
        #expect(
            lines == [
                "info hammock: [HammockServer] GET /people/12 404", "info hammock: run=7 [HammockServer] GET /people/12 404",
            ])
        await output.close()
    }

    @Test("Lines logged after close are ignored, and close returns once the rest is written")
    func closing() async throws {
        let file = try TemporaryFile()
        defer { file.remove() }
        let output = BufferedLogOutput(fileDescriptor: file.descriptor, interval: .milliseconds(1))
        output.appendLine("before")
        await output.close()
        output.appendLine("after")
        await output.flush()
        await output.close()
        let text = try file.contents()
        #expect(text.hasSuffix(" before\n"))
        #expect(!text.contains("after"))
    }

    @Test("An output that does not keep up costs lines, not waiting: appending returns, and the loss is reported")
    func slowOutput() async throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let (readEnd, writeEnd) = (ends[0], ends[1])
        let output = BufferedLogOutput(fileDescriptor: writeEnd, capacity: 4096, interval: .milliseconds(1))
        // Nobody reads the pipe yet: the writer blocks once the pipe is full, and the buffer fills.
        for index in 0..<20_000 { output.appendLine("line \(index) " + String(repeating: "x", count: 40)) }

        let reader = PipeReader(descriptor: readEnd)
        await output.flush()
        await output.close()
        _ = close(writeEnd)
        let text = await reader.text()
        _ = close(readEnd)

        // Each time the writer catches up after a loss, it says how many lines were lost.
        let dropped = text.matches(of: #/hammock: (\d+) log lines dropped/#).compactMap { Int($0.output.1) }.reduce(0, +)
        #expect(dropped > 0)
        let kept = text.split(separator: "\n").compactMap { line in
            line.firstMatch(of: #/ line (\d+) x/#).flatMap { Int($0.output.1) }
        }
        #expect(kept.count + dropped == 20_000)
        #expect(kept == kept.sorted())
        #expect(kept.first == 0)
    }
}

/// Reads a pipe to its end on a thread of its own (not the cooperative pool), then hands over the text.
final class PipeReader: Sendable {
    let done = AsyncStream<String>.makeStream()

    init(descriptor: Int32) {
        let continuation = done.continuation
        Thread.detachNewThread {
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    bytes += chunk[0..<count]
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            continuation.yield(String(decoding: bytes, as: UTF8.self))
            continuation.finish()
        }
    }

    func text() async -> String {
        for await text in done.stream { return text }
        return ""
    }
}
