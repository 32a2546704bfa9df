extension JSONParser {
    /// Parses a string starting at its opening quote and leaves `position` after the closing quote.
    mutating func parseString() throws(JSONParsingError) -> String {
        position += 1  // opening quote
        let start = position
        var isASCII = true
        // Fast path: no escapes. Eight bytes at a time while none of them needs a look (a quote, a
        // backslash, a control character), then byte by byte to the closing quote.
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while bytes.count - position >= 8 {
                let word = raw.loadUnaligned(fromByteOffset: position, as: UInt64.self)
                if ByteScan.needsALook(word) { break }
                if word & ByteScan.highBits != 0 { isASCII = false }
                position += 8
            }
        }
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<position])
                position += 1
                return try makeString(slice, isASCII: isASCII, start: start)
            }
            if byte == UInt8(ascii: "\\") { return try parseEscapedString(from: start) }
            if byte < 0x20 { throw error(.controlCharacterInString) }
            if byte >= 0x80 { isASCII = false }
            position += 1
        }
        throw error(.unexpectedEnd)
    }

    func makeString(
        _ slice: UnsafeBufferPointer<UInt8>, isASCII: Bool, start: Int
    ) throws(JSONParsingError)
        -> String
    {
        var string = String(decoding: slice, as: UTF8.self)
        if isASCII { return string }
        // Decoding replaces what is not UTF-8 with U+FFFD, so the bytes come back unchanged exactly when
        // they were valid. (`String(validating:as:)` is generic over the encoding and, unspecialized,
        // looks up type metadata on every call.)
        let intact = string.withUTF8 { decoded in Self.sameBytes(decoded, slice) }
        guard intact else { throw error(.invalidUTF8, at: start + Self.firstInvalidUTF8Offset(slice)) }
        return string
    }

    @inline(__always)
    static func sameBytes(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
        guard left.count == right.count else { return false }
        var offset = 0
        while offset < left.count {
            if left[offset] != right[offset] { return false }
            offset += 1
        }
        return true
    }

    /// Steps over a key whose bytes are exactly `expected`'s, quotes included, and says whether it did.
    /// Only for keys with no quote, backslash or control character, whose raw bytes are their value.
    @inline(__always)
    mutating func skipKey(matching expected: String) -> Bool {
        let length = expected.utf8.count
        guard bytes.count - position >= length + 2, bytes[position + length + 1] == UInt8(ascii: "\"") else {
            return false
        }
        let raw = UnsafeBufferPointer(rebasing: bytes[(position + 1)..<(position + 1 + length)])
        let equal = expected.utf8.withContiguousStorageIfAvailable { wanted in Self.sameBytes(raw, wanted) } ?? false
        if equal { position += length + 2 }
        return equal
    }

    /// Continues a string after its first backslash, decoding escapes into the scratch buffer.
    mutating func parseEscapedString(from start: Int) throws(JSONParsingError) -> String {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<position]))
        var isASCII = !scratch.contains { $0 >= 0x80 }
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                let decoded = scratch
                let result = decoded.withUnsafeBufferPointer { buffer in
                    Result { () throws(JSONParsingError) in try makeString(buffer, isASCII: isASCII, start: start) }
                }
                return try result.get()
            case UInt8(ascii: "\\"):
                position += 1
                guard position < bytes.count else { throw error(.unexpectedEnd) }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(escape)
                case UInt8(ascii: "b"): scratch.append(0x08)
                case UInt8(ascii: "f"): scratch.append(0x0C)
                case UInt8(ascii: "n"): scratch.append(0x0A)
                case UInt8(ascii: "r"): scratch.append(0x0D)
                case UInt8(ascii: "t"): scratch.append(0x09)
                case UInt8(ascii: "u"):
                    let scalar = try parseUnicodeEscape()
                    if scalar.value >= 0x80 { isASCII = false }
                    // A scalar always has a UTF-8 encoding.
                    if let encoded = UTF8.encode(scalar) { scratch.append(contentsOf: encoded) }
                default: throw error(.invalidEscape, at: position - 2)
                }
            default:
                if byte < 0x20 { throw error(.controlCharacterInString) }
                if byte >= 0x80 { isASCII = false }
                scratch.append(byte)
                position += 1
            }
        }
        throw error(.unexpectedEnd)
    }

    /// Parses the hex digits after `\u` (and a following low surrogate escape, if needed).
    mutating func parseUnicodeEscape() throws(JSONParsingError) -> Unicode.Scalar {
        let escapeStart = position - 2
        let first = try parseHex4(escapeStart: escapeStart)
        if first >= 0xD800 && first < 0xDC00 {
            // High surrogate: a low surrogate escape must follow.
            guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                bytes[position + 1] == UInt8(ascii: "u")
            else { throw error(.invalidUnicodeEscape, at: escapeStart) }
            position += 2
            let second = try parseHex4(escapeStart: escapeStart)
            guard second >= 0xDC00 && second < 0xE000 else { throw error(.invalidUnicodeEscape, at: escapeStart) }
            let value = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            guard let scalar = Unicode.Scalar(value) else { throw error(.invalidUnicodeEscape, at: escapeStart) }
            return scalar
        }
        guard let scalar = Unicode.Scalar(first) else { throw error(.invalidUnicodeEscape, at: escapeStart) }
        return scalar
    }

    mutating func parseHex4(escapeStart: Int) throws(JSONParsingError) -> UInt32 {
        guard bytes.count - position >= 4 else { throw error(.invalidUnicodeEscape, at: escapeStart) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error(.invalidUnicodeEscape, at: escapeStart)
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    /// The offset of the first byte that breaks UTF-8 in `slice` (for error messages only).
    static func firstInvalidUTF8Offset(_ slice: UnsafeBufferPointer<UInt8>) -> Int {
        var decoder = UTF8()
        var iterator = slice.makeIterator()
        var offset = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): offset += UTF8.width(scalar)
            case .emptyInput, .error: return offset
            }
        }
    }
}
