/// A set of row numbers (see ``RecordTable``), kept as a posting list: rows are grouped by their high 16
/// bits into chunks of 65,536, and each chunk holds its low bits as a sorted array while it has at most
/// 4,096 of them (2 bytes a row), as a bitmap above that (8 KB a chunk, 1 bit a row). The split is
/// the one roaring bitmaps use: 4,096 two-byte entries are the bitmap's size, so a chunk never takes more
/// than 8 KB, and a sparse set costs 2 bytes a row.
///
/// Intersections are what list queries need of it: two bitmaps are ANDed 64 rows at a time, an array is
/// probed against a bitmap, two arrays are merged. At a million rows a set of every row is 16 chunks of
/// 8 KB, and intersecting two of them takes 16,384 word ANDs.
struct RowSet: Sendable, Equatable {
    /// The rows of one chunk.
    struct Chunk: Sendable, Equatable {
        /// The chunk's number: its rows' high bits.
        var high: Int
        /// The low bits, ascending, while the chunk is sparse; empty once it is a bitmap.
        var values: [UInt16] = []
        /// 1,024 words once the chunk is dense; empty while it is sparse.
        var words: [UInt64] = []
        var count = 0

        var isBitmap: Bool { !words.isEmpty }

        func contains(_ low: UInt16) -> Bool {
            if isBitmap { return words[Int(low >> 6)] & (1 << UInt64(low & 63)) != 0 }
            return values.firstPosition(notBelow: low).map { values[$0] == low } ?? false
        }

        mutating func insert(_ low: UInt16) -> Bool {
            if isBitmap {
                let (word, bit) = (Int(low >> 6), UInt64(1) << UInt64(low & 63))
                guard words[word] & bit == 0 else { return false }
                words[word] |= bit
                count += 1
                return true
            }
            // Rows mostly arrive in ascending order: appending is the common case.
            if let last = values.last, last < low {
                values.append(low)
            } else {
                let position = values.firstPosition(notBelow: low) ?? values.count
                guard position == values.count || values[position] != low else { return false }
                values.insert(low, at: position)
            }
            count += 1
            if count > RowSet.arrayLimit { makeBitmap() }
            return true
        }

        mutating func remove(_ low: UInt16) -> Bool {
            if isBitmap {
                let (word, bit) = (Int(low >> 6), UInt64(1) << UInt64(low & 63))
                guard words[word] & bit != 0 else { return false }
                words[word] &= ~bit
                count -= 1
                // Half the limit, so a chunk at the limit does not convert back and forth on each write.
                if count < RowSet.arrayLimit / 2 { makeArray() }
                return true
            }
            guard let position = values.firstPosition(notBelow: low), values[position] == low else { return false }
            values.remove(at: position)
            count -= 1
            return true
        }

        mutating func makeBitmap() {
            var bits = [UInt64](repeating: 0, count: 1024)
            for low in values { bits[Int(low >> 6)] |= 1 << UInt64(low & 63) }
            words = bits
            values = []
        }

        mutating func makeArray() {
            var lows: [UInt16] = []
            lows.reserveCapacity(count)
            forEachLow { lows.append($0) }
            values = lows
            words = []
        }

        /// Calls `body` with each low value, ascending.
        func forEachLow(_ body: (UInt16) -> Void) {
            if !isBitmap {
                for low in values { body(low) }
                return
            }
            for (index, word) in words.enumerated() where word != 0 {
                var rest = word
                while rest != 0 {
                    body(UInt16(index << 6 | rest.trailingZeroBitCount))
                    rest &= rest - 1
                }
            }
        }

        /// The rows in both chunks (of the same number); `nil` when none is.
        func intersection(_ other: Chunk) -> Chunk? {
            var result = Chunk(high: high)
            switch (isBitmap, other.isBitmap) {
            case (true, true):
                var bits = [UInt64](repeating: 0, count: 1024)
                var total = 0
                words.withUnsafeBufferPointer { left in
                    other.words.withUnsafeBufferPointer { right in
                        for index in 0..<1024 {
                            let word = left[index] & right[index]
                            bits[index] = word
                            total += word.nonzeroBitCount
                        }
                    }
                }
                result.words = bits
                result.count = total
                if total <= RowSet.arrayLimit / 2 { result.makeArray() }
            case (false, true):
                result.values = values.filter { other.contains($0) }
                result.count = result.values.count
            case (true, false):
                result.values = other.values.filter { contains($0) }
                result.count = result.values.count
            case (false, false):
                var merged: [UInt16] = []
                var (left, right) = (0, 0)
                while left < values.count, right < other.values.count {
                    let (a, b) = (values[left], other.values[right])
                    if a == b {
                        merged.append(a)
                        left += 1
                        right += 1
                    } else if a < b {
                        left += 1
                    } else {
                        right += 1
                    }
                }
                result.values = merged
                result.count = merged.count
            }
            return result.count == 0 ? nil : result
        }

