public import HammockJSON
public import HammockStore
import NIOCore
import PostgresNIO
import Synchronization

// MARK: Reads

extension PostgresStore {
    public func count(of schema: ResourceSchema) async throws -> Int {
        try known(schema)
        let statement = countQuery(of: schema)
        let (total, deltas) = try await run {
            try await self.client.query(statement, logger: self.logger).collect().first?.decode((Int, Int).self) ?? (0, 0)
        }
        if deltas > Self.countFoldThreshold { await compactCount(of: schema) }
        return total
    }

    public func storedRecord(of schema: ResourceSchema, withKey key: JSON) async throws -> StoredRecord? {
        try known(schema)
        guard Columns.isKey(key, of: schema.key.type) else { return nil }
        var binds = PostgresBindings()
        try Columns.bindKey(key, as: schema.key.type, to: &binds)
        let query = PostgresQuery(
            unsafeSQL: "SELECT \(Columns.selectList(schema)) FROM \(table(schema)) WHERE k = $1", binds: binds)
        return try await records(query, schema).first.map(StoredRecord.init)
    }

    public func storedRecords(of schema: ResourceSchema) async throws -> [StoredRecord] {
        try known(schema)
        let query = PostgresQuery(unsafeSQL: "SELECT \(Columns.selectList(schema)) FROM \(table(schema)) ORDER BY k")
        return try await records(query, schema).map(StoredRecord.init)
    }

    public func storedRecords(
        of schema: ResourceSchema, where foreignKey: ResourceSchema.ForeignKey, is parentKey: JSON
    ) async throws -> [StoredRecord] {
        try known(schema)
        guard Columns.isKey(parentKey, of: foreignKey.type) else { return [] }
        var binds = PostgresBindings()
        try Columns.bind(parentKey, as: foreignKey.type, to: &binds)
        let query = PostgresQuery(
            unsafeSQL: "SELECT \(Columns.selectList(schema)) FROM \(table(schema)) WHERE \(Names.field(foreignKey.name)) = $1 "
                + "ORDER BY k", binds: binds)
        return try await records(query, schema).map(StoredRecord.init)
    }

    /// The records a query selects (with ``Columns/selectList(_:)``).
    func records(_ query: PostgresQuery, _ schema: ResourceSchema) async throws -> [JSONObject] {
        try await run {
            try await self.client.query(query, logger: self.logger).collect().map { try Columns.record($0, schema) }
        }
    }

    /// Refuses a resource the store was never given, as the other stores do.
    func known(_ schema: ResourceSchema) throws {
        guard schemas.withLock({ $0[schema.name] != nil }) else { throw StoreError.unknownResource(schema.name) }
    }

    /// The resources with a foreign key to `schema`, with that key.
    func children(of schema: ResourceSchema) -> [(ResourceSchema, ResourceSchema.ForeignKey)] {
        schemas.withLock { schemas in
            schemas.values.sorted { $0.name < $1.name }.flatMap { child in
                child.foreignKeys.filter { $0.parent == schema.name }.map { (child, $0) }
            }
        }
    }
}

// MARK: Writes

extension PostgresStore {
    /// A write and its change date in one transaction (a single create: in one statement), so that a
    /// write never lands with its date lost.
    public func perform(_ write: StoreWrite) async throws -> ConditionalWrite<WriteResult> {
        let schema = write.schema
        switch write.action {
        case .create(let batch) where batch.count == 1:
            let record = try await create(batch[0], of: schema, changedAt: write.changedAt)
            return .written(WriteResult(records: [record], changedResources: [schema.name]))
        case .create(let batch):
            try known(schema)
            guard !batch.isEmpty else { return .written(WriteResult(records: [], changedResources: [])) }
            let records = try await transaction { connection in
                let records = try await self.insert(batch, of: schema, on: connection)
                if let second = write.changedAt {
                    try await connection.query(self.noteChangeQuery([schema.name], at: second), logger: self.logger)
                }
                return records
            }
            return .written(WriteResult(records: records, changedResources: [schema.name]))
        case .update(let key, let values):
            return try await update(schema, key: key, values: values, condition: write.condition, changedAt: write.changedAt)
        case .delete(let key, let dependents):
            return try await delete(
                schema, key: key, dependents: dependents, condition: write.condition, changedAt: write.changedAt)
        }
    }

