import Foundation

/// A new file readable by its owner only, written in one place: the files a client leaves on disk
/// (downloads, cache entries) may hold tokens and personal data.
package enum PrivateFile {
    /// Writes `bytes` to a new file at `path`, mode 0600, with `open(O_CREAT | O_EXCL)` and `write`
    /// (never through a file someone placed at the name beforehand, and with no temporary file of the
    /// library's own: `FileManager.createFile` and `Data.write(options: .atomic)` write a
    /// `.dat.nosync…` file first, which a process killed mid-write leaves behind whole). On a failure
    /// the partial file is removed. Synchronous: call it on a queue of your own.
    /// - Returns: Whether the file was written whole.
    package static func write(_ bytes: [UInt8], to path: String) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: Data(bytes))
            try handle.close()
            return true
        } catch {
            unlink(path)
            return false
        }
    }

    /// A new private file written piece by piece as a body arrives, on a queue of its own (the writes
    /// are blocking system calls, kept off the concurrency pool).
    package final class Sink: Sendable {
        private let handle: FileHandle
        let path: String
        private static let queue = DispatchQueue(label: "hammock.files")

        private init(handle: FileHandle, path: String) {
            self.handle = handle
            self.path = path
        }

        /// Creates the file (mode 0600, `O_EXCL`).
        package static func create(at path: String) async throws -> Sink {
            try await run {
                let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
                guard descriptor >= 0 else {
                    throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
                }
                return Sink(handle: FileHandle(fileDescriptor: descriptor, closeOnDealloc: true), path: path)
            }
        }

        /// Opens a partial download written earlier to append to it, or (with `truncating`) to write it
        /// anew. `O_NOFOLLOW`: a link someone put at the name is never written through.
        package static func reopen(at path: String, truncating: Bool) async throws -> Sink {
            try await run {
                let descriptor = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | (truncating ? O_TRUNC : O_APPEND))
                guard descriptor >= 0 else {
                    throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
                }
                var info = stat()
                guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
                    closeDescriptor(descriptor)
                    throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
                }
                return Sink(handle: FileHandle(fileDescriptor: descriptor, closeOnDealloc: true), path: path)
            }
        }

        /// Appends `bytes`.
        package func write(_ bytes: [UInt8]) async throws {
            guard !bytes.isEmpty else { return }
            let handle = self.handle
            try await Self.run { try handle.write(contentsOf: Data(bytes)) }
        }

        /// Closes the file, complete.
        package func close() async throws {
            let handle = self.handle
            try await Self.run { try handle.close() }
        }

        /// Closes and removes the partial file.
        package func discard() async {
            let (handle, path) = (self.handle, self.path)
            _ = try? await Self.run {
                try? handle.close()
                unlink(path)
            }
        }

        private static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
            try await withCheckedThrowingContinuation { continuation in
                queue.async { continuation.resume(with: Result { try work() }) }
            }
        }
    }
}

/// `close(2)`, out of reach of the `close()` methods above.
private func closeDescriptor(_ descriptor: Int32) { _ = close(descriptor) }
