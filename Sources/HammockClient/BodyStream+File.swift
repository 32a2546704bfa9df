import Foundation
import HammockWire
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension BodyStream {
    /// The contents of the regular file at `file`, read in chunks as the transport sends them (so a
    /// file of any size passes through `chunkSize` bytes of memory), off the concurrency pool. It can be
    /// read again (a retry, a 307 or 308 sends it anew from the start).
    /// - Throws: ``UploadFileError`` when the file cannot be opened or is not a regular file (a FIFO or a
    ///   device would block or never end).
    public init(contentsOf file: URL, chunkSize: Int = 256 << 10) throws(UploadFileError) {
        try self.init(contentsOf: file, chunkSize: chunkSize, reporter: nil)
    }

    /// The same, telling `reporter` of each chunk read as ``TransferEvent/requestBytesSent(total:expected:)``
    /// (captured where the call starts: the transport may read the body on a task of its own).
    init(contentsOf file: URL, chunkSize: Int = 256 << 10, reporter: TransferReporter?) throws(UploadFileError) {
        let source = try FileSource(path: file.path, chunkSize: Swift.max(1, chunkSize), reporter: reporter)
        self.init(expectedLength: source.size, lifetime: Lifetime(.file(source)))
    }
}

/// Why a file cannot be a request body.
public struct UploadFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file's path.
    public var path: String
    /// What is wrong with it.
    public var reason: String

    public var description: String { "cannot send \(path) as a body: \(reason)" }
}

/// A regular file read from the start by each reading of its body.
final class FileSource: Sendable {
    let path: String
    let size: Int
    let chunkSize: Int
    let reporter: TransferReporter?
    static let queue = DispatchQueue(label: "hammock.upload-files", attributes: .concurrent)

    init(path: String, chunkSize: Int, reporter: TransferReporter? = nil) throws(UploadFileError) {
        self.path = path
        self.chunkSize = chunkSize
        self.reporter = reporter
        let descriptor = try Self.openRegular(path)
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw UploadFileError(path: path, reason: String(cString: strerror(errno))) }
        size = Int(status.st_size)
    }

    /// Opens `path` for reading without waiting (a FIFO would wait for a writer), a regular file only.
    static func openRegular(_ path: String) throws(UploadFileError) -> Int32 {
        let descriptor = openRegularFileForReading(path)
        guard descriptor >= 0 else {
            throw UploadFileError(
                path: path, reason: errno == EINVAL ? "it is not a regular file" : String(cString: strerror(errno)))
        }
        return descriptor
    }

    /// A reader from the start of the file: each call returns the next chunk, `nil` at the end.
    func reader() -> () async throws -> [UInt8]? {
        let reading = Reading(source: self)
        return { try await reading.next() }
    }

    /// One reading: its descriptor (opened on the first chunk, closed at the end or when dropped) and offset.
    final class Reading: Sendable {
        private let source: FileSource
        private let state = Mutex<(descriptor: Int32?, offset: Int, done: Bool)>((nil, 0, false))

        init(source: FileSource) { self.source = source }

        func next() async throws -> [UInt8]? {
            let chunk = try await withCheckedThrowingContinuation { continuation in
                FileSource.queue.async {
                    continuation.resume(with: Result { try self.readChunk() })
                }
            }
            if let reporter = source.reporter, chunk != nil {
                let total = state.withLock { $0.offset }
                reporter.report(.requestBytesSent(total: total, expected: source.size))
            }
            return chunk
        }

        private func readChunk() throws -> [UInt8]? {
            try state.withLock { state -> [UInt8]? in
                if state.done { return nil }
                let descriptor: Int32
                if let open = state.descriptor {
                    descriptor = open
                } else {
                    descriptor = try FileSource.openRegular(source.path)
                    state.descriptor = descriptor
                }
                var chunk = [UInt8](repeating: 0, count: source.chunkSize)
                let count = chunk.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, off_t(state.offset)) }
                guard count >= 0 else { throw UploadFileError(path: source.path, reason: String(cString: strerror(errno))) }
                if count == 0 {
                    state.done = true
                    close(descriptor)
                    state.descriptor = nil
                    return nil
                }
                state.offset += count
                chunk.removeSubrange(count...)
                return chunk
            }
        }

        deinit {
            state.withLock { state in
                if let descriptor = state.descriptor { close(descriptor) }
            }
        }
    }
}
