import HammockJSON

/// One field's values across a table, in the order a list query sorts them: by value (``ListQuery``'s
/// order, `null` first), then by key. Each entry names its record's row (``RecordTable``).
///
/// A run of equal values is a contiguous range whose records are in key order, which answers an equality
/// filter with a page as a slice; the whole index answers a sort. Entries live in chunks of at most
/// `chunkLimit`, so a write moves a few hundred entries, not the table; `starts` says where each chunk
/// begins, so a position is found by a binary search (a walk over 4,000 chunks was most of a sorted
/// page's 234 µs at a million records).
struct FieldIndex: Sendable {
    struct Entry: Sendable {
        var value: JSON
        var key: JSON
        var row: Int32
    }

    /// Where a chunk splits in two.
    let chunkLimit: Int

    private(set) var chunks: [[Entry]] = []
    /// The position of each chunk's first entry.
    private var starts: [Int] = []
    private(set) var count = 0

    /// An index on `field` of `records` (in any order) with their rows.
    init(field: String, keyName: String, records: [(row: Int, record: StoredRecord)], chunkLimit: Int = 512) {
        self.chunkLimit = max(2, chunkLimit)
        var entries = records.map {
            Entry(value: $0.record.fields[field] ?? .null, key: $0.record.fields[keyName] ?? .null, row: Int32($0.row))
        }
        entries.sort { Self.order($0.value, $0.key, $1.value, $1.key) < 0 }
        count = entries.count
        var start = 0
        while start < entries.count {
            let end = min(start + self.chunkLimit / 2, entries.count)
            starts.append(start)
            chunks.append(Array(entries[start..<end]))
            start = end
        }
    }

    /// -1, 0 or 1: by value, then by key.
    static func order(_ leftValue: JSON, _ leftKey: JSON, _ rightValue: JSON, _ rightKey: JSON) -> Int {
        let byValue = ListQuery.compare(leftValue, rightValue)
        if byValue != 0 { return byValue }
        if keyPrecedes(leftKey, rightKey) { return -1 }
        return keyPrecedes(rightKey, leftKey) ? 1 : 0
    }

    mutating func insert(_ entry: Entry) {
        count += 1
        guard !chunks.isEmpty else {
            chunks = [[entry]]
            starts = [0]
            return
        }
        // After every entry (a generated key in the key's index, a new largest value): appended, without
        // a search.
        let lastChunk = chunks.count - 1
        let lastEntry = chunks[lastChunk].count - 1
        if Self.order(chunks[lastChunk][lastEntry].value, chunks[lastChunk][lastEntry].key, entry.value, entry.key) < 0 {
            chunks[lastChunk].append(entry)
            splitIfFull(lastChunk)
            return
        }
        // The first chunk whose last entry follows the new one; the last chunk if none does.
        var (chunk, offset) = place(of: entry.value, entry.key)
        if chunk == chunks.count {
            chunk -= 1
            offset = chunks[chunk].count
        }
        chunks[chunk].insert(entry, at: offset)
        shiftStarts(after: chunk, by: 1)
        splitIfFull(chunk)
    }

    /// Splits `chunk` in two halves if it is over the limit.
    private mutating func splitIfFull(_ chunk: Int) {
        guard chunks[chunk].count > chunkLimit else { return }
        let upper = Array(chunks[chunk][(chunkLimit / 2)...])
        chunks[chunk].removeSubrange((chunkLimit / 2)...)
        chunks.insert(upper, at: chunk + 1)
        starts.insert(starts[chunk] + chunkLimit / 2, at: chunk + 1)
    }

    /// Moves the start of every chunk after `chunk` by `change` entries.
    private mutating func shiftStarts(after chunk: Int, by change: Int) {
        starts.withUnsafeMutableBufferPointer { starts in
            for index in (chunk + 1)..<starts.count { starts[index] += change }
        }
    }

    /// Removes the entry of `key`, whose value is `value`; false if there is none.
    @discardableResult
    mutating func remove(value: JSON, key: JSON) -> Bool {
        let (chunk, offset) = place(of: value, key)
        guard chunk < chunks.count, offset < chunks[chunk].count,
            Self.order(chunks[chunk][offset].value, chunks[chunk][offset].key, value, key) == 0
        else { return false }
        chunks[chunk].remove(at: offset)
        shiftStarts(after: chunk, by: -1)
        if chunks[chunk].isEmpty {
            chunks.remove(at: chunk)
            starts.remove(at: chunk)
        }
        count -= 1
        return true
    }

