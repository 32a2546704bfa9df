/// A glob over resource paths relative to the service's base URL: `*` matches within one path
/// segment, `**` matches across segments, and a trailing `/**` also matches the path before it.
///
/// ```swift
/// URLPattern("/items/*").matches("/items/123")          // true
/// URLPattern("/items/*").matches("/items/123/related")  // false
/// URLPattern("/items/**").matches("/items")             // true
/// ```
/// Queries are not part of the match.
public struct URLPattern: Sendable, Hashable, CustomStringConvertible {
    /// The pattern as written, with a leading slash.
    public let pattern: String
    private let tokens: [Token]

    /// A pattern, read once: literal bytes, `*` (within a segment) and `**` (across segments).
    private enum Token: Sendable, Hashable {
        case byte(UInt8)
        case star
        case doubleStar
    }

    /// A pattern; a missing leading slash is added.
    public init(_ pattern: String) {
        let normalized = pattern.hasPrefix("/") ? pattern : "/" + pattern
        self.pattern = normalized
        var tokens: [Token] = []
        var bytes = normalized.utf8[...]
        while let byte = bytes.popFirst() {
            guard byte == Self.star else {
                tokens.append(.byte(byte))
                continue
            }
            if bytes.first == Self.star {
                bytes.removeFirst()
                tokens.append(.doubleStar)
            } else {
                tokens.append(.star)
            }
        }
        self.tokens = tokens
    }

    /// Whether `path` (relative to the base URL, starting with `/`, without query) matches.
    public func matches(_ path: String) -> Bool {
        let path = Array((path.isEmpty ? "/" : path).utf8)
        if Self.match(tokens[...], path) { return true }
        // "/items/**" also matches "/items" itself.
        if tokens.count >= 2, tokens[tokens.count - 2] == .byte(Self.slash), tokens.last == .doubleStar {
            let parent = tokens.dropLast(2)
            return Self.match(parent.isEmpty ? [.byte(Self.slash)] : parent, path)
        }
        return false
    }

    public var description: String { pattern }

    private static let star = UInt8(ascii: "*")
    private static let slash = UInt8(ascii: "/")

    /// Dynamic programming over the pattern's tokens, one row of the path at a time: time proportional
    /// to pattern length × path length, whatever the wildcards (a backtracking matcher takes
    /// exponential time on patterns with many stars).
    private static func match(_ tokens: ArraySlice<Token>, _ path: [UInt8]) -> Bool {
        // matched[j]: the tokens so far match the first j bytes of the path.
        var matched = [Bool](repeating: false, count: path.count + 1)
        matched[0] = true
        var next = matched
        for token in tokens {
            switch token {
            case .byte(let byte):
                next[0] = false
                for j in 0..<path.count { next[j + 1] = matched[j] && path[j] == byte }
            case .star:
                next[0] = matched[0]
                for j in 0..<path.count { next[j + 1] = matched[j + 1] || (next[j] && path[j] != slash) }
            case .doubleStar:
                next[0] = matched[0]
                for j in 0..<path.count { next[j + 1] = matched[j + 1] || next[j] }
            }
            swap(&matched, &next)
            guard matched.contains(true) else { return false }
        }
        return matched[path.count]
    }
}