    /// One statement, so one round trip and its own transaction: the parents locked (`FOR KEY SHARE`), a
    /// key taken from the resource's sequence only if they all exist, and the row inserted. Measured against a
    /// transaction of five statements, a `POST` spent less than half the CPU (docs/benchmarks.md).
    func create(_ values: JSONObject, of schema: ResourceSchema, changedAt second: Int?) async throws -> JSONObject {
        try known(schema)
        try checkKinds(values, of: schema)
        var binds = PostgresBindings()
        var ctes: [String] = []
        var parentChecks: [String] = []
        for foreignKey in schema.foreignKeys {
            guard let value = values[foreignKey.name], !value.isNull else { continue }
            guard let parent = schemas.withLock({ $0[foreignKey.parent] }) else { continue }
            guard Columns.isKey(value, of: parent.key.type) else {
                throw StoreError.missingParent(field: foreignKey.name, parent: foreignKey.parent, key: value)
            }
            try Columns.bindKey(value, as: parent.key.type, to: &binds)
            let name = "p\(ctes.count)"
            ctes.append("\(name) AS (SELECT 1 FROM \(table(parent)) WHERE k = $\(binds.count) FOR KEY SHARE)")
            parentChecks.append("EXISTS (SELECT 1 FROM \(name))")
        }
        let parentsExist = parentChecks.isEmpty ? "TRUE" : parentChecks.joined(separator: " AND ")
        let fields = Array(schema.columns.dropFirst())
        var names = ["k"]
        var expressions: [String] = []
        let record: JSONObject
        if schema.isKeyGenerated {
            // Evaluated only for the row the WHERE lets through: a refused create takes no key.
            binds.append(sequence(schema))
            expressions.append("nextval($\(binds.count)::regclass)")
            record = schema.makeRecord(key: .null, values: values)
        } else {
            guard let key = values[schema.key.name], !key.isNull else {
                throw StoreError.storageFailure("a record of \(schema.name) needs a \(schema.key.name)")
            }
            try Columns.bindKey(key, as: schema.key.type, to: &binds)
            expressions.append("$\(binds.count)::\(Columns.keyType(schema.key.type))")
            record = schema.makeRecord(key: key, values: values)
        }
        for field in fields {
            let value = record[field.name] ?? .null
            names.append(Names.field(field.name))
            try Columns.bind(value, as: field.type, to: &binds)
            expressions.append("$\(binds.count)::\(Columns.sqlType(field.type))")
            if Columns.hasLoweredCopy(field.type) {
                names.append(Names.lowered(field.name))
                Columns.bindLowered(value, to: &binds)
                expressions.append("$\(binds.count)::bytea")
            }
        }
        let insert =
            "INSERT INTO \(table(schema)) (\(names.joined(separator: ", "))) SELECT \(expressions.joined(separator: ", "))"
            + " WHERE \(parentsExist) ON CONFLICT (k) DO NOTHING RETURNING k"
        let sql: String
        if let second {
            // The date in the same statement, written only if the row is: `changes` runs once, whatever reads it.
            binds.append([schema.name])
            binds.append(second)
            ctes.append("inserted AS (\(insert))")
            ctes.append(
                "changed AS (\(noteChangeSQL(names: "$\(binds.count - 1)", second: "$\(binds.count)", when: "EXISTS (SELECT 1 FROM inserted)")))"
            )
            sql = "WITH " + ctes.joined(separator: ", ") + " SELECT k FROM inserted"
        } else {
            sql = (ctes.isEmpty ? "" : "WITH " + ctes.joined(separator: ", ") + " ") + insert
        }
        let statement = PostgresQuery(unsafeSQL: sql, binds: binds)
        let rows = try await run { try await self.client.query(statement, logger: self.logger).collect() }
        guard let row = rows.first else { throw try await whyNotInserted(values, of: schema) }
        var created = record
        created[schema.key.name] = try Columns.key(of: row, as: schema.key.type)
        return created
    }

    /// After a single insert stored nothing: the parent that is missing, or else the key that is taken.
    private func whyNotInserted(_ values: JSONObject, of schema: ResourceSchema) async throws -> StoreError {
        try await transaction { connection in
            try await self.checkParents(of: [values], for: schema, on: connection)
        }
        return .duplicateKey(values[schema.key.name] ?? .null)
    }

