import HammockJSON
import HammockServer
import Synchronization

/// A store written as a newcomer would write one, from public API only: dictionaries under a lock, the
/// six operations of a `StoreTransaction`, and `StoreRules` for every integrity rule. It keeps the
/// whole store contract (StoreContractTests), which is the proof that the primitives are enough.
///
/// It counts the reads of single records its writes make, by resource, for the test that a
/// conditional write reads its record once.
final class PrimitiveStore: MockStore {
    struct Table: Sendable {
        var schema: ResourceSchema
        /// By the key's JSON bytes: strings compared by their bytes, as keys are (not by Unicode equivalence).
        var records: [[UInt8]: JSONObject] = [:]
        var lastGeneratedKey = 0
    }

    struct State: StoreTransaction {
        var tables: [String: Table] = [:]
        var log = ModificationLog()
        var recordReads: [String: Int] = [:]

        var schemas: [ResourceSchema] { tables.values.map(\.schema) }

        func table(_ schema: ResourceSchema) throws(StoreError) -> Table {
            guard let table = tables[schema.name] else { throw StoreError.unknownResource(schema.name) }
            return table
        }

        mutating func record(of schema: ResourceSchema, withKey key: JSON) throws -> JSONObject? {
            recordReads[schema.name, default: 0] += 1
            return try table(schema).records[key.serialized()]
        }

        mutating func keys(of schema: ResourceSchema, where foreignKey: String, is parentKey: JSON) throws -> [JSON] {
            try table(schema).records.values.filter { ($0[foreignKey] ?? .null).serialized() == parentKey.serialized() }
                .map { $0[schema.key.name] ?? .null }
        }

        mutating func insert(_ record: JSONObject, of schema: ResourceSchema) throws -> JSONObject {
            var table = try table(schema)
            var record = record
            var key = record[schema.key.name] ?? .null
            if key.isNull {
                table.lastGeneratedKey += 1
                key = .integer(table.lastGeneratedKey)
                record[schema.key.name] = key
            } else if case .integer(let number) = key {
                table.lastGeneratedKey = max(table.lastGeneratedKey, number)
            }
            table.records[key.serialized()] = record
            tables[schema.name] = table
            return record
        }

        mutating func replace(_ record: JSONObject, of schema: ResourceSchema) throws {
            _ = try table(schema)
            tables[schema.name]?.records[(record[schema.key.name] ?? .null).serialized()] = record
        }

        mutating func remove(key: JSON, of schema: ResourceSchema) throws {
            _ = try table(schema)
            tables[schema.name]?.records[key.serialized()] = nil
        }

        mutating func noteChange(of resources: [String], at second: Int) {
            log.noteChange(of: resources, at: second)
        }
    }

    let state = Mutex(State())

    /// How many single records of `resource` the store's writes have read so far.
    func recordReads(of resource: String) -> Int { state.withLock { $0.recordReads[resource] ?? 0 } }

    func perform(_ write: StoreWrite) async throws -> ConditionalWrite<WriteResult> {
        try state.withLock { state in try StoreRules.perform(write, in: &state) }
    }

    func addResource(_ schema: ResourceSchema) async throws {
        state.withLock { state in
            var table = Table(schema: schema)
            if let existing = state.tables[schema.name] {
                // Reshaped to the new columns: a new field is null, a field no longer declared is gone.
                table.lastGeneratedKey = existing.lastGeneratedKey
                for (bytes, record) in existing.records {
                    table.records[bytes] = schema.makeRecord(key: record[schema.key.name] ?? .null, values: record)
                }
            }
            state.tables[schema.name] = table
        }
    }

    func dropResource(_ schema: ResourceSchema) async throws {
        state.withLock { _ = $0.tables.removeValue(forKey: schema.name) }
    }

    func storedRecord(of schema: ResourceSchema, withKey key: JSON) async throws -> StoredRecord? {
        try state.withLock { state throws(StoreError) in try state.table(schema).records[key.serialized()] }
            .map(StoredRecord.init)
    }

    func storedRecords(of schema: ResourceSchema, answering query: ListQuery) async throws -> (page: [StoredRecord], total: Int) {
        let records = try state.withLock { state throws(StoreError) in try state.table(schema).records.values }
        let ordered = records.sorted { Self.precedes($0[schema.key.name] ?? .null, $1[schema.key.name] ?? .null) }
        return query.apply(to: ordered.map(StoredRecord.init), schema: schema)
    }

    func snapshot(of schemas: [ResourceSchema]) async throws -> StoreSnapshot {
        try state.withLock { state throws(StoreError) in
            try StoreSnapshot(
                schemas.map { schema throws(StoreError) in
                    let table = try state.table(schema)
                    return (schema, Array(table.records.values), table.lastGeneratedKey)
                })
        }
    }

    func restore(_ snapshot: StoreSnapshot, schemas: [ResourceSchema]) async throws {
        state.withLock { state in
            var tables: [String: Table] = [:]
            for schema in schemas {
                var table = Table(schema: schema, lastGeneratedKey: snapshot.lastGeneratedKey(of: schema.name))
                for record in snapshot.records(of: schema.name) {
                    let key = record[schema.key.name] ?? .null
                    table.records[key.serialized()] = schema.makeRecord(key: key, values: record)
                }
                tables[schema.name] = table
            }
            // A foreign key naming a parent the snapshot left out becomes null, as a delete would make it.
            for schema in schemas {
                for foreignKey in schema.foreignKeys {
                    guard let parent = tables[foreignKey.parent], var child = tables[schema.name] else { continue }
                    for (bytes, record) in child.records {
                        guard let value = record[foreignKey.name], !value.isNull, parent.records[value.serialized()] == nil
                        else { continue }
                        child.records[bytes]?[foreignKey.name] = .null
                    }
                    tables[schema.name] = child
                }
            }
            for (name, table) in tables { state.tables[name] = table }
        }
    }

    func lastChange(of resources: [String], now: Int, marking: Bool) async throws -> Int? {
        state.withLock { $0.log.lastChange(of: resources, now: now, marking: marking) }
    }

    func noteChange(of resources: [String], at second: Int) async throws {
        state.withLock { $0.log.noteChange(of: resources, at: second) }
    }

    func close() async throws {}

    /// Key order: integers by value, then strings by their UTF-8 bytes.
    static func precedes(_ left: JSON, _ right: JSON) -> Bool {
        switch (left, right) {
        case (.integer(let a), .integer(let b)): a < b
        case (.string(let a), .string(let b)): a.utf8.lexicographicallyPrecedes(b.utf8)
        case (.integer, .string): true
        default: false
        }
    }
}
