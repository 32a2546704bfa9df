import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An HTTP/1.1 server on 127.0.0.1 that answers from a closure and records every request exactly as it
/// came over the wire: for tests of what a client sends (one `Cookie` line or two, which credentials
/// follow a redirect) and of how it copes with slow servers.
///
/// ```swift
/// let server = try RecordingHTTPServer { request in
///     request.target == "/start" ? .redirect(to: "http://localhost:\(other.port)/echo") : .text("ok")
/// }
/// defer { server.stop() }
/// // … send requests to http://127.0.0.1:\(server.port) …
/// #expect(server.requests.first?.values(of: "Authorization") == ["Bearer secret"])
/// ```
/// Each connection is served on a thread of its own (never the concurrency pool's) and closed after
/// one response.
public final class RecordingHTTPServer: Sendable {
    /// A request as received.
    public struct Request: Sendable {
        /// The method, as sent.
        public var method: String
        /// The request target (`/path?query`), as sent.
        public var target: String
        /// Every header line, in order, with names as sent.
        public var headerLines: [(name: String, value: String)]
        /// The body (by `Content-Length`).
        public var body: [UInt8]

        /// The values of every line named `name` (case-insensitive), one per line.
        public func values(of name: String) -> [String] {
            headerLines.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
        }
    }

    /// What to answer.
    public struct Reply: Sendable {
        /// The status code.
        public var status: Int
        /// Header lines; `Content-Length` and `Connection: close` are added.
        public var headers: [(name: String, value: String)]
        /// The body.
        public var body: [UInt8]
        /// If set, the head goes out at once and the body one byte at a time, this far apart.
        public var trickle: Duration?

        /// A reply.
        public init(
            status: Int = 200, headers: [(name: String, value: String)] = [], body: [UInt8] = [], trickle: Duration? = nil
        ) {
            self.status = status
            self.headers = headers
            self.body = body
            self.trickle = trickle
        }

        /// A `text/plain` reply.
        public static func text(_ text: String, status: Int = 200) -> Reply {
            Reply(status: status, headers: [("Content-Type", "text/plain")], body: Array(text.utf8))
        }

        /// A `302 Found` to `location`.
        public static func redirect(to location: String) -> Reply {
            Reply(status: 302, headers: [("Location", location)])
        }
    }

    struct StartFailed: Error, CustomStringConvertible {
        let description: String
    }

    /// The port it listens on.
    public let port: Int
    private let listener: Int32
    private let received = Mutex<[Request]>([])
    private let respond: @Sendable (Request) -> Reply

    /// Starts listening on a free port of 127.0.0.1.
    public init(_ respond: @escaping @Sendable (Request) -> Reply) throws {
        self.respond = respond
        #if canImport(Darwin)
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #else
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        guard descriptor >= 0 else { throw StartFailed(description: "socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(descriptor, raw, length) == 0 && listen(descriptor, 64) == 0
                    && getsockname(descriptor, raw, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw StartFailed(description: "bind: \(errno)")
        }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        listener = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Every request so far, in the order they arrived.
    public var requests: [Request] { received.withLock { $0 } }

    /// Stops accepting; connections being served finish.
    public func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
    }

    deinit { close(listener) }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else {
                if errno == EINTR { continue }
                return
            }
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
            Thread.detachNewThread { [self] in serve(connection) }
        }
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        guard let request = Self.readRequest(connection) else { return }
        received.withLock { $0.append(request) }
        let reply = respond(request)
        var head = "HTTP/1.1 \(reply.status) \(reply.status == 200 ? "OK" : "Status")\r\n"
        for (name, value) in reply.headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(reply.body.count)\r\nConnection: close\r\n\r\n"
        guard Self.write(Array(head.utf8), to: connection) else { return }
        if let trickle = reply.trickle {
            for byte in reply.body {
                Thread.sleep(forTimeInterval: Double(trickle.components.seconds) + Double(trickle.components.attoseconds) / 1e18)
                guard Self.write([byte], to: connection) else { return }
            }
        } else {
            _ = Self.write(reply.body, to: connection)
        }
        shutdown(connection, Int32(SHUT_WR))
        var scratch = [UInt8](repeating: 0, count: 1024)
        while scratch.withUnsafeMutableBytes({ recv(connection, $0.baseAddress, $0.count, 0) }) > 0 {}
    }

    static func readRequest(_ connection: Int32) -> Request? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let separator = Array("\r\n\r\n".utf8)
        while bytes.firstRange(of: separator) == nil {
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return nil }
            bytes += buffer[0..<count]
        }
        guard let end = bytes.firstRange(of: separator) else { return nil }
        let lines = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = lines[0].split(separator: " ")
        guard requestLine.count == 3 else { return nil }
        let headerLines = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var request = Request(method: String(requestLine[0]), target: String(requestLine[1]), headerLines: headerLines, body: [])
        let length = request.values(of: "Content-Length").first.flatMap { Int($0) } ?? 0
        var body = Array(bytes[end.upperBound...])
        while body.count < length {
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            body += buffer[0..<count]
        }
        request.body = Array(body.prefix(length))
        return request
    }

    static func write(_ bytes: [UInt8], to connection: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            #if canImport(Darwin)
            let sent = bytes[offset...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, 0) }
            #else
            let sent = bytes[offset...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            #endif
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }
}
