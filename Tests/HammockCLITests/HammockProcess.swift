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
    let process: Process
    let lines: AsyncStream<String>
    let errorOutput = LockedText()
    private let exit: AsyncStream<Int32>
    private let errorsEnded: AsyncStream<Void>
    /// The child's standard input.
    private let input = Pipe()

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
        let process = Process()
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        if let shellPrefix {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments =
                ["-c", shellPrefix + " && exec \"$0\" \"$@\"", Self.executable(named: executable).path] + arguments
        } else {
            // A path runs that program (python3); a name, the built product.
            process.executableURL =
                executable.hasPrefix("/") ? URL(fileURLWithPath: executable) : Self.executable(named: executable)
            process.arguments = arguments
        }
        process.currentDirectoryURL = Self.packageRoot
        let output = Pipe()
        let errors = Pipe()
        // Tests spawn processes in parallel (httpbin, other servers). A child spawned by someone else
        // would inherit these pipes' write ends and hold them open, so our reader would never see the
        // end of the output. Close-on-exec keeps them ours; the child still gets its own copies as
        // stdout and stderr.
        for handle in [
            output.fileHandleForReading, output.fileHandleForWriting, errors.fileHandleForReading, errors.fileHandleForWriting,
            input.fileHandleForReading, input.fileHandleForWriting,
        ] {
            _ = fcntl(handle.fileDescriptor, F_SETFD, FD_CLOEXEC)
        }
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = input
        let (lines, lineContinuation) = AsyncStream.makeStream(of: String.self)
        let (exit, exitContinuation) = AsyncStream.makeStream(of: Int32.self)
        let (errorsEnded, errorsEndedContinuation) = AsyncStream.makeStream(of: Void.self)
        process.terminationHandler = { process in
            exitContinuation.yield(process.terminationStatus)
            exitContinuation.finish()
        }
        self.process = process
        self.lines = lines
        self.exit = exit
        self.errorsEnded = errorsEnded
        try process.run()
        // Blocking reads on threads of their own (never the concurrency pool): a read returns no bytes
        // exactly at the end of the output, which the readability handler did not always report.
        let outputReader = output.fileHandleForReading
        Thread.detachNewThread {
            var buffer = Data()
            while true {
                let chunk = outputReader.readAvailable()
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    lineContinuation.yield(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                    buffer.removeSubrange(buffer.startIndex...newline)
                }
            }
            // A last line without a newline (curl's answer, say) is a line too.
            if !buffer.isEmpty { lineContinuation.yield(String(decoding: buffer, as: UTF8.self)) }
            lineContinuation.finish()
        }
        let errorReader = errors.fileHandleForReading
        let errorOutput = self.errorOutput
        Thread.detachNewThread {
            while true {
                let chunk = errorReader.readAvailable()
                if chunk.isEmpty { break }
                errorOutput.withLock { $0 += String(decoding: chunk, as: UTF8.self) }
            }
            errorsEndedContinuation.finish()
        }
    }

    /// Reads output lines until one satisfies `match`; `nil` if the output ends first.
    func firstLine(where match: (String) -> Bool) async -> String? {
        for await line in lines where match(line) { return line }
        return nil
    }

    /// Waits for the process to end, and for its error output to be read, and returns its exit status.
    func exitStatus() async -> Int32 {
        var status: Int32 = -1  // reading terminationStatus before the end traps
        for await code in exit {
            status = code
            break
        }
        for await _ in errorsEnded {}
        return status
    }

    func interrupt() { process.interrupt() }

    /// Writes `line` and a newline to the child's standard input.
    func send(_ line: String) throws {
        try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Ends the child's standard input.
    func closeInput() throws { try input.fileHandleForWriting.close() }

    deinit {
        if process.isRunning { process.terminate() }
    }
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
