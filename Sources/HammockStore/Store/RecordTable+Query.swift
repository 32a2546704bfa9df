import HammockJSON

extension RecordTable {
    /// Below this many records a query scans the table: indexes would cost more to keep than they save.
    package static let indexingThreshold = 1_000

    /// The records that answer `query`, as ``ListQuery/apply(to:schema:)`` would, without reading the
    /// whole table when an index can say where the answer is.
    ///
    /// - An equality, range or `_null` filter is answered from its field's index: the filter that leaves
    ///   the fewest records drives, and the other conditions are checked on those records only. One
    ///   equality value and no other condition is a slice of the index: the page, and its length the total.
    /// - A sort without a selective filter walks the first sort field's index and stops at the page's end.
    /// - `q` scans one block of the records' lowercased texts, which ``step(_:indexingFrom:matches:)`` lets
    ///   a caller do without holding the table's lock.
    ///
    /// Indexes are built on first use and kept by every write (see ``TableIndexes``).
    package mutating func answer(
        _ query: ListQuery, indexingFrom threshold: Int = Self.indexingThreshold
    ) -> (page: [StoredRecord], total: Int) {
        switch step(query, indexingFrom: threshold) {
        case .answered(let page, let total): return (page, total)
        case .scan(let search): return answer(query, indexingFrom: threshold, matches: search.run())
        }
    }

    /// ``answer(_:indexingFrom:)`` with the positions of a search scanned by ``PendingSearch/run()``.
    /// Positions of a block the table no longer has (a write came between) are ignored and the search is
    /// scanned again.
    package mutating func answer(
        _ query: ListQuery, indexingFrom threshold: Int = Self.indexingThreshold, matches: SearchMatches
    ) -> (page: [StoredRecord], total: Int) {
        switch step(query, indexingFrom: threshold, matches: matches) {
        case .answered(let page, let total): return (page, total)
        case .scan(let search): return answer(query, indexingFrom: threshold, matches: search.run())
        }
    }

    /// The answer to `query`, or, when it needs a search of the whole table, that search: a scan of an
    /// immutable block that the caller runs without holding the table's lock, then hands back.
    package mutating func step(
        _ query: ListQuery, indexingFrom threshold: Int = Self.indexingThreshold, matches: SearchMatches? = nil
    ) -> QueryStep {
        guard count >= threshold, !query.filters.isEmpty || query.search != nil || !query.sort.isEmpty else {
            return .answered(query.apply(to: ordered, schema: schema))
        }
        var collector = PageCollector(query.window)
        // The indexed filter that leaves the fewest records drives; the others are checked per record.
        var driver: (filter: Int, index: FieldIndex, runs: Runs, size: Int)?
        for (position, filter) in query.filters.enumerated() {
            guard let (index, runs) = runs(of: filter) else { continue }
            let size = runs.ranges.reduce(0) { $0 + $1.count }
            if size < driver?.size ?? Int.max { driver = (position, index, runs, size) }
        }
        if let driver, query.sort.isEmpty || driver.size * 4 <= count {
            var rest = query
            rest.filters.remove(at: driver.filter)
            let matcher = Self.matcher(rest, schema)
            if query.sort.isEmpty, driver.runs.areInKeyOrder, let run = driver.runs.ranges.first {
                // One run of equal values is in key order: the answer is part of it.
                guard let matcher else {
                    let cut = collector.cut(run.count)
                    let page = driver.index.records(in: (run.lowerBound + cut.lowerBound)..<(run.lowerBound + cut.upperBound))
                    return .answered(page: page, total: run.count)
                }
                driver.index.walk(run) { entry in
                    if matcher.matches(entry.record.fields) { collector.add(entry.record) }
                    return true
                }
                return .answered(collector.result)
            }
            // Several runs, or a sort: the passing records go through a bounded heap, which keeps the
            // window's end and counts the rest, never a sorted copy of every match (at a million records
            // the equality's 200,000 candidates were copied and sorted for a page of twenty).
            var top = TopRecords(window: query.window, order: order(of: query.sort))
            for run in driver.runs.ranges {
                driver.index.walk(run) { entry in
                    if matcher?.matches(entry.record.fields) ?? true { top.add(entry.record) }
                    return true
                }
            }
            return .answered(top.result)
        }
        if let search = query.search {
            return searched(for: search, query: query, matches: matches, into: &collector)
        }
        guard let first = query.sort.first else { return .answered(query.apply(to: ordered, schema: schema)) }
        return .answered(walkedInOrder(of: first, query: query, into: &collector))
    }

