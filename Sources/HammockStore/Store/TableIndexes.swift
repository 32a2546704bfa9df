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
    /// `searchTexts` joined, for a scan of one block; dropped by every write and joined again by the next
    /// search (about 1.5 ms for 100,000 records: docs/benchmarks.md).
    var searchBlock: SearchBlock?

    mutating func insert(_ record: StoredRecord, key: JSON, at position: Int, schema: ResourceSchema) {
        for field in Array(fields.keys) {
            fields[field]?.insert(FieldIndex.Entry(value: record.fields[field] ?? .null, key: key, record: record))
        }
        searchTexts?.insert(Self.searchText(of: record.fields, schema: schema), at: position)
        searchBlock = nil
    }

    mutating func remove(_ record: StoredRecord, key: JSON, at position: Int) {
        for field in Array(fields.keys) { fields[field]?.remove(value: record.fields[field] ?? .null, key: key) }
        searchTexts?.remove(at: position)
        searchBlock = nil
    }

    mutating func replace(_ old: StoredRecord, with new: StoredRecord, key: JSON, at position: Int, schema: ResourceSchema) {
        for field in Array(fields.keys) {
            let (oldValue, newValue) = (old.fields[field] ?? .null, new.fields[field] ?? .null)
            // A value in the same place of the index's order (its bytes, for a string: not `==`, which
            // equates canonically equivalent strings) keeps its entry; only the record in it changes.
            if ListQuery.compare(oldValue, newValue) == 0,
                fields[field]?.replaceRecord(value: oldValue, key: key, with: new) == true
            {
                continue
            }
            fields[field]?.remove(value: oldValue, key: key)
            fields[field]?.insert(FieldIndex.Entry(value: newValue, key: key, record: new))
        }
        if searchTexts != nil {
            searchTexts?[position] = Self.searchText(of: new.fields, schema: schema)
            searchBlock = nil
        }
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

/// The search texts of a table in one block, each ending where the next begins. Immutable: a write drops
/// the table's block rather than changing it, so a search may scan a block outside the table's lock, and
/// the block's identity tells whether its positions still describe the table.
struct SearchBlock: Sendable {
    final class Storage: Sendable {
        let bytes: [UInt8]
        /// Where each record's text starts, and the block's end.
        let starts: [Int]

        init(bytes: [UInt8], starts: [Int]) {
            self.bytes = bytes
            self.starts = starts
        }
    }

    let storage: Storage

    init(_ texts: [[UInt8]]) {
        var bytes: [UInt8] = []
        var starts: [Int] = []
        bytes.reserveCapacity(texts.reduce(0) { $0 + $1.count })
        starts.reserveCapacity(texts.count + 1)
        for text in texts {
            starts.append(bytes.count)
            bytes.append(contentsOf: text)
        }
        starts.append(bytes.count)
        storage = Storage(bytes: bytes, starts: starts)
    }

    /// The positions of the records whose text contains `needle`, in order. An empty needle matches every
    /// record with a string value. Each text ends with 0xFF, which `needle` (UTF-8) cannot hold, so a
    /// match never spans two records.
    func matches(_ needle: [UInt8]) -> [Int] {
        let starts = storage.starts
        let records = starts.count - 1
        guard !needle.isEmpty else { return (0..<records).filter { starts[$0 + 1] > starts[$0] } }
        var result: [Int] = []
        storage.bytes.withUnsafeBytes { block in
            needle.withUnsafeBytes { needle in
                var from = 0
                var record = 0
                while record < records, let hit = TextMatch.firstOccurrence(of: needle, in: block, from: from) {
                    // The record holding the hit: the last whose start is not after it.
                    var high = records
                    while record + 1 < high {
                        let middle = (record + high) / 2
                        if starts[middle] <= hit { record = middle } else { high = middle }
                    }
                    result.append(record)
                    from = starts[record + 1]
                    record += 1
                }
            }
        }
        return result
    }
}
