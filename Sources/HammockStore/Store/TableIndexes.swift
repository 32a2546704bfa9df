import HammockJSON

/// The indexes of one ``RecordTable``: made when the table reaches its indexing threshold (in the write
/// that brings it there, or at once for a table loaded whole), then kept up to date by every write, so a
/// query never waits for one to be built and costs the answer it gives rather than the table.
///
/// - A ``FieldIndex`` on every field a filter or a sort can use by order: the key and the string, date,
///   number and boolean fields (a json or blob field is filtered and sorted by a scan).
/// - A ``GramIndex`` on every string field, for `_like` and `q`.
struct TableIndexes: Sendable {
    /// Field indexes by field name. Writes walk a copy of the names, never the dictionary itself: a loop
    /// over the dictionary would hold a second reference and make every update copy the index.
    var fields: [String: FieldIndex] = [:]
    /// Text indexes by field name.
    var texts: [String: GramIndex] = [:]

    /// The indexes of `records` (with their rows).
    init(schema: ResourceSchema, records: [(row: Int, record: StoredRecord)]) {
        let keyName = schema.key.name
        for column in schema.columns where Self.ordersByIndex(column.type) || column.name == keyName {
            fields[column.name] = FieldIndex(field: column.name, keyName: keyName, records: records)
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

    mutating func insert(_ record: StoredRecord, key: JSON, row: Int, schema: ResourceSchema) {
        for field in Array(fields.keys) {
            fields[field]?.insert(FieldIndex.Entry(value: record.fields[field] ?? .null, key: key, row: Int32(row)))
        }
        for field in Array(texts.keys) { texts[field]?.insert(row: row, value: record.fields[field] ?? .null) }
    }

    mutating func remove(_ record: StoredRecord, key: JSON, row: Int, schema: ResourceSchema) {
        for field in Array(fields.keys) { fields[field]?.remove(value: record.fields[field] ?? .null, key: key) }
        for field in Array(texts.keys) { texts[field]?.remove(row: row, value: record.fields[field] ?? .null) }
    }

    mutating func replace(_ old: StoredRecord, with new: StoredRecord, key: JSON, row: Int, schema: ResourceSchema) {
        for field in Array(fields.keys) {
            let (oldValue, newValue) = (old.fields[field] ?? .null, new.fields[field] ?? .null)
            // A value in the same place of the index's order (its bytes, for a string: not `==`, which
            // equates canonically equivalent strings) keeps its entry.
            if ListQuery.compare(oldValue, newValue) == 0,
                fields[field]?.replaceValue(value: oldValue, key: key, with: newValue) == true
            {
                continue
            }
            fields[field]?.remove(value: oldValue, key: key)
            fields[field]?.insert(FieldIndex.Entry(value: newValue, key: key, row: Int32(row)))
        }
        for field in Array(texts.keys) {
            let (oldValue, newValue) = (old.fields[field] ?? .null, new.fields[field] ?? .null)
            guard !Self.sameText(oldValue, newValue) else { continue }
            texts[field]?.remove(row: row, value: oldValue)
            texts[field]?.insert(row: row, value: newValue)
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
        let fieldBytes = fields.values.reduce(0) { $0 + $1.count * MemoryLayout<FieldIndex.Entry>.stride }
        return (fieldBytes, texts.values.reduce(0) { $0 + $1.byteCount })
    }
}
