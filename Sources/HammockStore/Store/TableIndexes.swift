import HammockJSON

/// The indexes of one ``RecordTable``: made when the table reaches its indexing threshold (in the write
/// that brings it there, or at once for a table loaded whole), then kept up to date by every write, so a
/// query never waits for one to be built and costs the answer it gives rather than the table.
///
/// - A ``FieldIndex`` on every field a filter or a sort can use by order: the key and the string, date,
///   number and boolean fields (a json or blob field is filtered and sorted by a scan).
/// - A ``GramIndex`` on every string field, for `_like` and `q`.
struct TableIndexes: Sendable {
    /// Field indexes by field name. Writes walk them by position (``updateEach(_:_:)``).
    var fields: [String: FieldIndex] = [:]
    /// Text indexes by field name.
    var texts: [String: GramIndex] = [:]
    /// The answers of recent conditions.
    var conditions: ConditionSets

    /// The indexes of `records` (with their rows); a condition's answer is kept when making it cost at
    /// least `keepingFrom` steps.
    init(schema: ResourceSchema, records: [(row: Int, record: StoredRecord)], keepingFrom: Int, chunkLimit: Int = 512) {
        conditions = ConditionSets(threshold: keepingFrom)
        let keyName = schema.key.name
        let keyColumn = schema.columns.firstIndex { $0.name == keyName } ?? 0
        for (column, definition) in schema.columns.enumerated()
        where Self.ordersByIndex(definition.type) || definition.name == keyName {
            fields[definition.name] = FieldIndex(
                field: definition.name, column: column, keyName: keyName, keyColumn: keyColumn, records: records,
                chunkLimit: chunkLimit)
        }
        for column in schema.columns where column.type == .string {
            var index = GramIndex()
            for (row, record) in records { index.insert(row: row, value: record.fields[column.name] ?? .null) }
            texts[column.name] = index
        }
    }

    /// Whether a field of `type` has a ``FieldIndex``.
    static func ordersByIndex(_ type: FieldType) -> Bool {
        switch type {
        case .string, .integer, .float, .boolean, .date: true
        case .blob, .json: false
        }
    }

    /// Adds `record`, now in `row` of `records`.
    mutating func insert(_ record: StoredRecord, key: JSON, row: Int, records: [StoredRecord?]) {
        Self.updateEach(&fields) { field, index in
            index.insert(row: Int32(row), value: record.fields[field] ?? .null, key: key, in: records)
        }
        Self.updateEach(&texts) { field, index in index.insert(row: row, value: record.fields[field] ?? .null) }
        conditions.update(row: row, record: record)
    }

    /// Removes `record`, which `row` of `records` still holds (field indexes find its entries by the
    /// values the records hold).
    mutating func remove(_ record: StoredRecord, key: JSON, row: Int, records: [StoredRecord?]) {
        Self.updateEach(&fields) { field, index in
            index.remove(row: Int32(row), value: record.fields[field] ?? .null, key: key, in: records)
        }
        Self.updateEach(&texts) { field, index in index.remove(row: row, value: record.fields[field] ?? .null) }
        conditions.update(row: row, record: nil)
    }

    /// Replaces `old` by `new` in `row`; `records` still holds `old` there, and the caller puts `new` in
    /// it right after.
    mutating func replace(_ old: StoredRecord, with new: StoredRecord, key: JSON, row: Int, records: [StoredRecord?]) {
        Self.updateEach(&fields) { field, index in
            let (oldValue, newValue) = (old.fields[field] ?? .null, new.fields[field] ?? .null)
            // A value in the same place of the index's order (its bytes, for a string: not `==`, which
            // equates canonically equivalent strings) leaves the index alone: the entry is the row, and
            // its value is read from the record. A PATCH of one field searched all six indexes before.
            if ListQuery.compare(oldValue, newValue) == 0 { return }
            index.remove(row: Int32(row), value: oldValue, key: key, in: records)
            // The row is out of the index, so the search for the new place never reads its old record.
            index.insert(row: Int32(row), value: newValue, key: key, in: records)
        }
        Self.updateEach(&texts) { field, index in
            let (oldValue, newValue) = (old.fields[field] ?? .null, new.fields[field] ?? .null)
            guard !Self.sameText(oldValue, newValue) else { return }
            index.remove(row: row, value: oldValue)
            index.insert(row: row, value: newValue)
        }
        conditions.update(row: row, record: new)
    }

