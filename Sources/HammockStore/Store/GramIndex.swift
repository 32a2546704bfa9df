import HammockJSON

/// Which rows of a string field hold each piece of text of one to three bytes (of the value lowercased,
/// in UTF-8, as `_like` and `q` compare), so a text condition reads posting lists instead of every record.
///
/// A needle of one to three bytes is a gram itself: its rows are exactly the records that contain it. A
/// longer needle is in a record only if every trigram of it is, so the intersection of their rows is a
/// superset of the answer that the records then confirm (``candidates(for:)`` says which it gave). Grams
/// are bytes, not characters: a UTF-8 needle occurs in a UTF-8 text exactly where its bytes do, so the
/// index agrees with the byte-wise match of ``TextMatch``.
///
/// Cost, measured on generated people (docs/benchmarks.md): a name of 13 letters has about 33 distinct
/// grams, each one row in one posting list, 2 bytes while the gram is rare in its 65,536-row chunk and a
/// bit once it is common.
struct GramIndex: Sendable {
    /// Rows by gram (``gram(_:)``).
    private(set) var postings: [UInt32: RowSet] = [:]
    /// Rows whose value is a string: what a needle with no bytes matches.
    private(set) var textRows = RowSet()

    /// `bytes` (one to three) as one number: the length above the bytes, so "a" and "a\0" differ.
    static func gram(_ bytes: UnsafeBufferPointer<UInt8>.SubSequence) -> UInt32 {
        var gram = UInt32(bytes.count) << 24
        var shift: UInt32 = 16
        for byte in bytes {
            gram |= UInt32(byte) << shift
            shift &-= 8
        }
        return gram
    }

    /// The distinct grams of `text` (lowercased UTF-8), sorted.
    static func grams(of text: [UInt8]) -> [UInt32] {
        var grams: [UInt32] = []
        grams.reserveCapacity(text.count * 3)
        text.withUnsafeBufferPointer { bytes in
            for start in bytes.indices {
                for length in 1...3 where start + length <= bytes.count {
                    grams.append(gram(bytes[start..<(start + length)]))
                }
            }
        }
        grams.sort()
        // Duplicates removed in place.
        var kept = 0
        for index in grams.indices where kept == 0 || grams[kept - 1] != grams[index] {
            grams[kept] = grams[index]
            kept += 1
        }
        grams.removeSubrange(kept...)
        return grams
    }

    /// Adds `row`, whose value is `value`.
    mutating func insert(row: Int, value: JSON) {
        guard case .string(let text) = value else { return }
        textRows.insert(row)
        for gram in Self.grams(of: TextMatch.lowercased(text)) { postings[gram, default: RowSet()].insert(row) }
    }

    /// Removes `row`, whose value was `value`.
    mutating func remove(row: Int, value: JSON) {
        guard case .string(let text) = value else { return }
        textRows.remove(row)
        for gram in Self.grams(of: TextMatch.lowercased(text)) {
            guard postings[gram]?.remove(row) == true else { continue }
            if postings[gram]?.isEmpty == true { postings[gram] = nil }
        }
    }

    /// The rows that may hold every part of `pattern` (lowercased UTF-8 parts, as ``ListQuery`` splits a
    /// `_like` value at `%`; one part for `q`), and whether they are exactly the rows that match: true
    /// for one part of at most three bytes, or only empty parts.
    func candidates(for pattern: [[UInt8]]) -> (rows: RowSet, exact: Bool) {
        let parts = pattern.filter { !$0.isEmpty }
        // A needle's pieces, rarest first: the intersection then shrinks from its smallest start.
        var pieces: [RowSet] = []
        for part in parts {
            part.withUnsafeBufferPointer { bytes in
                if bytes.count <= 3 {
                    pieces.append(postings[Self.gram(bytes[...])] ?? RowSet())
                } else {
                    for start in 0...(bytes.count - 3) {
                        pieces.append(postings[Self.gram(bytes[start..<(start + 3)])] ?? RowSet())
                    }
                }
            }
        }
        guard !pieces.isEmpty else { return (textRows, true) }
        pieces.sort { $0.count < $1.count }
        var rows = pieces[0]
        for piece in pieces.dropFirst() {
            if rows.isEmpty { break }
            rows = rows.intersection(piece)
        }
        return (rows, pattern.count == 1 && parts.count == 1 && parts[0].count <= 3)
    }

    /// Bytes held by the posting lists.
    var byteCount: Int { postings.values.reduce(textRows.byteCount) { $0 + 48 + $1.byteCount } }
}
