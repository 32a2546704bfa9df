import HammockJSON
public import HammockStore
import PostgresNIO
import Synchronization

extension PostgresStore {
    public func addResource(_ schema: ResourceSchema) async throws {
        try Names.check(schema.name, what: "resource name")
        for column in schema.columns { try Names.check(column.name, what: "field name in \(schema.name)") }
        try await transaction { connection in
            // One server at a time: two starting together would both create the table.
            try await connection.query(Self.lock(self.configuration.namespace), logger: self.logger)
            try await self.createOrMigrateTable(schema, on: connection)
        }
        schemas.withLock { $0[schema.name] = schema }
    }

    public func dropResource(_ schema: ResourceSchema) async throws {
        try await transaction { connection in
            try await connection.query(Self.lock(self.configuration.namespace), logger: self.logger)
            try await connection.query(
                PostgresQuery(unsafeSQL: "DROP TABLE IF EXISTS \(self.table(schema))"), logger: self.logger)
            var binds = PostgresBindings()
            binds.append(schema.name)
            var counted = PostgresBindings()
            counted.append(Names.tableName(schema.name))
            try await connection.query(
                PostgresQuery(unsafeSQL: "DELETE FROM \(self.meta("hammock_counts")) WHERE resource = $1", binds: counted),
                logger: self.logger)
            for metaTable in ["hammock_fields", "hammock_relations"] {
                try await connection.query(
                    PostgresQuery(unsafeSQL: "DELETE FROM \(self.meta(metaTable)) WHERE resource = $1", binds: binds),
                    logger: self.logger)
            }
        }
        schemas.withLock { $0[schema.name] = nil }
    }

    /// Vacuums and analyzes the table after a bulk load of ``vacuumingFrom`` records or more, so that the
    /// first queries find statistics to plan with (autovacuum gets there a minute or more later) and rows
    /// whose commit is already noted: at 100,000 generated people the equality page went 8.9 → 2.2 ms of
    /// CPU, database included (docs/benchmarks.md, "Fourth step"). Best effort: a failure (a role that may
    /// not vacuum the table, a database going away) leaves queries correct and only slower at first, so it
    /// is logged, not thrown.
    public func finishLoad(of schema: ResourceSchema, records: Int) async throws {
        try known(schema)
        // A load adds a delta per batch: one row for the first reader to sum instead.
        await compactCount(of: schema)
        guard records >= Self.vacuumingFrom else { return }
        let vacuum = PostgresQuery(unsafeSQL: "VACUUM (ANALYZE) \(table(schema))")
        do {
            try await client.withConnection { connection in
                // Seconds for a million rows: more than one statement may usually take. `VACUUM` cannot run in
                // a transaction, so the limit is lifted for this session only.
                try await self.withoutStatementLimit(on: connection) {
                    try await connection.query(vacuum, logger: self.logger)
                }
            }
        } catch {
            logger.warning("could not vacuum and analyze \(schema.name) after loading it: \(String(reflecting: error))")
        }
    }

    /// The smallest load ``finishLoad(of:records:)`` vacuums after: a few records posted through the admin
    /// API would otherwise cost a large table an `ANALYZE` sample (about 0.3 s at a million rows) each
    /// time, and autovacuum gets to small changes soon enough.
    static let vacuumingFrom = 1_000

