import Foundation

/// A header value taken apart at its parameters: `text/plain; charset="utf-8"` is `text/plain` with
/// `charset` = `utf-8`. Names are lowercased; surrounding quotes are removed from values.
package struct HeaderValue: Sendable {
    /// The part before the first `;`, trimmed.
    package var value: String
    /// The parameters in order.
    package var parameters: [(name: String, value: String)]

    package init(parsing text: String) {
        let parts = text.split(separator: ";", omittingEmptySubsequences: false)
        value = parts.first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        parameters = parts.dropFirst().compactMap { part in
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { return nil }
            var value = pair[1].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            return (pair[0].trimmingCharacters(in: .whitespaces).lowercased(), value)
        }
    }

    /// The first parameter called `name` (lowercase).
    package func parameter(_ name: String) -> String? {
        parameters.first { $0.name == name }?.value
    }
}
