import Foundation
import HTTPTypes
import HammockJSON
import HammockStore

/// Placeholders in a stub's body and header values that read the request: `{{path.id}}`,
/// `{{request.query.page}}`, `{{request.headers.x-user}}` and `{{request.body.user.name}}` (any JSON
/// path into a JSON body). The `request.` prefix may be left out.
///
/// A string that is one placeholder and nothing else takes the value's JSON type (a number in the body
/// stays a number); placeholders inside text are written as text. What the request does not have is
/// `null`, or nothing inside text.
struct StubTemplate {
    enum Source: Hashable {
        case path(String)
        case query(String)
        case header(String)
        case body(JSONPath)
        /// The record the stub's `create` made (`{{created.id}}`).
        case created(JSONPath)
    }

    /// What a template reads from one request.
    struct Context {
        var parameters: [String: String]
        var query: [ListQuery.Item]
        var headers: HTTPFields
        var body: JSON?
        /// The record the stub's `create` made, once it has.
        var created: JSON?

        func value(of source: Source) -> JSON {
            switch source {
            case .path(let name): return parameters[name].map(JSON.string) ?? .null
            case .query(let name): return query.first { $0.name == name }.map { .string($0.value) } ?? .null
            case .header(let name):
                guard let field = HTTPField.Name(name), let value = headers[field] else { return .null }
                return .string(value)
            case .body(let path): return body?[path] ?? .null
            case .created(let path): return created?[path] ?? .null
            }
        }
    }

    /// The source a placeholder's expression names.
    /// - Throws: a message saying what is wrong.
    static func source(of expression: String) throws(StubError) -> Source {
        var text = Substring(expression.trimmingCharacters(in: .whitespaces))
        if text.hasPrefix("request.") { text = text.dropFirst("request.".count) }
        guard let dot = text.firstIndex(of: "."), text.index(after: dot) < text.endIndex else {
            throw StubError(
                "the placeholder '{{\(expression)}}' names nothing; use path.NAME, query.NAME, headers.NAME or body.PATH")
        }
        let rest = String(text[text.index(after: dot)...])
        switch text[..<dot] {
        case "path": return .path(rest)
        case "query": return .query(rest)
        case "headers": return .header(rest)
        case "body", "created":
            let path: JSONPath
            do {
                path = try JSONPath(parsing: rest)
            } catch {
                throw StubError("the placeholder '{{\(expression)}}' has a bad JSON path: \(error)")
            }
            return text[..<dot] == "body" ? .body(path) : .created(path)
        default:
            throw StubError(
                "the placeholder '{{\(expression)}}' reads '\(text[..<dot])'; use path, query, headers, body or created")
        }
    }

    /// The pieces of a string: text and placeholders, in order.
    enum Piece: Hashable {
        case text(String)
        case placeholder(Source)
    }

    static func pieces(of string: String) throws(StubError) -> [Piece] {
        var pieces: [Piece] = []
        var rest = Substring(string)
        while let open = rest.range(of: "{{") {
            guard let close = rest[open.upperBound...].range(of: "}}") else {
                throw StubError("'\(string)' opens a placeholder with {{ and does not close it")
            }
            if open.lowerBound > rest.startIndex { pieces.append(.text(String(rest[..<open.lowerBound]))) }
            pieces.append(.placeholder(try source(of: String(rest[open.upperBound..<close.lowerBound]))))
            rest = rest[close.upperBound...]
        }
        if !rest.isEmpty { pieces.append(.text(String(rest))) }
        return pieces
    }

    /// Whether `string` holds `{{` (checked on the bytes, without Foundation's search).
    static func mayHavePlaceholder(_ string: String) -> Bool {
        var previous: UInt8 = 0
        for byte in string.utf8 {
            if byte == UInt8(ascii: "{") && previous == byte { return true }
            previous = byte
        }
        return false
    }

    /// Whether any string in `value` holds `{{`.
    static func hasPlaceholder(_ value: JSON) -> Bool {
        switch value {
        case .string(let string): mayHavePlaceholder(string)
        case .array(let elements): elements.contains { hasPlaceholder($0) }
        case .object(let object): object.values.contains { hasPlaceholder($0) }
        default: false
        }
    }

    /// Checks every placeholder in `value` (for configuration errors at load time).
    static func validate(_ value: JSON) throws(StubError) {
        switch value {
        case .string(let string): _ = try pieces(of: string)
        case .array(let elements): for element in elements { try validate(element) }
        case .object(let object): for (_, member) in object { try validate(member) }
        default: break
        }
    }

    /// `value` with its placeholders filled from `context`. Placeholders were validated when the stub
    /// was made, so an invalid one (impossible here) is left as it is.
    static func render(_ value: JSON, _ context: Context) -> JSON {
        switch value {
        case .string(let string):
            guard mayHavePlaceholder(string), let pieces = try? pieces(of: string) else { return value }
            if pieces.count == 1, case .placeholder(let source) = pieces[0] { return context.value(of: source) }
            return .string(text(pieces, context))
        case .array(let elements): return .array(elements.map { render($0, context) })
        case .object(let object):
            var rendered = JSONObject(minimumCapacity: object.count)
            for (key, member) in object { rendered[key] = render(member, context) }
            return .object(rendered)
        default: return value
        }
    }

    /// A header value with its placeholders written as text.
    static func renderText(_ string: String, _ context: Context) -> String {
        guard mayHavePlaceholder(string), let pieces = try? pieces(of: string) else { return string }
        return text(pieces, context)
    }

    static func text(_ pieces: [Piece], _ context: Context) -> String {
        pieces.map { piece in
            switch piece {
            case .text(let text): return text
            case .placeholder(let source):
                switch context.value(of: source) {
                case .null: return ""
                case .string(let text): return text
                case let other: return other.serializedString()
                }
            }
        }.joined()
    }
}

/// A stub that cannot be used, and why.
public struct StubError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public var message: String

    init(_ message: String) { self.message = message }

    public var description: String { message }
}
