import HTTPTypes
public import HammockJSON
import HammockSchema

extension StubRoute {
    /// A test of one value of a request, beyond equality: what ``Condition``s hold.
    ///
    /// ```swift
    /// try StubRoute.Condition(.query("page"), .allOf([.atLeast(1), .atMost(50)]))
    /// try StubRoute.Condition(.header("Authorization"), .matches("^Bearer [A-Za-z0-9._-]+$"))
    /// try StubRoute.Condition(.body("/order/items"), .not(.equals([])))
    /// ```
    public indirect enum Matcher: Sendable, Hashable {
        /// Equal to the value; a query, header or path value (text) equals a number or `true` written as text.
        case equals(JSON)
        /// Text (or a number, as text) the regular expression finds a match in, as JSON Schema's `pattern`
        /// does: anchor it (`^…$`) for the whole text. Matched in time linear in the text.
        case matches(String)
        /// Text holding the string, an array holding the value, or an object holding the key.
        case contains(JSON)
        /// The value is there (a query parameter or header sent, a body member present, `null` included).
        case present
        /// The value is not there.
        case absent
        /// A number (or text that reads as one) below the bound.
        case lessThan(Double)
        /// A number at most the bound.
        case atMost(Double)
        /// A number above the bound.
        case greaterThan(Double)
        /// A number at least the bound.
        case atLeast(Double)
        /// The matcher does not hold.
        case not(Matcher)
        /// Every matcher holds.
        case allOf([Matcher])
        /// One of the matchers holds.
        case anyOf([Matcher])
    }

    /// Where in a request a condition looks.
    public enum Place: Sendable, Hashable {
        /// A path parameter of the stub's pattern (`:id`).
        case path(String)
        /// A query parameter, as decoded; every value of a repeated one is tried.
        case query(String)
        /// A header field (any case); every value of a repeated one is tried.
        case header(String)
        /// The JSON body at a JSON pointer (`/user/name`, `/items/0`; `""` for the whole body).
        case body(String)
    }

    /// A matcher applied to one place of the request.
    public struct Condition: Sendable, Hashable {
        /// Where it looks.
        public let place: Place
        /// What must hold there.
        public let matcher: Matcher
        let compiled: Compiled
        let pointer: [String]

        /// A condition.
        /// - Throws: ``StubError`` for a regular expression it cannot use (lookaround, backreferences, or
        ///   too large) or a body pointer that does not start with `/`.
        public init(_ place: Place, _ matcher: Matcher) throws(StubError) {
            self.place = place
            self.matcher = matcher
            if case .body(let text) = place {
                guard let tokens = JSONPointer.tokens(of: text) else {
                    throw StubError("'\(text.prefix(100))' is no JSON pointer: start it with '/', as in /user/name")
                }
                pointer = tokens
            } else {
                pointer = []
            }
            compiled = try Compiled(matcher)
        }

        public static func == (left: Condition, right: Condition) -> Bool {
            left.place == right.place && left.matcher == right.matcher
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(place)
            hasher.combine(matcher)
        }

        /// The values the place has in the request: none when it is absent.
        func values(in context: StubTemplate.Context) -> [JSON] {
            switch place {
            case .path(let name): return context.parameters[name].map { [.string($0)] } ?? []
            case .query(let name): return context.query.filter { $0.name == name }.map { .string($0.value) }
            case .header(let name): return HTTPField.Name(name).map { context.headers[values: $0].map(JSON.string) } ?? []
            case .body:
                guard let body = context.body, let value = JSONPointer.value(at: pointer[...], in: body) else { return [] }
                return [value]
            }
        }

        /// Why the request fails the condition, in words, or `nil` when it holds.
        func mismatch(in context: StubTemplate.Context) -> String? {
            let values = values(in: context)
            guard !compiled.holds(for: values) else { return nil }
            let wanted = matcher.description
            guard !values.isEmpty else { return "\(place.description) is missing (wanted \(wanted))" }
            let sent = values.map { value in
                if case .string(let text) = value { "'\(text.prefix(200))'" } else { Mismatch.short(value) }
            }
            return "\(place.description) is \(sent.joined(separator: ", ")), not \(wanted)"
        }
    }

