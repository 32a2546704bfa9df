import Foundation
import GRDB
public import HammockJSON
import Synchronization

/// A store that keeps records in an SQLite file, so data survives restarts.
///
/// Tables and columns are derived from the resources (a column added to a resource is added to its
/// table on the next start). The database runs in WAL mode, every statement is parameterised, and
/// generated keys use `AUTOINCREMENT`, so they are never reused, across restarts too.
///
/// Stored values read back exactly as they were served: strings holding NUL (which SQLite's C text
/// interface cuts short) are kept as their UTF-8 bytes in a BLOB, and so is -0.0 in a float column
/// (a REAL column would store it as the integer 0).
///
/// Reads are answered from an in-memory mirror of the tables, loaded when a resource is added and
/// updated by every write inside the same serialized write transaction, so a read never waits for
/// the disk. The store assumes it is the only writer to its file while it runs.
///
/// ```swift
/// let store = try SQLiteStore(path: "people.sqlite")
/// let server = try await MockServer(resources: [people], store: store)
/// ```
public final class SQLiteStore: MockStore {
    let pool: DatabasePool
    /// Concurrent writes, committed together.
    let writes: GroupCommit
    /// The records of every added resource, mirrored in memory for reads.
    let mirror = LockedRecordTables()
    /// When each resource last changed. In this process's memory, as the file lock makes this store
    /// the file's only writer; after a restart every resource counts as changed then (a later date is
    /// always safe: a client re-reads once).
    let modifications = Mutex(ModificationLog())

    /// The database file's path.
    public let path: String
    /// The claim on the file that keeps a second server away from it.
    let lock: DatabaseFileLock

    /// Whether opening the store created the file (it did not exist before).
    public var createdFile: Bool { lock.createdFile }

    /// Opens (or creates) the database at `path` and claims it for this store until ``close()``.
    ///
    /// One file serves one store at a time: two servers writing one file would each keep serving what
    /// the other deleted. A second store on a file that a live store holds, in this process or any
    /// other, is refused; the claim ends with the process, however it ends.
    /// - Throws: `StoreError.fileInUse(path:)` if another store holds the file, or
    ///   `StoreError.storageFailure(_:)` if it cannot be opened as an SQLite database.
    public init(path: String) throws {
        self.path = path
        lock = try DatabaseFileLock(path: path)
        var configuration = Configuration()
        configuration.label = "Hammock.SQLiteStore"
        configuration.prepareDatabase { db in
            // In WAL mode, NORMAL keeps every committed transaction across a crash of the process.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
        } catch {
            lock.release()
            throw StoreError.storageFailure("cannot open \(path): \(error)")
        }
        let mirror = self.mirror
        writes = GroupCommit(pool: pool) { db in Self.reloadMirror(mirror, from: db) }
    }

    /// Whether the database file still answers a read.
    public func health() async -> StoreHealth {
        do {
            _ = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT 1") }
            return .available
        } catch {
            return .unavailable(String(describing: error))
        }
    }

