import HammockJSON

/// The indexes of one ``RecordTable``: built by the first list query that needs them, then kept up to
/// date by every write, so a later query costs the page it answers rather than the table.
struct TableIndexes: Sendable {
    /// Field indexes by field name. Writes walk a copy of the names, never the dictionary itself: a loop
    /// over the dictionary would hold a second reference and make every update copy the index.
    var fields: [String: FieldIndex] = [:]
    /// The lowercased text of each record's string fields, aligned with the table's records in key
    /// order, for `q`; `nil` until a search asks for it.
    var searchTexts: [[UInt8]]?

    mutating func insert(_ record: StoredRecord, key: JSON, at position: Int, schema: ResourceSchema) {
        for field in Array(fields.keys) {
            fields[field]?.insert(FieldIndex.Entry(value: record.fields[field] ?? .null, key: key, record: record))
        }
        searchTexts?.insert(Self.searchText(of: record.fields, schema: schema), at: position)
    }

    mutating func remove(_ record: StoredRecord, key: JSON, at position: Int) {
        for field in Array(fields.keys) { fields[field]?.remove(value: record.fields[field] ?? .null, key: key) }
        searchTexts?.remove(at: position)
    }

    mutating func replace(_ old: StoredRecord, with new: StoredRecord, key: JSON, at position: Int, schema: ResourceSchema) {
        for field in Array(fields.keys) {
            fields[field]?.remove(value: old.fields[field] ?? .null, key: key)
            fields[field]?.insert(FieldIndex.Entry(value: new.fields[field] ?? .null, key: key, record: new))
        }
        if searchTexts != nil { searchTexts?[position] = Self.searchText(of: new.fields, schema: schema) }
    }

    /// The values of the string fields, each lowercased and followed by 0xFF, a byte UTF-8 never uses, so
    /// a search text cannot match across two fields.
    static func searchText(of record: JSONObject, schema: ResourceSchema) -> [UInt8] {
        var text: [UInt8] = []
        for column in schema.columns where column.type == .string {
            guard case .string(let value) = record[column.name] else { continue }
            TextMatch.appendLowercased(value, to: &text)
            text.append(0xFF)
        }
        return text
    }
}
