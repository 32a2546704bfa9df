/// The opening handshake of a WebSocket (RFC 6455 §4): what a server checks in the client's request and
/// the `Sec-WebSocket-Accept` it answers with. Shared by the mock's engine (which answers the upgrade in
/// process and over a socket alike) and its tests.
public enum WebSocketHandshake {
    /// The GUID RFC 6455 §1.3 appends to the client's key.
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// The one protocol version RFC 6455 defines, and the only one a client sends today.
    public static let version = "13"

    /// `Sec-WebSocket-Accept` for a client's `Sec-WebSocket-Key`: base64 of the SHA-1 of the key and the
    /// GUID. RFC 6455's own example: `dGhlIHNhbXBsZSBub25jZQ==` gives `s3pPLMBiTxaQ9kYGzzhZRbK+xOo=`.
    public static func accept(forKey key: some StringProtocol) -> String {
        base64(SHA1.digest(Array((String(key) + guid).utf8)))
    }

    /// Whether `key` is a valid `Sec-WebSocket-Key`: base64 of 16 bytes (24 characters, `==` at the end).
    public static func isValidKey(_ key: some StringProtocol) -> Bool {
        let bytes = Array(key.utf8)
        guard bytes.count == 24, bytes[22] == UInt8(ascii: "="), bytes[23] == UInt8(ascii: "=") else { return false }
        // The 22nd character holds two bits of the 16th byte and four zero bits: one of A, Q, g, w.
        guard [UInt8(ascii: "A"), UInt8(ascii: "Q"), UInt8(ascii: "g"), UInt8(ascii: "w")].contains(bytes[21]) else {
            return false
        }
        return bytes[..<22].allSatisfy { alphabet.contains($0) }
    }

    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    package static func base64(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let b0 = bytes[index]
            let b1 = index + 1 < bytes.count ? bytes[index + 1] : 0
            let b2 = index + 2 < bytes.count ? bytes[index + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            out.append(index + 1 < bytes.count ? alphabet[Int((b1 & 0x0F) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(index + 2 < bytes.count ? alphabet[Int(b2 & 0x3F)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// SHA-1 (FIPS 180-4), for the WebSocket handshake only: RFC 6455 fixes this digest for
/// `Sec-WebSocket-Accept`, where it proves the server read the key, not that anything is secret. Never use
/// it for anything that needs a secure hash.
enum SHA1 {
    static func digest(_ message: [UInt8]) -> [UInt8] {
        var h: (UInt32, UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0)
        var padded = message
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        let bitLength = UInt64(message.count) &* 8
        for shift in stride(from: 56, through: 0, by: -8) { padded.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        var w = [UInt32](repeating: 0, count: 80)
        for chunk in stride(from: 0, to: padded.count, by: 64) {
            for i in 0..<16 {
                let at = chunk + 4 * i
                w[i] =
                    UInt32(padded[at]) << 24 | UInt32(padded[at + 1]) << 16 | UInt32(padded[at + 2]) << 8 | UInt32(padded[at + 3])
            }
            for i in 16..<80 { w[i] = rotate(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1) }
            var (a, b, c, d, e) = h
            for i in 0..<80 {
                let (f, k): (UInt32, UInt32)
                switch i {
                case 0..<20: (f, k) = ((b & c) | (~b & d), 0x5A82_7999)
                case 20..<40: (f, k) = (b ^ c ^ d, 0x6ED9_EBA1)
                case 40..<60: (f, k) = ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                default: (f, k) = (b ^ c ^ d, 0xCA62_C1D6)
                }
                let temp = rotate(a, 5) &+ f &+ e &+ k &+ w[i]
                (e, d, c, b, a) = (d, c, rotate(b, 30), a, temp)
            }
            h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e)
        }
        var out: [UInt8] = []
        for word in [h.0, h.1, h.2, h.3, h.4] {
            out += [
                UInt8(word >> 24), UInt8(truncatingIfNeeded: word >> 16), UInt8(truncatingIfNeeded: word >> 8),
                UInt8(truncatingIfNeeded: word),
            ]
        }
        return out
    }

    static func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 { value << count | value >> (32 - count) }
}
