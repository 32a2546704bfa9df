import Foundation
import HTTPTypes
import HammockJSON
import HammockStore
import HammockWire
import Synchronization

/// Placeholders in a stub's body and header values that read the request: `{{path.id}}`,
/// `{{request.query.page}}`, `{{request.headers.x-user}}` and `{{request.body.user.name}}` (any JSON
/// path into a JSON body, or a JSON pointer: `{{body./user/name}}`). The `request.` prefix may be left
/// out. And helpers that make values: `{{now}}` (with `offset=-2h` and `format=date`, `epoch`,
/// `epoch-ms`, `http`), `{{uuid}}`, `{{random min=1 max=6}}`, `{{fake.email}}` (any kind of generated
/// data), `{{counter}}` (how many times the stub has answered, from 1). What they draw comes from the
/// server's random numbers, so `--seed` repeats a run; `now` is the server's wall clock.
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
        /// The body at a JSON pointer (`{{body./items/0/sku}}`).
        case bodyPointer([String])
        /// The server's wall clock, moved by `offset` seconds, written in `format`.
        case now(offset: Int, format: TimeFormat)
        /// A version 4 UUID.
        case uuid
        /// A whole number from `min` to `max`.
        case randomInteger(min: Int, max: Int)
        /// A plausible value of a kind of generated data (`fake.email`, `fake.city`).
        case fake(DataGeneration.TextKind)
        /// How many times the stub has answered, this time included.
        case counter
        /// The answer a webhook follows: its status, a header field, its JSON body at a path.
        case responseStatus
        case responseHeader(String)
        /// The answer's JSON body at a path, or whole (`{{response.body}}`) when `nil`.
        case responseBody(JSONPath?)
        /// The answer's JSON body at a JSON pointer (`{{response.body./id}}`, what OpenAPI's
        /// `$response.body#/id` reads).
        case responseBodyPointer([String])
    }

    /// The answer a webhook's templates read (`{{response.body.id}}`).
    struct Answer {
        var status: Int
        var headers: HTTPFields
        var body: JSON?
    }

    /// How `{{now}}` is written.
    enum TimeFormat: String, Hashable, CaseIterable {
        /// `2026-11-29T03:40:00Z`.
        case dateTime = "date-time"
        /// `2026-11-29`.
        case date
        /// Seconds since 1970, a number.
        case epoch
        /// Milliseconds since 1970, a number.
        case epochMilliseconds = "epoch-ms"
        /// `Sun, 29 Nov 2026 03:40:00 GMT`.
        case http
    }

    /// The random numbers of one answer's helpers: drawn from a generator seeded by the server's own
    /// random numbers, so a seeded server repeats them.
    final class Draws: Sendable {
        let generator: Mutex<SeededRandom>

        init(seed: UInt64) { generator = Mutex(SeededRandom(seed: seed)) }

        func with<T>(_ body: (inout SeededRandom) -> T) -> T { generator.withLock { body(&$0) } }
    }

    /// What a template reads from one request.
    struct Context {
        var parameters: [String: String]
        var query: [ListQuery.Item]
        var headers: HTTPFields
        var body: JSON?
        /// The request's method (a file answers a `GET`'s `Range`).
        var method: HTTPRequest.Method = .get
        /// The record the stub's `create` made, once it has.
        var created: JSON?
        /// The moment of the answer, for `{{now}}`.
        var now = Date(timeIntervalSince1970: 0)
        /// The stub's count of answers, for `{{counter}}`.
        var counter = 0
        /// The answer's random numbers (set where the answer has placeholders; a fresh generator else).
        var draws: Draws?
        /// The answer, for a webhook's templates; `nil` in a stub's, where `response.` reads nothing.
        var response: Answer?

        var drawing: Draws { draws ?? Draws(seed: UInt64.random(in: 0...UInt64.max)) }

        func value(of source: Source) -> JSON {
            switch source {
            case .path(let name): return parameters[name].map(JSON.string) ?? .null
            case .query(let name): return query.first { $0.name == name }.map { .string($0.value) } ?? .null
            case .header(let name):
                guard let field = HTTPField.Name(name), let value = headers[field] else { return .null }
                return .string(value)
            case .body(let path): return body?[path] ?? .null
            case .created(let path): return created?[path] ?? .null
            case .bodyPointer(let pointer): return body.flatMap { JSONPointer.value(at: pointer[...], in: $0) } ?? .null
            case .now(let offset, let format):
                let moment = now.addingTimeInterval(TimeInterval(offset))
                let seconds = Int(moment.timeIntervalSince1970.rounded(.down))
                let day = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
                switch format {
                case .dateTime: return .string(CivilDate.text(ofDay: day, second: seconds - day * 86_400))
                case .date: return .string(CivilDate.text(ofDay: day))
                case .epoch: return .integer(seconds)
                case .epochMilliseconds: return .integer(Int((moment.timeIntervalSince1970 * 1000).rounded(.down)))
                case .http: return .string(HTTPDate.format(moment))
                }
            case .uuid: return .string(drawing.with { KeyMaker.uuid(using: &$0) })
            case .randomInteger(let low, let high): return .integer(drawing.with { Int.random(in: low...high, using: &$0) })
            case .fake(let kind):
                return .string(
                    drawing.with { random in
                        var maker = RecordMaker(random: random)
                        let person = (first: maker.pick(Words.firstNames), last: maker.pick(Words.lastNames))
                        let text = maker.text(kind, number: counter, person: person)
                        random = maker.random
                        return text
                    })
            case .counter: return .integer(counter)
            case .responseStatus: return response.map { .integer($0.status) } ?? .null
            case .responseHeader(let name):
                guard let field = HTTPField.Name(name), let value = response?.headers[field] else { return .null }
                return .string(value)
            case .responseBodyPointer(let pointer):
                return response?.body.flatMap { JSONPointer.value(at: pointer[...], in: $0) } ?? .null
            case .responseBody(let path):
                guard let body = response?.body else { return .null }
                return path.map { body[$0] ?? .null } ?? body
            }
        }
    }

    /// The longest offset `{{now}}` takes: a hundred years either way.
    static let longestOffset = 100 * 366 * 86_400

    /// A helper's source, or `nil` when `words` name none (then they read the request).
    static func helper(_ words: [Substring], expression: String) throws(StubError) -> Source? {
        guard let head = words.first, ["now", "uuid", "counter", "random"].contains(head) || head.hasPrefix("fake.") else {
            return nil
        }
        var arguments: [String: String] = [:]
        for word in words.dropFirst() {
            let parts = word.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else {
                throw StubError("the placeholder '{{\(expression)}}' has '\(word)', where NAME=VALUE was expected")
            }
            arguments[String(parts[0])] = String(parts[1])
        }
        func only(_ names: Set<String>) throws(StubError) {
            if let unknown = arguments.keys.sorted().first(where: { !names.contains($0) }) {
                let known = names.isEmpty ? "none" : names.sorted().joined(separator: ", ")
                throw StubError("the placeholder '{{\(expression)}}' has no argument '\(unknown)'; it takes \(known)")
            }
        }
        switch head {
        case "now":
            try only(["offset", "format"])
            var offset = 0
            if let text = arguments["offset"] {
                guard let seconds = Self.seconds(text), abs(seconds) <= longestOffset else {
                    throw StubError(
                        "the placeholder '{{\(expression)}}' has the offset '\(text)'; write a signed number of s, m, h or d, such as -2h, within a hundred years"
                    )
                }
                offset = seconds
            }
            var format = TimeFormat.dateTime
            if let name = arguments["format"] {
                guard let chosen = TimeFormat(rawValue: name) else {
                    throw StubError(
                        "the placeholder '{{\(expression)}}' has the format '\(name)'; use one of \(TimeFormat.allCases.map(\.rawValue).joined(separator: ", "))"
                    )
                }
                format = chosen
            }
            return .now(offset: offset, format: format)
        case "uuid":
            try only([])
            return .uuid
        case "counter":
            try only([])
            return .counter
        case "random":
            try only(["min", "max"])
            let low = arguments["min"].map { Int($0) } ?? 0
            let high = arguments["max"].map { Int($0) } ?? 100
            guard let low, let high, low <= high else {
                throw StubError("the placeholder '{{\(expression)}}' needs whole numbers with min at most max")
            }
            return .randomInteger(min: low, max: high)
        default:
            guard head.hasPrefix("fake.") else { return nil }
            try only([])
            guard let kind = DataGeneration.TextKind(rawValue: String(head.dropFirst("fake.".count))) else {
                let kinds = DataGeneration.TextKind.allCases.map(\.rawValue).joined(separator: ", ")
                throw StubError("the placeholder '{{\(expression)}}' names no kind of data; use fake. and one of \(kinds)")
            }
            return .fake(kind)
        }
    }

    /// `-2h`, `+30m`, `90s`, `1d`, `-10` (seconds): the seconds; `nil` for anything else.
    static func seconds(_ text: String) -> Int? {
        var digits = Substring(text)
        var sign = 1
        if digits.first == "+" || digits.first == "-" {
            sign = digits.first == "-" ? -1 : 1
            digits = digits.dropFirst()
        }
        var unit = 1
        if let last = digits.last, !last.isNumber {
            switch last {
            case "s": unit = 1
            case "m": unit = 60
            case "h": unit = 3_600
            case "d": unit = 86_400
            default: return nil
            }
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.count <= 12, digits.allSatisfy(\.isASCII), let number = Int(digits) else { return nil }
        return sign * number * unit
    }

    /// The source a placeholder's expression names.
    /// - Throws: a message saying what is wrong.
    static func source(of expression: String) throws(StubError) -> Source {
        let words = expression.split(separator: " ", omittingEmptySubsequences: true)
        if let helper = try helper(words, expression: expression) { return helper }
        if words.count > 1 {
            throw StubError("the placeholder '{{\(expression)}}' reads the request and takes no arguments")
        }
        var text = Substring(expression.trimmingCharacters(in: .whitespaces))
        if text == "response.status" { return .responseStatus }
        if text.hasPrefix("response.headers."), text.count > "response.headers.".count {
            return .responseHeader(String(text.dropFirst("response.headers.".count)))
        }
        if text == "response.body" { return .responseBody(nil) }
        if text.hasPrefix("response.body./") {
            guard let pointer = JSONPointer.tokens(of: String(text.dropFirst("response.body.".count))) else {
                throw StubError("'{{\(expression)}}' has a bad JSON pointer")
            }
            return .responseBodyPointer(pointer)
        }
        if text.hasPrefix("response.body.") {
            do {
                return .responseBody(try JSONPath(parsing: String(text.dropFirst("response.body.".count))))
            } catch {
                throw StubError("the placeholder '{{\(expression)}}' has a bad JSON path: \(error)")
            }
        }
        if text.hasPrefix("request.") { text = text.dropFirst("request.".count) }
        guard let dot = text.firstIndex(of: "."), text.index(after: dot) < text.endIndex else {
            throw StubError(
                "the placeholder '{{\(expression)}}' names nothing; use path.NAME, query.NAME, headers.NAME, body.PATH, now, uuid, random, counter or fake.KIND"
            )
        }
        let rest = String(text[text.index(after: dot)...])
        switch text[..<dot] {
        case "path": return .path(rest)
        case "query": return .query(rest)
        case "headers": return .header(rest)
        case "body" where rest.hasPrefix("/"):
            guard let pointer = JSONPointer.tokens(of: rest) else {
                throw StubError("'{{\(expression)}}' has a bad JSON pointer")
            }
            return .bodyPointer(pointer)
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
