import HammockJSON

extension RecordTable {
    /// From this many records a table keeps indexes: below, a query scans the table, which costs less
    /// than keeping indexes up to date on every write.
    package static let indexingThreshold = 1_000

    /// The records that answer `query`, as ``ListQuery/apply(to:schema:)`` would, without reading the
    /// whole table when its indexes can say where the answer is. The plan:
    ///
    /// 1. Each condition an index answers becomes rows: an equality, range or `_null` filter is runs of
    ///    its ``FieldIndex``; a `_like` filter or `q` is rows of the ``GramIndex`` of each string field,
    ///    exact for a needle of up to three bytes, a superset that the records confirm for a longer one.
    /// 2. One equality value with nothing else to check and no sort is a slice of its index: the page,
    ///    and the run's length the total. Otherwise the conditions within 16 times the smallest one's
    ///    size are made sets and intersected (``RowSet``), rarest first; the rest, and the conditions no
    ///    index answers (`_ne`, a json field), are checked on the records that remain.
    /// 3. The total is the final set's size. The page is read by walking the first sort field's index
    ///    (or the key order) and keeping the rows in the set until the window is full, or, when the set
    ///    is small enough that walking would pass over many more rows than it holds, by a bounded heap
    ///    over the set's records (``TopRecords``).
    ///
    /// Without any indexed condition a sort walks its field's index, and anything else scans.
    package mutating func answer(_ query: ListQuery) -> (page: [StoredRecord], total: Int) {
        guard let indexes, !query.filters.isEmpty || query.search != nil || !query.sort.isEmpty else {
            return query.apply(to: ordered, schema: schema)
        }
        // What no index answers (`_ne`, a json field), checked on the records that remain.
        var residual = query
        residual.filters = []
        residual.search = nil
        var conditions: [Planned] = []
        for filter in query.filters {
            let planned = Planned(key: ConditionSets.Key(filter), alone: ListQuery(filters: [filter]))
            if let kept = self.indexes?.conditions.rows(of: planned.key) {
                conditions.append(planned.with(.rows(kept, exact: true)))
            } else if let condition = condition(for: filter, indexes) {
                conditions.append(planned.with(condition))
            } else {
                residual.filters.append(filter)
            }
        }
        if let search = query.search {
            let planned = Planned(key: ConditionSets.Key(search: search), alone: ListQuery(search: search))
            let kept = self.indexes?.conditions.rows(of: planned.key)
            conditions.append(planned.with(kept.map { .rows($0, exact: true) } ?? searchCondition(for: search, indexes)))
        }
        let matcher = Self.matcher(residual, schema)
        guard let smallest = conditions.map(\.condition.size).min() else {
            // Nothing an index answers: a sort walks its index, checking each record; the rest scans.
            if let first = query.sort.first, let index = indexes.fields[first.field] {
                return walked(index, sort: query.sort, window: query.window, total: nil, accepts: matcher.map(Accepted.records))
            }
            return query.apply(to: ordered, schema: schema)
        }
        if conditions.count == 1, matcher == nil, query.sort.isEmpty,
            case .runs(let index, let runs, _) = conditions[0].condition, runs.areInKeyOrder
        {
            // One run of equal values is in key order: the answer is a slice of it.
            let run = runs.ranges.first ?? 0..<0
            let cut = PageCollector(query.window).cut(run.count)
            let rows = index.rows(in: (run.lowerBound + cut.lowerBound)..<(run.lowerBound + cut.upperBound))
            return (rows.map { record(inRow: $0) }, run.count)
        }
        // The conditions worth a set (confirmed on records if the index gave a superset, and kept if that
        // cost enough); the others are checked on the records that remain.
        var sets: [RowSet] = []
        var checked = residual
        for planned in conditions {
            guard planned.condition.size <= smallest * 16 else {
                checked.filters += planned.alone.filters
                checked.search = checked.search ?? planned.alone.search
                continue
            }
            var rows = planned.condition.rows
            var cost = planned.condition.buildCost
            if !planned.condition.isExact, let alone = Self.matcher(planned.alone, schema) {
                var confirmed = RowSet()
                for row in rows where alone.matches(record(inRow: row).fields) { confirmed.insert(row) }
                cost = rows.count
                rows = confirmed
            }
            if cost >= indexes.conditions.threshold, let alone = Self.matcher(planned.alone, schema) {
                self.indexes?.conditions.keep(rows, of: planned.key, matcher: alone)
            }
            sets.append(rows)
        }
        sets.sort { $0.count < $1.count }
        var found = sets[0]
        for set in sets.dropFirst() where !found.isEmpty { found = found.intersection(set) }
        if let confirm = Self.matcher(checked, schema) {
            var confirmed = RowSet()
            for row in found where confirm.matches(record(inRow: row).fields) { confirmed.insert(row) }
            found = confirmed
        }
        return page(of: found, query: query)
    }