    /// Inserts records in the transaction of `connection`: parents checked (and held against a delete
    /// until the commit), keys generated in one step for the batch, rows in statements of many rows.
    func insert(_ batch: [JSONObject], of schema: ResourceSchema, on connection: PostgresConnection) async throws -> [JSONObject]
    {
        for record in batch { try checkKinds(record, of: schema) }
        try await checkParents(of: batch, for: schema, on: connection)
        var keys: [JSON] = []
        if schema.isKeyGenerated {
            // Keys given as positive integers (sample data naming its records) are kept; the sequence then
            // moves past the largest, so no key the store makes later is taken.
            let given = batch.map { StoreRules.explicitGeneratedKey(in: $0, of: schema) }
            if let largest = given.compactMap({ $0?.intValue }).max() {
                // First, so the keys made below come after every key the batch names, as on every store.
                // Only sample data names keys, loaded once under the store's exclusive lock; a create by another
                // server inside this one statement could still see its number handed out again (a 409 then).
                var binds = PostgresBindings()
                binds.append(sequence(schema))
                binds.append(largest)
                _ = try await connection.query(
                    PostgresQuery(
                        unsafeSQL:
                            "SELECT setval($1::regclass, GREATEST($2::bigint, COALESCE(pg_sequence_last_value($1::regclass), 0)))",
                        binds: binds), logger: logger
                ).collect()
            }
            let wanted = given.filter { $0 == nil }.count
            var made: [JSON] = []
            if wanted > 0 {
                var binds = PostgresBindings()
                binds.append(sequence(schema))
                binds.append(wanted)
                // Distinct, rising keys for the batch; another server's creates may take numbers between them.
                made = try await connection.query(
                    PostgresQuery(unsafeSQL: "SELECT nextval($1::regclass) FROM generate_series(1, $2)", binds: binds),
                    logger: logger
                ).collect().map { try $0.decode(Int.self) }.sorted().map(JSON.integer)
            }
            var next = made.makeIterator()
            var seen = Set<Int>()
            for key in given {
                if let key {
                    guard let number = key.intValue, seen.insert(number).inserted else { throw StoreError.duplicateKey(key) }
                    keys.append(key)
                } else {
                    keys.append(next.next() ?? .null)
                }
            }
        } else {
            var seen = Set<[UInt8]>()
            for record in batch {
                guard let key = record[schema.key.name], !key.isNull else {
                    throw StoreError.storageFailure("a record of \(schema.name) needs a \(schema.key.name)")
                }
                guard Columns.isKey(key, of: schema.key.type) else { throw Columns.mismatch(key, schema.key.type) }
                guard seen.insert(key.serialized()).inserted else { throw StoreError.duplicateKey(key) }
                keys.append(key)
            }
        }
        let records = zip(keys, batch).map { key, values in schema.makeRecord(key: key, values: values) }
        try await insertRows(records, of: schema, on: connection)
        return records
    }

