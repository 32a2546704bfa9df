/// Eight bytes of a JSON string at a time: the parser and the serializer skip whole words that hold no
/// byte needing attention.
enum ByteScan {
    static let lowBits: UInt64 = 0x0101_0101_0101_0101
    static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// Whether any byte of `word` is a quote, a backslash or below 0x20. A byte is zero in `word ^ c`
    /// exactly where it equals `c`, and `(v - 0x01…) & ~v & 0x80…` is non-zero when some byte of `v` is
    /// zero (it may also flag a byte above a real hit, which only costs a closer look); bytes with the
    /// high bit set are never flagged, so UTF-8 beyond ASCII passes.
    @inline(__always)
    static func needsALook(_ word: UInt64) -> Bool {
        let quote = word ^ (lowBits &* UInt64(UInt8(ascii: "\"")))
        let backslash = word ^ (lowBits &* UInt64(UInt8(ascii: "\\")))
        let hasQuote = (quote &- lowBits) & ~quote
        let hasBackslash = (backslash &- lowBits) & ~backslash
        let hasControl = (word &- lowBits &* 0x20) & ~word
        return (hasQuote | hasBackslash | hasControl) & highBits != 0
    }

    /// The first offset from `start` in `bytes` whose word of eight needs a look, or the offset where
    /// fewer than eight bytes remain.
    @inline(__always)
    static func skipPlainWords(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard let base = bytes.baseAddress else { return start }
        let raw = UnsafeRawPointer(base)
        var offset = start
        while bytes.count - offset >= 8 {
            if needsALook(raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) { break }
            offset += 8
        }
        return offset
    }

    /// Whether no byte of `bytes` is a quote, a backslash or below 0x20: a string that is written as it is.
    /// The last few bytes are checked as one word too, padded with harmless bytes.
    @inline(__always)
    static func isPlain(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let words = skipPlainWords(in: bytes, from: 0)
        let remaining = bytes.count - words
        if remaining >= 8 { return false }
        guard remaining > 0, let base = bytes.baseAddress else { return true }
        var tail = lowBits &* UInt64(UInt8(ascii: "a"))
        withUnsafeMutableBytes(of: &tail) { $0.baseAddress?.copyMemory(from: base + words, byteCount: remaining) }
        return !needsALook(tail)
    }
}
