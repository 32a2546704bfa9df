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
    package var tables: [String: RecordTable]

    /// The tables without their indexes, which a restore makes again: a snapshot sharing them with the
    /// live tables made the first write after it copy every index (the baseline the server takes before
    /// the first change is one: at a million records that was 700 MB more after one POST).
    package init(tables: [String: RecordTable]) { self.tables = tables.mapValues { $0.withoutIndexes() } }

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
        self.tables = tables
    }

    /// The resources it holds.
    public var resourceNames: [String] { tables.keys.sorted() }

    /// The records of `resource`, in key order (none if it holds no such resource).
    public func records(of resource: String) -> [JSONObject] { tables[resource]?.storedRecords.map(\.fields) ?? [] }

    /// The last key generated for `resource` when the snapshot was taken.
    public func lastGeneratedKey(of resource: String) -> Int { tables[resource]?.lastGeneratedKey ?? 0 }

    /// How many records it holds, all resources together.
    public var recordCount: Int { tables.values.reduce(0) { $0 + $1.count } }

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
                result[schema.name] = saved
            } else {
                var table = RecordTable(schema: schema)
                for record in saved.storedRecords {
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
        return schemas.compactMap { schema in
            var table = result[schema.name]
            table?.restoreIndexes()
            return table
        }
    }
}
