import Foundation
public import HammockJSON
import HammockWire

extension ListQuery {
    /// Parses a query string (without the `?`) against the fields of `schema`.
    ///
    /// - Throws: ``QueryError`` naming the parameter, for a value that is not of its field's type,
    ///   an unknown operator or `_` option, a sort on an unknown field, or a page below 1.
    /// `ignoringUnknownOptions`: a `_` parameter that is not one of the server's is ignored and listed
    /// (a request an API document describes, whose query is the document's), not a 400.
    public init(parsing query: String?, for schema: ResourceSchema, ignoringUnknownOptions: Bool = false) throws(QueryError) {
        self.init()
        let pageSize = schema.resource.defaultPageSize
        guard let query, !query.isEmpty else {
            // Nothing asked: the resource's default page, if it has one.
            if let pageSize { window = .range(start: 0, end: pageSize) }
            namePagesAsDocumented(for: schema)
            return
        }
        items = try Self.items(of: query)
        // An API's own names for the query language's parameters (`limit` for `_limit`) are read as those.
        let aliases = schema.resource.queryNames
        if !aliases.isEmpty {
            for index in items.indices {
                guard let name = aliases[items[index].name] else { continue }
                documentedNames[name] = items[index].name
                items[index].name = name
            }
        }
        var parser = Parser(schema: schema)
        parser.defaultPageSize = pageSize
        parser.ignoresUnknownOptions = ignoringUnknownOptions
        for item in items {
            guard let documented = documentedNames[item.name] else {
                try parser.take(item, into: &self)
                continue
            }
            // The API's document decides what its own parameters may hold (a server checks it first): a
            // value the query language cannot use (`limit=-1`, `sort=relevance`) is ignored, and said so.
            do {
                try parser.take(item, into: &self)
            } catch {
                ignored.append(documented)
            }
        }
        // `order=asc` under the API's name, without a sort to apply it to: ignored, as the API would.
        if let documented = documentedNames["_order"], sort.isEmpty, parser.orders != nil {
            parser.orders = nil
            ignored.append(documented)
        }
        try parser.finish(into: &self)
        // A page the client asked for keeps the names it asked with; only the default page takes the API's.
        if !items.contains(where: { Self.isWindowParameter($0.name) }) { namePagesAsDocumented(for: schema) }
    }

    /// A default page's `Link`s use the API's own names for the window's parameters (`limit`, `offset`)
    /// where the client sent none of them.
    mutating func namePagesAsDocumented(for schema: ResourceSchema) {
        guard window != nil else { return }
        for (name, target) in schema.resource.queryNames where Self.isWindowParameter(target) {
            if documentedNames[target] == nil { documentedNames[target] = name }
        }
    }

    /// The query language's parameters an API's own name may stand for (``MockResource/queryNames``),
    /// beside a field's name and a field with an operator (`createdAt_gte`).
    public static let aliasableParameters = [
        "_limit", "_start", "_end", "_page", "_per_page", "_cursor", "_sort", "_order", "q", "_embed", "_expand",
    ]

    /// Whether `name` is a parameter an API's own name may stand for in a list of `schema`.
    public static func isAliasable(_ name: String, for schema: ResourceSchema) -> Bool {
        if aliasableParameters.contains(name) || schema.columns.contains(where: { $0.name == name }) { return true }
        guard let underscore = name.lastIndex(of: "_"), underscore != name.startIndex else { return false }
        let field = name[..<underscore]
        return schema.columns.contains { $0.name == field }
            && Operator(rawValue: String(name[name.index(after: underscore)...])) != nil
    }

    /// The query of a single record's route: `_embed` and `_expand` on `GET`, `_dependent` on `DELETE`
    /// (when `dependent` is true); every other parameter is ignored and listed.
    package static func recordOptions(
        parsing query: String?, dependent: Bool, ignoringUnknownOptions: Bool = false
    ) throws(QueryError) -> (embed: [String], expand: [String], dependent: [String], ignored: [String]) {
        var result: (embed: [String], expand: [String], dependent: [String], ignored: [String]) = ([], [], [], [])
        guard let query, !query.isEmpty else { return result }
        for item in try items(of: query) {
            switch item.name {
            case "_embed" where !dependent: result.embed += try Parser.names(item)
            case "_expand" where !dependent: result.expand += try Parser.names(item)
            case "_dependent" where dependent: result.dependent += try Parser.names(item)
            case "_delay": continue  // the router's
            default:
                if !ignoringUnknownOptions,
                    let problem = ReservedParameters.problem(
                        for: item.name, sentTo: dependent ? "a record's DELETE" : "a record",
                        accepting: dependent ? [.deletes] : [.reads])
                {
                    throw problem
                }
                result.ignored.append(item.name)
            }
        }
        return result
    }

