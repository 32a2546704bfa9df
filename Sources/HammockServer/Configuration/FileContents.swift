#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Small file helpers for configuration loading (start-up only, never on a request path).
package enum FileContents {
    /// Why a file could not be read, in the system's words (`No such file or directory`).
    package struct ReadError: Error {
        package let reason: String
    }

    /// The whole file; configuration files are small, so one read loop is enough. Opened without
    /// blocking, so that a FIFO or a device put where the file was (a configuration from a third party, a
    /// `--watch`ed path replaced) is refused as not a regular file instead of waiting for a writer for good.
    package static func read(_ path: String, limit: Int = .max) throws(ReadError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw ReadError(reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw ReadError(reason: String(cString: strerror(errno))) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw ReadError(reason: "not a regular file") }
        guard Int(info.st_size) <= limit else { throw ReadError(reason: "larger than \(limit) bytes") }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ReadError(reason: String(cString: strerror(errno)))
            }
            if count == 0 { return bytes }
            bytes += chunk[0..<count]
        }
    }

    /// The directory part of `path` with a trailing slash, or "" for a bare file name.
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return String(path[...slash])
    }
}

/// The C library's `read(2)` and `close(2)`, out of reach of methods of the same names (opening is
/// HammockWire's `openRegularFileForReading`).
func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

func systemClose(_ descriptor: Int32) -> Int32 { close(descriptor) }