    /// A ``Matcher`` ready to test: regular expressions compiled once.
    indirect enum Compiled: Sendable {
        case equals(JSON)
        case matches(TextMatcher)
        case contains(JSON)
        case present, absent
        case lessThan(Double)
        case atMost(Double)
        case greaterThan(Double)
        case atLeast(Double)
        case not(Compiled)
        case allOf([Compiled])
        case anyOf([Compiled])

        init(_ matcher: Matcher) throws(StubError) {
            switch matcher {
            case .equals(let value): self = .equals(value)
            case .matches(let source):
                do {
                    self = .matches(try TextMatcher(source))
                } catch {
                    throw StubError("the regular expression '\(source.prefix(100))' cannot be used: \(error)")
                }
            case .contains(let value): self = .contains(value)
            case .present: self = .present
            case .absent: self = .absent
            case .lessThan(let bound): self = .lessThan(bound)
            case .atMost(let bound): self = .atMost(bound)
            case .greaterThan(let bound): self = .greaterThan(bound)
            case .atLeast(let bound): self = .atLeast(bound)
            case .not(let inner): self = .not(try Compiled(inner))
            case .allOf(let all):
                var compiled: [Compiled] = []
                for inner in all { compiled.append(try Compiled(inner)) }
                self = .allOf(compiled)
            case .anyOf(let any):
                var compiled: [Compiled] = []
                for inner in any { compiled.append(try Compiled(inner)) }
                self = .anyOf(compiled)
            }
        }

        /// Whether it holds for a place with `values` (none: absent). A test of one value holds when one
        /// of a repeated parameter's values passes it.
        func holds(for values: [JSON]) -> Bool {
            switch self {
            case .present: return !values.isEmpty
            case .absent: return values.isEmpty
            case .not(let inner): return !inner.holds(for: values)
            case .allOf(let all): return all.allSatisfy { $0.holds(for: values) }
            case .anyOf(let any): return any.contains { $0.holds(for: values) }
            default: return values.contains { holds(on: $0) }
            }
        }

        private func holds(on value: JSON) -> Bool {
            switch self {
            case .equals(let wanted):
                if value == wanted { return true }
                // Text from a query, header or path against a number or a boolean written in JSON.
                if case .string(let text) = value, wanted.stringValue == nil, !wanted.isNull {
                    return text == wanted.serializedString()
                }
                return false
            case .matches(let matcher): return Self.text(of: value).map(matcher.matches) ?? false
            case .contains(let wanted):
                switch value {
                case .string(let text): return wanted.stringValue.map { text.contains($0) } ?? false
                case .array(let items): return items.contains(wanted)
                case .object(let members): return wanted.stringValue.map { members[$0] != nil } ?? false
                default: return false
                }
            case .lessThan(let bound): return Self.number(of: value).map { $0 < bound } ?? false
            case .atMost(let bound): return Self.number(of: value).map { $0 <= bound } ?? false
            case .greaterThan(let bound): return Self.number(of: value).map { $0 > bound } ?? false
            case .atLeast(let bound): return Self.number(of: value).map { $0 >= bound } ?? false
            case .present, .absent, .not, .allOf, .anyOf: return holds(for: [value])
            }
        }

        static func text(of value: JSON) -> String? {
            switch value {
            case .string(let text): text
            case .integer, .double, .bool: value.serializedString()
            default: nil
            }
        }

        static func number(of value: JSON) -> Double? {
            switch value {
            case .integer(let number): Double(number)
            case .double(let number): number
            case .string(let text): Double(text).flatMap { $0.isFinite ? $0 : nil }
            default: nil
            }
        }
    }
}

