import HammockWire

/// A path of a route of your own: literal segments and `:name` parameters, each one whole segment.
///
/// ```swift
/// let pattern = try PathPattern("/users/:id/avatar")
/// pattern.match("/users/7/avatar")      // ["id": "7"]
/// pattern.match("/users/7")             // nil
/// ```
public struct PathPattern: Sendable, Hashable, CustomStringConvertible {
    enum Segment: Sendable, Hashable {
        case literal(String)
        case parameter(String)
    }

    /// The pattern as written.
    public let description: String
    let segments: [Segment]

    /// Parses a pattern. A trailing slash is ignored; `/` alone is the root.
    /// - Throws: ``PathPatternError`` for a pattern without a leading `/`, an empty segment, a parameter
    ///   without a name, or a name used twice.
    public init(_ pattern: String) throws(PathPatternError) {
        guard pattern.hasPrefix("/") else { throw PathPatternError(pattern: pattern, message: "must start with /") }
        var body = pattern.dropFirst()
        if body.hasSuffix("/") { body = body.dropLast() }
        var segments: [Segment] = []
        var names = Set<String>()
        if !body.isEmpty {
            for part in body.split(separator: "/", omittingEmptySubsequences: false) {
                guard !part.isEmpty else { throw PathPatternError(pattern: pattern, message: "has an empty segment") }
                if part.hasPrefix(":") {
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
    }

    /// The parameters of `path` (percent-decoded) when it matches, else `nil`.
    public func match(_ path: String) -> [String: String]? {
        var body = path.dropFirst()
        guard path.hasPrefix("/") else { return nil }
        if body.hasSuffix("/") { body = body.dropLast() }
        let parts = body.isEmpty ? [] : body.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == segments.count else { return nil }
        var parameters: [String: String] = [:]
        for (part, segment) in zip(parts, segments) {
            guard let value = PercentEncoding.decode(part), !value.isEmpty else { return nil }
            switch segment {
            case .literal(let literal): guard value == literal else { return nil }
            case .parameter(let name): parameters[name] = value
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