    /// How the records of an answer are ordered: by `keys`, then by key (by key alone without any).
    private func order(of keys: [ListQuery.SortKey]) -> RecordOrder {
        RecordOrder(keys: keys, keyName: schema.key.name)
    }

    /// `q` without a selective filter: one pass over the search texts, in key order. Without `matches`
    /// of this table's block, the pass is handed back to the caller to run.
    private mutating func searched(
        for search: String, query: ListQuery, matches: SearchMatches?, into collector: inout PageCollector
    ) -> QueryStep {
        let block = searchBlock()
        guard let matches, matches.block.storage === block.storage else {
            return .scan(PendingSearch(block: block, needle: TextMatch.lowercased(search)))
        }
        var filtersOnly = query
        filtersOnly.search = nil
        guard let matcher = Self.matcher(filtersOnly, schema) else {
            if query.sort.isEmpty {
                // Only the page's records are read.
                let cut = collector.cut(matches.positions.count)
                return .answered(page: matches.positions[cut].map { ordered[$0] }, total: matches.positions.count)
            }
            var top = TopRecords(window: query.window, order: order(of: query.sort))
            for position in matches.positions { top.add(ordered[position]) }
            return .answered(top.result)
        }
        if query.sort.isEmpty {
            for position in matches.positions where matcher.matches(ordered[position].fields) { collector.add(ordered[position]) }
            return .answered(collector.result)
        }
        var top = TopRecords(window: query.window, order: order(of: query.sort))
        for position in matches.positions where matcher.matches(ordered[position].fields) { top.add(ordered[position]) }
        return .answered(top.result)
    }

    /// A sort walked along the index of its first field, run of equal values by run of equal values,
    /// until the page is complete (or, with filters, to the end for the total).
    private mutating func walkedInOrder(
        of first: ListQuery.SortKey, query: ListQuery, into collector: inout PageCollector
    ) -> (page: [StoredRecord], total: Int) {
        let index = fieldIndex(first.field)
        let matcher = Self.matcher(query, schema)
        let keyName = schema.key.name
        let laterKeys = Array(query.sort.dropFirst())
        var walked = 0..<index.count
        if matcher == nil {
            // Every record is in the answer, and a run takes as many places in the answer as in the index:
            // only the runs that overlap the window are read.
            let window = collector.cut(index.count)
            guard let last = window.last else { return ([], index.count) }
            let low = first.isDescending ? index.count - 1 - last : window.lowerBound
            let high = first.isDescending ? index.count - window.lowerBound : last + 1
            let start = index.bound(of: index.entry(at: low).value, after: false)
            let end = index.bound(of: index.entry(at: high - 1).value, after: true)
            walked = start..<end
            collector.total = first.isDescending ? index.count - walked.upperBound : walked.lowerBound
        }
        var run: [StoredRecord] = []
        var runValue = JSON.null
        // A run comes out in key order (reversed when walking down), then in the later keys' order.
        func flush() {
            if first.isDescending { run.reverse() }
            if !laterKeys.isEmpty { run.sort { ListQuery.precedes($0, $1, by: laterKeys, keyName: keyName) } }
            for record in run where matcher?.matches(record.fields) ?? true { collector.add(record) }
            run.removeAll(keepingCapacity: true)
        }
        index.walk(walked, reversed: first.isDescending) { entry in
            if !run.isEmpty, ListQuery.compare(entry.value, runValue) != 0 {
                flush()
                // Without filters every record counts: the total is the table's, and the walk can stop.
                if matcher == nil, collector.isComplete { return false }
            }
            if run.isEmpty { runValue = entry.value }
            run.append(entry.record)
            return true
        }
        flush()
        if matcher == nil { collector.total = count }
        return collector.result
    }