    /// A condition of a query: its key among kept answers, the query of it alone, and what answers it.
    private struct Planned {
        let key: ConditionSets.Key
        let alone: ListQuery
        var condition = Condition.rows(RowSet(), exact: true)

        func with(_ condition: Condition) -> Planned {
            var planned = self
            planned.condition = condition
            return planned
        }
    }

    /// A condition an index answers: runs of a field index, or rows.
    private enum Condition {
        case runs(FieldIndex, Runs, size: Int)
        /// Rows; `exact` when they are the answer, not a superset the records must confirm.
        case rows(RowSet, exact: Bool)

        var size: Int {
            switch self {
            case .runs(_, _, let size): size
            case .rows(let rows, _): rows.count
            }
        }

        var isExact: Bool {
            switch self {
            case .runs: true
            case .rows(_, let exact): exact
            }
        }

        /// The steps ``rows`` takes: an entry of a run each; none for rows already made.
        var buildCost: Int {
            switch self {
            case .runs(_, _, let size): size
            case .rows: 0
            }
        }

        /// The rows, as a set.
        var rows: RowSet {
            switch self {
            case .rows(let rows, _): return rows
            case .runs(let index, let runs, _):
                var rows = RowSet()
                for run in runs.ranges {
                    index.walk(run) { row in
                        rows.insert(Int(row))
                        return true
                    }
                }
                return rows
            }
        }
    }

    private func condition(for filter: ListQuery.Filter, _ indexes: TableIndexes) -> Condition? {
        if filter.comparison == .like {
            guard let texts = indexes.texts[filter.field] else { return nil }
            var rows = RowSet()
            var exact = true
            for pattern in ListQuery.Matcher.likePatterns(filter.values) {
                let candidates = texts.candidates(for: pattern)
                rows = rows.isEmpty ? candidates.rows : rows.union(candidates.rows)
                exact = exact && candidates.exact
            }
            return .rows(rows, exact: exact)
        }
        guard let index = indexes.fields[filter.field], let runs = runs(of: filter, in: index) else { return nil }
        return .runs(index, runs, size: runs.ranges.reduce(0) { $0 + $1.count })
    }

    /// `q`: the rows of every string field that may hold the needle.
    private func searchCondition(for search: String, _ indexes: TableIndexes) -> Condition {
        let needle = ListQuery.Matcher.searchNeedle(search)
        var rows = RowSet()
        var exact = true
        for column in schema.columns where column.type == .string {
            guard let texts = indexes.texts[column.name] else { continue }
            let candidates = texts.candidates(for: [needle])
            rows = rows.isEmpty ? candidates.rows : rows.union(candidates.rows)
            exact = exact && candidates.exact
        }
        return .rows(rows, exact: exact)
    }

    /// The window of `rows` in the query's order, and their count.
    private func page(of rows: RowSet, query: ListQuery) -> (page: [StoredRecord], total: Int) {
        let (_, end) = ListQuery.openBounds(of: query.window)
        guard !rows.isEmpty, end > 0 else { return ([], rows.count) }
        if query.sort.isEmpty, rowsFollowKeys {
            // Key order is row order: the page is the set's rows at the window's ranks.
            let cut = PageCollector(query.window).cut(rows.count)
            return (rows.rows(ranked: cut).map { record(inRow: $0) }, rows.count)
        }
        // A walk passes over about `end × count / rows` rows to fill the window, each a set lookup; the
        // heap reads each of the set's records once, a cache miss each at a million records: about ten
        // lookups' worth.
        let walkIsShorter =
            end <= rows.count && end.multipliedReportingOverflow(by: count).partialValue / rows.count <= rows.count * 10
        if walkIsShorter {
            // A flat bitmap costs a word per 64 rows of the table to make (16,384 at a million) and then
            // a load per test; the set's own test searches its chunks (a few steps). Made only for a walk
            // that tests more entries than the bitmap has words.
            let walk = end.multipliedReportingOverflow(by: count).partialValue / rows.count
            let accepts = walk > count / 64 ? Accepted.bitmap(RowBitmap(rows)) : .rows(rows)
            if let first = query.sort.first, let index = indexes?.fields[first.field] {
                return walked(index, sort: query.sort, window: query.window, total: rows.count, accepts: accepts)
            }
            if query.sort.isEmpty {
                var collector = PageCollector(query.window)
                for row in orderedRows where accepts.contains(Int(row)) {
                    collector.add(record(inRow: Int(row)))
                    if collector.isComplete { break }
                }
                return (collector.page, rows.count)
            }
        }
        var top = TopRecords(window: query.window, order: RecordOrder(keys: query.sort, keyName: schema.key.name))
        for row in rows { top.add(record(inRow: row)) }
        return top.result
    }

