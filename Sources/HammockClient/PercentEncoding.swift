/// Strict percent-encoding: only RFC 3986 unreserved characters stay as they are. Shared with the
/// other Hammock modules (observable resources encode query parameters with it).
package enum PercentEncoding {
    static let hex = Array("0123456789ABCDEF".utf8)

    @inline(__always)
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// For path segments and query items: `/` → `%2F`, `+` → `%2B`, space → `%20`.
    package static func encode(_ text: String) -> String { encode(text, spaceAsPlus: false) }

    /// For `application/x-www-form-urlencoded` bodies: like ``encode(_:)`` but a space is `+`.
    static func encodeForm(_ text: String) -> String { encode(text, spaceAsPlus: true) }

    static func encode(_ text: String, spaceAsPlus: Bool) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) {
                output.append(byte)
            } else if spaceAsPlus && byte == UInt8(ascii: " ") {
                output.append(UInt8(ascii: "+"))
            } else {
                output += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