    /// Creates the table, adds columns for new fields, and refuses a field whose type changed while the
    /// table holds records (an empty one is made again with the new types). The key counter is kept.
    private func createOrMigrateTable(_ schema: ResourceSchema, on connection: PostgresConnection) async throws {
        let table = self.table(schema)
        var binds = PostgresBindings()
        binds.append(configuration.namespace)
        binds.append(Names.tableName(schema.name))
        let exists = try await connection.query(
            PostgresQuery(
                unsafeSQL: "SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2",
                binds: binds), logger: logger
        ).collect().map { try $0.decode(String.self) }
        var existing = Set(exists)
        if !existing.isEmpty, try await typesChanged(schema, on: connection) {
            try await connection.query(PostgresQuery(unsafeSQL: "DROP TABLE \(table)"), logger: logger)
            existing = []
        }
        try await recordRelations(of: schema, tableExists: !existing.isEmpty, on: connection)
        if existing.isEmpty {
            var definitions = ["k \(Columns.keyType(schema.key.type)) PRIMARY KEY"]
            for column in schema.columns.dropFirst() {
                definitions.append("\(Names.field(column.name)) \(Columns.sqlType(column.type))")
                if Columns.hasLoweredCopy(column.type) { definitions.append("\(Names.lowered(column.name)) bytea") }
            }
            try await connection.query(
                PostgresQuery(unsafeSQL: "CREATE TABLE \(table) (\(definitions.joined(separator: ", ")))"), logger: logger)
        } else {
            for column in schema.columns.dropFirst() where !existing.contains("f:" + column.name) {
                var statement = "ALTER TABLE \(table) ADD COLUMN \(Names.field(column.name)) \(Columns.sqlType(column.type))"
                if Columns.hasLoweredCopy(column.type) { statement += ", ADD COLUMN \(Names.lowered(column.name)) bytea" }
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
        }
        for column in schema.columns {
            var binds = PostgresBindings()
            binds.append(schema.name)
            binds.append(column.name)
            binds.append(column.type.rawValue)
            try await connection.query(
                PostgresQuery(
                    unsafeSQL: "INSERT INTO \(meta("hammock_fields")) (resource, field, type) VALUES ($1, $2, $3) "
                        + "ON CONFLICT (resource, field) DO UPDATE SET type = EXCLUDED.type", binds: binds), logger: logger)
        }
        // Indexes for what lists and queries read: children by foreign key, and every field a filter or
        // sort may name (a b-tree serves equality, ranges, order and IS NULL). Nulls first and then the
        // key, the order a sort asks for: the first version's indexes (nulls last, no key) could not give
        // it, and a sort's page at a million records sorted the whole table (510 ms of database CPU;
        // docs/benchmarks.md, "Fifth step"). A table made by that version has its indexes made again once.
        let schemaName = Names.quote(configuration.namespace)
        if !existing.isEmpty {
            // Building an index over a large table may take longer than a statement may usually (for the
            // rest of this transaction).
            try await connection.query("SET LOCAL statement_timeout = 0", logger: logger)
        }
        for column in schema.columns.dropFirst() where column.type != .json {
            let old = schemaName + "." + Names.quote(Self.indexName(schema.name, column.name))
            let index = Names.quote(Self.indexName(schema.name, column.name, ordered: true))
            if !existing.isEmpty {
                try await connection.query(PostgresQuery(unsafeSQL: "DROP INDEX IF EXISTS \(old)"), logger: logger)
            }
            try await connection.query(
                PostgresQuery(
                    unsafeSQL: "CREATE INDEX IF NOT EXISTS \(index) ON \(table) (\(Names.field(column.name)) ASC NULLS FIRST, k)"),
                logger: logger)
        }
        try await installCount(for: schema, tableIsNew: existing.isEmpty, on: connection)
        // Generated keys come from a sequence, which no transaction waits on: a counter row serialized
        // every create behind one row lock. It outlives the table (a type change, a drop), so that keys
        // are never given twice.
        try await connection.query(PostgresQuery(unsafeSQL: "CREATE SEQUENCE IF NOT EXISTS \(sequence(schema))"), logger: logger)
    }

    /// Records the resource's references to parents, or, when another definition is recorded and the
    /// table holds records, refuses this one: two servers that disagree on whether `cars.personId` names
    /// a person would each keep their own rules, and a delete through the one that does not know would
    /// leave references to nobody (found in the hostile review). A table with no records takes the new
    /// definition, as a changed field type does.
    private func recordRelations(
        of schema: ResourceSchema, tableExists: Bool, on connection: PostgresConnection
    )
        async throws
    {
        let declared = Relations(schema)
        var binds = PostgresBindings()
        binds.append(schema.name)
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT relations FROM \(meta("hammock_relations")) WHERE resource = $1", binds: binds),
            logger: logger
        ).collect()
        if let text = try rows.first?.decode(String.self) {
            let stored = Relations(text: text)
            guard stored != declared else { return }
            if tableExists {
                let count =
                    try await connection.query(
                        PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table(schema))"), logger: logger
                    ).collect().first?.decode(Int.self) ?? 0
                guard count == 0 else {
                    throw StoreError.relationsChanged(
                        resource: schema.name, stored: stored.description, declared: declared.description)
                }
            }
        }
        binds.append(declared.text)
        try await connection.query(
            PostgresQuery(
                unsafeSQL: "INSERT INTO \(meta("hammock_relations")) (resource, relations) VALUES ($1, $2) "
                    + "ON CONFLICT (resource) DO UPDATE SET relations = EXCLUDED.relations", binds: binds), logger: logger)
    }

    /// An index name within PostgreSQL's 63 bytes that stays distinct for distinct fields.
    /// `ordered`: the index of nulls first and then the key; without it, the first version's name.
    static func indexName(_ resource: String, _ field: String, ordered: Bool = false) -> String {
        var hasher = FNV1a()
        hasher.add(resource)
        hasher.add("\u{0}")
        hasher.add(field)
        return (ordered ? "hammock_o_" : "hammock_") + String(hasher.value, radix: 16)
    }

    /// Whether a field changed type since the table was written: `true` if the table is empty (so it
    /// may be made again); for a table with records, refused.
    private func typesChanged(_ schema: ResourceSchema, on connection: PostgresConnection) async throws -> Bool {
        var binds = PostgresBindings()
        binds.append(schema.name)
        var recorded: [String: String] = [:]
        for row in try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT field, type FROM \(meta("hammock_fields")) WHERE resource = $1", binds: binds),
            logger: logger
        ).collect() {
            let (field, type) = try row.decode((String, String).self)
            recorded[field] = type
        }
        for column in schema.columns {
            guard let stored = recorded[column.name], stored != column.type.rawValue else { continue }
            let isKey = column.name == schema.key.name
            // The key column's SQL type follows only whether it is an integer.
            if isKey, (stored == FieldType.integer.rawValue) == (column.type == .integer) { continue }
            let count =
                try await connection.query(
                    PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table(schema))"), logger: logger
                ).collect().first?.decode(Int.self) ?? 0
            guard count == 0 else {
                throw StoreError.schemaChanged(
                    resource: schema.name, field: column.name, stored: stored, declared: column.type.rawValue)
            }
            return true
        }
        return false
    }
}

