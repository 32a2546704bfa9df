import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a program to its end on a thread of its own (never a cooperative one: its read blocks) and returns
/// what it printed (standard output and error together) and its exit status.
///
/// ```swift
/// let (output, status) = try await runToEnd(["curl", "-s", "--cacert", root, url])
/// ```
/// The pipe is close-on-exec: a process another test spawns at that moment (a PostgreSQL cluster, httpbin)
/// must not inherit its write end and hold it open, or the read never ends (a CI run hung 17 minutes so).
public func runToEnd(_ arguments: [String]) async throws -> (output: String, status: Int32) {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = arguments
            let output = Pipe()
            for handle in [output.fileHandleForReading, output.fileHandleForWriting] {
                _ = fcntl(handle.fileDescriptor, F_SETFD, FD_CLOEXEC)
            }
            process.standardOutput = output
            process.standardError = output
            do {
                try process.run()
            } catch {
                continuation.resume(throwing: error)
                return
            }
            var data = Data()
            while true {  // readDataToEndOfFile() traps on EINTR (see FileHandle.readAvailable)
                let chunk = output.fileHandleForReading.readAvailable()
                if chunk.isEmpty { break }
                data += chunk
            }
            process.waitUntilExit()
            continuation.resume(returning: (String(decoding: data, as: UTF8.self), process.terminationStatus))
        }
    }
}