    /// Closes the store, and removes the database file if opening this store created it.
    public func abandon() async {
        try? closeDatabase()
        guard createdFile else { return }
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// Closes the database and gives up the claim on its file, so another store may open it. Later
    /// calls on this store fail. (Also `MockStore.close()`, through the protocol.)
    public func close() throws { try closeDatabase() }

    private func closeDatabase() throws {
        defer { lock.release() }
        do {
            try pool.close()
        } catch {
            throw StoreError.storageFailure("cannot close \(path): \(error)")
        }
    }

    public func lastChange(of resources: [String], now: Int, marking: Bool) async throws -> Int? {
        modifications.withLock { $0.lastChange(of: resources, now: now, marking: marking) }
    }

    public func noteChange(of resources: [String], at second: Int) async throws {
        modifications.withLock { $0.noteChange(of: resources, at: second) }
    }

    public func addResource(_ schema: ResourceSchema) async throws {
        let table = try await write { db in
            try Self.createOrMigrateTable(schema, in: db)
            return try Self.loadTable(schema, from: db)
        }
        mirror.withLock { $0.replace(table) }
    }

    public func dropResource(_ schema: ResourceSchema) async throws {
        try await write { db in
            try db.execute(sql: "DROP TABLE IF EXISTS \(Self.quote(schema.name))")
            if try db.tableExists(Self.fieldsTable) {
                try db.execute(sql: "DELETE FROM \(Self.quote(Self.fieldsTable)) WHERE resource = ?", arguments: [schema.name])
            }
            self.mirror.withLock { $0.drop(schema) }
        }
    }

    public func count(of schema: ResourceSchema) async throws -> Int { try mirror.count(of: schema) }

    public func record(of schema: ResourceSchema, withKey key: JSON) async throws -> JSONObject? {
        try mirror.record(of: schema, withKey: key)
    }

    public func records(of schema: ResourceSchema) async throws -> [JSONObject] { try mirror.records(of: schema) }

    public func records(
        of schema: ResourceSchema, where foreignKey: ResourceSchema.ForeignKey, is parentKey: JSON
    )
        async throws -> [JSONObject]
    {
        try mirror.records(of: schema, where: foreignKey, is: parentKey)
    }

    public func storedRecord(of schema: ResourceSchema, withKey key: JSON) async throws -> StoredRecord? {
        try mirror.storedRecord(of: schema, withKey: key)
    }

    public func storedRecords(of schema: ResourceSchema) async throws -> [StoredRecord] {
        try mirror.storedRecords(of: schema)
    }

    public func storedRecords(
        of schema: ResourceSchema, where foreignKey: ResourceSchema.ForeignKey, is parentKey: JSON
    ) async throws -> [StoredRecord] {
        try mirror.storedRecords(of: schema, where: foreignKey, is: parentKey)
    }

    /// Queries are answered from the mirror and its indexes, never by SQL: docs/benchmarks.md ("List
    /// queries at 100,000 records") has the measurements behind this choice.
    public func storedRecords(
        of schema: ResourceSchema, answering query: ListQuery
    ) async throws -> (page: [StoredRecord], total: Int) {
        try mirror.answer(query, of: schema)
    }

    public func createRecord(of schema: ResourceSchema, with values: JSONObject) async throws -> JSONObject {
        try await write { db in
            // The mirror holds every write before this one (writes run one after another): the parent
            // checked here cannot be deleted before the insert.
            try self.mirror.withLock { tables throws(StoreError) in try tables.checkParents(of: values, for: schema) }
            let record = try Self.insert(values, of: schema, in: db)
            try self.mirror.withLock { tables throws(StoreError) in
                try tables.mutate(schema) { $0.insert(record, key: record[schema.key.name] ?? .null) }
            }
            return record
        }
    }

    public func createRecords(of schema: ResourceSchema, with values: [JSONObject]) async throws -> Int {
        try await write { db in
            try self.mirror.withLock { tables throws(StoreError) in
                for record in values { try tables.checkParents(of: record, for: schema) }
            }
            var records: [JSONObject] = []
            records.reserveCapacity(values.count)
            for record in values { records.append(try Self.insert(record, of: schema, in: db)) }
            // Only once every insert succeeded: the transaction commits as a whole.
            try self.mirror.withLock { tables throws(StoreError) in
                try tables.mutate(schema) { table in
                    for record in records { table.insert(record, key: record[schema.key.name] ?? .null) }
                }
            }
            return records.count
        }
    }

    public func updateRecord(
        of schema: ResourceSchema, withKey key: JSON, with values: JSONObject
    ) async throws
        -> JSONObject?
    {
        guard case .written(let record) = try await update(schema, key: key, values: values, expected: nil) else { return nil }
        return record
    }

    public func updateRecord(
        of schema: ResourceSchema, withKey key: JSON, with values: JSONObject, ifCurrent expected: JSONObject
    ) async throws -> ConditionalWrite<JSONObject> {
        try await update(schema, key: key, values: values, expected: expected)
    }

    /// An update, conditional on the record's fields when `expected` is given: checked in the mirror on
    /// the writer, where no other write can land between the check and the UPDATE.
    private func update(
        _ schema: ResourceSchema, key: JSON, values: JSONObject, expected: JSONObject?
    ) async throws -> ConditionalWrite<JSONObject> {
        try await write { db in
            let state = try self.mirror.withLock { tables throws(StoreError) -> ConditionalWrite<Void> in
                guard let current = try tables.table(schema).record(withKey: key) else { return .missing }
                if let expected, current != expected { return .changed }
                try tables.checkParents(of: values, for: schema)
                return .written(())
            }
            guard case .written = state else { return state.map { _ in [:] } }
            let keyValue = try Self.databaseValue(key, as: schema.key.type)
            let columns = schema.columns.dropFirst().filter { values[$0.name] != nil }
            if !columns.isEmpty {
                let assignments = columns.map { "\(Self.quote($0.name)) = ?" }.joined(separator: ", ")
                let sql = "UPDATE \(Self.quote(schema.name)) SET \(assignments) WHERE \(Self.quote(schema.key.name)) = ?"
                var arguments: [DatabaseValue] = []
                for column in columns { arguments.append(try Self.databaseValue(values[column.name] ?? .null, as: column.type)) }
                arguments.append(keyValue)
                try db.cachedStatement(sql: sql).execute(arguments: StatementArguments(arguments))
            }
            let record = try self.mirror.withLock { tables throws(StoreError) in
                try tables.mutate(schema) { $0.merge(values, intoKey: key) }
            }
            return record.map { .written($0) } ?? .missing
        }
    }

    public func deleteRecord(of schema: ResourceSchema, withKey key: JSON) async throws -> Bool {
        if case .written = try await deleteRecord(of: schema, withKey: key, dependents: [], ifCurrent: nil) { return true }
        return false
    }

    public func deleteRecord(
        of schema: ResourceSchema, withKey key: JSON, dependents: [(ResourceSchema, ResourceSchema.ForeignKey)],
        ifCurrent expected: JSONObject?
    ) async throws -> ConditionalWrite<Int> {
        try await write { db in
            // On the writer the mirror holds every write before this one: the check, the dependents found
            // and the deletes are one step, in one transaction.
            let found = try self.mirror.withLock { tables throws(StoreError) -> ConditionalWrite<[(ResourceSchema, JSON)]> in
                guard let current = try tables.table(schema).record(withKey: key) else { return .missing }
                if let expected, current != expected { return .changed }
                return .written(try tables.dependentKeys(of: key, in: dependents))
            }
            guard case .written(let doomed) = found else { return found.map { $0.count } }
            for (child, childKey) in doomed { try self.deleteRow(child, key: childKey, in: db) }
            try self.deleteRow(schema, key: key, in: db)
            return .written(doomed.count)
        }
    }

    /// Deletes one row and nulls the foreign keys pointing at it, in SQL and in the mirror.
    private func deleteRow(_ schema: ResourceSchema, key: JSON, in db: Database) throws {
        let keyValue = try Self.databaseValue(key, as: schema.key.type)
        let sql = "DELETE FROM \(Self.quote(schema.name)) WHERE \(Self.quote(schema.key.name)) = ?"
        try db.cachedStatement(sql: sql).execute(arguments: [keyValue])
        guard db.changesCount > 0 else { return }
        let children = mirror.withLock { $0.children(of: schema) }
        for (child, foreignKey) in children {
            let column = Self.quote(foreignKey.name)
            try db.execute(
                sql: "UPDATE \(Self.quote(child.name)) SET \(column) = NULL WHERE \(column) = ?", arguments: [keyValue])
        }
        _ = try mirror.withLock { tables throws(StoreError) in try tables.remove(schema, key: key) }
    }
}

extension SQLiteStore {
    public func snapshot(of schemas: [ResourceSchema]) async throws -> StoreSnapshot {
        // On the writer, so no write lands between the mirror's tables and the key counters read here.
        try await write { db in
            var saved: [String: RecordTable] = [:]
            for schema in schemas {
                var table = try self.mirror.withLock { tables throws(StoreError) in try tables.table(schema) }
                if schema.isKeyGenerated {
                    let sequence =
                        try Int.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = ?", arguments: [schema.name]) ?? 0
                    table.lastGeneratedKey = max(table.lastGeneratedKey, sequence)
                }
                saved[schema.name] = table
            }
            return StoreSnapshot(tables: saved)
        }
    }

