import HammockJSON

/// One field's values across a table, in the order a list query sorts them: by value (``ListQuery``'s
/// order, `null` first), then by key. Each entry is its record's row (``RecordTable``); values and keys
/// are read from the records.
///
/// A run of equal values is a contiguous range whose records are in key order, which answers an equality
/// filter with a page as a slice; the whole index answers a sort. Entries live in chunks of at most
/// `chunkLimit`, so a write moves a few hundred entries, not the table; `positions` says where each
/// chunk begins, so a position is found in log2(chunks) steps (a walk over 4,000 chunks was most of a
/// sorted page's 234 µs at a million records).
struct FieldIndex: Sendable {
    /// The field, and where records hold it among their fields (a guess checked by name: see
    /// ``JSONObject/value(at:named:)``).
    let field: String
    let column: Int
    /// The key field, and where records hold it.
    let keyName: String
    let keyColumn: Int
    /// Where a chunk splits in two.
    let chunkLimit: Int

    /// Rows, in the index's order. Values are read from the records (`records`, the table's rows, in
    /// every call that compares): an entry that held its value and key cost 72 bytes, a row costs 4, and
    /// six indexes on a million records held 430 MB that way.
    private(set) var chunks: [[Int32]] = []
    /// The value and key of each chunk's last entry: a search finds its chunk on these without reading a
    /// record (11 of the 20 steps of a search at a million records, each a cache miss or three), and reads
    /// records only inside the chunk.
    private var lasts: [Fence] = []
    /// Where each chunk begins.
    private var positions = ChunkPositions()
    private(set) var count = 0
    /// Where the last insert went, as a guess for the next: a new record with a common value (a status, a
    /// boolean, a null) has a key above the others, so it goes right after the last record of that value,
    /// often the one inserted before it. Two comparisons confirm the guess instead of a search of about
    /// twenty, as B-trees keep a fast path for inserts at their rightmost leaf. Any write may move entries:
    /// the guess is checked, never trusted.
    private var lastInsert: (chunk: Int, offset: Int, row: Int32)?

    struct Fence: Sendable {
        var value: JSON
        var key: JSON
    }

    /// An index on `field` of `records` (in any order) with their rows; records hold `field` at
    /// `column` and the key at `keyColumn`, or find them by name.
    init(
        field: String, column: Int, keyName: String, keyColumn: Int, records: [(row: Int, record: StoredRecord)],
        chunkLimit: Int = 512
    ) {
        self.field = field
        self.column = column
        self.keyName = keyName
        self.keyColumn = keyColumn
        self.chunkLimit = max(2, chunkLimit)
        // Sorted with their values beside them (read once each: a sort that read them from the records
        // would chase two pointers per comparison), then only the rows are kept.
        struct Entry {
            let value: JSON
            let key: JSON
            let row: Int32
        }
        var entries = records.map {
            Entry(
                value: $0.record.fields.value(at: column, named: field) ?? .null,
                key: $0.record.fields.value(at: keyColumn, named: keyName) ?? .null, row: Int32($0.row))
        }
        entries.sort { Self.order($0.value, $0.key, $1.value, $1.key) < 0 }
        count = entries.count
        var start = 0
        while start < entries.count {
            let end = min(start + self.chunkLimit / 2, entries.count)
            chunks.append(entries[start..<end].map(\.row))
            lasts.append(Fence(value: entries[end - 1].value, key: entries[end - 1].key))
            start = end
        }
        positions = ChunkPositions(sizes: chunks.map(\.count))
    }

    /// -1, 0 or 1: by value, then by key.
    static func order(_ leftValue: JSON, _ leftKey: JSON, _ rightValue: JSON, _ rightKey: JSON) -> Int {
        let byValue = ListQuery.compare(leftValue, rightValue)
        if byValue != 0 { return byValue }
        if keyPrecedes(leftKey, rightKey) { return -1 }
        return keyPrecedes(rightKey, leftKey) ? 1 : 0
    }

