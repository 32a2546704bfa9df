public import HammockJSON

/// A store that keeps records in memory, for tests and throwaway mocks.
///
/// ```swift
/// let server = try await MockServer(resources: [people], store: MemoryStore())
/// ```
/// Every call runs under one lock, so each is atomic; none of them suspends while holding it. A write
/// and its change date are one step under it (``StoreRules`` over the tables).
public final class MemoryStore: MockStore {
    private let tables: LockedRecordTables

    /// Creates an empty store.
    public init() { tables = LockedRecordTables() }

    /// A store whose tables keep indexes from `indexingFrom` records, so tests run the query planner on
    /// a few records.
    package init(indexingFrom: Int) { tables = LockedRecordTables(indexingFrom: indexingFrom) }

    public func addResource(_ schema: ResourceSchema) async throws {
        tables.withLock { $0.add(schema) }
    }

    public func dropResource(_ schema: ResourceSchema) async throws {
        tables.withLock { $0.drop(schema) }
    }

    public func count(of schema: ResourceSchema) async throws -> Int { try tables.count(of: schema) }

    public func storedRecord(of schema: ResourceSchema, withKey key: JSON) async throws -> StoredRecord? {
        try tables.storedRecord(of: schema, withKey: key)
    }

    public func storedRecords(
        of schema: ResourceSchema, answering query: ListQuery
    ) async throws -> (page: [StoredRecord], total: Int) {
        try tables.answer(query, of: schema)
    }

    public func perform(_ write: StoreWrite) async throws -> ConditionalWrite<WriteResult> {
        // All or nothing without copying: the rules check everything a write could be refused for
        // before its first change. (Inserting into a copy of the table instead, to drop it on failure,
        // copied the whole table on every batch: loading 100,000 records took 2.3 s.)
        try tables.withLock { tables in try StoreRules.perform(write, in: &tables) }
    }

    /// Nothing to release: the records go with the store.
    public func close() {}

    public func lastChange(of resources: [String], now: Int, marking: Bool) async throws -> Int? {
        tables.withLock { $0.modifications.lastChange(of: resources, now: now, marking: marking) }
    }

    public func noteChange(of resources: [String], at second: Int) async throws {
        tables.withLock { $0.modifications.noteChange(of: resources, at: second) }
    }

    public func snapshot(of schemas: [ResourceSchema]) async throws -> StoreSnapshot {
        let shared = try tables.withLock { tables throws(StoreError) in
            var saved: [String: RecordTable] = [:]
            for schema in schemas { saved[schema.name] = try tables.table(schema) }
            return StoreSnapshot(tables: saved)
        }
        return shared.detached()
    }

    public func restore(_ snapshot: StoreSnapshot, schemas: [ResourceSchema]) async throws {
        let restored = snapshot.tables(for: schemas)
        tables.withLock { tables in for table in restored { tables.replace(table) } }
    }
}

extension MemoryStore {
    public func storedRecords(of schema: ResourceSchema) async throws -> [StoredRecord] {
        try tables.storedRecords(of: schema)
    }

    public func storedRecords(
        of schema: ResourceSchema, where foreignKey: ResourceSchema.ForeignKey, is parentKey: JSON
    ) async throws -> [StoredRecord] {
        try tables.storedRecords(of: schema, where: foreignKey, is: parentKey)
    }
}