    /// Positions in a field index.
    private struct Runs {
        var ranges: [Range<Int>]
        /// One range of one value, whose records are therefore in key order.
        var areInKeyOrder: Bool

        init(_ ranges: [Range<Int>], ofOneValue: Bool) {
            self.ranges = ranges
            areInKeyOrder = ranges.count <= 1 && ofOneValue
        }
    }

    /// The runs of `filter`'s field index that hold the records passing it, in index order; `nil` for a
    /// filter an index cannot answer (`_ne`, `_like`).
    private mutating func runs(of filter: ListQuery.Filter) -> (FieldIndex, Runs)? {
        switch filter.comparison {
        case .notEqual, .like: return nil
        default: break
        }
        let index = fieldIndex(filter.field)
        var firstNonNull: Int { index.bound(of: .null, after: true) }
        switch filter.comparison {
        case .equal:
            let runs = filter.values.map { index.bound(of: $0, after: false)..<index.bound(of: $0, after: true) }
            // Repeated values give the same run: keep each once.
            var distinct: [Range<Int>] = []
            for run in runs.sorted(by: { $0.lowerBound < $1.lowerBound }) where !run.isEmpty {
                if let last = distinct.last, run.lowerBound < last.upperBound { continue }
                distinct.append(run)
            }
            return (index, Runs(distinct, ofOneValue: true))
        case .null:
            if filter.values.allSatisfy({ $0.boolValue == true }) {
                return (index, Runs([0..<firstNonNull], ofOneValue: true))
            }
            if filter.values.allSatisfy({ $0.boolValue == false }) {
                return (index, Runs([firstNonNull..<index.count], ofOneValue: false))
            }
            return (index, Runs([], ofOneValue: true))
        default:
            var lower = firstNonNull
            var upper = index.count
            for value in filter.values {
                switch filter.comparison {
                case .greater: lower = max(lower, index.bound(of: value, after: true))
                case .greaterOrEqual: lower = max(lower, index.bound(of: value, after: false))
                case .less: upper = min(upper, index.bound(of: value, after: false))
                default: upper = min(upper, index.bound(of: value, after: true))
                }
            }
            return (index, Runs(lower < upper ? [lower..<upper] : [], ofOneValue: false))
        }
    }

    /// The index of `field`, built now if no query has needed it yet.
    private mutating func fieldIndex(_ field: String) -> FieldIndex {
        if let index = indexes.fields[field] { return index }
        let index = FieldIndex(field: field, keyName: schema.key.name, records: ordered)
        indexes.fields[field] = index
        return index
    }

    /// The search texts in one block, joined now if a write came since the last search, and lowercased
    /// now if no query has searched yet.
    private mutating func searchBlock() -> SearchBlock {
        if let block = indexes.searchBlock { return block }
        let texts = indexes.searchTexts ?? ordered.map { TableIndexes.searchText(of: $0.fields, schema: schema) }
        let block = SearchBlock(texts)
        indexes.searchTexts = texts
        indexes.searchBlock = block
        return block
    }

    /// A matcher for the filters and search of `query`; `nil` when it has neither.
    private static func matcher(_ query: ListQuery, _ schema: ResourceSchema) -> ListQuery.Matcher? {
        query.filters.isEmpty && query.search == nil ? nil : ListQuery.Matcher(query: query, schema: schema)
    }
}

