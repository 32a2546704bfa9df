import Dispatch
import HammockWire

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension StreamingBody {
    /// The contents of the file at `path`, read from disk as the client takes them (64 KiB at a time,
    /// each read on a dispatch queue, never on the concurrency pool): a file of any size is served in
    /// flat memory. The length is the file's size now; the file is opened only when the body is sent,
    /// so a body never sent holds no descriptor.
    /// - Throws: ``FileBodyError`` when the path is not a regular file that can be read.
    public static func file(at path: String) throws(FileBodyError) -> StreamingBody {
        var info = stat()
        guard stat(path, &info) == 0 else { throw FileBodyError(path: path, reason: String(cString: strerror(errno))) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw FileBodyError(path: path, reason: "not a regular file") }
        guard access(path, R_OK) == 0 else { throw FileBodyError(path: path, reason: String(cString: strerror(errno))) }
        return StreamingBody(length: Int(info.st_size)) { writer in
            let file = try await FileReader.open(path)
            defer { file.close() }
            while let chunk = try await file.next() { try await writer.write(chunk) }
        }
    }

    /// The bytes `range` of the file at `path` (a `206 Partial Content` answer's body), read as
    /// ``file(at:)`` reads; `range` must lie within the file's size, which the caller read.
    static func file(at path: String, range: Range<Int>) -> StreamingBody {
        StreamingBody(length: range.count) { writer in
            let file = try await FileReader.open(path)
            defer { file.close() }
            try file.seek(to: range.lowerBound)
            var remaining = range.count
            while remaining > 0, var chunk = try await file.next() {
                // The file may have grown since its size was read: no more than the range is sent.
                if chunk.count > remaining { chunk.removeSubrange(remaining...) }
                remaining -= chunk.count
                try await writer.write(chunk)
            }
        }
    }
}

/// A file that cannot be served, and why, in the system's words.
public struct FileBodyError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "cannot read \(path): \(reason)" }
}

/// Reads a file in chunks off the concurrency pool. One reader per body; its reads never overlap.
final class FileReader: Sendable {
    let descriptor: Int32
    static let chunkSize = 64 << 10
    private static let queue = DispatchQueue(label: "Hammock.FileReader", attributes: .concurrent)

    private init(descriptor: Int32) { self.descriptor = descriptor }

    static func open(_ path: String) async throws(FileBodyError) -> FileReader {
        let result: Result<Int32, FileBodyError> = await withCheckedContinuation { continuation in
            queue.async {
                // Checked again when opened: the path may have become a FIFO since the stub was made.
                let descriptor = openRegularFileForReading(path)
                let reason = errno == EINVAL ? "not a regular file" : String(cString: strerror(errno))
                continuation.resume(
                    returning: descriptor >= 0 ? .success(descriptor) : .failure(FileBodyError(path: path, reason: reason)))
            }
        }
        return FileReader(descriptor: try result.get())
    }

    /// The next chunk, or `nil` at the end of the file.
    func next() async throws(FileBodyError) -> [UInt8]? {
        let descriptor = self.descriptor
        let result: Result<[UInt8]?, FileBodyError> = await withCheckedContinuation { continuation in
            Self.queue.async {
                var chunk = [UInt8](repeating: 0, count: Self.chunkSize)
                while true {
                    let count = chunk.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, $0.count) }
                    if count < 0, errno == EINTR { continue }
                    if count < 0 {
                        continuation.resume(
                            returning: .failure(FileBodyError(path: "", reason: String(cString: strerror(errno)))))
                    } else if count == 0 {
                        continuation.resume(returning: .success(nil))
                    } else {
                        chunk.removeSubrange(count...)
                        continuation.resume(returning: .success(chunk))
                    }
                    return
                }
            }
        }
        return try result.get()
    }

    func close() { _ = systemClose(descriptor) }

    /// Moves the next read to `offset` bytes from the start.
    func seek(to offset: Int) throws(FileBodyError) {
        guard lseek(descriptor, off_t(offset), SEEK_SET) >= 0 else {
            throw FileBodyError(path: "", reason: String(cString: strerror(errno)))
        }
    }
}
