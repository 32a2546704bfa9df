import Foundation
import HammockWire

/// Base64 as blobs travel in JSON.
package enum Base64 {
    package static func decode(_ text: String) -> [UInt8]? {
        Data(base64Encoded: text).map { [UInt8]($0) }
    }

    package static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
    }
}

/// A strict check of the ISO 8601 forms dates take in bodies:
/// `YYYY-MM-DD`, optionally followed by `THH:MM[:SS[.fraction]]` and `Z` or `±HH:MM`.
package enum ISO8601 {
    package static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var index = 0
        func digits(_ count: Int, max: Int) -> Bool {
            guard index + count <= bytes.count else { return false }
            var value = 0
            for offset in 0..<count {
                let digit = bytes[index + offset] &- UInt8(ascii: "0")
                guard digit < 10 else { return false }
                value = value * 10 + Int(digit)
            }
            index += count
            return value <= max
        }
        func expect(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }
        guard digits(4, max: 9999), expect(UInt8(ascii: "-")) else { return false }
        let year = (0..<4).reduce(0) { $0 * 10 + Int(bytes[$1] - 48) }
        let monthStart = index
        guard digits(2, max: 12), expect(UInt8(ascii: "-")), digits(2, max: 31) else { return false }
        let month = Int(bytes[monthStart] - 48) * 10 + Int(bytes[monthStart + 1] - 48)
        let day = Int(bytes[monthStart + 3] - 48) * 10 + Int(bytes[monthStart + 4] - 48)
        // A day that exists in that month of that year (2023-02-29 does not; 2024-02-29 does).
        guard month >= 1, day >= 1, day <= HTTPDate.daysIn(month: month, year: year) else { return false }
        if index == bytes.count { return true }
        guard expect(UInt8(ascii: "T")) || expect(UInt8(ascii: "t")) || expect(UInt8(ascii: " ")) else { return false }
        guard digits(2, max: 23), expect(UInt8(ascii: ":")), digits(2, max: 59) else { return false }
        if expect(UInt8(ascii: ":")) {
            guard digits(2, max: 60) else { return false }
            if expect(UInt8(ascii: ".")) {
                let start = index
                while index < bytes.count, bytes[index] &- UInt8(ascii: "0") < 10 { index += 1 }
                guard index > start else { return false }
            }
        }
        if index == bytes.count { return true }  // local time
        if expect(UInt8(ascii: "Z")) || expect(UInt8(ascii: "z")) { return index == bytes.count }
        guard expect(UInt8(ascii: "+")) || expect(UInt8(ascii: "-")) else { return false }
        guard digits(2, max: 23) else { return false }
        _ = expect(UInt8(ascii: ":"))
        guard digits(2, max: 59) else { return false }
        return index == bytes.count
    }
}