    public func restore(_ snapshot: StoreSnapshot, schemas: [ResourceSchema]) async throws {
        let restored = snapshot.tables(for: schemas)
        try await write { db in
            // Children first, so no moment of the transaction has a child pointing at a deleted parent.
            for table in restored.reversed() {
                try db.execute(sql: "DELETE FROM \(Self.quote(table.schema.name))")
            }
            for table in restored {
                let schema = table.schema
                let names = schema.columns.map { Self.quote($0.name) }.joined(separator: ", ")
                let placeholders = Array(repeating: "?", count: schema.columns.count).joined(separator: ", ")
                let statement = try db.cachedStatement(
                    sql: "INSERT INTO \(Self.quote(schema.name)) (\(names)) VALUES (\(placeholders))")
                for record in table.storedRecords {
                    var arguments: [DatabaseValue] = []
                    for column in schema.columns {
                        arguments.append(try Self.databaseValue(record.fields[column.name] ?? .null, as: column.type))
                    }
                    try statement.execute(arguments: StatementArguments(arguments))
                }
                if schema.isKeyGenerated {
                    try db.execute(sql: "DELETE FROM sqlite_sequence WHERE name = ?", arguments: [schema.name])
                    try db.execute(
                        sql: "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)",
                        arguments: [schema.name, table.lastGeneratedKey])
                }
            }
            self.mirror.withLock { tables in for table in restored { tables.replace(table) } }
        }
    }

