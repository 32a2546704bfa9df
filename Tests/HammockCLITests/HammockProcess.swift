import Foundation
import HammockJSON
import HammockTesting
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs the built `hammock` executable and reads its output as it comes.
final class HammockProcess: Sendable {
    let process: ChildProcess
    let lines: AsyncStream<String>
    let errorOutput = LockedText()
    private let errorsEnded: AsyncStream<Void>

    /// A built product next to the test bundle (the test target depends on it, so it is built).
    static func executable(named name: String = "hammock") -> URL {
        let directory =
            Bundle.main.executableURL?.deletingLastPathComponent()
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidate = directory.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
    }

    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// A copy of `Examples/NAME.json` without its `data` and `generate` sections, in a fresh temporary
    /// directory: the example's resources, empty, for tests that count records from the first.
    static func emptyExample(_ name: String) throws -> String {
        let source = packageRoot.appendingPathComponent("Examples/\(name).json")
        guard var object = try JSONSerialization.jsonObject(with: Data(contentsOf: source)) as? [String: Any] else {
            throw CocoaError(.fileReadCorruptFile)
        }
        object["data"] = nil
        object["generate"] = nil
        let directory = TemporaryFiles.directory("example")
        let path = directory + "\(name).json"
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Runs `executable` with `arguments`; with `shellPrefix`, through `/bin/sh` after that shell
    /// command (`ulimit -n 64`, say); with `environment`, those variables added to this process's.
    init(
        _ arguments: [String], executable: String = "hammock", shellPrefix: String? = nil,
        environment: [String: String] = [:]
    ) throws {
        let program: String
        let programArguments: [String]
        if let shellPrefix {
            program = "/bin/sh"
            programArguments =
                ["-c", shellPrefix + " && exec \"$0\" \"$@\"", Self.executable(named: executable).path] + arguments
        } else {
            // A path runs that program (python3); a name, the built product.
            program = executable.hasPrefix("/") ? executable : Self.executable(named: executable).path
            programArguments = arguments
        }
        // Pipes of its own, close-on-exec this side, and nothing else inherited (see ChildProcess): a
        // child another test spawns at the same moment must not hold these open, or the reads below would
        // never see the end of the output.
        let process = try ChildProcess(
            program, programArguments, adding: environment, directory: Self.packageRoot.path, input: .pipe,
            output: .pipe, errors: .pipe)
        let (lines, lineContinuation) = AsyncStream.makeStream(of: String.self)
        let (errorsEnded, errorsEndedContinuation) = AsyncStream.makeStream(of: Void.self)
        self.process = process
        self.lines = lines
        self.errorsEnded = errorsEnded
        // Blocking reads on threads of their own (never the concurrency pool): a read returns no bytes
        // exactly at the end of the output.
        if let outputReader = process.output {
            Thread.detachNewThread {
                var buffer: [UInt8] = []
                while true {
                    let chunk = outputReader.readAvailable()
                    if chunk.isEmpty { break }
                    buffer += chunk
                    while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                        lineContinuation.yield(String(decoding: buffer[..<newline], as: UTF8.self))
                        buffer.removeSubrange(...newline)
                    }
                }
                outputReader.close()
                // A last line without a newline (curl's answer, say) is a line too.
                if !buffer.isEmpty { lineContinuation.yield(String(decoding: buffer, as: UTF8.self)) }
                lineContinuation.finish()
            }
        } else {
            lineContinuation.finish()
        }
        let errorOutput = self.errorOutput
        if let errorReader = process.errors {
            Thread.detachNewThread {
                while true {
                    let chunk = errorReader.readAvailable()
                    if chunk.isEmpty { break }
                    errorOutput.withLock { $0 += String(decoding: chunk, as: UTF8.self) }
                }
                errorReader.close()
                errorsEndedContinuation.finish()
            }
        } else {
            errorsEndedContinuation.finish()
        }
    }

    /// Reads output lines until one satisfies `match`; `nil` if the output ends first.
    func firstLine(where match: (String) -> Bool) async -> String? {
        for await line in lines where match(line) { return line }
        return nil
    }

    /// Waits for the process to end, and for its error output to be read, and returns its exit status
    /// (128 plus the signal's number when a signal ended it).
    func exitStatus() async -> Int32 {
        let status = await process.termination().status
        for await _ in errorsEnded {}
        return status
    }

    func interrupt() { process.interrupt() }

    /// Writes `line` and a newline to the child's standard input.
    func send(_ line: String) throws {
        try process.input?.write(Array((line + "\n").utf8))
    }

    /// Ends the child's standard input.
    func closeInput() { process.input?.close() }
}

/// Text shared between a pipe's reader and the test.
final class LockedText: Sendable {
    private let text = Mutex("")
    func withLock<T>(_ body: (inout String) -> T) -> T { text.withLock { body(&$0) } }
}

extension HammockProcess {
    /// `hammock serve` with `serveArguments`, met by the Python script `script` (under Tests/Scripts, run by
    /// the project's Python) given the server's URL, then `scriptArguments`: the script's JSON reports by
    /// their `check`. Both must end cleanly; the server is interrupted once the script is done.
    static func pythonReports(
        serving serveArguments: [String], environment: [String: String] = [:], script: String, scriptArguments: [String] = []
    ) async throws -> [String: JSON] {
        let server = try HammockProcess(["serve"] + serveArguments, environment: environment)
        let banner = await server.firstLine { $0.hasPrefix("Hammock is serving") }
        let line = try #require(banner, "no banner; stderr: \(server.errorOutput.withLock { $0 })")
        let url = try #require(line.split(separator: " ").last.map(String.init))
        let path = packageRoot.appendingPathComponent("Tests/Scripts/\(script)").path
        let client = try HammockProcess([path, url] + scriptArguments, executable: ProjectPython.executable)
        var reports: [String: JSON] = [:]
        for await output in client.lines {
            guard let report = try? JSON(parsing: Array(output.utf8)), let check = report["check"]?.stringValue else { continue }
            reports[check] = report
        }
        #expect(await client.exitStatus() == 0, "\(client.errorOutput.withLock { $0 })")
        server.interrupt()
        #expect(await server.exitStatus() == 0)
        return reports
    }
}
