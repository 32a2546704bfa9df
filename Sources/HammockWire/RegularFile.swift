#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Opens `path` for reading without blocking (a FIFO put there would block `open` until a writer came),
/// and only if it is a regular file then; -1 with `errno` set otherwise (`EINVAL` for not a regular
/// file). The server's file stubs and the client's file uploads both read through it.
package func openRegularFileForReading(_ path: String) -> Int32 {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    guard descriptor >= 0 else { return descriptor }
    var info = stat()
    guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
        close(descriptor)
        errno = EINVAL
        return -1
    }
    return descriptor
}
