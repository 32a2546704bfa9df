import Foundation

/// A header value taken apart at its parameters: `text/plain; charset="utf-8"` is `text/plain` with
/// `charset` = `utf-8`. Names are lowercased. Quoted values are unquoted, with their backslash escapes
/// read, and a `;` inside quotes belongs to the value (`filename="a; b.pdf"`).
package struct HeaderValue: Sendable {
    /// The part before the first `;` outside quotes, trimmed.
    package var value: String
    /// The parameters in order.
    package var parameters: [(name: String, value: String)]

    package init(parsing text: String) {
        var parts: [String] = []
        var current = ""
        var inQuotes = false
        var escaped = false
        for character in text {
            if escaped {
                current.append(character)
                escaped = false
            } else if inQuotes && character == "\\" {
                current.append(character)
                escaped = true
            } else if character == "\"" {
                inQuotes.toggle()
                current.append(character)
            } else if character == ";" && !inQuotes {
                parts.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        parts.append(current)
        value = parts[0].trimmingCharacters(in: .whitespaces)
        parameters = parts.dropFirst().compactMap { part in
            guard let equals = part.firstIndex(of: "=") else { return nil }
            let name = part[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            return (name, Self.unquote(part[part.index(after: equals)...].trimmingCharacters(in: .whitespaces)))
        }
    }

    /// A quoted-string's content with `\x` read as `x` (RFC 9110 §5.6.4); other values as they are.
    static func unquote(_ value: String) -> String {
        guard value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") else { return value }
        var output = ""
        var escaped = false
        for character in value.dropFirst().dropLast() {
            if escaped || character != "\\" {
                output.append(character)
                escaped = false
            } else {
                escaped = true
            }
        }
        return output
    }

    /// The media type of a `Content-Type` value, lowercased, without parameters or surrounding spaces:
    /// `Application/JSON ; charset=utf-8` is `application/json`. A media type holds no quotes, so the first
    /// `;` ends it; this reads bytes and allocates only the result, for servers that ask on every request.
    package static func mediaType(of text: String) -> String {
        let utf8 = text.utf8
        var start = utf8.startIndex
        var end = utf8.firstIndex(of: UInt8(ascii: ";")) ?? utf8.endIndex
        while start < end, utf8[start] == UInt8(ascii: " ") || utf8[start] == UInt8(ascii: "\t") { utf8.formIndex(after: &start) }
        while start < end {
            let last = utf8.index(before: end)
            guard utf8[last] == UInt8(ascii: " ") || utf8[last] == UInt8(ascii: "\t") else { break }
            end = last
        }
        var bytes = Array(utf8[start..<end])
        for index in bytes.indices where bytes[index] &- UInt8(ascii: "A") < 26 { bytes[index] |= 0x20 }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The first parameter called `name` (lowercase).
    package func parameter(_ name: String) -> String? {
        parameters.first { $0.name == name }?.value
    }

    /// An RFC 8187 extended value (`UTF-8''na%C3%AFve.txt`, as in `filename*`), decoded; `nil` for
    /// another charset or a malformed one.
    package static func extendedValue(_ text: String) -> String? {
        let parts = text.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        let charset = parts[0].lowercased()
        guard charset == "utf-8" || charset == "iso-8859-1" else { return nil }
        var bytes: [UInt8] = []
        var iterator = parts[2].utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(PercentEncoding.hexValue),
                let low = iterator.next().flatMap(PercentEncoding.hexValue)
            else { return nil }
            bytes.append(high << 4 | low)
        }
        if charset == "iso-8859-1" { return String(decoding: bytes.map { UInt16($0) }, as: UTF16.self) }
        return String(validating: bytes, as: UTF8.self)
    }
}
