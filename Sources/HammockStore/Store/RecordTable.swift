package import HammockJSON
import Synchronization

/// One resource's records in memory, ordered by key. Shared by ``MemoryStore`` and the read mirror of
/// ``SQLiteStore``, so both answer reads with the same code.
///
/// Each record has a row: a number that stays its own while it lives (a removed record's row is handed
/// to a later one), by which indexes name it (``RowSet``, ``FieldIndex``, ``GramIndex``).
package struct RecordTable: Sendable {
    package var schema: ResourceSchema {
        // Field types may have changed: the indexes are made again for the new columns (only then: at
        // a million records that takes seconds, and a reload that changes nothing sets the schema).
        didSet {
            guard oldValue.columns != schema.columns || oldValue.key != schema.key else { return }
            shape = Self.shape(of: schema)
            rebuildIndexes()
        }
    }
    /// An object with the schema's columns as keys, in order: a record with exactly those keys shares
    /// their storage (``JSONObject/init(keysOf:values:)``) instead of holding its own copy.
    private var shape: JSONObject
    /// Rows by key, strings compared by their bytes (``RecordKey``), as the key order is.
    private var rowNumbers = RowsByKey()
    /// Records by row; `nil` for a row free for the next insert.
    private(set) var slots: [StoredRecord?] = []
    private var freeRows: [Int32] = []
    /// Whether ascending rows are ascending keys: true while every insert took a new last row for a key
    /// above every other (what loading and generated keys do), so a list in key order is its rows in
    /// order. Freed rows are reused once it is false, or once they are half the rows (then it becomes
    /// false): a table that keeps removing old records and adding new ones does not grow without end.
    private(set) var rowsFollowKeys = true
    /// Keys in ascending order.
    package private(set) var order: [JSON] = []
    /// The records in key order, beside `order`: a list is this array, with no lookup per record.
    package private(set) var ordered: [StoredRecord] = []
    /// The rows in key order, beside `order`.
    private(set) var orderedRows: [Int32] = []
    /// The highest generated key handed out, so keys are never reused.
    package var lastGeneratedKey = 0
    /// From how many records the table keeps indexes (``indexingThreshold`` unless a test asks for less).
    let indexingFrom: Int
    let chunkLimit: Int
    /// The table's indexes once it holds `indexingFrom` records, kept up to date by every write; `nil`
    /// below, where a query scans (see ``answer(_:)``).
    var indexes: TableIndexes?

    /// `chunkLimit`: how many rows a chunk of a field index holds before it splits (fewer in tests, so
    /// that a few records make many chunks).
    package init(schema: ResourceSchema, indexingFrom threshold: Int = Self.indexingThreshold, chunkLimit: Int = 512) {
        self.schema = schema
        shape = Self.shape(of: schema)
        indexingFrom = threshold
        self.chunkLimit = chunkLimit
        if threshold <= 0 { indexes = TableIndexes(schema: schema, records: [], keepingFrom: 0, chunkLimit: chunkLimit) }
    }

    /// A table of `records`, in key order with distinct keys (a snapshot's), with its indexes if it is
    /// large enough: rows follow keys, each record's row its position.
    package init(
        schema: ResourceSchema, restoring records: [StoredRecord], lastGeneratedKey: Int,
        indexingFrom threshold: Int = Self.indexingThreshold
    ) {
        self.init(schema: schema, indexingFrom: threshold)
        let keyName = schema.key.name
        // A list of its own, not the snapshot's: shared, the first write after a restore copied it under
        // the store's lock (a restore builds its tables before taking it). `slots` is a new array already,
        // of optionals.
        ordered = records.withUnsafeBufferPointer { Array($0) }
        order = records.map { $0.fields[keyName] ?? .null }
        slots = records
        orderedRows = Array(0..<Int32(records.count))
        rowNumbers.reserveCapacity(records.count)
        for (row, key) in order.enumerated() { rowNumbers[RecordKey(key)] = Int32(row) }
        self.lastGeneratedKey = lastGeneratedKey
        rebuildIndexes()
    }

    package var count: Int { order.count }

    package func record(withKey key: JSON) -> JSONObject? { storedRecord(withKey: key)?.fields }

    private static func shape(of schema: ResourceSchema) -> JSONObject {
        var shape = JSONObject(minimumCapacity: schema.columns.count)
        for column in schema.columns { shape[column.name] = .null }
        return shape
    }

    /// `record`, stored: sharing the shape's keys when it has exactly the schema's columns in order (a
    /// made record does), as it is otherwise.
    private func stored(_ record: JSONObject) -> StoredRecord {
        guard record.hasKeys(shape.keys) else { return StoredRecord(record) }
        return StoredRecord(JSONObject(keysOf: shape, values: record.values))
    }

    package func storedRecord(withKey key: JSON) -> StoredRecord? {
        rowNumbers[RecordKey(key)].flatMap { slots[Int($0)] }
    }

    package var storedRecords: [StoredRecord] { ordered }

    /// The record in `row` (a row an index named, so one that holds a record).
    func record(inRow row: Int) -> StoredRecord {
        // Indexes name only rows that hold records: every write that empties a row removes it from them.
        guard let record = slots[row] else { preconditionFailure("row \(row) of an index holds no record") }
        return record
    }

    /// The records whose `foreignKey` is `parentKey`, in key order: from the field's index in a large
    /// table, by a scan in a small one.
    package mutating func storedRecords(where foreignKey: String, is parentKey: JSON) -> [StoredRecord] {
        guard indexes != nil else {
            return ordered.filter { ($0.fields[foreignKey] ?? .null).isSameKey(as: parentKey) }
        }
        return answer(ListQuery(filters: [ListQuery.Filter(field: foreignKey, values: [parentKey])])).page
    }

    /// Inserts a complete record under `key` (which must be free).
    package mutating func insert(_ record: JSONObject, key: JSON) {
        let stored = stored(record)
        let row: Int32
        let isLastKey = order.last.map { keyPrecedes($0, key) } ?? true
        if !isLastKey || freeRows.count * 2 > slots.count { rowsFollowKeys = false }
        // Rows freed by removals are reused once rows no longer follow keys; before, a new key above the
        // others takes a new last row and keeps them in step (a hole costs a slot of 40 bytes).
        if !rowsFollowKeys, let free = freeRows.popLast() {
            row = free
            slots[Int(row)] = stored
        } else {
            row = Int32(slots.count)
            slots.append(stored)
        }
        rowNumbers[RecordKey(key)] = row
        if case .integer(let number) = key { lastGeneratedKey = max(lastGeneratedKey, number) }
        let position: Int
        if let last = order.last, !keyPrecedes(last, key) {
            position = self.position(of: key)
            order.insert(key, at: position)
            ordered.insert(stored, at: position)
            orderedRows.insert(row, at: position)
        } else {
            position = order.count
            order.append(key)
            ordered.append(stored)
            orderedRows.append(row)
        }
        if indexes != nil {
            indexes?.insert(stored, key: key, row: Int(row), records: slots)
        } else if count >= indexingFrom {
            // Built once, in the write that brings the table to the threshold: never by a query.
            rebuildIndexes()
        }
    }

    /// Replaces the record with `key` by `record` (every column; the key itself never changes); `false`
    /// if there is none.
    @discardableResult
    package mutating func replace(_ record: JSONObject, key: JSON) -> Bool {
        guard let row = rowNumbers[RecordKey(key)], let old = slots[Int(row)] else { return false }
        let stored = stored(record)
        // The indexes first: they find the row's entries by the values its slot still holds.
        indexes?.replace(old, with: stored, key: key, row: Int(row), records: slots)
        slots[Int(row)] = stored
        let position = position(of: key)
        ordered[position] = stored
        return true
    }

    package mutating func remove(key: JSON) -> Bool {
        guard let row = rowNumbers.removeValue(forKey: RecordKey(key)), let old = slots[Int(row)] else { return false }
        indexes?.remove(old, key: key, row: Int(row), records: slots)
        slots[Int(row)] = nil
        freeRows.append(row)
        let position = position(of: key)
        order.remove(at: position)
        ordered.remove(at: position)
        orderedRows.remove(at: position)
        return true
    }

    /// Sets `foreignKey` to null wherever it equals `parentKey`.
    package mutating func orphan(foreignKey: String, of parentKey: JSON) {
        for index in ordered.indices {
            let old = ordered[index]
            guard (old.fields[foreignKey] ?? .null).isSameKey(as: parentKey) else { continue }
            var fields = old.fields
            fields[foreignKey] = .null
            let stored = stored(fields)
            let row = Int(orderedRows[index])
            indexes?.replace(old, with: stored, key: order[index], row: row, records: slots)
            ordered[index] = stored
            slots[row] = stored
        }
    }

    /// How many steps making a condition's rows must cost for its answer to be kept (``ConditionSets``):
    /// 1,024, about a microsecond's work below which keeping costs more than it saves; fewer for a table
    /// indexed from fewer records (tests of the planner, which then keep every condition).
    static func conditionKeepingThreshold(_ indexingFrom: Int) -> Int { min(1_024, max(0, indexingFrom)) }

    /// Makes the indexes anew from the records, if the table is large enough to keep them.
    private mutating func rebuildIndexes() {
        guard count >= indexingFrom else {
            indexes = nil
            return
        }
        indexes = TableIndexes(
            schema: schema, records: orderedRows.indices.map { (Int(orderedRows[$0]), ordered[$0]) },
            keepingFrom: Self.conditionKeepingThreshold(indexingFrom), chunkLimit: chunkLimit)
    }

    private func position(of key: JSON) -> Int {
        var low = 0
        var high = order.count
        while low < high {
            let middle = (low + high) / 2
            if keyPrecedes(order[middle], key) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

/// Record tables by resource name, with the operations both stores need under their lock.
package struct RecordTables: Sendable {
    private var tables: [String: RecordTable] = [:]
    /// When each resource last changed: kept with the records, so that a write and its date are one step.
    package var modifications = ModificationLog()
    /// From how many records a new table keeps indexes (``RecordTable/indexingThreshold``; less in tests
    /// of the planner, which then runs on a few records).
    package let indexingFrom: Int

    package init(indexingFrom: Int = RecordTable.indexingThreshold) { self.indexingFrom = indexingFrom }

    package func table(_ schema: ResourceSchema) throws(StoreError) -> RecordTable {
        guard let table = tables[schema.name] else { throw StoreError.unknownResource(schema.name) }
        return table
    }

    /// Adds a table, or updates the schema of an existing one: its records stay, reshaped to the new
    /// columns (a new field is `null`, a field no longer declared is gone).
    package mutating func add(_ schema: ResourceSchema) {
        guard let existing = tables[schema.name] else {
            tables[schema.name] = RecordTable(schema: schema, indexingFrom: indexingFrom)
            return
        }
        guard existing.schema.columns != schema.columns else {
            tables[schema.name]?.schema = schema
            return
        }
        var table = RecordTable(schema: schema, indexingFrom: indexingFrom)
        for record in existing.storedRecords {
            let key = record.fields[schema.key.name] ?? .null
            table.insert(schema.makeRecord(key: key, values: record.fields), key: key)
        }
        table.lastGeneratedKey = existing.lastGeneratedKey
        tables[schema.name] = table
    }

    package mutating func replace(_ table: RecordTable) { tables[table.schema.name] = table }

    /// The schemas of every table.
    package var schemas: [ResourceSchema] { tables.values.map(\.schema) }

    package mutating func drop(_ schema: ResourceSchema) { tables.removeValue(forKey: schema.name) }

    /// Mutates one table in place (taken out of the dictionary so its storage is not copied).
    package mutating func mutate<Result>(
        _ schema: ResourceSchema, _ body: (inout RecordTable) throws(StoreError) -> Result
    )
        throws(StoreError) -> Result
    {
        guard var table = tables.removeValue(forKey: schema.name) else { throw StoreError.unknownResource(schema.name) }
        defer { tables[schema.name] = table }
        return try body(&table)
    }

    /// The children (resource, foreign key) that point at `schema`.
    package func children(of schema: ResourceSchema) -> [(ResourceSchema, ResourceSchema.ForeignKey)] {
        tables.values.flatMap { table in
            table.schema.foreignKeys.filter { $0.parent == schema.name }.map { (table.schema, $0) }
        }
    }
}

/// The tables as a unit of work for ``StoreRules``: ``MemoryStore`` runs a write on them under their
/// lock, and `SQLiteStore` applies a committed write's changes with the same operations.
extension RecordTables: StoreTransaction {
    package mutating func record(of schema: ResourceSchema, withKey key: JSON) throws -> JSONObject? {
        try table(schema).record(withKey: key)
    }

    package mutating func keys(of schema: ResourceSchema, where foreignKey: String, is parentKey: JSON) throws -> [JSON] {
        try mutate(schema) { table in
            table.storedRecords(where: foreignKey, is: parentKey).map { $0.fields[schema.key.name] ?? .null }
        }
    }

    package mutating func insert(_ record: JSONObject, of schema: ResourceSchema) throws -> JSONObject {
        try mutate(schema) { table in
            var record = record
            var key = record[schema.key.name] ?? .null
            if key.isNull {
                key = .integer(table.lastGeneratedKey + 1)
                record[schema.key.name] = key
            }
            table.insert(record, key: key)
            return record
        }
    }

    package mutating func replace(_ record: JSONObject, of schema: ResourceSchema) throws {
        try mutate(schema) { table in _ = table.replace(record, key: record[schema.key.name] ?? .null) }
    }

    package mutating func remove(key: JSON, of schema: ResourceSchema) throws {
        try mutate(schema) { table in _ = table.remove(key: key) }
    }

    package mutating func noteChange(of resources: [String], at second: Int) {
        modifications.noteChange(of: resources, at: second)
    }
}

/// Record tables behind one lock, with the read operations both stores answer the same way.
package final class LockedRecordTables: Sendable {
    private let tables: Mutex<RecordTables>

    package init(indexingFrom: Int = RecordTable.indexingThreshold) {
        tables = Mutex(RecordTables(indexingFrom: indexingFrom))
    }

    /// From how many records a table keeps indexes.
    package var indexingFrom: Int { tables.withLock { $0.indexingFrom } }

    /// Runs `body` with exclusive access. Keep it short: no suspension is possible inside.
    package func withLock<Result, Failure: Error>(
        _ body: (inout RecordTables) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try tables.withLock { tables throws(Failure) in try body(&tables) }
    }

    package func count(of schema: ResourceSchema) throws(StoreError) -> Int {
        try withLock { tables throws(StoreError) in try tables.table(schema).count }
    }

    // The plain reads are the stored ones without their bytes, mapped outside the lock.
    package func record(of schema: ResourceSchema, withKey key: JSON) throws(StoreError) -> JSONObject? {
        try storedRecord(of: schema, withKey: key)?.fields
    }

    package func records(of schema: ResourceSchema) throws(StoreError) -> [JSONObject] {
        try storedRecords(of: schema).map(\.fields)
    }

    package func records(
        of schema: ResourceSchema, where foreignKey: ResourceSchema.ForeignKey, is parentKey: JSON
    )
        throws(StoreError) -> [JSONObject]
    {
        try storedRecords(of: schema, where: foreignKey, is: parentKey).map(\.fields)
    }

    /// The records that answer `query`, from the table's indexes. A search reads posting lists, and the
    /// records only to confirm a needle longer than three bytes.
    package func answer(_ query: ListQuery, of schema: ResourceSchema) throws(StoreError) -> (page: [StoredRecord], total: Int) {
        try withLock { tables throws(StoreError) in try tables.mutate(schema) { table in table.answer(query) } }
    }

    package func storedRecord(of schema: ResourceSchema, withKey key: JSON) throws(StoreError) -> StoredRecord? {
        try withLock { tables throws(StoreError) in try tables.table(schema).storedRecord(withKey: key) }
    }

    package func storedRecords(of schema: ResourceSchema) throws(StoreError) -> [StoredRecord] {
        try withLock { tables throws(StoreError) in try tables.table(schema).storedRecords }
    }

    package func storedRecords(
        of schema: ResourceSchema, where foreignKey: ResourceSchema.ForeignKey, is parentKey: JSON
    )
        throws(StoreError) -> [StoredRecord]
    {
        try withLock { tables throws(StoreError) in
            try tables.mutate(schema) { table in table.storedRecords(where: foreignKey.name, is: parentKey) }
        }
    }
}
