import Foundation
import HammockJSON
public import HammockStore
import NIOCore
import PostgresNIO

extension PostgresStore {
    /// Answers a list query in SQL: filters, search, order and window become one parameterised
    /// statement on the table's indexes, with the total counted alongside. Nothing from the request is
    /// spliced into the SQL text: values are parameters, and field names are the schema's, quoted.
    ///
    /// A condition the SQL cannot answer exactly as the other stores do (a filter or sort on a `json`
    /// field, a bound of another kind than its field, `_like` or `q` on a string key) is evaluated in
    /// Swift, on the records the other conditions select in SQL (all of them only when there is no
    /// other condition), and the order and window with it.
    public func storedRecords(
        of schema: ResourceSchema, answering query: ListQuery
    ) async throws -> (page: [StoredRecord], total: Int) {
        try known(schema)
        let plan = SQLPlan(query, schema: schema)
        let conditions = plan.conditions.isEmpty ? "" : " WHERE " + plan.conditions.joined(separator: " AND ")
        guard plan.isWhole else {
            let statement = PostgresQuery(
                unsafeSQL: "SELECT \(Columns.selectList(schema)) FROM \(table(schema))\(conditions) ORDER BY k",
                binds: plan.binds)
            var rest = query
            rest.filters = plan.leftFilters
            rest.search = plan.leftSearch
            return rest.apply(to: try await records(statement, schema).map(StoredRecord.init), schema: schema)
        }
        var binds = plan.binds
        // A filter with a sort: the database reads every match to order them whatever it does, and
        // counting them in the same pass is cheaper than a second statement (6.9 against 11.8 ms of CPU,
        // server and database, for an equality, a `_like` and a sort at 100,000 records). Otherwise the page can
        // stop early and the count is a statement of its own (below).
        let countsInPass = query.window != nil && !plan.conditions.isEmpty && !query.sort.isEmpty
        var sql = "SELECT \(Columns.selectList(schema)) FROM \(table(schema))" + conditions
        if countsInPass {
            // The matches counted in a subquery, ordered outside it. With the count and the order in one
            // query, the planner walked the sort field's index in order to stop at the page, not seeing
            // that the count reads every match anyway: each match fetched at random, the filtered page
            // at 100,000 records went 7.3 → 67 ms of CPU, database included (docs/benchmarks.md, "Fifth
            // step"). Inside the subquery no order is asked for, so the conditions choose the plan.
            sql =
                "SELECT * FROM (SELECT \(Columns.selectList(schema)), count(*) OVER () AS hammock_total FROM \(table(schema))"
                + conditions + ") AS matches"
        }
        sql += " ORDER BY " + (plan.order + ["k"]).joined(separator: ", ")
        let (start, end) = query.window?.positions ?? (0, Int.max)
        if end != Int.max {
            binds.append(end - start)
            sql += " LIMIT $\(binds.count)"
        }
        if start > 0 {
            binds.append(start)
            sql += " OFFSET $\(binds.count)"
        }
        let statement = PostgresQuery(unsafeSQL: sql, binds: binds)
        if countsInPass {
            let rows = try await run { try await self.client.query(statement, logger: self.logger).collect() }
            var total = 0
            var page: [StoredRecord] = []
            page.reserveCapacity(rows.count)
            for row in rows {
                page.append(StoredRecord(try Columns.record(row, schema)))
                total = try row.decode(Int.self, columnIndex: schema.columns.count)
            }
            guard rows.isEmpty, start > 0 || end != Int.max else { return (page, total) }
            // A window past the end, or of no rows: no row carried the total.
            let count = PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table(schema))" + conditions, binds: plan.binds)
            total = try await run {
                try await self.client.query(count, logger: self.logger).collect().first?.decode(Int.self) ?? 0
            }
            return (page, total)
        }
        guard query.window != nil else {
            // The whole answer: its length is the total.
            let rows = try await run { try await self.client.query(statement, logger: self.logger).collect() }
            let page = try rows.map { StoredRecord(try Columns.record($0, schema)) }
            return (page, page.count)
        }
        // The page and the count as two statements of one snapshot. One statement with
        // `count(*) OVER ()` has to produce every matching row, with every column, before the window
        // can cut it: a sort on an indexed field could not stop at the page (at 100,000 records a sort's
        // page took 72.9 ms of CPU, server and database, now 25; docs/benchmarks.md). The page walks the
        // index and stops; the count reads no columns.
        // Without a condition the total is the table's, which the writes keep (PostgresStore+Counts.swift):
        // a sum over a few deltas instead of `count(*)` over every row.
        let wholeTable = plan.conditions.isEmpty
        let count =
            wholeTable
            ? countQuery(of: schema)
            : PostgresQuery(unsafeSQL: "SELECT count(*), 1::bigint FROM \(table(schema))" + conditions, binds: plan.binds)
        let (rows, total, deltas) = try await run {
            try await self.client.withConnection { connection in
                try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: self.logger)
                do {
                    let rows = try await connection.query(statement, logger: self.logger).collect()
                    let counted =
                        try await connection.query(count, logger: self.logger).collect().first?
                        .decode((Int, Int).self) ?? (0, 0)
                    try await connection.query("COMMIT", logger: self.logger)
                    return (rows, counted.0, counted.1)
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: self.logger)
                    throw error
                }
            }
        }
        if wholeTable, deltas > Self.countFoldThreshold { await compactCount(of: schema) }
        return (try rows.map { StoredRecord(try Columns.record($0, schema)) }, total)
    }
}