extension StubRoute.Matcher: CustomStringConvertible {
    /// In words, for near misses: `at least 1 and at most 50`.
    public var description: String {
        func number(_ value: Double) -> String {
            value.rounded() == value && abs(value) < 1e15 ? String(Int(value)) : String(value)
        }
        switch self {
        case .equals(let value): return Mismatch.short(value)
        case .matches(let source): return "matching /\(source.prefix(100))/"
        case .contains(let value): return "containing \(Mismatch.short(value))"
        case .present: return "present"
        case .absent: return "absent"
        case .lessThan(let bound): return "less than \(number(bound))"
        case .atMost(let bound): return "at most \(number(bound))"
        case .greaterThan(let bound): return "greater than \(number(bound))"
        case .atLeast(let bound): return "at least \(number(bound))"
        case .not(let inner): return "not \(inner.description)"
        case .allOf(let all): return all.map(\.description).joined(separator: " and ")
        case .anyOf(let any): return "one of (\(any.map(\.description).joined(separator: "; ")))"
        }
    }

    /// The operators a configuration file writes, each the name of a case.
    static let operators: Set<String> = [
        "equals", "matches", "contains", "present", "absent", "lessThan", "atMost", "greaterThan", "atLeast", "not", "allOf",
        "anyOf",
    ]

    /// A matcher as a configuration file writes it: `{"matches": "^a"}`, `{"atLeast": 1, "atMost": 9}` (both),
    /// `{"not": {"contains": "x"}}`, `{"anyOf": [{"equals": "a"}, {"equals": "b"}]}`, `{"absent": true}`.
    /// `nil` for an object that is not one (a key that is no operator): a literal to compare with.
    /// - Throws: a message naming the operator whose value is wrong.
    static func parse(_ json: JSON) throws(StubError) -> StubRoute.Matcher? {
        guard case .object(let object) = json, !object.isEmpty, object.keys.allSatisfy(operators.contains) else { return nil }
        var all: [StubRoute.Matcher] = []
        for key in object.keys.sorted() {
            guard let value = object[key] else { continue }
            func bound() throws(StubError) -> Double {
                switch value {
                case .integer(let number): return Double(number)
                case .double(let number): return number
                default: throw StubError("'\(key)' takes a number")
                }
            }
            func inner(_ json: JSON) throws(StubError) -> StubRoute.Matcher {
                // Inside a combinator, a plain value is an equality.
                try parse(json) ?? .equals(json)
            }
            switch key {
            case "equals": all.append(.equals(value))
            case "matches":
                guard case .string(let source) = value else {
                    throw StubError("'matches' takes a regular expression as a string")
                }
                all.append(.matches(source))
            case "contains": all.append(.contains(value))
            case "present", "absent":
                guard case .bool(let flag) = value else { throw StubError("'\(key)' takes true or false") }
                let presence: StubRoute.Matcher = (key == "present") == flag ? .present : .absent
                all.append(presence)
            case "lessThan": all.append(.lessThan(try bound()))
            case "atMost": all.append(.atMost(try bound()))
            case "greaterThan": all.append(.greaterThan(try bound()))
            case "atLeast": all.append(.atLeast(try bound()))
            case "not": all.append(.not(try inner(value)))
            default:
                guard case .array(let list) = value, !list.isEmpty else {
                    throw StubError("'\(key)' takes a non-empty array of matchers")
                }
                var matchers: [StubRoute.Matcher] = []
                for element in list { matchers.append(try inner(element)) }
                all.append(key == "allOf" ? .allOf(matchers) : .anyOf(matchers))
            }
        }
        return all.count == 1 ? all[0] : .allOf(all)
    }
}

extension StubRoute.Place: CustomStringConvertible {
    /// In words: `query parameter 'page'`, `body /user/name`.
    public var description: String {
        switch self {
        case .path(let name): "path parameter '\(name.prefix(100))'"
        case .query(let name): "query parameter '\(name.prefix(100))'"
        case .header(let name): "header '\(name.prefix(100))'"
        case .body(let pointer): pointer.isEmpty ? "the body" : "body \(pointer.prefix(200))"
        }
    }
}