    /// The indexed value of `row`, which `records` holds.
    @inline(__always)
    func value(of row: Int32, in records: [StoredRecord?]) -> JSON {
        records[Int(row)]?.fields.value(at: column, named: field) ?? .null
    }

    /// The key of `row`, which `records` holds.
    @inline(__always)
    private func key(of row: Int32, in records: [StoredRecord?]) -> JSON {
        records[Int(row)]?.fields.value(at: keyColumn, named: keyName) ?? .null
    }

    /// -1, 0 or 1: the entry of `row` against `(value, key)`; the key is read only when the values tie.
    @inline(__always)
    private func order(of row: Int32, _ value: JSON, _ key: JSON, in records: [StoredRecord?]) -> Int {
        let byValue = ListQuery.compare(self.value(of: row, in: records), value)
        if byValue != 0 { return byValue }
        let rowKey = self.key(of: row, in: records)
        if keyPrecedes(rowKey, key) { return -1 }
        return keyPrecedes(key, rowKey) ? 1 : 0
    }

    /// Adds `row`, whose value is `value` and key `key`; `records` holds the rows already in the index.
    mutating func insert(row: Int32, value: JSON, key: JSON, in records: [StoredRecord?]) {
        count += 1
        let inserted = (row: row, fence: Fence(value: value, key: key))
        guard !chunks.isEmpty else {
            chunks = [[row]]
            lasts = [inserted.fence]
            positions = ChunkPositions(sizes: [1])
            return
        }
        // After every entry (a generated key in the key's index, a new largest value): appended, without
        // a search.
        let lastChunk = chunks.count - 1
        if Self.order(lasts[lastChunk].value, lasts[lastChunk].key, value, key) < 0 {
            chunks[lastChunk].append(row)
            lasts[lastChunk] = inserted.fence
            positions.add(1, to: lastChunk)
            splitIfFull(lastChunk, in: records, inserted: inserted)
            return
        }
        // Right after the last insert, or the first chunk whose last entry follows the new one (the last
        // chunk if none does).
        var (chunk, offset) = placeAfterLastInsert(of: value, key, in: records) ?? place(of: value, key, in: records)
        if chunk == chunks.count {
            chunk -= 1
            offset = chunks[chunk].count
        }
        if offset == chunks[chunk].count { lasts[chunk] = inserted.fence }
        chunks[chunk].insert(row, at: offset)
        positions.add(1, to: chunk)
        lastInsert = (chunk, offset, row)
        splitIfFull(chunk, in: records, inserted: inserted)
    }

    /// The place right after the last insert's entry, if that entry is still where it went, precedes
    /// `(value, key)`, and the entry after it (in its chunk, or the next chunk's first) does not: then it
    /// is the place ``place(of:_:in:)`` finds, or the end of the chunk before it, which is the same place
    /// in the index's order.
    private func placeAfterLastInsert(of value: JSON, _ key: JSON, in records: [StoredRecord?]) -> (chunk: Int, offset: Int)? {
        guard let hint = lastInsert, hint.chunk < chunks.count, hint.offset < chunks[hint.chunk].count,
            chunks[hint.chunk][hint.offset] == hint.row, order(of: hint.row, value, key, in: records) < 0
        else { return nil }
        let next = hint.offset + 1
        if next < chunks[hint.chunk].count {
            guard order(of: chunks[hint.chunk][next], value, key, in: records) >= 0 else { return nil }
        } else if hint.chunk + 1 < chunks.count, let first = chunks[hint.chunk + 1].first {
            guard order(of: first, value, key, in: records) >= 0 else { return nil }
        }
        return (hint.chunk, next)
    }

    /// The fence of `row`: its value and key, from `records` unless it is the row being inserted (whose
    /// slot may still hold the record it replaces).
    private func fence(of row: Int32, in records: [StoredRecord?], inserted: (row: Int32, fence: Fence)? = nil) -> Fence {
        if let inserted, row == inserted.row { return inserted.fence }
        return Fence(value: value(of: row, in: records), key: key(of: row, in: records))
    }