    /// Calls `body` with each index of `indexes` and its field, changing the index in place. It walks the
    /// dictionary by position: a `for` loop over it would hold a second reference and make every change
    /// copy the index, and a walk over a copy of the names (as before) made an array and hashed each name
    /// again, on every write, under the table's lock: a `POST` at 100,000 records cost 69-75 µs of CPU
    /// against 64-70 this way, in alternate rounds (docs/benchmarks.md, "Seventh step").
    private static func updateEach<Index>(_ indexes: inout [String: Index], _ body: (String, inout Index) -> Void) {
        var position = indexes.startIndex
        while position != indexes.endIndex {
            let field = indexes.keys[position]
            body(field, &indexes.values[position])
            position = indexes.index(after: position)
        }
    }

    /// Whether two values index the same grams: the same string, byte for byte, or two non-strings.
    private static func sameText(_ left: JSON, _ right: JSON) -> Bool {
        switch (left, right) {
        case (.string(let a), .string(let b)): a.utf8.elementsEqual(b.utf8)
        case (.string, _), (_, .string): false
        default: true
        }
    }

    /// Bytes held by the indexes, by kind (for docs/benchmarks.md).
    var byteCounts: (fields: Int, texts: Int) {
        let fieldBytes = fields.values.reduce(0) { $0 + $1.byteCount }
        return (fieldBytes, texts.values.reduce(0) { $0 + $1.byteCount })
    }
}

/// The rows that answered recent conditions (one filter, or `q`), kept up to date by every write: a list
/// read again (the next page, a refresh, another sort of the same filter) costs its page, not its
/// conditions. A condition is kept when making its set cost at least `threshold` steps (a run of a field
/// index turned into a set, or a text search confirmed on records); the least recently used goes when
/// `limit` are kept. Each write checks the written record against every kept condition: at most `limit`
/// matcher calls.
struct ConditionSets: Sendable {
    /// A condition, byte for byte: values serialized, so that strings that Swift's `==` equates but the
    /// index orders apart (composed and decomposed accents) are different conditions.
    struct Key: Hashable, Sendable {
        let bytes: [UInt8]

        init(_ filter: ListQuery.Filter) {
            var bytes = Array("\(filter.field)\u{0}\(filter.comparison)\u{0}".utf8)
            bytes += JSON.array(filter.values).serialized()
            self.bytes = bytes
        }

        init(search: String) { bytes = [1] + Array(search.utf8) }
    }

    private struct Entry: Sendable {
        let key: Key
        let matcher: ListQuery.Matcher
        var rows: RowSet
        var lastUse: Int
    }

    static let limit = 16
    let threshold: Int
    private var entries: [Entry] = []
    private var uses = 0

    init(threshold: Int) { self.threshold = threshold }

    /// The rows of `key`, if kept.
    mutating func rows(of key: Key) -> RowSet? {
        guard let position = entries.firstIndex(where: { $0.key == key }) else { return nil }
        uses += 1
        entries[position].lastUse = uses
        return entries[position].rows
    }

    /// Keeps `rows` as the answer of `key`, which `matcher` evaluates on one record.
    mutating func keep(_ rows: RowSet, of key: Key, matcher: ListQuery.Matcher) {
        uses += 1
        if let position = entries.firstIndex(where: { $0.key == key }) {
            entries[position].rows = rows
            entries[position].lastUse = uses
            return
        }
        if entries.count >= Self.limit, let oldest = entries.indices.min(by: { entries[$0].lastUse < entries[$1].lastUse }) {
            entries.remove(at: oldest)
        }
        entries.append(Entry(key: key, matcher: matcher, rows: rows, lastUse: uses))
    }

    /// Notes that `row` now holds `record` (`nil`: nothing).
    mutating func update(row: Int, record: StoredRecord?) {
        for position in entries.indices {
            if let record, entries[position].matcher.matches(record.fields) {
                entries[position].rows.insert(row)
            } else {
                entries[position].rows.remove(row)
            }
        }
    }
}
