import HammockJSON
public import HammockStore
import NIOCore
import PostgresNIO

// MARK: Snapshots

extension PostgresStore {
    /// Reads every table and key counter in one `REPEATABLE READ` transaction: one moment of the data,
    /// whatever other servers write meanwhile.
    public func snapshot(of schemas: [ResourceSchema]) async throws -> StoreSnapshot {
        for schema in schemas { try known(schema) }
        let contents = try await run {
            try await self.client.withConnection { connection in
                try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: self.logger)
                do {
                    var contents: [(schema: ResourceSchema, records: [JSONObject], lastGeneratedKey: Int)] = []
                    for schema in schemas {
                        let rows = try await connection.query(
                            PostgresQuery(
                                unsafeSQL: "SELECT \(Columns.selectList(schema)) FROM \(self.table(schema)) ORDER BY k"),
                            logger: self.logger
                        ).collect()
                        // A sequence not yet called holds its first value, not a value given.
                        let last =
                            try await connection.query(
                                PostgresQuery(
                                    unsafeSQL: "SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM "
                                        + self.sequence(schema)),
                                logger: self.logger
                            ).collect().first?.decode(Int.self) ?? 0
                        contents.append((schema, try rows.map { try Columns.record($0, schema) }, last))
                    }
                    try await connection.query("COMMIT", logger: self.logger)
                    return contents
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: self.logger)
                    throw error
                }
            }
        }
        return StoreSnapshot(contents)
    }

    public func restore(_ snapshot: StoreSnapshot, schemas: [ResourceSchema]) async throws {
        for schema in schemas { try known(schema) }
        let restored = snapshot.tables(for: schemas)
        try await transaction { connection in
            // Children first, so that no statement leaves a child pointing at a deleted parent.
            for table in restored.reversed() {
                try await connection.query(
                    PostgresQuery(unsafeSQL: "DELETE FROM \(self.table(table.schema))"), logger: self.logger)
            }
            for table in restored {
                let records = table.storedRecords.map(\.fields)
                if !records.isEmpty { try await self.insertRows(records, of: table.schema, on: connection) }
                var binds = PostgresBindings()
                binds.append(self.sequence(table.schema))
                binds.append(max(table.lastGeneratedKey, 1))
                binds.append(table.lastGeneratedKey >= 1)
                // setval(…, n, true): the next key is n + 1; with false, n itself (for a counter still at 0).
                try await connection.query(
                    PostgresQuery(unsafeSQL: "SELECT setval($1::regclass, $2, $3)", binds: binds), logger: self.logger)
            }
        }
    }
}

// MARK: Change dates

extension PostgresStore {
    /// `ModificationLog`'s rules in the database, so that every server on it gives one date. The
    /// common case is one read: entries that exist and were already served need no write.
    public func lastChange(of resources: [String], now: Int, marking: Bool) async throws -> Int? {
        let resources = Array(Set(resources)).sorted()
        var binds = PostgresBindings()
        binds.append(resources)
        let select = "SELECT second, served FROM \(meta("hammock_changes")) WHERE resource = ANY($1)"
        let read = PostgresQuery(unsafeSQL: select, binds: binds)
        let locked = PostgresQuery(unsafeSQL: select + " FOR UPDATE", binds: binds)
        let mark = PostgresQuery(
            unsafeSQL: "UPDATE \(meta("hammock_changes")) SET served = true WHERE resource = ANY($1)", binds: binds)
        var insert = PostgresBindings()
        insert.append(resources)
        insert.append(now)
        let create = PostgresQuery(
            unsafeSQL: "INSERT INTO \(meta("hammock_changes")) (resource, second, served) "
                + "SELECT name, $2, false FROM unnest($1::text[]) AS name ON CONFLICT (resource) DO NOTHING",
            binds: insert)
        let entries = try await run {
            try await self.client.query(read, logger: self.logger).collect().map { try $0.decode((Int, Bool).self) }
        }
        if entries.count == resources.count, !marking || entries.allSatisfy(\.1) {
            let latest = entries.map(\.0).max() ?? now
            return latest <= now ? latest : nil
        }
        // Create what is missing, then read and mark under a lock, so that a change noted meanwhile
        // either lands before this read or sees it served and moves past it.
        return try await transaction { connection in
            try await connection.query(create, logger: self.logger)
            let seconds = try await connection.query(locked, logger: self.logger).collect()
                .map { try $0.decode((Int, Bool).self).0 }
            let latest = seconds.max() ?? now
            guard latest <= now else { return nil }
            if marking { try await connection.query(mark, logger: self.logger) }
            return latest
        }
    }

    public func noteChange(of resources: [String], at second: Int) async throws {
        let statement = noteChangeQuery(resources, at: second)
        _ = try await run { try await self.client.query(statement, logger: self.logger).collect() }
    }

    /// The statement that notes a change of `resources` at `second`; a write runs it in its own transaction.
    func noteChangeQuery(_ resources: [String], at second: Int) -> PostgresQuery {
        var binds = PostgresBindings()
        binds.append(resources)
        binds.append(second)
        return PostgresQuery(unsafeSQL: noteChangeSQL(names: "$1", second: "$2", when: nil), binds: binds)
    }

    /// Notes a change of the resources named by the text array `names` at `second` (both SQL
    /// expressions), only `when` that condition holds.
    func noteChangeSQL(names: String, second: String, when condition: String?) -> String {
        let changes = meta("hammock_changes")
        // Sorted, so that two servers noting the same resources lock their rows in one order.
        return "INSERT INTO \(changes) AS c (resource, second, served) "
            + "SELECT DISTINCT name, \(second)::bigint, false FROM unnest(\(names)::text[]) AS name "
            + (condition.map { "WHERE \($0) " } ?? "") + "ORDER BY name "
            + "ON CONFLICT (resource) DO UPDATE SET second = CASE WHEN EXCLUDED.second > c.second THEN EXCLUDED.second "
            + "WHEN c.served THEN c.second + 1 ELSE c.second END, served = false "
            // Nothing to write when the date stands and no answer has carried it: under a burst of
            // writes, one row version per second instead of one per write.
            + "WHERE EXCLUDED.second > c.second OR c.served"
    }
}
