import HammockStore
import PostgresNIO

// MARK: Totals kept by the writes

/// Each table's number of rows, kept by the database as writes happen, so that a page of the whole list
/// (`GET /people?_sort=name&_page=5`) states its total without counting the table. `count(*)` over a
/// million rows cost about half a second of database CPU per page under 32 connections: with the count
/// kept, the sort's page went 1,013 → 517 ms (its index, fixed next, was the other half;
/// docs/benchmarks.md, "Fifth step").
///
/// Statement triggers on every resource table add a row of `(table, +n)` or `(table, -n)` to
/// `hammock_counts` for each statement that inserts or deletes rows, in the statement's own transaction:
/// a reader's snapshot sees the rows and their count change together, whatever wrote them (this server,
/// another one on the same namespace, a cascade, `psql`). Rows are only ever added, never updated, so no
/// two writes wait on each other for them; a reader that finds many folds them into one
/// (``compactCount(of:)``), and about one write in 64 folds those that no other transaction holds.
extension PostgresStore {
    /// Creates the table of deltas, its index, and the trigger function where they are missing, in the
    /// transaction that prepares the namespace. The function is made only when it is not there (not
    /// replaced): another role sharing the namespace could not replace the owner's.
    func prepareCounts(on connection: PostgresConnection) async throws {
        let counts = meta("hammock_counts")
        try await connection.query(
            PostgresQuery(unsafeSQL: "CREATE TABLE IF NOT EXISTS \(counts) (resource text NOT NULL, delta bigint NOT NULL)"),
            logger: logger)
        try await connection.query(
            PostgresQuery(
                unsafeSQL: "CREATE INDEX IF NOT EXISTS \(Names.quote("hammock_counts_resource")) ON \(counts) (resource)"),
            logger: logger)
        var binds = PostgresBindings()
        binds.append(configuration.namespace)
        let functions =
            try await connection.query(
                PostgresQuery(
                    unsafeSQL: "SELECT count(*) FROM pg_proc JOIN pg_namespace ON pg_namespace.oid = pronamespace "
                        + "WHERE nspname = $1 AND proname = 'hammock_count'", binds: binds), logger: logger
            ).collect().first?.decode(Int.self) ?? 0
        if functions == 0 {
            try await connection.query(
                PostgresQuery(unsafeSQL: Self.countFunction(meta("hammock_count"), counts: counts)), logger: logger)
        }
    }

    /// The trigger function, with the table of deltas named in its body: static statements, which
    /// PL/pgSQL prepares once per session. (Finding the table through `TG_TABLE_SCHEMA` with `EXECUTE`
    /// parsed and planned the insert on every write: a `POST` at 100,000 records cost 125 µs more of
    /// database CPU with it.) The body is quoted with a dollar tag that the namespace's name does not
    /// contain, whatever that name holds; each trigger names its transition table `changed_rows`.
    static func countFunction(_ function: String, counts: String) -> String {
        var tag = "$hammock$"
        var attempt = 0
        while counts.contains(tag) {
            attempt += 1
            tag = "$hammock\(attempt)$"
        }
        return """
            CREATE FUNCTION \(function)() RETURNS trigger LANGUAGE plpgsql AS \(tag)
            DECLARE n bigint;
            BEGIN
              IF TG_OP = 'TRUNCATE' THEN
                DELETE FROM \(counts) WHERE resource = TG_TABLE_NAME;
                RETURN NULL;
              END IF;
              SELECT count(*) INTO n FROM changed_rows;
              IF n > 0 THEN
                INSERT INTO \(counts) (resource, delta) VALUES (TG_TABLE_NAME, CASE WHEN TG_OP = 'DELETE' THEN -n ELSE n END);
              END IF;
              -- About one write in 64 folds the deltas no other transaction holds (SKIP LOCKED: it never
              -- waits, so it cannot deadlock a write), so that a run that only writes keeps the table small.
              IF random() < 1.0 / 64 THEN
                WITH gone AS (
                  DELETE FROM \(counts) WHERE ctid IN (
                    SELECT ctid FROM \(counts) WHERE resource = TG_TABLE_NAME FOR UPDATE SKIP LOCKED)
                  RETURNING delta)
                INSERT INTO \(counts) (resource, delta) SELECT TG_TABLE_NAME, sum(delta) FROM gone HAVING count(*) > 0;
              END IF;
              RETURN NULL;
            END
            \(tag)
            """
    }

