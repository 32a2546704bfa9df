import HammockJSON

/// The query parameters that start with `_`: the server's own, in one list. A `_` parameter not in
/// it is a 400 on every resource route and stub, so a typo (`_sortt`) is never silently ignored; one
/// that exists but does not apply where it was sent (`_page` on a record) is a 400 that says where it
/// applies.
package enum ReservedParameters {
    /// Where a parameter applies.
    package enum Scope: Sendable {
        /// Lists (`GET /people`, `GET /people/1/cars`).
        case lists
        /// Lists and single records (`GET`).
        case reads
        /// A record's `DELETE`.
        case deletes
        /// Every route (the per-request overrides, and `_`, the cache-buster jQuery adds).
        case everywhere

        package var description: String {
            switch self {
            case .lists: "lists"
            case .reads: "lists and records"
            case .deletes: "a record's DELETE"
            case .everywhere: "every route"
            }
        }
    }

    /// Every `_` parameter, with where it applies.
    package static let all: [(name: String, scope: Scope)] = [
        ("_sort", .lists), ("_order", .lists), ("_page", .lists), ("_per_page", .lists), ("_start", .lists),
        ("_end", .lists), ("_limit", .lists), ("_cursor", .lists), ("_embed", .reads), ("_expand", .reads),
        ("_dependent", .deletes),
        ("_delay", .everywhere), ("_", .everywhere),
    ]

    package static let scopes: [String: Scope] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0.scope) })

    /// The names, for a problem's `options`.
    package static var names: [String] { all.map(\.name) }

    /// The 400 for `name`, a `_` parameter sent where it does not apply (`route` says where it was sent:
    /// "a record", "a stub"), or `nil` if it applies there or is not a `_` parameter.
    package static func problem(for name: String, sentTo route: String, accepting accepted: Set<Scope>) -> QueryError? {
        guard name.hasPrefix("_") else { return nil }
        guard let scope = scopes[name] else {
            return QueryError.badQuery(
                name, "is not an option; the server's _ parameters are \(names.joined(separator: ", "))",
                extensions: ["options": .array(names.map(JSON.string))])
        }
        guard scope != .everywhere, !accepted.contains(scope) else { return nil }
        return QueryError.badQuery(name, "applies to \(scope.description), not to \(route)")
    }
}