    /// Puts `newValue` in the entry of `key`, whose value is `value` and takes the same place in the
    /// order; false if there is none.
    mutating func replaceValue(value: JSON, key: JSON, with newValue: JSON) -> Bool {
        let (chunk, offset) = place(of: value, key)
        guard chunk < chunks.count, offset < chunks[chunk].count,
            Self.order(chunks[chunk][offset].value, chunks[chunk][offset].key, value, key) == 0
        else { return false }
        chunks[chunk][offset].value = newValue
        return true
    }

    /// The chunk and offset of the first entry not before `(value, key)`; `chunks.count` if every entry
    /// is before it. Binary searches on the entries in place, so no entry is copied to be compared.
    private func place(of value: JSON, _ key: JSON) -> (chunk: Int, offset: Int) {
        var low = 0
        var high = chunks.count
        while low < high {
            let middle = (low + high) / 2
            let last = chunks[middle].count - 1
            if Self.order(chunks[middle][last].value, chunks[middle][last].key, value, key) >= 0 {
                high = middle
            } else {
                low = middle + 1
            }
        }
        let chunk = low
        guard chunk < chunks.count else { return (chunk, 0) }
        low = 0
        high = chunks[chunk].count
        while low < high {
            let middle = (low + high) / 2
            if Self.order(chunks[chunk][middle].value, chunks[chunk][middle].key, value, key) >= 0 {
                high = middle
            } else {
                low = middle + 1
            }
        }
        return (chunk, low)
    }

    /// The position of the first entry whose value is not below `value` (`after`: above it).
    func bound(of value: JSON, after: Bool) -> Int {
        // Binary searches on the values in place: a closure taking entries would copy each one probed.
        var low = 0
        var high = chunks.count
        while low < high {
            let middle = (low + high) / 2
            let order = ListQuery.compare(chunks[middle][chunks[middle].count - 1].value, value)
            if after ? order > 0 : order >= 0 { high = middle } else { low = middle + 1 }
        }
        let chunk = low
        guard chunk < chunks.count else { return count }
        low = 0
        high = chunks[chunk].count
        while low < high {
            let middle = (low + high) / 2
            let order = ListQuery.compare(chunks[chunk][middle].value, value)
            if after ? order > 0 : order >= 0 { high = middle } else { low = middle + 1 }
        }
        return entriesBefore(chunk) + low
    }

    /// The entries at `positions`, in order (or reversed).
    func entries(in positions: Range<Int>, reversed: Bool = false) -> [Entry] {
        var result: [Entry] = []
        result.reserveCapacity(positions.count)
        walk(positions, reversed: reversed) { entry in
            result.append(entry)
            return true
        }
        return result
    }

    /// The positions of the run of equal values holding `position` (below `count`): found by steps that
    /// double away from it, then a binary search, so a run of one entry costs two comparisons where
    /// ``bound(of:after:)`` searches the whole index twice.
    func run(containing position: Int) -> Range<Int> {
        let value = entry(at: position).value
        func sameValue(_ probe: Int) -> Bool { ListQuery.compare(entry(at: probe).value, value) == 0 }
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

    /// The entry at `position` (below `count`).
    func entry(at position: Int) -> Entry {
        let (chunk, offset) = locate(position)
        return chunks[chunk][offset]
    }

    /// The rows at `positions`, in order.
    func rows(in positions: Range<Int>) -> [Int] {
        var result: [Int] = []
        result.reserveCapacity(positions.count)
        walk(positions) { entry in
            result.append(Int(entry.row))
            return true
        }
        return result
    }

    /// Calls `body` with the entries at `positions`, in order (or reversed), until it returns false.
    /// Each entry is lent, not copied (a copy retained its value and key).
    func walk(_ positions: Range<Int>, reversed: Bool = false, _ body: (borrowing Entry) -> Bool) {
        guard !positions.isEmpty else { return }
        var remaining = positions.count
        if reversed {
            var (chunk, offset) = locate(positions.upperBound - 1)
            while remaining > 0, chunk >= 0 {
                let stopped = chunks[chunk].withUnsafeBufferPointer { entries -> Bool in
                    let lowest = max(0, offset - remaining + 1)
                    var index = offset
                    while index >= lowest {
                        guard body(entries[index]) else { return true }
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
                let stopped = chunks[chunk].withUnsafeBufferPointer { entries -> Bool in
                    let end = min(entries.count, offset + remaining)
                    for index in offset..<end {
                        guard body(entries[index]) else { return true }
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
    private func locate(_ position: Int) -> (chunk: Int, offset: Int) {
        // The last chunk starting at or before `position`.
        var low = 0
        var high = starts.count
        while low + 1 < high {
            let middle = (low + high) / 2
            if starts[middle] <= position { low = middle } else { high = middle }
        }
        return (low, position - starts[low])
    }

    private func entriesBefore(_ chunk: Int) -> Int { chunk < starts.count ? starts[chunk] : count }
}
