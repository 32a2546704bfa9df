import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive claim on a database file, so that two servers never write one file and drift apart.
///
/// Between processes it is an `flock(2)` on the file itself: the kernel releases it when the process
/// ends, however it ends, so a killed server never leaves a stale lock behind. `flock` is independent
/// of the POSIX record locks SQLite uses. Within one process a table of held files answers first,
/// because closing any descriptor of a file drops the process's POSIX locks on it: a second store in
/// the same process must be refused before it opens the file at all.
final class DatabaseFileLock: Sendable {
    /// Device and inode: the same file under any path.
    struct FileID: Hashable, Sendable {
        let device: UInt64
        let inode: UInt64
    }

    /// The files this process holds. Process-wide by nature: POSIX locks belong to the process.
    private static let held = Mutex<Set<FileID>>([])

    private let state: Mutex<(descriptor: Int32, id: FileID)?>
    /// Whether the file did not exist before the lock created it.
    let createdFile: Bool

    /// Creates the file if needed and claims it.
    /// - Throws: ``StoreError/fileInUse(path:)`` if another store, in this process or another, holds it.
    init(path: String) throws(StoreError) {
        let claimed = try Self.held.withLock { held throws(StoreError) -> (Int32, FileID, Bool) in
            var info = stat()
            let existed = stat(path, &info) == 0
            if existed, held.contains(FileID(info)) { throw StoreError.fileInUse(path: path) }
            let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                throw StoreError.storageFailure("cannot open \(path): \(String(cString: strerror(errno)))")
            }
            guard Self.lock(descriptor) == 0 else {
                let code = errno
                close(descriptor)
                if code == EWOULDBLOCK { throw StoreError.fileInUse(path: path) }
                throw StoreError.storageFailure("cannot lock \(path): \(String(cString: strerror(code)))")
            }
            guard fstat(descriptor, &info) == 0 else {
                close(descriptor)
                throw StoreError.storageFailure("cannot read \(path): \(String(cString: strerror(errno)))")
            }
            let id = FileID(info)
            held.insert(id)
            return (descriptor, id, !existed)
        }
        state = Mutex((claimed.0, claimed.1))
        createdFile = claimed.2
    }

    /// `flock(LOCK_EX | LOCK_NB)`, tried again for up to 20 ms while it says "in use": a child process
    /// this one is starting shares every open file description until it executes its program (close-on-
    /// exec closes them only then), so a lock released here a moment ago can still be held by that copy.
    /// Seen in the test suite, which starts processes while stores open and close. A server that really
    /// holds the file still holds it 20 ms later; the wait blocks only on that path.
    static func lock(_ descriptor: Int32) -> Int32 {
        for _ in 0..<20 {
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return 0 }
            guard errno == EWOULDBLOCK else { return -1 }
            usleep(1000)
        }
        return flock(descriptor, LOCK_EX | LOCK_NB)
    }

    /// Gives the file up; later calls do nothing.
    func release() {
        state.withLock { state in
            guard let (descriptor, id) = state else { return }
            state = nil
            Self.held.withLock { held in
                held.remove(id)
                close(descriptor)
            }
        }
    }

    deinit { release() }
}

extension DatabaseFileLock.FileID {
    init(_ info: stat) {
        self.init(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }
}
