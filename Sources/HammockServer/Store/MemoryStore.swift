public import HammockJSON
import Synchronization

/// A store that keeps records in memory, for tests and throwaway mocks.
///
/// ```swift
/// let server = try await MockServer(resources: [people], store: MemoryStore())
/// ```
/// Every call runs under one lock, so each is atomic; none of them suspends while holding it.
public final class MemoryStore: MockStore {
    private let tables = LockedRecordTables()
    private let modifications = Mutex(ModificationLog())

    /// Creates an empty store.
    public init() {}

    public func addResource(_ schema: ResourceSchema) async throws {
        tables.withLock { $0.add(schema) }
    }

    public func dropResource(_ schema: ResourceSchema) async throws {
        tables.withLock { $0.drop(schema) }
    }

    public func count(of schema: ResourceSchema) async throws -> Int { try tables.count(of: schema) }

    public func record(of schema: ResourceSchema, withKey key: JSON) async throws -> JSONObject? {
        try tables.record(of: schema, withKey: key)
    }

    public func records(of schema: ResourceSchema) async throws -> [JSONObject] { try tables.records(of: schema) }

    public func records(
        of schema: ResourceSchema, where foreignKey: ResourceSchema.ForeignKey, is parentKey: JSON
    )
        async throws -> [JSONObject]
    {
        try tables.records(of: schema, where: foreignKey, is: parentKey)
    }

    public func storedRecord(of schema: ResourceSchema, withKey key: JSON) async throws -> StoredRecord? {
        try tables.storedRecord(of: schema, withKey: key)
    }

    public func storedRecords(of schema: ResourceSchema) async throws -> [StoredRecord] {
        try tables.storedRecords(of: schema)
    }

    public func storedRecords(
        of schema: ResourceSchema, where foreignKey: ResourceSchema.ForeignKey, is parentKey: JSON
    ) async throws -> [StoredRecord] {
        try tables.storedRecords(of: schema, where: foreignKey, is: parentKey)
    }

    public func storedRecords(
        of schema: ResourceSchema, answering query: ListQuery
    ) async throws -> (page: [StoredRecord], total: Int) {
        try tables.answer(query, of: schema)
    }

    public func createRecord(of schema: ResourceSchema, with values: JSONObject) async throws -> JSONObject {
        try tables.withLock { tables throws(StoreError) in try Self.insert(values, of: schema, into: &tables) }
    }

    public func createRecords(of schema: ResourceSchema, with values: [JSONObject]) async throws -> Int {
        try tables.withLock { tables throws(StoreError) in
            // All or nothing. Only a client key can make an insert fail (missing, or taken), so the keys are
            // checked before the first insert. Inserting into a copy instead, to drop it on failure, copied
            // the whole table on every batch: loading 100,000 records took 2.3 s.
            for record in values { try tables.checkParents(of: record, for: schema) }
            if !schema.isKeyGenerated {
                try tables.mutate(schema) { table throws(StoreError) in
                    var batch = Set<RecordKey>()
                    for record in values {
                        guard let key = record[schema.key.name], !key.isNull else {
                            throw StoreError.storageFailure("a record of \(schema.name) needs a \(schema.key.name)")
                        }
                        guard table.record(withKey: key) == nil, batch.insert(RecordKey(key)).inserted else {
                            throw StoreError.duplicateKey(key)
                        }
                    }
                }
            }
            for record in values { _ = try Self.insert(record, of: schema, into: &tables) }
            return values.count
        }
    }

    public func updateRecord(
        of schema: ResourceSchema, withKey key: JSON, with values: JSONObject
    ) async throws
        -> JSONObject?
    {
        guard case .written(let record) = try update(schema, key: key, values: values, expected: nil) else { return nil }
        return record
    }

    public func updateRecord(
        of schema: ResourceSchema, withKey key: JSON, with values: JSONObject, ifCurrent expected: JSONObject
    ) async throws -> ConditionalWrite<JSONObject> {
        try update(schema, key: key, values: values, expected: expected)
    }

    /// A merge, conditional on the record's fields when `expected` is given, under the tables' lock.
    private func update(
        _ schema: ResourceSchema, key: JSON, values: JSONObject, expected: JSONObject?
    ) throws(StoreError) -> ConditionalWrite<JSONObject> {
        try tables.withLock { tables throws(StoreError) in
            guard let current = try tables.table(schema).record(withKey: key) else { return .missing }
            if let expected, current != expected { return .changed }
            try tables.checkParents(of: values, for: schema)
            return try tables.mutate(schema) { table in table.merge(values, intoKey: key) }.map { .written($0) } ?? .missing
        }
    }

    public func deleteRecord(
        of schema: ResourceSchema, withKey key: JSON, dependents: [(ResourceSchema, ResourceSchema.ForeignKey)],
        ifCurrent expected: JSONObject?
    ) async throws -> ConditionalWrite<Int> {
        try tables.withLock { tables throws(StoreError) in
            guard let current = try tables.table(schema).record(withKey: key) else { return .missing }
            if let expected, current != expected { return .changed }
            let doomed = try tables.dependentKeys(of: key, in: dependents)
            for (child, childKey) in doomed { _ = try tables.remove(child, key: childKey) }
            _ = try tables.remove(schema, key: key)
            return .written(doomed.count)
        }
    }

    /// Nothing to release: the records go with the store.
    public func close() {}

    public func lastChange(of resources: [String], now: Int, marking: Bool) async throws -> Int? {
        modifications.withLock { $0.lastChange(of: resources, now: now, marking: marking) }
    }

    public func noteChange(of resources: [String], at second: Int) async throws {
        modifications.withLock { $0.noteChange(of: resources, at: second) }
    }

    public func deleteRecord(of schema: ResourceSchema, withKey key: JSON) async throws -> Bool {
        try tables.withLock { tables throws(StoreError) in try tables.remove(schema, key: key) }
    }

    public func snapshot(of schemas: [ResourceSchema]) async throws -> StoreSnapshot {
        try tables.withLock { tables throws(StoreError) in
            var saved: [String: RecordTable] = [:]
            for schema in schemas { saved[schema.name] = try tables.table(schema) }
            return StoreSnapshot(tables: saved)
        }
    }

    public func restore(_ snapshot: StoreSnapshot, schemas: [ResourceSchema]) async throws {
        let restored = snapshot.tables(for: schemas)
        tables.withLock { tables in for table in restored { tables.replace(table) } }
    }

    private static func insert(
        _ values: JSONObject, of schema: ResourceSchema, into tables: inout RecordTables
    )
        throws(StoreError) -> JSONObject
    {
        try tables.checkParents(of: values, for: schema)
        return try tables.mutate(schema) { table throws(StoreError) in
            let key: JSON
            if schema.isKeyGenerated {
                key = .integer(table.lastGeneratedKey + 1)
            } else {
                guard let given = values[schema.key.name], !given.isNull else {
                    throw StoreError.storageFailure("a record of \(schema.name) needs a \(schema.key.name)")
                }
                guard table.record(withKey: given) == nil else { throw StoreError.duplicateKey(given) }
                key = given
            }
            let record = schema.makeRecord(key: key, values: values)
            table.insert(record, key: key)
            return record
        }
    }
}
