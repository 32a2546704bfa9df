import Dispatch
import Foundation
import HammockJSON

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP connection that sends exactly the bytes a test gives, for requests no HTTP client would send.
///
/// Blocking socket calls run on a queue of the connection's own, never on the concurrency pool; every
/// read waits at most `timeout`: 60 s unless a test expecting silence says less. The default guards
/// against a hang; it measures nothing (a busy pool has delayed a server by 10 s in a full run).
final class RawConnection: @unchecked Sendable {
    // @unchecked: `descriptor` is written once in init and only read afterwards; every socket call goes
    // through `queue`, a serial queue, so calls never overlap.
    let descriptor: Int32
    private let queue = DispatchQueue(label: "RawConnection")

    struct ConnectionFailed: Error, CustomStringConvertible {
        let description: String
    }

    init(port: Int) throws {
        let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketDescriptor >= 0 else { throw ConnectionFailed(description: "socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(socketDescriptor)
            throw ConnectionFailed(description: "connect: \(errno)")
        }
        var on: Int32 = 1
        setsockopt(socketDescriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        descriptor = socketDescriptor
    }

    deinit { close(descriptor) }

    private func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in queue.async { continuation.resume(returning: body()) } }
    }

    /// Sends `bytes`; returns false if the peer closed or reset the connection first.
    @discardableResult
    func send(_ bytes: [UInt8]) async -> Bool {
        let descriptor = self.descriptor
        return await run {
            var offset = 0
            while offset < bytes.count {
                let sent = bytes[offset...].withUnsafeBytes { socketSend(descriptor, $0.baseAddress, $0.count) }
                if sent <= 0 { return false }
                offset += sent
            }
            return true
        }
    }

    @discardableResult
    func send(_ text: String) async -> Bool { await send(Array(text.utf8)) }

    /// Closes the sending direction (the server reads end of input).
    func shutdownOutput() { shutdown(descriptor, Int32(SHUT_WR)) }

    /// What arrives until the peer closes, or until nothing arrives for `timeout`.
    /// - Returns: the bytes, and whether the peer closed (end of input or reset).
    func readUntilClosed(timeout: Duration = .seconds(60)) async -> (bytes: [UInt8], closed: Bool) {
        let descriptor = self.descriptor
        let milliseconds = Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        return await run {
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                let ready = poll(&poller, 1, milliseconds)
                if ready <= 0 { return (received, false) }
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count <= 0 { return (received, true) }
                received += buffer[0..<count]
            }
        }
    }

    /// How a read to the end went.
    enum End: Equatable, Sendable {
        /// The peer closed (FIN).
        case closed
        /// The peer reset the connection (RST).
        case reset
        /// Nothing arrived for the timeout.
        case silent
    }

    /// What arrives until the peer closes or resets, or until nothing arrives for `timeout`; with
    /// `keep: false` the bytes are only counted (a 100 MB body costs no memory).
    func readToEnd(timeout: Duration = .seconds(60), keep: Bool = true) async -> (bytes: [UInt8], count: Int, end: End) {
        let descriptor = self.descriptor
        let milliseconds = Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        return await run {
            var received: [UInt8] = []
            var count = 0
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                if poll(&poller, 1, milliseconds) <= 0 { return (received, count, .silent) }
                let read = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if read == 0 { return (received, count, .closed) }
                if read < 0 { return (received, count, errno == ECONNRESET ? .reset : .closed) }
                count += read
                if keep { received += buffer[0..<read] }
            }
        }
    }

    /// Reads until the bytes read in this call contain `text`, the peer closes, or nothing arrives for
    /// `timeout`; returns those bytes as text.
    func read(until text: String, timeout: Duration = .seconds(60)) async -> String {
        let descriptor = self.descriptor
        let milliseconds = Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        let wanted = Array(text.utf8)
        return await run {
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while received.firstRange(of: wanted) == nil {
                var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, milliseconds) > 0 else { break }
                let read = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if read <= 0 { break }
                received += buffer[0..<read]
            }
            return String(decoding: received, as: UTF8.self)
        }
    }

    /// The bytes of one read: what has arrived, waiting at most `timeout` for something; empty when the
    /// peer closed or nothing came.
    func readSome(timeout: Duration = .seconds(60)) async -> [UInt8] {
        let descriptor = self.descriptor
        let milliseconds = Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        return await run {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, milliseconds) > 0 else { return [] }
            let read = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            return read > 0 ? Array(buffer[0..<read]) : []
        }
    }

    /// Reads until `count` complete responses have arrived (heads and Content-Length bodies), the peer
    /// closes, or nothing arrives for `timeout`.
    func readResponses(_ count: Int, timeout: Duration = .seconds(60)) async -> [RawResponse] {
        let descriptor = self.descriptor
        let milliseconds = Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        return await run {
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let responses = RawResponse.parse(received)
                if responses.count >= count { return responses }
                var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, milliseconds) > 0 else { return responses }
                let read = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if read <= 0 { return RawResponse.parse(received) }
                received += buffer[0..<read]
            }
        }
    }
}

/// `send(2)` without SIGPIPE, out of reach of ``RawConnection/send(_:)``'s name.
private func socketSend(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    #if os(Linux)
    send(descriptor, bytes, count, Int32(MSG_NOSIGNAL))
    #else
    send(descriptor, bytes, count, 0)
    #endif
}

/// An HTTP/1.1 response as bytes on the wire.
struct RawResponse: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
    var json: JSON? { try? JSON(parsing: body) }

    /// Every complete response in `bytes`.
    static func parse(_ bytes: [UInt8]) -> [RawResponse] {
        var responses: [RawResponse] = []
        var rest = bytes[...]
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        while let headEnd = rest.firstRange(of: separator) {
            let headText = String(decoding: rest[..<headEnd.lowerBound], as: UTF8.self)
            var lines = headText.components(separatedBy: "\r\n")
            let statusLine = lines.removeFirst().split(separator: " ")
            guard statusLine.count >= 2, let status = Int(statusLine[1]) else { break }
            let headers = lines.compactMap { line -> (String, String)? in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
            var response = RawResponse(status: status, headers: headers, body: [])
            let bodyStart = headEnd.upperBound
            let length =
                (100..<200).contains(status) || status == 204 || status == 304
                ? 0 : Int(response.header("Content-Length") ?? "0") ?? 0
            guard rest.endIndex - bodyStart >= length else { break }
            response.body = Array(rest[bodyStart..<bodyStart + length])
            responses.append(response)
            rest = rest[(bodyStart + length)...]
        }
        return responses
    }
}

#if os(Linux)
/// How many of the server's sockets on `port` still hold a descriptor, from `/proc/net/tcp`: entries
/// whose local port is `port`, that are not the listener (state 0A), and that are still attached to a
/// file (a non-zero inode; the kernel keeps closed sockets in TIME-WAIT or FIN-WAIT with inode 0).
/// A way to see from the same process whether the server closed its side of every connection.
func openServerSockets(port: Int) -> Int {
    guard let table = try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8) else { return 0 }
    let hexPort = String(format: ":%04X", port)
    return table.split(separator: "\n").dropFirst().filter { line in
        let columns = line.split(separator: " ")
        return columns.count > 9 && columns[1].hasSuffix(hexPort) && columns[3] != "0A" && columns[9] != "0"
    }.count
}
#endif