    /// Puts the counting triggers on `schema`'s table, unless they are there, and counts the rows it
    /// already holds (a table made by an earlier version). Runs in the transaction that creates or
    /// migrates the table, under the namespace's lock; the table is locked against writes while it is
    /// counted, so no write falls between the count and the first trigger.
    func installCount(for schema: ResourceSchema, tableIsNew: Bool, on connection: PostgresConnection) async throws {
        let table = self.table(schema)
        var binds = PostgresBindings()
        binds.append(table)
        let installed =
            try await connection.query(
                PostgresQuery(
                    unsafeSQL: "SELECT count(*) FROM pg_trigger WHERE tgrelid = $1::regclass AND tgname = 'hammock_count_insert'",
                    binds: binds), logger: logger
            ).collect().first?.decode(Int.self) ?? 0
        guard installed == 0 else { return }
        var resource = PostgresBindings()
        resource.append(Names.tableName(schema.name))
        try await connection.query(
            PostgresQuery(unsafeSQL: "LOCK TABLE \(table) IN SHARE ROW EXCLUSIVE MODE"), logger: logger)
        try await connection.query(
            PostgresQuery(unsafeSQL: "DELETE FROM \(meta("hammock_counts")) WHERE resource = $1", binds: resource),
            logger: logger)
        if !tableIsNew {
            try await connection.query(
                PostgresQuery(
                    unsafeSQL: "INSERT INTO \(meta("hammock_counts")) (resource, delta) SELECT $1, count(*) FROM \(table)",
                    binds: resource), logger: logger)
        }
        let function = meta("hammock_count")
        for (name, event, transition) in [
            ("hammock_count_insert", "INSERT", " REFERENCING NEW TABLE AS changed_rows"),
            ("hammock_count_delete", "DELETE", " REFERENCING OLD TABLE AS changed_rows"),
            ("hammock_count_truncate", "TRUNCATE", ""),
        ] {
            try await connection.query(
                PostgresQuery(
                    unsafeSQL: "CREATE TRIGGER \(Names.quote(name)) AFTER \(event) ON \(table)\(transition) "
                        + "FOR EACH STATEMENT EXECUTE FUNCTION \(function)()"), logger: logger)
        }
    }

    /// The statement that reads `schema`'s total and how many deltas it is made of.
    func countQuery(of schema: ResourceSchema) -> PostgresQuery {
        var binds = PostgresBindings()
        binds.append(Names.tableName(schema.name))
        return PostgresQuery(
            unsafeSQL: "SELECT coalesce(sum(delta), 0)::bigint, count(*) FROM \(meta("hammock_counts")) WHERE resource = $1",
            binds: binds)
    }

    /// Beyond this many deltas a reader folds them into one: summing 64 index entries costs little, and
    /// folding after every few writes would cost each reader a write.
    static let countFoldThreshold = 64

    /// Folds `schema`'s deltas into one row, in one statement: the rows it deletes are the ones it sums,
    /// so a write committed meanwhile (a new delta this statement's snapshot does not see) is kept, and
    /// two folds at once each sum only what they deleted. Best effort: a failure leaves the deltas,
    /// which still add up.
    func compactCount(of schema: ResourceSchema) async {
        let counts = meta("hammock_counts")
        var binds = PostgresBindings()
        binds.append(Names.tableName(schema.name))
        let fold = PostgresQuery(
            unsafeSQL: "WITH gone AS (DELETE FROM \(counts) WHERE resource = $1 RETURNING delta) "
                + "INSERT INTO \(counts) (resource, delta) SELECT $1, sum(delta) FROM gone HAVING count(*) > 0",
            binds: binds)
        do {
            _ = try await run { try await self.client.query(fold, logger: self.logger).collect() }
        } catch {
            logger.warning("could not fold the row count of \(schema.name): \(String(reflecting: error))")
        }
    }
}
