public import HammockJSON
import Synchronization

/// A store that keeps records in memory, for tests and throwaway mocks.
///
/// ```swift
/// let server = try await MockServer(resources: [people], store: MemoryStore())
/// ```
/// Every call runs under one lock, so each is atomic; none of them suspends while holding it.
public final class MemoryStore: MockStore {
    struct Table {
        var schema: ResourceSchema
        var rows: [JSON: JSONObject] = [:]
        /// Keys in ascending order.
        var order: [JSON] = []
        var lastGeneratedKey = 0

        func position(of key: JSON) -> Int {
            var low = 0
            var high = order.count
            while low < high {
                let middle = (low + high) / 2
                if keyPrecedes(order[middle], key) { low = middle + 1 } else { high = middle }
            }
            return low
        }
    }

    private let tables = Mutex<[String: Table]>([:])

    /// Creates an empty store.
    public init() {}

    public func addResource(_ schema: ResourceSchema) async throws {
        tables.withLock { tables in
            if var table = tables[schema.name] {
                table.schema = schema
                tables[schema.name] = table
            } else {
                tables[schema.name] = Table(schema: schema)
            }
        }
    }

    public func dropResource(_ schema: ResourceSchema) async throws {
        _ = tables.withLock { $0.removeValue(forKey: schema.name) }
    }

    public func count(of schema: ResourceSchema) async throws -> Int {
        try tables.withLock { tables throws(StoreError) in try Self.table(schema, in: tables).order.count }
    }

    public func record(of schema: ResourceSchema, withKey key: JSON) async throws -> JSONObject? {
        try tables.withLock { tables throws(StoreError) in try Self.table(schema, in: tables).rows[key] }
    }

    public func records(of schema: ResourceSchema) async throws -> [JSONObject] {
        try tables.withLock { tables throws(StoreError) in
            let table = try Self.table(schema, in: tables)
            return table.order.compactMap { table.rows[$0] }
        }
    }

    public func records(of schema: ResourceSchema, where foreignKey: ResourceSchema.ForeignKey, is parentKey: JSON)
        async throws -> [JSONObject]
    {
        try tables.withLock { tables throws(StoreError) in
            let table = try Self.table(schema, in: tables)
            return table.order.compactMap { key in
                guard let row = table.rows[key], row[foreignKey.name] == parentKey else { return nil }
                return row
            }
        }
    }

    public func createRecord(of schema: ResourceSchema, with values: JSONObject) async throws -> JSONObject {
        try tables.withLock { tables throws(StoreError) in try Self.insert(values, of: schema, into: &tables) }
    }

    public func createRecords(of schema: ResourceSchema, with values: [JSONObject]) async throws -> Int {
        try tables.withLock { tables throws(StoreError) in
            // All or nothing: work on a copy and commit it only if every insert succeeds.
            var copy = tables
            for record in values { _ = try Self.insert(record, of: schema, into: &copy) }
            tables = copy
            return values.count
        }
    }

    public func updateRecord(of schema: ResourceSchema, withKey key: JSON, with values: JSONObject) async throws
        -> JSONObject?
    {
        try tables.withLock { tables throws(StoreError) in
            try Self.mutate(schema, in: &tables) { table in
                guard var row = table.rows.removeValue(forKey: key) else { return nil }
                for column in schema.columns.dropFirst() {
                    if let value = values[column.name] { row[column.name] = column.normalized(value) }
                }
                table.rows[key] = row
                return row
            }
        }
    }

    public func deleteRecord(of schema: ResourceSchema, withKey key: JSON) async throws -> Bool {
        try tables.withLock { tables throws(StoreError) in
            let removed = try Self.mutate(schema, in: &tables) { table in
                guard table.rows.removeValue(forKey: key) != nil else { return false }
                table.order.remove(at: table.position(of: key))
                return true
            }
            guard removed else { return false }
            // Orphan the children: their foreign keys to this record become null.
            for name in Array(tables.keys) {
                guard var child = tables.removeValue(forKey: name) else { continue }
                for foreignKey in child.schema.foreignKeys where foreignKey.parent == schema.name {
                    for childKey in child.order where child.rows[childKey]?[foreignKey.name] == key {
                        child.rows[childKey]?[foreignKey.name] = .null
                    }
                }
                tables[name] = child
            }
            return true
        }
    }

    /// Mutates one table in place (taken out of the dictionary so its storage is not copied).
    private static func mutate<Result>(
        _ schema: ResourceSchema, in tables: inout [String: Table], _ body: (inout Table) throws(StoreError) -> Result
    ) throws(StoreError) -> Result {
        guard var table = tables.removeValue(forKey: schema.name) else { throw StoreError.unknownResource(schema.name) }
        defer { tables[schema.name] = table }
        return try body(&table)
    }

    private static func table(_ schema: ResourceSchema, in tables: [String: Table]) throws(StoreError) -> Table {
        guard let table = tables[schema.name] else { throw StoreError.unknownResource(schema.name) }
        return table
    }

    private static func insert(_ values: JSONObject, of schema: ResourceSchema, into tables: inout [String: Table])
        throws(StoreError) -> JSONObject
    {
        try mutate(schema, in: &tables) { table throws(StoreError) in
            let key: JSON
            if schema.isKeyGenerated {
                key = .integer(table.lastGeneratedKey + 1)
            } else {
                guard let given = values[schema.key.name], !given.isNull else {
                    throw StoreError.storageFailure("a record of \(schema.name) needs a \(schema.key.name)")
                }
                guard table.rows[given] == nil else { throw StoreError.duplicateKey(given) }
                key = given
            }
            let record = schema.makeRecord(key: key, values: values)
            if schema.isKeyGenerated { table.lastGeneratedKey += 1 }
            table.rows[key] = record
            if let last = table.order.last, !keyPrecedes(last, key) {
                table.order.insert(key, at: table.position(of: key))
            } else {
                table.order.append(key)
            }
            return record
        }
    }
}
