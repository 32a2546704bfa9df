public import HTTPTypes
import HammockStore
import HammockWire

extension HTTPField.Name {
    /// `X-Total-Count`: how many records matched before a page was cut.
    public static let totalCount = HTTPField.Name("X-Total-Count")!
    /// `X-Hammock-Ignored-Query`: the query parameters that named no field and no option.
    public static let ignoredQuery = HTTPField.Name("X-Hammock-Ignored-Query")!
    /// `Link` (RFC 8288).
    public static let link = HTTPField.Name("Link")!
    /// `X-Next-Cursor`: the `_cursor` of the next page of a list asked for by cursor; absent on the last.
    public static let nextCursor = HTTPField.Name("X-Next-Cursor")!
}

extension ListQuery {
    /// The header fields of a list answer: the total and `Link` to the first, previous, next and last
    /// pages when a window was asked for (to the next only, and its cursor, when asked by `_cursor`),
    /// and the ignored parameters when there are any.
    public func responseFields(total: Int, path: String) -> HTTPFields {
        var fields = HTTPFields()
        if let window {
            fields[.totalCount] = String(total)
            if usesCursor, let next = nextCursor(for: window, total: total) {
                fields[.nextCursor] = next.token
                fields[.link] =
                    "<\(path)?\(keptParameters)\(documentedNames["_cursor"] ?? "_cursor")=\(next.token)"
                    + "&\(documentedNames["_limit"] ?? "_limit")=\(next.size)>; rel=\"next\""
            } else if !usesCursor, let links = links(for: window, total: total, path: path) {
                fields[.link] = links
            }
        }
        if !ignored.isEmpty { fields[.ignoredQuery] = ignored.joined(separator: ", ") }
        return fields
    }

    /// The cursor of the page after `window` and its size, unless `window` reaches the end.
    func nextCursor(for window: Window, total: Int) -> (token: String, size: Int)? {
        guard case .range(let start, let end?) = window.clamped, end > start, end < total else { return nil }
        return (ListCursor.token(for: end), end - start)
    }

    /// The parameters a link to another page keeps, as the client sent them, each followed by `&`.
    var keptParameters: String {
        var kept = ""
        for item in items where !Self.windowParameters.contains(item.name) {
            kept += PercentEncoding.encodeForm(documentedNames[item.name] ?? item.name)
            kept += "="
            kept += PercentEncoding.encodeForm(item.value)
            kept += "&"
        }
        return kept
    }

    func links(for window: Window, total: Int, path: String) -> String? {
        var targets: [(rel: String, parameters: [(String, Int)])] = []
        // Every number below is a page from 1 or a position from 0 of a clamped window, and `total`
        // is a count: no sum or difference can leave `Int` except where it saturates.
        switch window.clamped {
        case .page(let number, let size):
            let last = total <= 0 ? 1 : (total - 1) / size + 1
            let page = { (number: Int) in [("_page", number), ("_per_page", size)] }
            targets.append(("first", page(1)))
            if number > 1 { targets.append(("prev", page(min(number - 1, last)))) }
            if number < last { targets.append(("next", page(number + 1))) }
            targets.append(("last", page(last)))
        case .range(let start, let end):
            guard let end, end > start else { return nil }
            let size = end - start
            let range = { (first: Int) in
                [("_start", first), self.rangeUsesEnd ? ("_end", first.saturatingAdd(size)) : ("_limit", size)]
            }
            let lastStart = total <= 0 ? 0 : (total - 1) / size * size
            targets.append(("first", range(0)))
            if start > 0 { targets.append(("prev", range(max(0, min(start - size, lastStart))))) }
            if start < total - size { targets.append(("next", range(start + size))) }
            targets.append(("last", range(lastStart)))
        }
        // The other parameters are kept, in their order, as the client sent them.
        let kept = keptParameters
        // One string appended to, not one per part: this header is written on every paged answer.
        var header = ""
        header.reserveCapacity(targets.count * (path.utf8.count + kept.utf8.count + 40))
        for target in targets {
            if !header.isEmpty { header += ", " }
            header += "<"
            header += path
            header += "?"
            header += kept
            for (position, (name, value)) in target.parameters.enumerated() {
                if position > 0 { header += "&" }
                header += documentedNames[name] ?? name
                header += "="
                header += String(value)
            }
            header += ">; rel=\""
            header += target.rel
            header += "\""
        }
        return header
    }
}