        /// The rows in either chunk (of the same number).
        func union(_ other: Chunk) -> Chunk {
            var result = Chunk(high: high)
            if isBitmap || other.isBitmap || count + other.count > RowSet.arrayLimit {
                var bits = isBitmap ? words : [UInt64](repeating: 0, count: 1024)
                if !isBitmap { for low in values { bits[Int(low >> 6)] |= 1 << UInt64(low & 63) } }
                if other.isBitmap {
                    for index in 0..<1024 { bits[index] |= other.words[index] }
                } else {
                    for low in other.values { bits[Int(low >> 6)] |= 1 << UInt64(low & 63) }
                }
                result.words = bits
                result.count = bits.reduce(0) { $0 + $1.nonzeroBitCount }
                if result.count <= RowSet.arrayLimit / 2 { result.makeArray() }
                return result
            }
            var merged: [UInt16] = []
            merged.reserveCapacity(count + other.count)
            var (left, right) = (0, 0)
            while left < values.count || right < other.values.count {
                if right == other.values.count || (left < values.count && values[left] < other.values[right]) {
                    merged.append(values[left])
                    left += 1
                } else if left == values.count || other.values[right] < values[left] {
                    merged.append(other.values[right])
                    right += 1
                } else {
                    merged.append(values[left])
                    left += 1
                    right += 1
                }
            }
            result.values = merged
            result.count = merged.count
            return result
        }
    }

    /// Where a chunk's sorted array becomes a bitmap: 4,096 two-byte values are the bitmap's 8 KB.
    static let arrayLimit = 4096

    /// The chunks that hold rows, by ascending number.
    private(set) var chunks: [Chunk] = []
    private(set) var count = 0

    init() {}

    /// A set of `rows`, given in any order.
    init<Rows: Sequence<Int>>(_ rows: Rows) {
        for row in rows { insert(row) }
    }

    var isEmpty: Bool { count == 0 }

    func contains(_ row: Int) -> Bool {
        guard row >= 0, let position = chunkPosition(of: row >> 16) else { return false }
        return chunks[position].contains(UInt16(truncatingIfNeeded: row))
    }

    /// Adds `row` (not negative); false if it was there.
    @discardableResult
    mutating func insert(_ row: Int) -> Bool {
        precondition(row >= 0, "a row number is not negative")
        let high = row >> 16
        let position: Int
        // The last chunk by its number alone: `chunks.last` copied the chunk, retaining its arrays, and
        // was a third of a POST's index upkeep.
        if !chunks.isEmpty, chunks[chunks.count - 1].high == high {
            position = chunks.count - 1
        } else if let found = chunkPosition(of: high) {
            position = found
        } else {
            position = chunks.firstPosition { $0.high > high } ?? chunks.count
            chunks.insert(Chunk(high: high), at: position)
        }
        guard chunks[position].insert(UInt16(truncatingIfNeeded: row)) else { return false }
        count += 1
        return true
    }

    /// Adds each of `rows`.
    mutating func insert(contentsOf rows: some Sequence<Int>) {
        for row in rows { insert(row) }
    }

    /// Removes `row`; false if it was not there.
    @discardableResult
    mutating func remove(_ row: Int) -> Bool {
        guard row >= 0, let position = chunkPosition(of: row >> 16),
            chunks[position].remove(UInt16(truncatingIfNeeded: row))
        else { return false }
        count -= 1
        if chunks[position].count == 0 { chunks.remove(at: position) }
        return true
    }

    /// The rows in both sets.
    func intersection(_ other: RowSet) -> RowSet {
        var result = RowSet()
        var (left, right) = (0, 0)
        while left < chunks.count, right < other.chunks.count {
            let (a, b) = (chunks[left], other.chunks[right])
            if a.high == b.high {
                if let both = a.intersection(b) {
                    result.chunks.append(both)
                    result.count += both.count
                }
                left += 1
                right += 1
            } else if a.high < b.high {
                left += 1
            } else {
                right += 1
            }
        }
        return result
    }

    /// The rows in either set.
    func union(_ other: RowSet) -> RowSet {
        var result = RowSet()
        var (left, right) = (0, 0)
        while left < chunks.count || right < other.chunks.count {
            let chunk: Chunk
            if right == other.chunks.count || (left < chunks.count && chunks[left].high < other.chunks[right].high) {
                chunk = chunks[left]
                left += 1
            } else if left == chunks.count || other.chunks[right].high < chunks[left].high {
                chunk = other.chunks[right]
                right += 1
            } else {
                chunk = chunks[left].union(other.chunks[right])
                left += 1
                right += 1
            }
            result.chunks.append(chunk)
            result.count += chunk.count
        }
        return result
    }

