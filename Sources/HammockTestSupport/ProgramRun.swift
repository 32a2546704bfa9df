import Foundation

/// Runs a program to its end and returns what it printed (standard output and error together) and its
/// exit status (128 plus the signal's number when a signal ended it).
///
/// ```swift
/// let (output, status) = try await runToEnd(["curl", "-s", "--cacert", root, url])
/// ```
/// The program is found on the `PATH` (through `/usr/bin/env`); see ``ChildProcess`` for what it inherits.
public func runToEnd(_ arguments: [String], directory: String? = nil) async throws -> (output: String, status: Int32) {
    let child = try ChildProcess("/usr/bin/env", arguments, directory: directory, output: .pipe, errors: .sameAsOutput)
    guard let output = child.output else { return ("", await child.termination().status) }  // asked for a pipe: always one
    // The read blocks: a thread of its own, never a cooperative one.
    let text = await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: String(decoding: output.readToEnd(), as: UTF8.self)) }
    }
    return (text, await child.termination().status)
}
