/// `{name}` placeholders in a request template's text (`/users/{id}/repos?sort={order}`), read the same
/// way by the `@API` macro at compile time and the client at run time.
///
/// ```swift
/// Placeholders.find(in: "/users/{id}/repos")   // ["id"]
/// Placeholders.find(in: "/users/{id")          // nil: never closed
/// ```
package enum Placeholders {
    /// The placeholder names in order; `nil` if a `{` is never closed.
    package static func find(in text: some StringProtocol) -> [String]? {
        var names: [String] = []
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            guard let close = rest[open...].firstIndex(of: "}") else { return nil }
            names.append(String(rest[rest.index(after: open)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        return names
    }
}
