import HammockJSON
import HammockServer

extension OpenAPIMapper {
    /// A list's documented query parameters mapped onto the query language by the names APIs commonly
    /// give them (`limit`, `offset`, `page`, `per_page`, `sort`, `order`, `search`), and per list the
    /// parameters that stay unused: not a field (a filter already), not mapped, not the query language's.
    func queryNames(
        of lists: [Operation], fields: [String], key: String = "id", dates: [String] = []
    ) -> (names: [String: String], unmapped: [(String, [String])]) {
        var names: [String: String] = [:]
        var unmapped: [(String, [String])] = []
        let known = Set(fields)
        for list in lists {
            var parameters: [(name: String, schema: JSONObject)] = []
            for value in list.object["parameters"]?.arrayValue ?? [] {
                guard case .object(let parameter)? = schemas.resolve(value), parameter["in"]?.stringValue == "query",
                    case .string(let name)? = parameter["name"]
                else { continue }
                parameters.append((name, schemas.object(parameter["schema"]) ?? JSONObject()))
            }
            let paged = parameters.contains { Self.pageNames.contains($0.name.lowercased()) }
            var unused: [String] = []
            for (name, schema) in parameters {
                // A field (a filter), a field with an operator (`age_gte`), the query language's own, or an object
                // of free-form members: read as they are.
                if known.contains(name) || name.hasPrefix("_") || name == "q" || schema["type"]?.stringValue == "object" {
                    continue
                }
                if let underscore = name.lastIndex(of: "_"), known.contains(String(name[..<underscore])),
                    ListQuery.Operator(rawValue: String(name[name.index(after: underscore)...])) != nil
                {
                    continue
                }
                if let target = Self.target(for: name.lowercased(), paged: paged, schema: schema)
                    ?? Self.rangeTarget(for: name, key: key, dates: dates)
                {
                    names[name] = target
                } else {
                    unused.append(name)
                }
            }
            if !unused.isEmpty { unmapped.append((list.place, unused)) }
        }
        return (names, unmapped)
    }

    static let pageNames: Set<String> = ["page", "page_number", "pagenumber"]

    /// A cursor or a date range read as a bound: `after=K` (`starting_after`, `since_id`) as `KEY_gt=K`,
    /// `before=K` as `KEY_lt=K` (lists are in key order unless sorted); `created_after` (`created_since`,
    /// `created_gte`) as `createdAt_gte` on the date field it names, `since`/`from`/`start_date` and
    /// `until`/`to`/`end_date` on the first date field (a `created` one first).
    static func rangeTarget(for name: String, key: String, dates: [String]) -> String? {
        let plain = name.lowercased().filter { $0 != "_" && $0 != "-" }
        if ["after", "startingafter", "sinceid", "afterid", "aftercursor"].contains(plain) { return key + "_gt" }
        if ["before", "endingbefore", "maxid", "beforeid", "beforecursor"].contains(plain) { return key + "_lt" }
        let firstDate = dates.first { $0.lowercased().hasPrefix("created") } ?? dates.first
        if ["since", "from", "start", "startdate", "datefrom", "fromdate", "mindate"].contains(plain) {
            return firstDate.map { $0 + "_gte" }
        }
        if ["until", "to", "end", "enddate", "dateto", "todate", "maxdate"].contains(plain) {
            return firstDate.map { $0 + "_lte" }
        }
        // `created_after`, `createdAtFrom`, `updated_since`: the date field the prefix names.
        for (words, suffix) in [
            (["after", "since", "from", "gte", "min"], "_gte"), (["before", "until", "to", "lte", "max"], "_lte"),
        ] {
            for word in words where plain.hasSuffix(word) && plain.count > word.count {
                let prefix = String(plain.dropLast(word.count))
                let date = dates.first { date in
                    let plainDate = date.lowercased().filter { $0 != "_" && $0 != "-" }
                    return [prefix, prefix + "at", prefix + "on", prefix + "date"].contains(plainDate)
                }
                if let date { return date + suffix }
            }
        }
        return nil
    }

    /// The query language's name for a documented parameter, by its (lowercased) name.
    static func target(for name: String, paged: Bool, schema: JSONObject) -> String? {
        switch name {
        case "limit", "per_page", "perpage", "page_size", "pagesize", "size", "max_results", "maxresults":
            return paged ? "_per_page" : "_limit"
        case "offset", "skip", "start": return "_start"
        case "cursor", "page_token", "pagetoken", "next_token", "nexttoken", "continuation_token", "continuationtoken",
            "page_cursor", "pagecursor":
            return "_cursor"
        case _ where pageNames.contains(name): return "_page"
        case "sort", "sort_by", "sortby", "order_by", "orderby": return "_sort"
        case "order", "direction", "dir", "sort_order", "sortorder", "sort_direction":
            // Only a direction: `order=created_at` names a field, which `_order` does not take.
            guard let choices = schema["enum"]?.arrayValue else { return "_order" }
            let directions: Set<String> = ["asc", "desc"]
            return choices.allSatisfy { directions.contains($0.stringValue?.lowercased() ?? "") } ? "_order" : nil
        case "search", "query", "keyword", "keywords", "search_query": return "q"
        default: return nil
        }
    }
}