extension PostgresRow {
    /// The cell at `columnIndex` decoded as `T`.
    func decode<T: PostgresDecodable>(_ type: T.Type, columnIndex: Int) throws -> T {
        var index = 0
        for cell in self {
            if index == columnIndex { return try cell.decode(T.self) }
            index += 1
        }
        throw StoreError.storageFailure("a row without column \(columnIndex)")
    }
}

/// A list query as SQL conditions and order over a resource's table, and what SQL would not answer
/// exactly as `ListQuery.apply(to:schema:)` does, left for Swift.
struct SQLPlan {
    var conditions: [String] = []
    var order: [String] = []
    var binds = PostgresBindings()
    /// Filters SQL does not answer (on a json field, a bound of another kind than its field, `_like` on
    /// a string key).
    var leftFilters: [ListQuery.Filter] = []
    /// A search SQL does not answer (a resource with a string key, which has no lowercased copy).
    var leftSearch: String?
    /// Whether SQL orders the answer (not when a sort key is a json field).
    var ordersInSQL = true

    /// Whether SQL answers the whole query: conditions, order and window.
    var isWhole: Bool { leftFilters.isEmpty && leftSearch == nil && ordersInSQL }

    /// A column a query can use: its SQL expression and the kind of values it holds.
    struct Target {
        var expression: String
        var type: FieldType
        var isKey: Bool
        var lowered: String?
    }

    init(_ query: ListQuery, schema: ResourceSchema) {
        func target(_ field: String) -> Target? {
            if field == schema.key.name { return Target(expression: "k", type: schema.key.type, isKey: true, lowered: nil) }
            guard let column = schema.columns.first(where: { $0.name == field }), column.type != .json else { return nil }
            return Target(
                expression: Names.field(field), type: column.type, isKey: false,
                lowered: Columns.hasLoweredCopy(column.type) ? Names.lowered(field) : nil)
        }
        for filter in query.filters {
            // A condition that gives up may have bound values already: they go with it.
            let bound = binds
            if let target = target(filter.field), let condition = condition(filter, on: target) {
                conditions.append(condition)
            } else {
                binds = bound
                leftFilters.append(filter)
            }
        }
        if let search = query.search {
            let fields = schema.columns.filter { $0.type == .string }
            if fields.contains(where: { $0.name == schema.key.name }) {
                // A string key is searched too, and has no lowercased copy.
                leftSearch = search
            } else if fields.isEmpty {
                conditions.append("FALSE")
            } else {
                binds.append(ByteBuffer(string: search.lowercased()))
                let needle = "$\(binds.count)"
                conditions.append(
                    "(" + fields.map { "position(\(needle) IN \(Names.lowered($0.name))) > 0" }.joined(separator: " OR ") + ")")
            }
        }
        for key in query.sort {
            guard let target = target(key.field) else {
                ordersInSQL = false
                order = []
                break
            }
            // Nulls first, as the other stores order them, which is the order of the fields' indexes (a
            // backward scan gives `DESC NULLS LAST`). The key is never null: its own index's order.
            order.append(
                target.expression
                    + (target.isKey
                        ? (key.isDescending ? " DESC" : " ASC")
                        : (key.isDescending ? " DESC NULLS LAST" : " ASC NULLS FIRST")))
        }
    }