/// FNV-1a, 64 bits: a stable short name for an index (Swift's `Hasher` changes per process).
struct FNV1a {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ text: String) {
        for byte in text.utf8 {
            value ^= UInt64(byte)
            value = value &* 0x0000_0100_0000_01b3
        }
    }
}

/// A resource's references to parents, as recorded in `hammock_relations`: each foreign key, the parent
/// it names, and whether its column has a lowercased copy to null with it.
struct Relations: Equatable, CustomStringConvertible {
    struct Reference: Hashable, Comparable {
        var foreignKey: String
        var parent: String
        var isLowered: Bool

        static func < (lhs: Reference, rhs: Reference) -> Bool {
            (lhs.foreignKey, lhs.parent) < (rhs.foreignKey, rhs.parent)
        }
    }

    var references: [Reference]

    init(_ schema: ResourceSchema) {
        references = schema.foreignKeys.map { key in
            let type = schema.columns.first { $0.name == key.name }?.type ?? key.type
            return Reference(foreignKey: key.name, parent: key.parent, isLowered: Columns.hasLoweredCopy(type))
        }
        .sorted()
    }

    /// Read back from ``text``; what cannot be read counts as no references.
    init(text: String) {
        guard case .array(let elements)? = try? JSON(parsing: Array(text.utf8)) else {
            references = []
            return
        }
        references = elements.compactMap { element in
            guard case .string(let key)? = element["foreignKey"], case .string(let parent)? = element["parent"] else {
                return nil
            }
            return Reference(foreignKey: key, parent: parent, isLowered: element["lowered"]?.boolValue ?? false)
        }
        .sorted()
    }

    /// As stored: a JSON array.
    var text: String {
        JSON.array(
            references.map {
                ["foreignKey": .string($0.foreignKey), "parent": .string($0.parent), "lowered": .bool($0.isLowered)]
            }
        ).serializedString()
    }

    static func == (lhs: Relations, rhs: Relations) -> Bool {
        lhs.references.map { [$0.foreignKey, $0.parent] } == rhs.references.map { [$0.foreignKey, $0.parent] }
    }

    /// `personId → people, ownerId → people`, or `no references`.
    var description: String {
        references.isEmpty
            ? "no references" : references.map { "\($0.foreignKey) → \($0.parent)" }.joined(separator: ", ")
    }
}
