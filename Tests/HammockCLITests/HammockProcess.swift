import Foundation
import Synchronization

/// Runs the built `hammock` executable and reads its output as it comes.
final class HammockProcess: Sendable {
    let process: Process
    let lines: AsyncStream<String>
    let errorOutput = LockedText()
    private let exit: AsyncStream<Int32>

    /// A built product next to the test bundle (the test target depends on it, so it is built).
    static func executable(named name: String = "hammock") -> URL {
        let directory = Bundle.main.executableURL?.deletingLastPathComponent()
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidate = directory.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
    }

    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    init(_ arguments: [String], executable: String = "hammock") throws {
        let process = Process()
        process.executableURL = Self.executable(named: executable)
        process.arguments = arguments
        process.currentDirectoryURL = Self.packageRoot
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let (lines, lineContinuation) = AsyncStream.makeStream(of: String.self)
        let (exit, exitContinuation) = AsyncStream.makeStream(of: Int32.self)
        let pending = Mutex(Data())
        output.fileHandleForReading.readabilityHandler = { handle in
            let chunk = handle.availableData
            if chunk.isEmpty {
                handle.readabilityHandler = nil
                lineContinuation.finish()
                return
            }
            let complete: [String] = pending.withLock { buffer in
                buffer.append(chunk)
                var found: [String] = []
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    found.append(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                    buffer.removeSubrange(buffer.startIndex...newline)
                }
                return found
            }
            for line in complete { lineContinuation.yield(line) }
        }
        let errorOutput = self.errorOutput
        errors.fileHandleForReading.readabilityHandler = { handle in
            let chunk = handle.availableData
            if chunk.isEmpty {
                handle.readabilityHandler = nil
                return
            }
            errorOutput.withLock { $0 += String(decoding: chunk, as: UTF8.self) }
        }
        process.terminationHandler = { process in
            exitContinuation.yield(process.terminationStatus)
            exitContinuation.finish()
        }
        self.process = process
        self.lines = lines
        self.exit = exit
        try process.run()
    }

    /// Reads output lines until one satisfies `match`; `nil` if the output ends first.
    func firstLine(where match: (String) -> Bool) async -> String? {
        for await line in lines where match(line) { return line }
        return nil
    }

    /// Waits for the process to end and returns its exit status.
    func exitStatus() async -> Int32 {
        for await status in exit { return status }
        return process.terminationStatus
    }

    func interrupt() { process.interrupt() }

    deinit {
        if process.isRunning { process.terminate() }
    }
}

/// Text shared between a pipe's reader and the test.
final class LockedText: Sendable {
    private let text = Mutex("")
    func withLock<T>(_ body: (inout String) -> T) -> T { text.withLock { body(&$0) } }
}
