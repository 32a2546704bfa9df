/// The header fields whose values the admin API hides when it serves the journal (`GET
/// /__hammock/requests`, `/events`): what an app under test sends there is often a real credential, and
/// the journal is read by tools, consoles and logs that should not keep it. Hidden unless a request asks
/// with `?redact=false`; the Swift journal (``MockServer/journal``), in the test's own process, keeps
/// every value.
///
/// What stays is what a reader needs to tell requests apart: the scheme of `Authorization`
/// (`Bearer [redacted]`), the names of cookies (`sid=[redacted]`) and the attributes of `Set-Cookie`.
struct Redaction: Sendable {
    /// Credentials by their usual names, lowercased.
    static let defaultNames: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "x-auth-token",
    ]
    static let mark = "[redacted]"

    /// Lowercased names whose values are hidden.
    let names: Set<String>

    init(extraNames: [String]) { names = Self.defaultNames.union(extraNames.map { $0.lowercased() }) }

    /// `value` as shown for a field `name` (lowercased), hidden if the name is a secret's.
    func value(_ value: String, named name: String) -> String {
        guard names.contains(name) else { return value }
        switch name {
        case "authorization", "proxy-authorization":
            // `Bearer abc` → `Bearer [redacted]`; a bare value → `[redacted]`.
            let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard parts.count == 2, parts[0].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else {
                return Self.mark
            }
            return "\(parts[0]) \(Self.mark)"
        case "cookie":
            // `a=1; b=2` → `a=[redacted]; b=[redacted]`.
            return value.split(separator: ";").map { pair in
                let trimmed = pair.drop { $0 == " " }
                guard let equals = trimmed.firstIndex(of: "=") else { return Self.mark }
                return "\(trimmed[..<equals])=\(Self.mark)"
            }
            .joined(separator: "; ")
        case "set-cookie":
            // `sid=abc; Path=/; HttpOnly` → `sid=[redacted]; Path=/; HttpOnly`: only the value is secret.
            var parts = value.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
            guard let first = parts.first, let equals = first.firstIndex(of: "=") else { return Self.mark }
            parts[0] = "\(first[..<equals])=\(Self.mark)"
            return parts.joined(separator: ";")
        default:
            return Self.mark
        }
    }
}