    /// Splits `chunk` in two halves if it is over the limit.
    private mutating func splitIfFull(_ chunk: Int, in records: [StoredRecord?], inserted: (row: Int32, fence: Fence)) {
        guard chunks[chunk].count > chunkLimit else { return }
        let half = chunkLimit / 2
        let upper = Array(chunks[chunk][half...])
        chunks[chunk].removeSubrange(half...)
        chunks.insert(upper, at: chunk + 1)
        lasts.insert(lasts[chunk], at: chunk + 1)
        lasts[chunk] = fence(of: chunks[chunk][half - 1], in: records, inserted: inserted)
        positions.split(chunk, moving: upper.count)
    }

    /// Removes `row`, whose value is `value` and key `key` (as `records` still holds them); false if the
    /// index does not hold it there.
    @discardableResult
    mutating func remove(row: Int32, value: JSON, key: JSON, in records: [StoredRecord?]) -> Bool {
        let (chunk, offset) = place(of: value, key, in: records)
        guard chunk < chunks.count, offset < chunks[chunk].count, chunks[chunk][offset] == row else { return false }
        chunks[chunk].remove(at: offset)
        if chunks[chunk].isEmpty {
            chunks.remove(at: chunk)
            lasts.remove(at: chunk)
            positions.remove(chunk)
        } else {
            positions.add(-1, to: chunk)
            if offset == chunks[chunk].count, let last = chunks[chunk].last {
                // The chunk's last entry went: the one before it is the fence now (another row, whose slot
                // holds its record).
                lasts[chunk] = fence(of: last, in: records)
            }
        }
        count -= 1
        return true
    }

    /// The chunk and offset of the first entry not before `(value, key)`; `chunks.count` if every entry
    /// is before it.
    private func place(of value: JSON, _ key: JSON, in records: [StoredRecord?]) -> (chunk: Int, offset: Int) {
        var low = 0
        var high = chunks.count
        while low < high {
            let middle = (low + high) / 2
            if Self.order(lasts[middle].value, lasts[middle].key, value, key) >= 0 {
                high = middle
            } else {
                low = middle + 1
            }
        }
        let chunk = low
        guard chunk < chunks.count else { return (chunk, 0) }
        return chunks[chunk].withUnsafeBufferPointer { rows in
            var (low, high) = (0, rows.count)
            while low < high {
                let middle = (low + high) / 2
                if order(of: rows[middle], value, key, in: records) >= 0 { high = middle } else { low = middle + 1 }
            }
            return (chunk, low)
        }
    }

    /// The position of the first entry whose value is not below `value` (`after`: above it).
    func bound(of value: JSON, after: Bool, in records: [StoredRecord?]) -> Int {
        func follows(_ other: JSON) -> Bool {
            let order = ListQuery.compare(other, value)
            return after ? order > 0 : order >= 0
        }
        func follows(_ row: Int32) -> Bool { follows(self.value(of: row, in: records)) }
        var low = 0
        var high = chunks.count
        while low < high {
            let middle = (low + high) / 2
            if follows(lasts[middle].value) { high = middle } else { low = middle + 1 }
        }
        let chunk = low
        guard chunk < chunks.count else { return count }
        let offset = chunks[chunk].withUnsafeBufferPointer { rows in
            var (low, high) = (0, rows.count)
            while low < high {
                let middle = (low + high) / 2
                if follows(rows[middle]) { high = middle } else { low = middle + 1 }
            }
            return low
        }
        return entriesBefore(chunk) + offset
    }