    /// The decoded `name=value` pairs of a query string (`+` is a space, as browsers send forms).
    package static func items(of query: String) throws(QueryError) -> [Item] {
        var items: [Item] = []
        // One pass over the bytes, finding each item's `=` on the way: `split` made an array of the parts
        // first (1% of a sorted page's CPU at a million records, with the search for `=` after it).
        let utf8 = query.utf8
        var partStart = utf8.startIndex
        var equals: String.Index?
        var position = partStart
        while true {
            let atEnd = position == utf8.endIndex
            let byte = atEnd ? UInt8(ascii: "&") : utf8[position]
            if byte == UInt8(ascii: "="), equals == nil {
                equals = position
            } else if byte == UInt8(ascii: "&") {
                if position != partStart {
                    let rawName = utf8[partStart..<(equals ?? position)]
                    let rawValue = equals.map { utf8[utf8.index(after: $0)..<position] } ?? utf8[position..<position]
                    guard let name = PercentEncoding.decodeForm(rawName), let value = PercentEncoding.decodeForm(rawValue)
                    else {
                        throw QueryError.badQuery(
                            String(decoding: rawName, as: UTF8.self), "is not correctly percent-encoded UTF-8")
                    }
                    items.append(Item(name: name, value: value))
                }
                if atEnd { break }
                partStart = utf8.index(after: position)
                equals = nil
            }
            position = utf8.index(after: position)
        }
        return items
    }

    /// Reads the items one by one; options given twice and contradictory pages are found here.
    struct Parser {
        let schema: ResourceSchema
        /// The options read so far: a query names a handful, so a list searched in place beats hashing
        /// each name into a set.
        var seenOptions: [String] = []
        var orders: [Bool]?
        var page: Int?
        var perPage: Int?
        var start: Int?
        var end: Int?
        var limit: Int?
        /// `_cursor`: the position it stands for (0 for an empty one, the first page).
        var cursor: Int?
        /// The resource's ``MockResource/defaultPageSize``.
        var defaultPageSize: Int?
        /// Whether an unknown `_` parameter is ignored rather than refused.
        var ignoresUnknownOptions = false

        init(schema: ResourceSchema) { self.schema = schema }

        var fieldNames: [String] { schema.columns.map(\.name) }

        func column(_ name: String) -> ResourceSchema.Column? { schema.columns.first { $0.name == name } }

        mutating func take(_ item: Item, into query: inout ListQuery) throws(QueryError) {
            if let column = column(item.name) {
                return try addFilter(column, .equal, item, into: &query)
            }
            switch item.name {
            case "_embed":
                query.embed += try Self.names(item)
                return
            case "_expand":
                query.expand += try Self.names(item)
                return
            case "q":
                try once(item.name)
                query.search = item.value
                return
            case "_sort":
                try once(item.name)
                query.sort = try sortKeys(item)
                return
            case "_order":
                try once(item.name)
                orders = try item.value.split(separator: ",", omittingEmptySubsequences: false).map {
                    (direction) throws(QueryError) -> Bool in
                    switch direction.trimmingCharacters(in: .whitespaces).lowercased() {
                    case "asc": return false
                    case "desc": return true
                    default: throw QueryError.badQuery(item.name, "must be asc or desc (or a list of them), not '\(item.value)'")
                    }
                }
                return
            case "_page": page = try count(item, minimum: 1)
            case "_per_page": perPage = try count(item, minimum: 1)
            case "_start": start = try count(item, minimum: 0)
            case "_end": end = try count(item, minimum: 0)
            case "_limit": limit = try count(item, minimum: 0)
            case "_cursor":
                guard let position = item.value.isEmpty ? 0 : ListCursor.position(of: item.value) else {
                    throw QueryError.badQuery(
                        item.name,
                        "is not a cursor this server gave; send it empty for the first page, then the nextCursor of each answer")
                }
                cursor = position
                query.usesCursor = true
            case "_":
                // jQuery and others add `_=<timestamp>` to bust caches.
                query.ignored.append(item.name)
                return
            case "_delay":
                return  // the router's (a per-request override)
            default:
                if let underscore = item.name.lastIndex(of: "_"), underscore != item.name.startIndex,
                    let column = column(String(item.name[..<underscore]))
                {
                    let suffix = String(item.name[item.name.index(after: underscore)...])
                    guard let comparison = Operator(rawValue: suffix), comparison != .equal else {
                        let known = Operator.allCases.filter { $0 != .equal }.map { "_\($0.rawValue)" }
                        throw QueryError.badQuery(
                            item.name,
                            "uses the unknown operator '_\(suffix)'; the operators are \(known.joined(separator: ", "))",
                            extensions: ["operators": .array(known.map(JSON.string))])
                    }
                    return try addFilter(column, comparison, item, into: &query)
                }
                if !ignoresUnknownOptions,
                    let problem = ReservedParameters.problem(for: item.name, sentTo: "a list", accepting: [.lists, .reads])
                {
                    throw problem
                }
                // Cache-busters, API keys and the like: ignored, and said so in a header.
                query.ignored.append(item.name)
                return
            }
            try once(item.name)
        }

