import HammockWire

/// A path of a route of your own: literal segments, `:name` parameters and `*` (any one segment),
/// each one whole segment, optionally ending in `**` (the rest of the path, any number of segments).
///
/// ```swift
/// let pattern = try PathPattern("/users/:id/avatar")
/// pattern.match("/users/7/avatar")      // ["id": "7"]
/// pattern.match("/users/7")             // nil
/// try PathPattern("/files/**").match("/files/a/b.txt")   // [:]
/// try PathPattern("/files/*/raw").match("/files/a/raw")  // [:]
/// ```
public struct PathPattern: Sendable, Hashable, CustomStringConvertible {
    enum Segment: Sendable, Hashable {
        case literal(String)
        case parameter(String)
        /// `*`: any one non-empty segment.
        case anySegment
    }

    /// The pattern as written.
    public let description: String
    let segments: [Segment]
    /// The pattern ends in `**`: any number of further segments, none included.
    let matchesRest: Bool

    /// Parses a pattern. A trailing slash is ignored; `/` alone is the root.
    /// - Throws: ``PathPatternError`` for a pattern without a leading `/`, an empty segment, a parameter
    ///   without a name, or a name used twice.
    public init(_ pattern: String) throws(PathPatternError) {
        guard pattern.hasPrefix("/") else { throw PathPatternError(pattern: pattern, message: "must start with /") }
        var body = pattern.dropFirst()
        if body.hasSuffix("/") { body = body.dropLast() }
        var segments: [Segment] = []
        var names = Set<String>()
        var matchesRest = false
        if !body.isEmpty {
            for part in body.split(separator: "/", omittingEmptySubsequences: false) {
                guard !part.isEmpty else { throw PathPatternError(pattern: pattern, message: "has an empty segment") }
                guard !matchesRest else {
                    throw PathPatternError(pattern: pattern, message: "has segments after '**', which takes the rest of the path")
                }
                if part == "**" {
                    matchesRest = true
                } else if part == "*" {
                    segments.append(.anySegment)
                } else if part.hasPrefix(":") {
                    let name = String(part.dropFirst())
                    guard !name.isEmpty else {
                        throw PathPatternError(pattern: pattern, message: "has a ':' without a parameter name")
                    }
                    guard names.insert(name).inserted else {
                        throw PathPatternError(pattern: pattern, message: "names the parameter '\(name)' twice")
                    }
                    segments.append(.parameter(name))
                } else {
                    guard let literal = PercentEncoding.decode(part) else {
                        throw PathPatternError(pattern: pattern, message: "has a malformed percent-encoding")
                    }
                    segments.append(.literal(literal))
                }
            }
        }
        self.description = pattern
        self.segments = segments
        self.matchesRest = matchesRest
    }

    /// The names of the pattern's `:name` parameters, in order.
    public var parameterNames: [String] {
        segments.compactMap { if case .parameter(let name) = $0 { name } else { nil } }
    }

    /// Whether the pattern has no parameter or wildcard: it matches one path only.
    var isLiteral: Bool {
        !matchesRest && segments.allSatisfy { if case .literal = $0 { true } else { false } }
    }

    /// The segments of a path or pattern, without the leading and a trailing `/` (`/a/b/` → `a`, `b`).
    static func parts(of path: String) -> [Substring] {
        var body = path.dropFirst()
        if body.hasSuffix("/") { body = body.dropLast() }
        return body.isEmpty ? [] : body.split(separator: "/", omittingEmptySubsequences: false)
    }

    /// The parameters of `path` (percent-decoded) when it matches, else `nil`.
    public func match(_ path: String) -> [String: String]? {
        guard path.hasPrefix("/") else { return nil }
        let parts = Self.parts(of: path)
        guard parts.count == segments.count || (matchesRest && parts.count > segments.count) else { return nil }
        var parameters: [String: String] = [:]
        for (part, segment) in zip(parts, segments) {
            guard let value = PercentEncoding.decode(part), !value.isEmpty else { return nil }
            switch segment {
            case .literal(let literal): guard value == literal else { return nil }
            case .parameter(let name): parameters[name] = value
            case .anySegment: break
            }
        }
        return parameters
    }
}

/// A route pattern that cannot be used.
public struct PathPatternError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The pattern as written.
    public var pattern: String
    /// What is wrong with it.
    public var message: String

    public var description: String { "the path '\(pattern)' \(message)" }
}