    /// A sort walked along the index of its first field, run of equal values by run of equal values,
    /// keeping the records `accepts` takes (every record without it), until the page is complete. With
    /// the `total` known the walk stops there; without it, it goes on to count, unless every record is
    /// accepted.
    private func walked(
        _ index: FieldIndex, sort: [ListQuery.SortKey], window: ListQuery.Window?, total: Int?, accepts: Accepted?
    ) -> (page: [StoredRecord], total: Int) {
        var collector = PageCollector(window)
        let first = sort[0]
        let keyName = schema.key.name
        let laterKeys = Array(sort.dropFirst())
        let acceptsAll = total == nil && accepts == nil
        if acceptsAll, laterKeys.isEmpty {
            // Every record is in the answer, in the index's order with each run of equal values in key
            // order: the window's rows are found by position, without walking the runs it crosses (a run
            // of one name is 625 people at a million).
            let window = collector.cut(index.count)
            var rows: [Int] = []
            if first.isDescending {
                var run = 0..<0
                for position in window {
                    let mirrored = index.count - 1 - position
                    if !run.contains(mirrored) { run = index.run(containing: mirrored, in: slots) }
                    // The run's records take the answer's positions from `count - run.upperBound`, by key.
                    rows.append(Int(index.row(at: run.lowerBound + position - (index.count - run.upperBound))))
                }
            } else {
                rows = index.rows(in: window)
            }
            return (rows.map { record(inRow: $0) }, index.count)
        }
        var walked = 0..<index.count
        if acceptsAll {
            // Every record is in the answer, and a run takes as many places in the answer as in the index:
            // only the runs that overlap the window are read.
            let window = collector.cut(index.count)
            guard let last = window.last else { return ([], index.count) }
            let low = first.isDescending ? index.count - 1 - last : window.lowerBound
            let high = first.isDescending ? index.count - window.lowerBound : last + 1
            let start = index.bound(of: index.value(of: index.row(at: low), in: slots), after: false, in: slots)
            let end = index.bound(of: index.value(of: index.row(at: high - 1), in: slots), after: true, in: slots)
            walked = start..<end
            collector.total = first.isDescending ? index.count - walked.upperBound : walked.lowerBound
        }
        var run: [Int] = []
        var runValue = JSON.null
        // A run comes out in key order (reversed when walking down), then in the later keys' order.
        // Without later keys a run's place in the answer is known, and only the records inside the
        // window are read: a run of one name is 625 people at a million, and reading all of them to keep
        // twenty was most of a sorted page's CPU.
        func flush() {
            if first.isDescending { run.reverse() }
            if laterKeys.isEmpty {
                for row in run { collector.add { record(inRow: row) } }
            } else {
                var records = run.map { record(inRow: $0) }
                records.sort { ListQuery.precedes($0, $1, by: laterKeys, keyName: keyName) }
                for record in records { collector.add(record) }
            }
            run.removeAll(keepingCapacity: true)
        }
        let stops = acceptsAll || total != nil
        index.walk(walked, reversed: first.isDescending) { entryRow in
            let row = Int(entryRow)
            // A set answers by row, first: most entries of a walk are not kept, and each is then passed
            // over without reading its value or its record (a cache miss each at a million records).
            switch accepts {
            case .rows(let rows): if !rows.contains(row) { return true }
            case .bitmap(let bitmap): if !bitmap.contains(row) { return true }
            case .records(let matcher): if !matcher.matches(record(inRow: row).fields) { return true }
            case nil: break
            }
            // Kept entries of equal values are next to each other among the kept ones: runs are found
            // on them alone.
            let value = index.value(of: entryRow, in: slots)
            if !run.isEmpty, ListQuery.compare(value, runValue) != 0 {
                flush()
                if stops, collector.isComplete { return false }
            }
            if run.isEmpty { runValue = value }
            run.append(row)
            return true
        }
        flush()
        if acceptsAll { collector.total = count }
        if let total { collector.total = total }
        return collector.result
    }

    /// What a walk keeps: the rows of a set, or the records a matcher passes.
    private enum Accepted {
        case rows(RowSet)
        /// The same rows as one flat bitmap: quicker to test, slower to make (a pass over every chunk).
        case bitmap(RowBitmap)
        case records(ListQuery.Matcher)

        /// Whether `row` is in the rows (a matcher's case is not asked by row).
        func contains(_ row: Int) -> Bool {
            switch self {
            case .rows(let rows): rows.contains(row)
            case .bitmap(let bitmap): bitmap.contains(row)
            case .records: true
            }
        }
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