    /// Inserts whole records (keys included); a key already taken is `StoreError.duplicateKey`.
    func insertRows(_ records: [JSONObject], of schema: ResourceSchema, on connection: PostgresConnection) async throws {
        let fields = Array(schema.columns.dropFirst())
        var names = ["k"]
        for field in fields {
            names.append(Names.field(field.name))
            if Columns.hasLoweredCopy(field.type) { names.append(Names.lowered(field.name)) }
        }
        // Why 1,000 rows at most: PostgreSQL takes 65,535 parameters in a statement; a resource has far
        // fewer than 65 columns, and bigger statements gained nothing when measured.
        let perStatement = max(1, min(1000, 65_535 / names.count))
        var start = 0
        while start < records.count {
            let slice = records[start..<min(start + perStatement, records.count)]
            var binds = PostgresBindings()
            var rows: [String] = []
            rows.reserveCapacity(slice.count)
            for record in slice {
                var placeholders: [String] = []
                try Columns.bindKey(record[schema.key.name] ?? .null, as: schema.key.type, to: &binds)
                placeholders.append("$\(binds.count)")
                for field in fields {
                    let value = record[field.name] ?? .null
                    try Columns.bind(value, as: field.type, to: &binds)
                    placeholders.append("$\(binds.count)")
                    if Columns.hasLoweredCopy(field.type) {
                        Columns.bindLowered(value, to: &binds)
                        placeholders.append("$\(binds.count)")
                    }
                }
                rows.append("(" + placeholders.joined(separator: ", ") + ")")
            }
            let sql =
                "INSERT INTO \(table(schema)) (\(names.joined(separator: ", "))) VALUES \(rows.joined(separator: ", ")) "
                + "ON CONFLICT (k) DO NOTHING RETURNING k"
            let inserted = try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger).collect()
            if inserted.count != slice.count {
                let stored = Set(try inserted.map { try Columns.key(of: $0, as: schema.key.type).serialized() })
                let taken = slice.first { !stored.contains(($0[schema.key.name] ?? .null).serialized()) }
                throw StoreError.duplicateKey(taken?[schema.key.name] ?? .null)
            }
            start += slice.count
        }
    }

    /// Refuses values of the wrong kind for their column before any SQL runs.
    func checkKinds(_ values: JSONObject, of schema: ResourceSchema) throws {
        var scratch = PostgresBindings()
        for column in schema.columns.dropFirst() {
            if let value = values[column.name] { try Columns.bind(value, as: column.type, to: &scratch) }
        }
    }

    /// Checks that each foreign key given names an existing parent, and locks those parents (`FOR KEY
    /// SHARE`) so that no transaction deletes them before this one commits.
    func checkParents(
        of batch: [JSONObject], for schema: ResourceSchema, on connection: PostgresConnection
    ) async throws {
        for foreignKey in schema.foreignKeys {
            guard let parent = schemas.withLock({ $0[foreignKey.parent] }) else { continue }
            var wanted: [JSON] = []
            var seen = Set<[UInt8]>()
            for record in batch {
                guard let value = record[foreignKey.name], !value.isNull else { continue }
                guard Columns.isKey(value, of: parent.key.type) else {
                    throw StoreError.missingParent(field: foreignKey.name, parent: foreignKey.parent, key: value)
                }
                if seen.insert(value.serialized()).inserted { wanted.append(value) }
            }
            guard !wanted.isEmpty else { continue }
            var binds = PostgresBindings()
            if parent.key.type == .integer {
                binds.append(wanted.compactMap(\.intValue))
            } else {
                binds.append(wanted.compactMap(\.stringValue).map { ByteBuffer(string: $0) })
            }
            let found = try await connection.query(
                PostgresQuery(unsafeSQL: "SELECT k FROM \(table(parent)) WHERE k = ANY($1) FOR KEY SHARE", binds: binds),
                logger: logger
            ).collect()
            let present = Set(try found.map { try Columns.key(of: $0, as: parent.key.type).serialized() })
            if let missing = wanted.first(where: { !present.contains($0.serialized()) }) {
                throw StoreError.missingParent(field: foreignKey.name, parent: foreignKey.parent, key: missing)
            }
        }
    }

    /// Reads the record locked (`FOR UPDATE`), checks the condition on it, checks the parents, writes and
    /// notes the date, in one transaction: a concurrent conditional write waits, then sees this one's result.
    private func update(
        _ schema: ResourceSchema, key: JSON, values: JSONObject, condition: StoreWrite.Condition?, changedAt second: Int?
    ) async throws -> ConditionalWrite<WriteResult> {
        try known(schema)
        guard Columns.isKey(key, of: schema.key.type) else { return condition?.outcome(for: nil) ?? .missing }
        try checkKinds(values, of: schema)
        return try await transaction { connection in
            let current = try await self.lockedRecord(schema, key: key, on: connection)
            if let outcome: ConditionalWrite<WriteResult> = condition?.outcome(for: current) { return outcome }
            guard let current else { return .missing }
            try await self.checkParents(of: [values], for: schema, on: connection)
            var merged = current
            var assignments: [String] = []
            var binds = PostgresBindings()
            for column in schema.columns.dropFirst() {
                guard let given = values[column.name] else { continue }
                let value = column.normalized(given)
                merged[column.name] = value
                try Columns.bind(value, as: column.type, to: &binds)
                assignments.append("\(Names.field(column.name)) = $\(binds.count)")
                if Columns.hasLoweredCopy(column.type) {
                    Columns.bindLowered(value, to: &binds)
                    assignments.append("\(Names.lowered(column.name)) = $\(binds.count)")
                }
            }
            if !assignments.isEmpty {
                try Columns.bindKey(key, as: schema.key.type, to: &binds)
                let sql = "UPDATE \(self.table(schema)) SET \(assignments.joined(separator: ", ")) WHERE k = $\(binds.count)"
                try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: self.logger)
            }
            if let second { try await connection.query(self.noteChangeQuery([schema.name], at: second), logger: self.logger) }
            return .written(WriteResult(records: [merged], changedResources: [schema.name]))
        }
    }

    /// The record with `key`, locked until the transaction ends.
    func lockedRecord(_ schema: ResourceSchema, key: JSON, on connection: PostgresConnection) async throws -> JSONObject? {
        var binds = PostgresBindings()
        try Columns.bindKey(key, as: schema.key.type, to: &binds)
        let query = PostgresQuery(
            unsafeSQL: "SELECT \(Columns.selectList(schema)) FROM \(table(schema)) WHERE k = $1 FOR UPDATE", binds: binds)
        return try await connection.query(query, logger: logger).collect().first.map { try Columns.record($0, schema) }
    }

    /// The record locked, the condition checked on it, its dependents and it deleted, the foreign keys
    /// naming them nulled and the dates noted, in one transaction.
    private func delete(
        _ schema: ResourceSchema, key: JSON, dependents: [StoreWrite.Dependent], condition: StoreWrite.Condition?,
        changedAt second: Int?
    ) async throws -> ConditionalWrite<WriteResult> {
        try known(schema)
        guard Columns.isKey(key, of: schema.key.type) else { return condition?.outcome(for: nil) ?? .missing }
        return try await transaction { connection in
            let current = try await self.lockedRecord(schema, key: key, on: connection)
            if let outcome: ConditionalWrite<WriteResult> = condition?.outcome(for: current) { return outcome }
            guard let current else { return .missing }
            var removed = 0
            var changed = [schema.name]
            for dependent in dependents {
                let (child, foreignKey) = (dependent.schema, dependent.foreignKey)
                if !changed.contains(child.name) { changed.append(child.name) }
                var binds = PostgresBindings()
                try Columns.bind(key, as: foreignKey.type, to: &binds)
                let rows = try await connection.query(
                    PostgresQuery(
                        unsafeSQL: "DELETE FROM \(self.table(child)) WHERE \(Names.field(foreignKey.name)) = $1 RETURNING k",
                        binds: binds), logger: self.logger
                ).collect()
                let keys = try rows.map { try Columns.key(of: $0, as: child.key.type) }
                removed += keys.count
                try await self.orphanChildren(of: child, keys: keys, on: connection)
            }
            var binds = PostgresBindings()
            try Columns.bindKey(key, as: schema.key.type, to: &binds)
            try await connection.query(
                PostgresQuery(unsafeSQL: "DELETE FROM \(self.table(schema)) WHERE k = $1", binds: binds), logger: self.logger)
            try await self.orphanChildren(of: schema, keys: [key], on: connection)
            // Every resource whose foreign keys the deletes may have nulled: a later date is always safe.
            for (child, _) in self.children(of: schema) + dependents.flatMap({ self.children(of: $0.schema) })
            where !changed.contains(child.name) {
                changed.append(child.name)
            }
            if let second { try await connection.query(self.noteChangeQuery(changed, at: second), logger: self.logger) }
            return .written(WriteResult(records: [current], dependentsRemoved: removed, changedResources: changed))
        }
    }

    /// Sets to `null` the foreign keys that named the deleted records `keys` of `schema`: those of the
    /// resources this server serves, and those that other servers sharing the namespace recorded for
    /// resources this one does not serve (`hammock_relations`), so that no server leaves a reference to
    /// nobody behind.
    func orphanChildren(of schema: ResourceSchema, keys: [JSON], on connection: PostgresConnection) async throws {
        guard !keys.isEmpty else { return }
        var references: [(table: String, foreignKey: String, isLowered: Bool)] = children(of: schema).map { child, key in
            let type = child.columns.first(where: { $0.name == key.name })?.type ?? key.type
            return (table(child), key.name, Columns.hasLoweredCopy(type))
        }
        let served = schemas.withLock { Set($0.keys) }
        for row in try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT resource, relations FROM \(meta("hammock_relations"))"), logger: logger
        ).collect() {
            let (resource, text) = try row.decode((String, String).self)
            guard !served.contains(resource) else { continue }
            for reference in Relations(text: text).references where reference.parent == schema.name {
                references.append((table(named: resource), reference.foreignKey, reference.isLowered))
            }
        }
        for reference in references {
            var binds = PostgresBindings()
            if schema.key.type == .integer {
                binds.append(keys.compactMap(\.intValue))
            } else {
                binds.append(keys.compactMap(\.stringValue).map { ByteBuffer(string: $0) })
            }
            let column = Names.field(reference.foreignKey)
            var assignments = "\(column) = NULL"
            if reference.isLowered { assignments += ", \(Names.lowered(reference.foreignKey)) = NULL" }
            try await connection.query(
                PostgresQuery(
                    unsafeSQL: "UPDATE \(reference.table) SET \(assignments) WHERE \(column) = ANY($1)", binds: binds),
                logger: logger)
        }
    }
}