        /// The comma-separated names of `_embed`, `_expand` and `_dependent`.
        static func names(_ item: Item) throws(QueryError) -> [String] {
            let names = item.value.split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard !names.contains(where: \.isEmpty) else {
                throw QueryError.badQuery(item.name, "must name one or more resources, separated by commas")
            }
            return names
        }

        mutating func once(_ name: String) throws(QueryError) {
            guard !seenOptions.contains(name) else { throw QueryError.badQuery(name, "is given more than once") }
            seenOptions.append(name)
        }

        func count(_ item: Item, minimum: Int) throws(QueryError) -> Int {
            // Foundation's trimming costs more than the rest of the parse: only a failed parse tries it.
            guard let number = Int(item.value) ?? Int(item.value.trimmingCharacters(in: .whitespaces)), number >= minimum
            else {
                throw QueryError.badQuery(
                    item.name, "must be a whole number from \(minimum) to \(Int.max), not '\(item.value)'",
                    extensions: ["minimum": .integer(minimum), "maximum": .integer(Int.max)])
            }
            return number
        }

        func sortKeys(_ item: Item) throws(QueryError) -> [SortKey] {
            var keys: [SortKey] = []
            // ASCII text (every sort a client writes) is split and checked byte by byte; other text by
            // characters, where a comma followed by a combining mark is one character and no separator.
            let isASCII = item.value.utf8.allSatisfy { $0 < 0x80 }
            let parts =
                isASCII
                ? item.value.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map { Substring($0) }
                : item.value.split(separator: ",", omittingEmptySubsequences: false)
            for part in parts {
                // Foundation's trimming only when there is something to trim: it costs more than the
                // rest of reading a sort key.
                let padded =
                    isASCII
                    ? Self.isASCIISpace(part.utf8.first) || Self.isASCIISpace(part.utf8.last)
                    : part.first?.isWhitespace == true || part.last?.isWhitespace == true
                var name = padded ? part.trimmingCharacters(in: .whitespaces) : String(part)
                let isDescending = name.hasPrefix("-")
                if isDescending { name.removeFirst() }
                guard column(name) != nil else {
                    throw QueryError.badQuery(
                        item.name, "names the unknown field '\(name)'; the fields are \(fieldNames.joined(separator: ", "))",
                        extensions: ["fields": .array(fieldNames.map(JSON.string))])
                }
                keys.append(SortKey(field: name, isDescending: isDescending))
            }
            return keys
        }

        /// Whether `byte` is ASCII white space (what `Character.isWhitespace` says of an ASCII character).
        static func isASCIISpace(_ byte: UInt8?) -> Bool {
            guard let byte else { return false }
            return byte == 0x20 || (0x09...0x0D).contains(byte)
        }

        func addFilter(
            _ column: ResourceSchema.Column, _ comparison: Operator, _ item: Item, into query: inout ListQuery
        ) throws(QueryError) {
            let value = try typedValue(item, column: column, comparison: comparison)
            // A repeated equality or `_like` adds an alternative to the same filter.
            if comparison == .equal || comparison == .like,
                let index = query.filters.firstIndex(where: { $0.field == column.name && $0.comparison == comparison })
            {
                query.filters[index].values.append(value)
            } else {
                query.filters.append(Filter(field: column.name, comparison: comparison, values: [value]))
            }
        }