    /// The runs of `index` that hold the records passing `filter`, in index order; `nil` for a filter an
    /// index cannot answer (`_ne`, `_like`).
    private func runs(of filter: ListQuery.Filter, in index: FieldIndex) -> Runs? {
        var firstNonNull: Int { index.bound(of: .null, after: true, in: slots) }
        switch filter.comparison {
        case .notEqual, .like: return nil
        case .equal:
            let runs = filter.values.map {
                index.bound(of: $0, after: false, in: slots)..<index.bound(of: $0, after: true, in: slots)
            }
            // Repeated values give the same run: keep each once.
            var distinct: [Range<Int>] = []
            for run in runs.sorted(by: { $0.lowerBound < $1.lowerBound }) where !run.isEmpty {
                if let last = distinct.last, run.lowerBound < last.upperBound { continue }
                distinct.append(run)
            }
            return Runs(distinct, ofOneValue: true)
        case .null:
            if filter.values.allSatisfy({ $0.boolValue == true }) { return Runs([0..<firstNonNull], ofOneValue: true) }
            if filter.values.allSatisfy({ $0.boolValue == false }) {
                return Runs([firstNonNull..<index.count], ofOneValue: false)
            }
            return Runs([], ofOneValue: true)
        case .greater, .greaterOrEqual, .less, .lessOrEqual:
            var lower = firstNonNull
            var upper = index.count
            for value in filter.values {
                switch filter.comparison {
                case .greater: lower = max(lower, index.bound(of: value, after: true, in: slots))
                case .greaterOrEqual: lower = max(lower, index.bound(of: value, after: false, in: slots))
                case .less: upper = min(upper, index.bound(of: value, after: false, in: slots))
                default: upper = min(upper, index.bound(of: value, after: true, in: slots))
                }
            }
            return Runs(lower < upper ? [lower..<upper] : [], ofOneValue: false)
        }
    }

    /// A matcher for the filters and search of `query`; `nil` when it has neither.
    private static func matcher(_ query: ListQuery, _ schema: ResourceSchema) -> ListQuery.Matcher? {
        query.filters.isEmpty && query.search == nil ? nil : ListQuery.Matcher(query: query, schema: schema)
    }
}

/// An order of records: by sort keys, then by key (``ListQuery/precedes(_:_:by:keyName:)``).
struct RecordOrder {
    let keys: [ListQuery.SortKey]
    let keyName: String

    /// A record with the value of the order's first field (the key without sort keys), read once: a
    /// field is found by its name in the record, and finding it at every comparison of a heap and its
    /// final sort was most of a small table's filtered page.
    struct Ranked {
        let first: JSON
        let record: StoredRecord
    }

    func ranked(_ record: StoredRecord) -> Ranked {
        Ranked(first: record.fields[keys.first?.field ?? keyName] ?? .null, record: record)
    }

    func precedes(_ left: StoredRecord, _ right: StoredRecord) -> Bool { precedes(ranked(left), ranked(right)) }

    func precedes(_ left: Ranked, _ right: Ranked) -> Bool {
        guard let first = keys.first else { return keyPrecedes(left.first, right.first) }
        let order = ListQuery.compare(left.first, right.first)
        if order != 0 { return first.isDescending ? order > 0 : order < 0 }
        return ListQuery.precedes(left.record, right.record, by: Array(keys.dropFirst()), keyName: keyName)
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
    private var kept: [RecordOrder.Ranked] = []

    init(window: ListQuery.Window?, order: RecordOrder) {
        (start, end) = ListQuery.openBounds(of: window)
        self.order = order
    }

    mutating func add(_ record: StoredRecord) {
        total += 1
        guard end > 0 else { return }
        let ranked = order.ranked(record)
        if kept.count < end {
            kept.append(ranked)
            if kept.count == end, end != Int.max { makeHeap() }
            return
        }
        // Full: the record belongs only if it comes before the root, which it then replaces.
        guard order.precedes(ranked, kept[0]) else { return }
        kept[0] = ranked
        siftDown(from: 0)
    }

    /// The window's records in order, and the total.
    var result: (page: [StoredRecord], total: Int) {
        guard start < kept.count else { return ([], total) }
        // Positions are sorted, not the records: moving a record copies its fields (a retain and a
        // release each), and sorting 45 of them that way was a third of a small table's filtered page.
        let order = self.order
        return kept.withUnsafeBufferPointer { ranked in
            let sorted = ranked.indices.sorted { order.precedes(ranked[$0], ranked[$1]) }
            return (sorted[start...].map { ranked[$0].record }, total)
        }
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

    /// Counts a record, made by `record` only if it is inside the window.
    mutating func add(_ record: () -> StoredRecord) {
        if total >= start && total < end { page.append(record()) }
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