/// One step of answering a list query under a table's lock (``RecordTable/step(_:indexingFrom:matches:)``).
package enum QueryStep: Sendable {
    /// The page and the total.
    case answered(page: [StoredRecord], total: Int)
    /// A search of the whole table is needed first: run it (without the lock), then step again with it.
    case scan(PendingSearch)

    static func answered(_ result: (page: [StoredRecord], total: Int)) -> QueryStep {
        .answered(page: result.page, total: result.total)
    }
}

/// A scan for `q` over a table's search block, which needs no lock: the block is immutable.
package struct PendingSearch: Sendable {
    let block: SearchBlock
    let needle: [UInt8]

    /// The positions of the matching records, for the block's table.
    package func run() -> SearchMatches { SearchMatches(block: block, positions: block.matches(needle)) }
}

/// The records of a search block that a search matched, by position.
package struct SearchMatches: Sendable {
    let block: SearchBlock
    let positions: [Int]
}

/// An order of records: by sort keys, then by key (``ListQuery/precedes(_:_:by:keyName:)``).
struct RecordOrder {
    let keys: [ListQuery.SortKey]
    let keyName: String

    func precedes(_ left: StoredRecord, _ right: StoredRecord) -> Bool {
        keys.isEmpty
            ? keyPrecedes(left.fields[keyName] ?? .null, right.fields[keyName] ?? .null)
            : ListQuery.precedes(left, right, by: keys, keyName: keyName)
    }
}

/// The records of a window among records coming in any order, and how many came: a bounded max-heap
/// of the first `end` in `order` (its root the last of them), so each record past the first `end` costs
/// one comparison with the root when it does not belong, and a page with its total never sorts every
/// match. Without a window's end, every record is kept and sorted once at the end.
struct TopRecords {
    let start: Int
    let end: Int
    let order: RecordOrder
    private(set) var total = 0
    /// A max-heap once it holds `end` records; before, the records as they came.
    private var kept: [StoredRecord] = []

    init(window: ListQuery.Window?, order: RecordOrder) {
        (start, end) = ListQuery.openBounds(of: window)
        self.order = order
    }

    mutating func add(_ record: StoredRecord) {
        total += 1
        guard end > 0 else { return }
        if kept.count < end {
            kept.append(record)
            if kept.count == end, end != Int.max { makeHeap() }
            return
        }
        // Full: the record belongs only if it comes before the root, which it then replaces.
        guard order.precedes(record, kept[0]) else { return }
        kept[0] = record
        siftDown(from: 0)
    }

    /// The window's records in order, and the total.
    var result: (page: [StoredRecord], total: Int) {
        let sorted = kept.sorted(by: order.precedes)
        guard start < sorted.count else { return ([], total) }
        return (Array(sorted[start...]), total)
    }

    private mutating func makeHeap() {
        var index = kept.count / 2
        while index > 0 {
            index -= 1
            siftDown(from: index)
        }
    }

    /// Restores the heap below `index`: a parent never precedes its children (the root comes last).
    private mutating func siftDown(from index: Int) {
        var parent = index
        let count = kept.count
        while true {
            let left = 2 * parent + 1
            guard left < count else { return }
            var later = left
            let right = left + 1
            if right < count, order.precedes(kept[left], kept[right]) { later = right }
            guard order.precedes(kept[parent], kept[later]) else { return }
            kept.swapAt(parent, later)
            parent = later
        }
    }
}

/// Counts the records that match, in order, and keeps those inside the window.
struct PageCollector {
    let start: Int
    let end: Int
    var total = 0
    var page: [StoredRecord] = []

    init(_ window: ListQuery.Window?) { (start, end) = ListQuery.openBounds(of: window) }

    mutating func add(_ record: StoredRecord) {
        if total >= start && total < end { page.append(record) }
        total += 1
    }

    /// Whether every record of the window has been seen.
    var isComplete: Bool { total >= end }

    /// The window's part of `count` records in order.
    func cut(_ count: Int) -> Range<Int> {
        let lower = min(start, count)
        return lower..<max(lower, min(end, count))
    }

    var result: (page: [StoredRecord], total: Int) { (page, total) }
}