    /// Runs a write in the next group transaction (see ``GroupCommit``). If it fails, the mirror is
    /// reloaded from the file, since the mirror may hold changes of a transaction that did not commit.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await writes.write(body)
        } catch let error as StoreError {
            throw error
        } catch let error as DatabaseError {
            throw Self.classify(error)
        } catch {
            throw StoreError.storageFailure(String(describing: error))
        }
    }

    /// SQLite's result codes as the store's classes: busy or locked (another process holds the file's
    /// write lock past the busy timeout) is worth retrying; a constraint Hammock did not check is the
    /// store's own rule; the rest (disk full, I/O, corruption) is a failure.
    static func classify(_ error: DatabaseError) -> StoreError {
        let text = String(describing: error)
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED: return .unavailable(text)
        case .SQLITE_CONSTRAINT: return .constraint(text)
        default: return .storageFailure(text)
        }
    }

    /// Replaces the mirror with what the database holds. Runs on the writer (no write in flight), so
    /// nothing committed meanwhile can be lost from the mirror.
    static func reloadMirror(_ mirror: LockedRecordTables, from db: Database) {
        let schemas = mirror.withLock { tables in tables.schemas }
        guard let tables = try? schemas.map({ try loadTable($0, from: db) }) else { return }
        mirror.withLock { mirror in for table in tables { mirror.replace(table) } }
    }

    /// The field types each table was written with: a changed type is refused, not read wrongly.
    static let fieldsTable = "hammock_fields"

    static func createOrMigrateTable(_ schema: ResourceSchema, in db: Database) throws {
        let table = quote(schema.name)
        try db.execute(
            sql: "CREATE TABLE IF NOT EXISTS \(quote(fieldsTable)) (resource TEXT NOT NULL, field TEXT NOT NULL, "
                + "type TEXT NOT NULL, PRIMARY KEY (resource, field))")
        // A table made again for new types keeps its key counter: generated keys are never reused.
        let keptSequence = try db.tableExists(schema.name) ? try checkFieldTypes(schema, in: db) : nil
        if try db.tableExists(schema.name) {
            let existing = Set(try db.columns(in: schema.name).map(\.name))
            for column in schema.columns where !existing.contains(column.name) {
                try db.execute(sql: "ALTER TABLE \(table) ADD COLUMN \(quote(column.name)) \(sqlType(column.type))")
            }
        } else {
            var definitions: [String] = []
            let key = quote(schema.key.name)
            if schema.isKeyGenerated {
                definitions.append("\(key) INTEGER PRIMARY KEY AUTOINCREMENT")
            } else {
                definitions.append("\(key) \(sqlType(schema.key.type)) PRIMARY KEY NOT NULL")
            }
            for column in schema.columns.dropFirst() {
                definitions.append("\(quote(column.name)) \(sqlType(column.type))")
            }
            try db.execute(sql: "CREATE TABLE \(table) (\(definitions.joined(separator: ", ")))")
            if let keptSequence, schema.isKeyGenerated {
                try db.execute(
                    sql: "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", arguments: [schema.name, keptSequence])
            }
        }
        for column in schema.columns {
            try db.execute(
                sql: "INSERT OR REPLACE INTO \(quote(fieldsTable)) (resource, field, type) VALUES (?, ?, ?)",
                arguments: [schema.name, column.name, column.type.rawValue])
        }
        for foreignKey in schema.foreignKeys {
            let index = quote("\(schema.name)_\(foreignKey.name)_index")
            try db.execute(sql: "CREATE INDEX IF NOT EXISTS \(index) ON \(table) (\(quote(foreignKey.name)))")
        }
    }

    /// Compares the types the table was written with (the fields table; for a file from before it, the
    /// columns' declared SQL types) with the schema's. A change on a table with records is refused with
    /// ``StoreError/schemaChanged(resource:field:stored:declared:)``; an empty table is made again with
    /// the new types, since nothing can be misread; then its last generated key is returned.
    static func checkFieldTypes(_ schema: ResourceSchema, in db: Database) throws -> Int? {
        var recorded: [String: String] = [:]
        for row in try Row.fetchAll(
            db, sql: "SELECT field, type FROM \(quote(fieldsTable)) WHERE resource = ?", arguments: [schema.name])
        {
            recorded[row["field"]] = row["type"]
        }
        var declared: [String: String] = [:]
        for column in try db.columns(in: schema.name) { declared[column.name] = column.type.uppercased() }
        for column in schema.columns {
            let stored: String
            if let type = recorded[column.name] {
                guard type != column.type.rawValue else { continue }
                stored = type
            } else if let sql = declared[column.name] {
                // No record of the type: the declared SQL type tells string, date and json apart from the rest.
                guard sql != sqlType(column.type) else { continue }
                stored = FieldType.allCases.filter { sqlType($0) == sql }.map(\.rawValue).joined(separator: " or ")
            } else {
                continue  // a new column: added empty
            }
            let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(quote(schema.name))") ?? 0
            guard count == 0 else {
                throw StoreError.schemaChanged(
                    resource: schema.name, field: column.name, stored: stored.isEmpty ? "another type" : stored,
                    declared: column.type.rawValue)
            }
            let sequence = try Int.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = ?", arguments: [schema.name])
            try db.execute(sql: "DROP TABLE \(quote(schema.name))")
            try db.execute(sql: "DELETE FROM \(quote(fieldsTable)) WHERE resource = ?", arguments: [schema.name])
            return sequence
        }
        return nil
    }

    static func loadTable(_ schema: ResourceSchema, from db: Database) throws -> RecordTable {
        var table = RecordTable(schema: schema)
        let statement = try db.makeStatement(sql: selectSQL(schema, where: nil))
        for record in try fetch(statement, [], schema) { table.insert(record, key: record[schema.key.name] ?? .null) }
        return table
    }

    static func insert(_ values: JSONObject, of schema: ResourceSchema, in db: Database) throws -> JSONObject {
        let columns = schema.isKeyGenerated ? Array(schema.columns.dropFirst()) : schema.columns
        var arguments: [DatabaseValue] = []
        arguments.reserveCapacity(columns.count)
        for column in columns { arguments.append(try databaseValue(values[column.name] ?? .null, as: column.type)) }
        let names = columns.map { quote($0.name) }.joined(separator: ", ")
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        let sql =
            columns.isEmpty
            ? "INSERT INTO \(quote(schema.name)) DEFAULT VALUES"
            : "INSERT INTO \(quote(schema.name)) (\(names)) VALUES (\(placeholders))"
        do {
            try db.cachedStatement(sql: sql).execute(arguments: StatementArguments(arguments))
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY {
            throw StoreError.duplicateKey(values[schema.key.name] ?? .null)
        }
        let key: JSON = schema.isKeyGenerated ? .integer(Int(db.lastInsertedRowID)) : (values[schema.key.name] ?? .null)
        return schema.makeRecord(key: key, values: values)
    }

    static func selectSQL(_ schema: ResourceSchema, where column: String?) -> String {
        let names = schema.columns.map { quote($0.name) }.joined(separator: ", ")
        var sql = "SELECT \(names) FROM \(quote(schema.name))"
        if let column { sql += " WHERE \(quote(column)) = ?" }
        return sql + " ORDER BY \(quote(schema.key.name))"
    }

    static func fetch(_ statement: Statement, _ arguments: [DatabaseValue], _ schema: ResourceSchema) throws -> [JSONObject] {
        let cursor = try Row.fetchCursor(statement, arguments: StatementArguments(arguments))
        var records: [JSONObject] = []
        while let row = try cursor.next() {
            var record = JSONObject(minimumCapacity: schema.columns.count)
            for (index, column) in schema.columns.enumerated() {
                let value: DatabaseValue = row[index]
                record[column.name] = json(value, as: column.type)
            }
            records.append(record)
        }
        return records
    }

    /// An SQL identifier in double quotes, with embedded quotes doubled.
    static func quote(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    static func sqlType(_ type: FieldType) -> String {
        switch type {
        case .string, .date, .json: "TEXT"
        case .integer, .boolean: "INTEGER"
        case .float: "REAL"
        case .blob: "BLOB"
        }
    }

    static func databaseValue(_ value: JSON, as type: FieldType) throws -> DatabaseValue {
        switch (type, value) {
        case (_, .null): return .null
        case (.json, _): return value.serializedString().databaseValue
        case (.boolean, .bool(let flag)): return (flag ? 1 : 0).databaseValue
        case (.integer, .integer(let number)): return Int64(number).databaseValue
        case (.float, _):
            guard let number = value.doubleValue else { break }
            // A REAL column stores an integral value as an integer, which loses the sign of -0.0.
            if number == 0 && number.sign == .minus { return Data(negativeZero).databaseValue }
            return number.databaseValue
        case (.blob, .string(let text)):
            guard let bytes = Base64.decode(text) else { break }
            return Data(bytes).databaseValue
        case (.string, .string(let text)), (.date, .string(let text)):
            // SQLite's C text interface stops at NUL: such strings are stored as their UTF-8 bytes.
            if text.utf8.contains(0) { return Data(text.utf8).databaseValue }
            return text.databaseValue
        default: break
        }
        throw StoreError.storageFailure("cannot store \(value.kindName) \(value) in a \(type.rawValue) column")
    }

    /// How -0.0 is stored in a float column: its eight IEEE 754 bytes, big-endian, as a BLOB.
    static let negativeZero: [UInt8] = [0x80, 0, 0, 0, 0, 0, 0, 0]

    static func json(_ value: DatabaseValue, as type: FieldType) -> JSON {
        switch (type, value.storage) {
        case (_, .null): return .null
        case (.boolean, .int64(let number)): return .bool(number != 0)
        case (.float, .int64(let number)): return .double(Double(number))
        case (.blob, .blob(let data)): return .string(Base64.encode([UInt8](data)))
        case (.string, .blob(let data)), (.date, .blob(let data)):
            return .string(String(decoding: data, as: UTF8.self))
        case (.float, .blob(let data)) where data.elementsEqual(negativeZero): return .double(-0.0)
        case (.json, .string(let text)): return (try? JSON(parsing: text)) ?? .string(text)
        case (_, .int64(let number)): return .integer(Int(number))
        case (_, .double(let number)): return .double(number)
        case (_, .string(let text)): return .string(text)
        case (_, .blob(let data)): return .string(Base64.encode([UInt8](data)))
        }
    }
}
