import Foundation
import Synchronization

/// A WebSocket client that writes every frame by hand over a ``RawConnection``: masked or not, split in
/// fragments, with any opcode or close payload, so that tests can send what no library would.
final class RawWebSocket: Sendable {
    let connection: RawConnection
    private let received = LockedBytes()

    /// A frame as the server sent it.
    struct Frame: Equatable, Sendable {
        var opcode: UInt8
        var fin: Bool
        var payload: [UInt8]

        var text: String { String(decoding: payload, as: UTF8.self) }
        /// A close frame's code.
        var closeCode: Int? { opcode == 8 && payload.count >= 2 ? Int(payload[0]) << 8 | Int(payload[1]) : nil }
        var closeReason: String { String(decoding: payload.dropFirst(2), as: UTF8.self) }
    }

    init(port: Int) throws { connection = try RawConnection(port: port) }

    /// The RFC 6455 §1.3 example key, whose accept value is `s3pPLMBiTxaQ9kYGzzhZRbK+xOo=`.
    static let sampleKey = "dGhlIHNhbXBsZSBub25jZQ=="

    /// Sends the opening handshake and returns the answer's head (up to the blank line); bytes after it
    /// are kept for ``nextFrame(timeout:)``.
    func handshake(_ path: String, key: String = sampleKey, extra: String = "") async -> String {
        await connection.send(
            "GET \(path) HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\(extra)\r\n"
        )
        while true {
            let bytes = received.take()
            if let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) {
                received.put(Array(bytes[end.upperBound...]))
                return String(decoding: bytes[..<end.upperBound], as: UTF8.self)
            }
            received.put(bytes)
            let more = await connection.readSome()
            if more.isEmpty { return String(decoding: bytes, as: UTF8.self) }
            received.append(more)
        }
    }

    /// Sends one frame: masked unless told otherwise (a client must mask).
    func send(opcode: UInt8, _ payload: [UInt8], fin: Bool = true, masked: Bool = true, rsv: UInt8 = 0) async {
        var frame: [UInt8] = [(fin ? 0x80 : 0) | rsv << 4 | opcode]
        let maskBit: UInt8 = masked ? 0x80 : 0
        if payload.count < 126 {
            frame.append(maskBit | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            frame += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((payload.count >> shift) & 0xFF)) }
        }
        if masked {
            let key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
            frame += key
            frame += payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
        } else {
            frame += payload
        }
        await connection.send(frame)
    }

    func send(text: String) async { await send(opcode: 1, Array(text.utf8)) }

    func sendClose(_ code: Int, reason: String = "") async {
        await send(opcode: 8, [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8))
    }

    /// The next frame the server sends; `nil` when the connection closes first or nothing comes in `timeout`.
    func nextFrame(timeout: Duration = .seconds(60)) async -> Frame? {
        while true {
            let bytes = received.take()
            if let (frame, used) = Self.parse(bytes) {
                received.put(Array(bytes[used...]))
                return frame
            }
            received.put(bytes)
            let more = await connection.readSome(timeout: timeout)
            if more.isEmpty { return nil }
            received.append(more)
        }
    }

    /// Frames until the server's close frame (included) or the end of the connection.
    func framesUntilClose(timeout: Duration = .seconds(60)) async -> [Frame] {
        var frames: [Frame] = []
        while let frame = await nextFrame(timeout: timeout) {
            frames.append(frame)
            if frame.opcode == 8 { break }
        }
        return frames
    }

    static func parse(_ bytes: [UInt8]) -> (Frame, Int)? {
        guard bytes.count >= 2 else { return nil }
        var length = Int(bytes[1] & 0x7F)
        var at = 2
        if length == 126 {
            guard bytes.count >= 4 else { return nil }
            length = Int(bytes[2]) << 8 | Int(bytes[3])
            at = 4
        } else if length == 127 {
            guard bytes.count >= 10 else { return nil }
            length = bytes[2..<10].reduce(0) { $0 << 8 | Int($1) }
            at = 10
        }
        if bytes[1] & 0x80 != 0 { at += 4 }  // a server never masks; read past a key all the same
        guard bytes.count >= at + length else { return nil }
        return (Frame(opcode: bytes[0] & 0x0F, fin: bytes[0] & 0x80 != 0, payload: Array(bytes[at..<(at + length)])), at + length)
    }
}

/// Bytes read but not yet parsed.
final class LockedBytes: Sendable {
    private let bytes = Mutex<[UInt8]>([])
    func take() -> [UInt8] {
        bytes.withLock { value in
            defer { value = [] }
            return value
        }
    }
    func put(_ new: [UInt8]) { bytes.withLock { $0 = new + $0 } }
    func append(_ new: [UInt8]) { bytes.withLock { $0 += new } }
}
