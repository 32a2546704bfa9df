import Foundation
import GRDB
public import HammockJSON

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
/// updated by every write once its transaction has committed (``GroupCommit``), so a read never waits
/// for the disk and never sees what the file does not hold. The store assumes it is the only writer to
/// its file while it runs.
///
/// ```swift
/// let store = try SQLiteStore(path: "people.sqlite")
/// let server = try await MockServer(resources: [people], store: store)
/// ```
public final class SQLiteStore: MockStore {
    let pool: DatabasePool
    /// Concurrent writes, committed together.
    let writes: GroupCommit
    /// The records of every added resource, mirrored in memory for reads, and when each resource last
    /// changed: in this process's memory, as the file lock makes this store the file's only writer;
    /// after a restart every resource counts as changed then (a later date is always safe: a client
    /// re-reads once).
    let mirror: LockedRecordTables

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
    public convenience init(path: String) throws { try self.init(path: path, indexingFrom: RecordTable.indexingThreshold) }

    /// A store whose mirror keeps indexes from `indexingFrom` records, so tests run the query planner on a
    /// few records.
    package init(path: String, indexingFrom: Int) throws {
        self.path = path
        mirror = LockedRecordTables(indexingFrom: indexingFrom)
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
        writes = GroupCommit(pool: pool) { changes in mirror.withLock { tables in changes.apply(to: &tables) } }
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
        mirror.withLock { $0.modifications.lastChange(of: resources, now: now, marking: marking) }
    }

    public func noteChange(of resources: [String], at second: Int) async throws {
        mirror.withLock { $0.modifications.noteChange(of: resources, at: second) }
    }

    public func addResource(_ schema: ResourceSchema) async throws {
        let indexingFrom = mirror.indexingFrom
        try await write { db, changes in
            try Self.createOrMigrateTable(schema, in: db)
            changes.replaceTable(try Self.loadTable(schema, from: db, indexingFrom: indexingFrom))
        }
    }

    public func dropResource(_ schema: ResourceSchema) async throws {
        try await write { db, changes in
            try db.execute(sql: "DROP TABLE IF EXISTS \(Self.quote(schema.name))")
            if try db.tableExists(Self.fieldsTable) {
                try db.execute(sql: "DELETE FROM \(Self.quote(Self.fieldsTable)) WHERE resource = ?", arguments: [schema.name])
            }
            changes.dropTable(schema)
        }
    }

    public func count(of schema: ResourceSchema) async throws -> Int { try mirror.count(of: schema) }

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

    /// A write on the writer, inside the batch's transaction: the rules read the mirror as the batch leaves
    /// it, no other write can land between a check and its statement, and the mirror changes only once
    /// the transaction commits.
    public func perform(_ write: StoreWrite) async throws -> ConditionalWrite<WriteResult> {
        let mirror = self.mirror
        return try await self.write { db, changes in
            // The batch's changes are moved in and out, never copied (a copy would copy them all on the
            // write's first change).
            var transaction = SQLiteTransaction(db: db, mirror: mirror, changes: MirrorChanges())
            swap(&transaction.changes, &changes)
            defer { swap(&transaction.changes, &changes) }
            return try StoreRules.perform(write, in: &transaction)
        }
    }
}

extension SQLiteStore {
    public func snapshot(of schemas: [ResourceSchema]) async throws -> StoreSnapshot {
        // On the writer, so no write lands between the mirror's tables and the key counters read here;
        // the batch's earlier writes, not in the mirror yet, are applied to the copies.
        try await write { db, changes in
            var saved: [String: RecordTable] = [:]
            for schema in schemas {
                var table = changes.applied(
                    to: try self.mirror.withLock { tables throws(StoreError) in try tables.table(schema) })
                if schema.isKeyGenerated {
                    let sequence =
                        try Int.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = ?", arguments: [schema.name]) ?? 0
                    table.lastGeneratedKey = max(table.lastGeneratedKey, sequence)
                }
                saved[schema.name] = table
            }
            return StoreSnapshot(tables: saved)
        }
        .detached()
    }

    public func restore(_ snapshot: StoreSnapshot, schemas: [ResourceSchema]) async throws {
        let restored = snapshot.tables(for: schemas)
        try await write { db, changes in
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
            for table in restored { changes.replaceTable(table) }
        }
    }

    /// Runs a write in the next group transaction (see ``GroupCommit``); what it notes in the changes
    /// reaches the mirror once that transaction has committed.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database, inout MirrorChanges) throws -> T) async throws -> T {
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

    static func loadTable(_ schema: ResourceSchema, from db: Database, indexingFrom: Int) throws -> RecordTable {
        var table = RecordTable(schema: schema, indexingFrom: indexingFrom)
        let statement = try db.makeStatement(sql: selectSQL(schema, where: nil))
        for record in try fetch(statement, [], schema) { table.insert(record, key: record[schema.key.name] ?? .null) }
        return table
    }

    static func insert(_ values: JSONObject, of schema: ResourceSchema, in db: Database) throws -> JSONObject {
        // A store-made key given (sample data naming its records) is written; AUTOINCREMENT then continues after it.
        let givenKey = schema.isKeyGenerated ? values[schema.key.name].flatMap(\.intValue) : nil
        let columns = schema.isKeyGenerated && givenKey == nil ? Array(schema.columns.dropFirst()) : schema.columns
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
        let key: JSON =
            schema.isKeyGenerated && givenKey == nil ? .integer(Int(db.lastInsertedRowID)) : (values[schema.key.name] ?? .null)
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
