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
    private let bytes: [UInt8]

    /// A pattern; a missing leading slash is added.
    public init(_ pattern: String) {
        let normalized = pattern.hasPrefix("/") ? pattern : "/" + pattern
        self.pattern = normalized
        self.bytes = Array(normalized.utf8)
    }

    /// Whether `path` (relative to the base URL, starting with `/`, without query) matches.
    public func matches(_ path: String) -> Bool {
        let path = Array((path.isEmpty ? "/" : path).utf8)
        if Self.match(bytes[...], path[...]) { return true }
        // "/items/**" also matches "/items" itself.
        if bytes.count >= 3, bytes.suffix(3).elementsEqual("/**".utf8) {
            let parent = bytes.dropLast(3)
            return Self.match(parent.isEmpty ? Array("/".utf8)[...] : parent, path[...])
        }
        return false
    }

    public var description: String { pattern }

    private static let star = UInt8(ascii: "*")
    private static let slash = UInt8(ascii: "/")

    private static func match(_ pattern: ArraySlice<UInt8>, _ path: ArraySlice<UInt8>) -> Bool {
        var pattern = pattern
        var path = path
        while let first = pattern.first {
            if first == star {
                let isDouble = pattern.dropFirst().first == star
                let rest = pattern.dropFirst(isDouble ? 2 : 1)
                var candidate = path
                while true {
                    if match(rest, candidate) { return true }
                    guard let next = candidate.first, isDouble || next != slash else { return false }
                    candidate = candidate.dropFirst()
                }
            }
            guard path.first == first else { return false }
            pattern = pattern.dropFirst()
            path = path.dropFirst()
        }
        return path.isEmpty
    }
}