    /// The rows at `ranks` in ascending order (the first row has rank 0), without reading the others:
    /// whole chunks are skipped by their counts, and a bitmap's words by their bit counts.
    func rows(ranked ranks: Range<Int>) -> [Int] {
        var result: [Int] = []
        guard !ranks.isEmpty else { return result }
        result.reserveCapacity(ranks.count)
        var before = 0
        for chunk in chunks {
            if before + chunk.count <= ranks.lowerBound {
                before += chunk.count
                continue
            }
            let base = chunk.high << 16
            if chunk.isBitmap {
                for (index, word) in chunk.words.enumerated() where word != 0 {
                    let bits = word.nonzeroBitCount
                    if before + bits <= ranks.lowerBound {
                        before += bits
                        continue
                    }
                    var rest = word
                    while rest != 0 {
                        if before >= ranks.lowerBound { result.append(base | index << 6 | rest.trailingZeroBitCount) }
                        before += 1
                        if before >= ranks.upperBound { return result }
                        rest &= rest - 1
                    }
                }
            } else {
                let from = Swift.max(0, ranks.lowerBound - before)
                let to = Swift.min(chunk.count, ranks.upperBound - before)
                for low in chunk.values[from..<to] { result.append(base | Int(low)) }
                before += chunk.count
                if before >= ranks.upperBound { return result }
            }
        }
        return result
    }

    /// The rows, ascending.
    var rows: [Int] {
        var result: [Int] = []
        result.reserveCapacity(count)
        for row in self { result.append(row) }
        return result
    }

    /// Bytes held by the set's chunks, for the memory figures of docs/benchmarks.md.
    var byteCount: Int { chunks.reduce(0) { $0 + 32 + $1.values.count * 2 + $1.words.count * 8 } }

    private func chunkPosition(of high: Int) -> Int? {
        var low = 0
        var upper = chunks.count
        while low < upper {
            let middle = (low + upper) / 2
            if chunks[middle].high < high { low = middle + 1 } else { upper = middle }
        }
        return low < chunks.count && chunks[low].high == high ? low : nil
    }
}

extension RowSet: Sequence {
    /// The rows, ascending: a chunk's array in order, a bitmap's words bit by bit.
    struct Iterator: IteratorProtocol {
        private let chunks: [Chunk]
        private var chunk = 0
        /// The position in the chunk's array, or of the bitmap's word.
        private var position = 0
        /// The bitmap word's bits not yet given.
        private var word: UInt64 = 0

        init(_ chunks: [Chunk]) { self.chunks = chunks }

        mutating func next() -> Int? {
            while chunk < chunks.count {
                let current = chunks[chunk]
                let base = current.high << 16
                if !current.isBitmap {
                    if position < current.values.count {
                        position += 1
                        return base | Int(current.values[position - 1])
                    }
                } else {
                    while word == 0, position < 1024 {
                        word = current.words[position]
                        position += 1
                    }
                    if word != 0 {
                        let bit = word.trailingZeroBitCount
                        word &= word - 1
                        return base | (position - 1) << 6 | bit
                    }
                }
                chunk += 1
                position = 0
                word = 0
            }
            return nil
        }
    }

    func makeIterator() -> Iterator { Iterator(chunks) }

    var underestimatedCount: Int { count }
}

extension Array where Element == UInt16 {
    /// The position of the first value not below `value` (sorted ascending); `nil` if every value is.
    fileprivate func firstPosition(notBelow value: UInt16) -> Int? {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if self[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low < count ? low : nil
    }
}

extension Array where Element == RowSet.Chunk {
    fileprivate func firstPosition(where predicate: (RowSet.Chunk) -> Bool) -> Int? { firstIndex(where: predicate) }
}

/// A ``RowSet`` as one flat bitmap from row 0 to its last row: a membership test is a load and a bit
/// test, for walks that test every entry of an index (a few thousand per page at a million records),
/// where the set's own test searches its chunks first. Made in one pass: a dense chunk's words are
/// copied whole.
struct RowBitmap {
    private let words: [UInt64]

    init(_ rows: RowSet) {
        let highest = rows.chunks.last.map { $0.high + 1 } ?? 0
        var words = [UInt64](repeating: 0, count: highest * 1024)
        for chunk in rows.chunks {
            let base = chunk.high * 1024
            if chunk.isBitmap {
                for index in 0..<1024 { words[base + index] = chunk.words[index] }
            } else {
                for low in chunk.values { words[base + Int(low >> 6)] |= 1 << UInt64(low & 63) }
            }
        }
        self.words = words
    }

    func contains(_ row: Int) -> Bool {
        let word = row >> 6
        return row >= 0 && word < words.count && words[word] & (1 << UInt64(row & 63)) != 0
    }
}