        func typedValue(
            _ item: Item, column: ResourceSchema.Column, comparison: Operator
        ) throws(QueryError) -> JSON {
            let text = item.value
            switch comparison {
            case .null:
                switch text {
                case "true": return .bool(true)
                case "false": return .bool(false)
                default: throw QueryError.badQuery(item.name, "must be true or false, not '\(text)'")
                }
            case .like:
                guard [.string, .date, .blob].contains(column.type) else {
                    throw QueryError.badQuery(
                        item.name, "cannot be used: _like compares text, and \(column.name) is \(column.type.rawValue)")
                }
                return .string(text)
            case .greater, .greaterOrEqual, .less, .lessOrEqual:
                guard [.string, .date, .integer, .float].contains(column.type) else {
                    throw QueryError.badQuery(
                        item.name, "cannot be used: \(column.name) is \(column.type.rawValue), which has no order")
                }
            case .equal, .notEqual:
                if text == "null" { return .null }
            }
            switch column.type {
            case .integer:
                guard let number = Int(text) else {
                    throw QueryError.badQuery(item.name, "must be an integer, as \(column.name) is; '\(text)' is not")
                }
                return .integer(number)
            case .float:
                guard let number = Double(text), number.isFinite else {
                    throw QueryError.badQuery(item.name, "must be a number, as \(column.name) is; '\(text)' is not")
                }
                return .double(number)
            case .boolean:
                switch text {
                case "true": return .bool(true)
                case "false": return .bool(false)
                default:
                    throw QueryError.badQuery(item.name, "must be true or false, as \(column.name) is boolean; '\(text)' is not")
                }
            case .json:
                return (try? JSON(parsing: text)) ?? .string(text)
            case .string, .date, .blob:
                return .string(text)
            }
        }

        func finish(into query: inout ListQuery) throws(QueryError) {
            if let orders {
                guard !query.sort.isEmpty else { throw QueryError.badQuery("_order", "needs _sort") }
                guard orders.count == 1 || orders.count == query.sort.count else {
                    throw QueryError.badQuery("_order", "must give one direction, or one per _sort field")
                }
                for index in query.sort.indices where !query.sort[index].isDescending {
                    query.sort[index].isDescending = orders.count == 1 ? orders[0] : orders[index]
                }
            }
            let paged = page != nil || perPage != nil
            let ranged = start != nil || end != nil || limit != nil
            if let cursor {
                // A cursor page is a range from where the last one ended: `_limit` sizes it, nothing else moves it.
                guard !paged, start == nil, end == nil else {
                    throw QueryError.badQuery(
                        "_cursor", "cannot be combined with _page, _per_page, _start or _end; _limit sizes its pages")
                }
                query.window = .range(start: cursor, end: cursor.saturatingAdd(limit ?? defaultPageSize ?? 10))
                return
            }
            if paged && ranged {
                throw QueryError.badQuery(
                    page != nil ? "_page" : "_per_page", "cannot be combined with _start, _end or _limit")
            }
            if paged {
                query.window = .page(number: page ?? 1, size: perPage ?? defaultPageSize ?? 10)
            } else if ranged {
                let first = start ?? 0
                if end != nil && limit != nil { throw QueryError.badQuery("_limit", "cannot be combined with _end") }
                if let end, end < first { throw QueryError.badQuery("_end", "must not be below _start (\(first))") }
                let limited = (limit ?? (end == nil ? defaultPageSize : nil)).map { first.saturatingAdd($0) }
                query.window = .range(start: first, end: end ?? limited)
                query.rangeUsesEnd = end != nil
            } else if let defaultPageSize {
                query.window = .range(start: 0, end: defaultPageSize)
            }
        }
    }
}

/// A query parameter that cannot be read: which one, and why. A server answers it 400, problem+json,
/// with `parameter` and these extensions among its members.
///
/// ```swift
/// do { _ = try ListQuery(parsing: "_page=0", for: people) }
/// catch { print(error) }   // Query parameter '_page' must be 1 or more, not '0'
/// ```
public struct QueryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The parameter's name, as sent.
    public var parameter: String
    /// What is wrong, as the end of a sentence that starts with the parameter ("must be asc or desc").
    public var message: String
    /// Members a problem report carries besides `parameter` (such as `options`, the names allowed).
    public var extensions: JSONObject

    public init(parameter: String, message: String, extensions: JSONObject = [:]) {
        self.parameter = parameter
        self.message = message
        self.extensions = extensions
    }

    public var description: String { "Query parameter '\(parameter)' \(message)" }

    static func badQuery(_ parameter: String, _ what: String, extensions: JSONObject = [:]) -> QueryError {
        QueryError(parameter: parameter, message: what, extensions: extensions)
    }
}
