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
}