    /// One filter as a condition, or `nil` if SQL would not compare as the query language does.
    private mutating func condition(_ filter: ListQuery.Filter, on target: Target) -> String? {
        let column = target.expression
        var parts: [String] = []
        switch filter.comparison {
        case .equal, .notEqual:
            let isEqual = filter.comparison == .equal
            for value in filter.values {
                if value.isNull {
                    parts.append(isEqual ? "\(column) IS NULL" : "\(column) IS NOT NULL")
                } else {
                    guard let parameter = bind(value, as: target.type) else { return nil }
                    parts.append(isEqual ? "\(column) = \(parameter)" : "\(column) IS DISTINCT FROM \(parameter)")
                }
            }
            guard !parts.isEmpty else { return isEqual ? "FALSE" : "TRUE" }
            return "(" + parts.joined(separator: isEqual ? " OR " : " AND ") + ")"
        case .null:
            for value in filter.values {
                switch value {
                case .bool(true): parts.append("\(column) IS NULL")
                case .bool(false): parts.append("\(column) IS NOT NULL")
                default: parts.append("FALSE")
                }
            }
            return parts.isEmpty ? "TRUE" : "(" + parts.joined(separator: " AND ") + ")"
        case .greater, .greaterOrEqual, .less, .lessOrEqual:
            let symbol =
                switch filter.comparison {
                case .greater: ">"
                case .greaterOrEqual: ">="
                case .less: "<"
                default: "<="
                }
            parts.append("\(column) IS NOT NULL")
            for value in filter.values {
                if value.isNull {
                    // Every value is above null: `> null` holds for any value, `< null` for none.
                    if symbol.hasPrefix("<") { parts.append("FALSE") }
                } else {
                    guard let parameter = bind(value, as: target.type) else { return nil }
                    parts.append("\(column) \(symbol) \(parameter)")
                }
            }
            return "(" + parts.joined(separator: " AND ") + ")"
        case .like:
            guard !target.isKey else { return nil }
            // Only strings match a pattern; a field of numbers or booleans holds none.
            guard let lowered = target.lowered else { return "FALSE" }
            for value in filter.values {
                binds.append(ByteBuffer(string: Self.likePattern(value.stringValue ?? "")))
                parts.append("\(lowered) LIKE $\(binds.count)")
            }
            return parts.isEmpty ? "FALSE" : "(" + parts.joined(separator: " OR ") + ")"
        }
    }

    /// `_like`'s pattern in SQL: lowercased, `%` kept as the wildcard, `_` and `\` escaped; without a
    /// `%` it is a substring.
    static func likePattern(_ text: String) -> String {
        let parts = text.lowercased().split(separator: "%", omittingEmptySubsequences: false).map { part in
            part.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "_", with: "\\_")
        }
        return parts.count == 1 ? "%" + parts[0] + "%" : parts.joined(separator: "%")
    }

    /// Appends `value` as a parameter comparable with a column of `type`, or `nil` where SQL's comparison
    /// would differ from the query language's (another kind of value, an integer a double cannot hold).
    private mutating func bind(_ value: JSON, as type: FieldType) -> String? {
        switch (type, value) {
        case (.integer, .integer(let number)): binds.append(number)
        case (.float, .double(let number)): binds.append(number)
        case (.float, .integer(let number)):
            // Exact only within ±2^53.
            guard number.magnitude <= 9_007_199_254_740_992 else { return nil }
            binds.append(Double(number))
        case (.boolean, .bool(let flag)): binds.append(flag)
        case (.string, .string(let text)), (.date, .string(let text)), (.blob, .string(let text)):
            binds.append(ByteBuffer(string: text))
        default: return nil
        }
        return "$\(binds.count)"
    }
}
