public import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension FileHandle {
    /// What `availableData` gives (the bytes there, waiting for some; empty at the end), without its
    /// trap: FoundationNetworking's `availableData` ends the process on `EINTR`, which a signal such as
    /// an exit test's child ending (SIGCHLD) causes in a thread blocked on a pipe (a fresh clone's test
    /// run crashed so). Retries on `EINTR`; any other error reads as the end.
    public func readAvailable(upTo count: Int = 64 << 10) -> Data {
        var buffer = [UInt8](repeating: 0, count: count)
        while true {
            let read = buffer.withUnsafeMutableBytes { Self.systemRead(fileDescriptor, $0.baseAddress, $0.count) }
            if read >= 0 { return Data(buffer[0..<read]) }
            if errno != EINTR { return Data() }
        }
    }

    private static func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.read(descriptor, buffer, count)
        #else
        Darwin.read(descriptor, buffer, count)
        #endif
    }
}