    /// The positions of the run of equal values holding `position` (below `count`): found by steps that
    /// double away from it, then a binary search, so a run of one entry costs two comparisons where
    /// ``bound(of:after:in:)`` searches the whole index twice.
    func run(containing position: Int, in records: [StoredRecord?]) -> Range<Int> {
        let value = self.value(of: row(at: position), in: records)
        func sameValue(_ probe: Int) -> Bool {
            ListQuery.compare(self.value(of: row(at: probe), in: records), value) == 0
        }
        // The lowest position of the run: `low` is in it, `low - step` is probed.
        var low = position
        var step = 1
        while low > 0 {
            let probe = max(0, low - step)
            if sameValue(probe) {
                low = probe
                step *= 2
                continue
            }
            var (below, above) = (probe + 1, low)
            while below < above {
                let middle = (below + above) / 2
                if sameValue(middle) { above = middle } else { below = middle + 1 }
            }
            low = below
            break
        }
        var high = position + 1
        step = 1
        while high < count {
            let probe = min(count - 1, high - 1 + step)
            if sameValue(probe) {
                high = probe + 1
                step *= 2
                continue
            }
            var (below, above) = (high, probe)
            while below < above {
                let middle = (below + above) / 2
                if sameValue(middle) { below = middle + 1 } else { above = middle }
            }
            high = below
            break
        }
        return low..<high
    }

    /// The row at `position` (below `count`).
    func row(at position: Int) -> Int32 {
        let (chunk, offset) = locate(position)
        return chunks[chunk][offset]
    }

    /// The rows at `positions`, in order (or reversed).
    func rows(in positions: Range<Int>, reversed: Bool = false) -> [Int] {
        var result: [Int] = []
        result.reserveCapacity(positions.count)
        walk(positions, reversed: reversed) { row in
            result.append(Int(row))
            return true
        }
        return result
    }

    /// Calls `body` with the rows at `positions`, in order (or reversed), until it returns false.
    func walk(_ positions: Range<Int>, reversed: Bool = false, _ body: (Int32) -> Bool) {
        guard !positions.isEmpty else { return }
        var remaining = positions.count
        if reversed {
            var (chunk, offset) = locate(positions.upperBound - 1)
            while remaining > 0, chunk >= 0 {
                let stopped = chunks[chunk].withUnsafeBufferPointer { rows -> Bool in
                    let lowest = max(0, offset - remaining + 1)
                    var index = offset
                    while index >= lowest {
                        guard body(rows[index]) else { return true }
                        index -= 1
                    }
                    remaining -= offset - lowest + 1
                    return false
                }
                if stopped { return }
                chunk -= 1
                if chunk >= 0 { offset = chunks[chunk].count - 1 }
            }
        } else {
            var (chunk, offset) = locate(positions.lowerBound)
            while remaining > 0, chunk < chunks.count {
                let stopped = chunks[chunk].withUnsafeBufferPointer { rows -> Bool in
                    let end = min(rows.count, offset + remaining)
                    for index in offset..<end {
                        guard body(rows[index]) else { return true }
                    }
                    remaining -= end - offset
                    return false
                }
                if stopped { return }
                chunk += 1
                offset = 0
            }
        }
    }

    /// The chunk and offset of `position` (which must be below `count`).
    private func locate(_ position: Int) -> (chunk: Int, offset: Int) { positions.locate(position) }

    private func entriesBefore(_ chunk: Int) -> Int { chunk < chunks.count ? positions.start(of: chunk) : count }

    /// Bytes held: the rows, the chunks' headers, fences and positions (for docs/benchmarks.md).
    var byteCount: Int {
        chunks.reduce(0) { $0 + 32 + $1.capacity * MemoryLayout<Int32>.stride } + positions.byteCount
            + lasts.capacity * MemoryLayout<Fence>.stride
    }

    /// Whether every chunk's fence is the value and key of its last row in `records` (for tests).
    func fencesHold(in records: [StoredRecord?]) -> Bool {
        lasts.count == chunks.count
            && chunks.indices.allSatisfy { chunk in
                guard let last = chunks[chunk].last else { return false }
                return Self.order(lasts[chunk].value, lasts[chunk].key, value(of: last, in: records), key(of: last, in: records))
                    == 0
            }
    }
}
