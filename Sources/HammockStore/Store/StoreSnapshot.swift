public import HammockJSON

/// Every record of a store's resources at one moment, and each resource's last generated key: what
/// ``MockStore/restore(_:schemas:)`` puts back, so a test suite can return to a known state.
///
/// ```swift
/// let saved = try await store.snapshot(of: server.schemas)
/// // … requests change the data …
/// try await store.restore(saved, schemas: server.schemas)
/// ```
/// Hammock's stores take one in a single step without copying (tables are copy-on-write values).
public struct StoreSnapshot: Sendable {
    package var tables: [String: SavedTable]

    /// What a snapshot keeps of a table: its records in key order and its last generated key. The rows,
    /// the key map and the indexes are made again by a restore: a snapshot that shared them with the
    /// live tables made the first write after it copy them all (the baseline the server takes before the
    /// first change is one: at a million records one POST added 700 MB with the indexes shared, 147 MB
    /// with the rows and key map, and now copies the 32 MB list of records).
    package struct SavedTable: Sendable {
        package let schema: ResourceSchema
        package let records: [StoredRecord]
        package let lastGeneratedKey: Int
        /// From how many records the table kept indexes (less than usual in tests of the planner).
        package let indexingFrom: Int
    }

    package init(tables: [String: RecordTable]) {
        self.tables = tables.mapValues {
            SavedTable(
                schema: $0.schema, records: $0.storedRecords, lastGeneratedKey: $0.lastGeneratedKey,
                indexingFrom: $0.indexingFrom)
        }
    }

    /// The snapshot with a record list of its own for each table, copied now. Taken under a store's lock,
    /// a snapshot shares the live table's list of records, and the first write after it copied that list
    /// under the lock, with a reference count per record: the first `POST` after loading a million people
    /// waited 204 ms for it (docs/benchmarks.md, "Seventh step"). Called by a store once out of its lock,
    /// so the copy holds up no request; the shared list is released as this returns.
    package func detached() -> StoreSnapshot {
        var copy = self
        copy.tables = tables.mapValues { saved in
            SavedTable(
                schema: saved.schema, records: saved.records.withUnsafeBufferPointer { Array($0) },
                lastGeneratedKey: saved.lastGeneratedKey, indexingFrom: saved.indexingFrom)
        }
        return copy
    }

    /// A snapshot of records given as values, for a store of your own: each resource's records (with
    /// their keys) and the last key generated for it.
    public init(_ contents: [(schema: ResourceSchema, records: [JSONObject], lastGeneratedKey: Int)]) {
        var tables: [String: RecordTable] = [:]
        for (schema, records, lastGeneratedKey) in contents {
            var table = RecordTable(schema: schema)
            for record in records { table.insert(record, key: record[schema.key.name] ?? .null) }
            table.lastGeneratedKey = max(table.lastGeneratedKey, lastGeneratedKey)
            tables[schema.name] = table
        }
        self.init(tables: tables)
    }

    /// The resources it holds.
    public var resourceNames: [String] { tables.keys.sorted() }

    /// The records of `resource`, in key order (none if it holds no such resource).
    public func records(of resource: String) -> [JSONObject] { tables[resource]?.records.map(\.fields) ?? [] }

    /// The last key generated for `resource` when the snapshot was taken.
    public func lastGeneratedKey(of resource: String) -> Int { tables[resource]?.lastGeneratedKey ?? 0 }

    /// How many records it holds, all resources together.
    public var recordCount: Int { tables.values.reduce(0) { $0 + $1.records.count } }

    /// The tables to put in place for `schemas`: the snapshot's for each resource it holds (records
    /// rebuilt when the resource's fields changed since), an empty one for each it does not, and
    /// foreign keys that name a parent missing from the result set to `null`, as a parent delete would.
    package func tables(for schemas: [ResourceSchema]) -> [RecordTable] {
        var result: [String: RecordTable] = [:]
        for schema in schemas {
            guard let saved = tables[schema.name] else {
                result[schema.name] = RecordTable(schema: schema)
                continue
            }
            if saved.schema == schema {
                result[schema.name] = RecordTable(
                    schema: schema, restoring: saved.records, lastGeneratedKey: saved.lastGeneratedKey,
                    indexingFrom: saved.indexingFrom)
            } else {
                var table = RecordTable(schema: schema, indexingFrom: saved.indexingFrom)
                for record in saved.records {
                    let key = record.fields[schema.key.name] ?? .null
                    guard !key.isNull else { continue }
                    table.insert(schema.makeRecord(key: key, values: record.fields), key: key)
                }
                table.lastGeneratedKey = max(table.lastGeneratedKey, saved.lastGeneratedKey)
                result[schema.name] = table
            }
        }
        for schema in schemas {
            for foreignKey in schema.foreignKeys {
                guard let parent = result[foreignKey.parent], var child = result[schema.name] else { continue }
                let missing = Set(
                    child.storedRecords.compactMap { record -> RecordKey? in
                        guard let value = record.fields[foreignKey.name], !value.isNull, parent.record(withKey: value) == nil
                        else { return nil }
                        return RecordKey(value)
                    })
                guard !missing.isEmpty else { continue }
                for key in missing { child.orphan(foreignKey: foreignKey.name, of: key.key) }
                result[schema.name] = child
            }
        }
        return schemas.compactMap { result[$0.name] }
    }
}
