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
///
/// Writes reach the posting lists in batches: a new row waits with its grams among the last
/// ``pendingLimit`` rows, which then go in gram by gram, each list touched once for every waiting row
/// that has its gram. One by one, a `POST` of two short strings touched some 70 lists, each a few cache
/// misses away, and on this shared machine that is the work that slows most when another tenant takes the
/// caches (docs/benchmarks.md, "Seventh step"). A search checks the waiting rows' grams itself.
struct GramIndex: Sendable {
    /// Rows by gram (``gram(_:)``), but for the rows in `pending`.
    private(set) var postings: [UInt32: RowSet] = [:]
    /// Rows whose value is a string: what a needle with no bytes matches (the waiting rows too).
    private(set) var textRows = RowSet()
    /// Rows not in `postings` yet, with their grams, sorted.
    private var pending: [(row: Int, grams: [UInt32])] = []
    /// How many rows wait at most: 32 rows of two strings share their one-letter grams and many of their
    /// two-letter ones, and a search checks 32 short sorted lists, well under a microsecond.
    static let pendingLimit = 32

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
        pending.append((row, Self.grams(of: TextMatch.lowercased(text))))
        if pending.count >= Self.pendingLimit { flush() }
    }

    /// Puts the waiting rows in the posting lists, gram by gram, rows ascending within each.
    mutating func flush() {
        guard !pending.isEmpty else { return }
        // (gram, row) as one number: sorting them groups each gram's rows, in order.
        var entries: [UInt64] = []
        entries.reserveCapacity(pending.reduce(0) { $0 + $1.grams.count })
        for (row, grams) in pending {
            for gram in grams { entries.append(UInt64(gram) << 32 | UInt64(UInt32(truncatingIfNeeded: row))) }
        }
        pending.removeAll(keepingCapacity: true)
        entries.sort()
        var start = 0
        while start < entries.count {
            let gram = entries[start] >> 32
            var end = start + 1
            while end < entries.count, entries[end] >> 32 == gram { end += 1 }
            postings[UInt32(truncatingIfNeeded: gram), default: RowSet()].insert(
                contentsOf: entries[start..<end].lazy.map { Int(UInt32(truncatingIfNeeded: $0)) })
            start = end
        }
    }

    /// Removes `row`, whose value was `value`.
    mutating func remove(row: Int, value: JSON) {
        guard case .string(let text) = value else { return }
        textRows.remove(row)
        // A waiting row is in no posting list yet.
        if let position = pending.firstIndex(where: { $0.row == row }) {
            pending.remove(at: position)
            return
        }
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
        // The grams a row must have: the part itself when it is short, else each of its trigrams.
        var grams: [UInt32] = []
        for part in parts {
            part.withUnsafeBufferPointer { bytes in
                if bytes.count <= 3 {
                    grams.append(Self.gram(bytes[...]))
                } else {
                    for start in 0...(bytes.count - 3) { grams.append(Self.gram(bytes[start..<(start + 3)])) }
                }
            }
        }
        guard !grams.isEmpty else { return (textRows, true) }
        // Their rows, rarest first: the intersection then shrinks from its smallest start.
        var pieces = grams.map { postings[$0] ?? RowSet() }
        pieces.sort { $0.count < $1.count }
        var rows = pieces[0]
        for piece in pieces.dropFirst() {
            if rows.isEmpty { break }
            rows = rows.intersection(piece)
        }
        for (row, rowGrams) in pending where grams.allSatisfy({ Self.contains(rowGrams, $0) }) { rows.insert(row) }
        return (rows, pattern.count == 1 && parts.count == 1 && parts[0].count <= 3)
    }

    /// Whether `sorted` (ascending) holds `gram`.
    private static func contains(_ sorted: [UInt32], _ gram: UInt32) -> Bool {
        var (low, high) = (0, sorted.count)
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < gram { low = middle + 1 } else { high = middle }
        }
        return low < sorted.count && sorted[low] == gram
    }

    /// Bytes held by the posting lists and the waiting rows.
    var byteCount: Int {
        let waiting = pending.reduce(0) { $0 + 40 + 4 * $1.grams.count }
        return postings.values.reduce(textRows.byteCount + waiting) { $0 + 48 + $1.byteCount }
    }
}
