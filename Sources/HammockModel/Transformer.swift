public import Foundation
public import HammockJSON
import Synchronization

/// Converts an ingredient to a property value, and (if reversible) back.
///
/// ```swift
/// let cents = Transformer<Int>(
///     decode: { json throws(ModelError) in
///         // Int(_:) traps on a value it cannot hold: Int(exactly:) refuses it with an error instead.
///         guard let cents = Int(exactly: ((try Double(json: json)) * 100).rounded()) else {
///             throw ModelError(.transformer, message: "\(json) is not an amount")
///         }
///         return cents
///     },
///     encode: { .double(Double($0) / 100) })
/// Field("price", \.priceInCents, at: "price", transformer: cents)
/// ```
/// Built-ins: ``iso8601Date``, ``integerFromString``, ``doubleFromString``, ``url``,
/// ``rawValue(_:)`` for enums, ``recipe(_:base:)`` for nested models and ``array(of:)`` for lists.
public struct Transformer<Value>: Sendable {
    /// Ingredient to value.
    public let decode: @Sendable (JSON) throws(ModelError) -> Value
    /// Value to ingredient; `nil` for a one-way transformer.
    public let encode: (@Sendable (Value) throws(ModelError) -> JSON)?

    /// A transformer; pass no `encode` for a one-way one.
    public init(
        decode: @escaping @Sendable (JSON) throws(ModelError) -> Value,
        encode: (@Sendable (Value) throws(ModelError) -> JSON)? = nil
    ) {
        self.decode = decode
        self.encode = encode
    }

    /// Whether values can be turned back into ingredients.
    public var isReversible: Bool { encode != nil }

    /// The same transformer for optional properties: `null` decodes to `nil`, `nil` encodes to `null`.
    public var optional: Transformer<Value?> {
        let decode = self.decode
        let optionalDecode: @Sendable (JSON) throws(ModelError) -> Value? = { json throws(ModelError) in
            if case .null = json { return nil }
            return try decode(json)
        }
        guard let encode = self.encode else { return Transformer<Value?>(decode: optionalDecode) }
        let optionalEncode: @Sendable (Value?) throws(ModelError) -> JSON = { value throws(ModelError) in
            guard let value else { return .null }
            return try encode(value)
        }
        return Transformer<Value?>(decode: optionalDecode, encode: optionalEncode)
    }
}

extension Transformer where Value == Date {
    /// ISO 8601 date-times (`2024-05-01T12:00:00Z`, with or without fractional seconds) and dates
    /// (`2024-05-01`, as midnight UTC). Encodes as a date-time in UTC.
    public static var iso8601Date: Transformer<Date> {
        Transformer(
            decode: { json throws(ModelError) in
                let text = try String(json: json)
                guard let date = ISO8601Dates.parse(text) else {
                    throw ModelError(.transformer, message: "'\(text)' is not an ISO 8601 date")
                }
                return date
            },
            encode: { date in .string(ISO8601Dates.format(date)) })
    }
}

extension Transformer where Value == Int {
    /// Integers written as strings (`"42"`); integers are accepted as they are.
    public static var integerFromString: Transformer<Int> {
        Transformer(
            decode: { json throws(ModelError) in
                if let number = json.intValue { return number }
                let text = try String(json: json)
                guard let number = Int(text.trimmingCharacters(in: .whitespaces)) else {
                    throw ModelError(.transformer, message: "'\(text)' is not an integer")
                }
                return number
            },
            encode: { .string(String($0)) })
    }
}

extension Transformer where Value == Double {
    /// Numbers written as strings (`"9.99"`); numbers are accepted as they are.
    public static var doubleFromString: Transformer<Double> {
        Transformer(
            decode: { json throws(ModelError) in
                if let number = json.doubleValue { return number }
                let text = try String(json: json)
                guard let number = Double(text.trimmingCharacters(in: .whitespaces)), number.isFinite else {
                    throw ModelError(.transformer, message: "'\(text)' is not a number")
                }
                return number
            },
            encode: { .string(String($0)) })
    }
}

extension Transformer where Value == URL {
    /// Absolute URLs written as strings.
    public static var url: Transformer<URL> {
        Transformer(
            decode: { json throws(ModelError) in
                let text = try String(json: json)
                guard let url = URL(string: text), url.scheme != nil else {
                    throw ModelError(.transformer, message: "'\(text)' is not an absolute URL")
                }
                return url
            },
            encode: { .string($0.absoluteString) })
    }
}

extension Transformer where Value: RawRepresentable & SendableMetatype, Value.RawValue: JSONConvertible {
    /// Enum cases from their raw values; an unknown raw value is an error naming the known ones.
    public static func rawValue(_ type: Value.Type = Value.self) -> Transformer<Value> {
        Transformer(
            decode: { json throws(ModelError) in
                let raw = try Value.RawValue(json: json)
                guard let value = Value(rawValue: raw) else {
                    throw ModelError(.transformer, message: "\(json) is not a valid \(Value.self)")
                }
                return value
            },
            encode: { $0.rawValue.json })
    }
}

extension Transformer {
    /// Nested models: each object is populated into a copy of `base` through `recipe`.
    public static func recipe(_ recipe: Recipe<Value>, base: Value) -> Transformer<Value> where Value: Sendable {
        Transformer(
            decode: { json throws(ModelError) in
                var model = base
                try Oven.populate(&model, from: json, recipe: recipe)
                return model
            },
            encode: { value throws(ModelError) in try recipe.decompose(value) })
    }

    /// Arrays, each element through `element`.
    public static func array<Element>(of element: Transformer<Element>) -> Transformer<[Element]> where Value == [Element] {
        let decode = element.decode
        let arrayDecode: @Sendable (JSON) throws(ModelError) -> [Element] = { json throws(ModelError) in
            guard case .array(let items) = json else { throw .typeMismatch(expected: "an array", found: json) }
            var result: [Element] = []
            result.reserveCapacity(items.count)
            for (index, item) in items.enumerated() {
                do throws(ModelError) {
                    result.append(try decode(item))
                } catch {
                    throw error.prefixingPath("[\(index)]")
                }
            }
            return result
        }
        guard let encode = element.encode else { return Transformer<[Element]>(decode: arrayDecode) }
        let arrayEncode: @Sendable ([Element]) throws(ModelError) -> JSON = { values throws(ModelError) in
            var items: [JSON] = []
            items.reserveCapacity(values.count)
            for value in values { items.append(try encode(value)) }
            return .array(items)
        }
        return Transformer<[Element]>(decode: arrayDecode, encode: arrayEncode)
    }
}

/// Transformers registered by name, so recipes can refer to them as strings. Thread-safe.
///
/// ```swift
/// try TransformerRegistry.default.register(Transformer<Int>.integerFromString, named: "int-from-string")
/// Field("count", \.count, at: "count", transformer: "int-from-string")
/// ```
public final class TransformerRegistry: Sendable {
    /// The registry ``Field`` uses when given a transformer name. It starts with `iso8601-date`,
    /// `int-from-string`, `double-from-string` and `url`.
    public static let `default`: TransformerRegistry = {
        let registry = TransformerRegistry()
        registry.entries.withLock { entries in
            entries["iso8601-date"] = Transformer<Date>.iso8601Date
            entries["int-from-string"] = Transformer<Int>.integerFromString
            entries["double-from-string"] = Transformer<Double>.doubleFromString
            entries["url"] = Transformer<URL>.url
        }
        return registry
    }()

    private let entries = Mutex<[String: any Sendable]>([:])

    /// Creates an empty registry.
    public init() {}

    /// Registers `transformer` under `name`.
    /// - Throws: ``ModelError`` (transformer) if the name is taken.
    public func register<Value>(_ transformer: Transformer<Value>, named name: String) throws(ModelError) {
        let added = entries.withLock { entries -> Bool in
            guard entries[name] == nil else { return false }
            entries[name] = transformer
            return true
        }
        guard added else { throw ModelError(.transformer, message: "a transformer named '\(name)' is already registered") }
    }

    /// Removes the transformer named `name`.
    public func unregister(_ name: String) {
        _ = entries.withLock { $0.removeValue(forKey: name) }
    }

    /// The transformer named `name` for `Value`.
    /// - Throws: ``ModelError`` (transformer) if there is none, or it is for another type.
    public func transformer<Value>(named name: String, for type: Value.Type = Value.self) throws(ModelError) -> Transformer<Value>
    {
        guard let entry = entries.withLock({ $0[name] }) else {
            throw ModelError(.transformer, message: "no transformer named '\(name)' is registered")
        }
        if let transformer = entry as? Transformer<Value> { return transformer }
        throw ModelError(.transformer, message: "the transformer '\(name)' does not produce \(Value.self)")
    }
}

/// ISO 8601 parsing and formatting without shared mutable formatters.
enum ISO8601Dates {
    static func parse(_ text: String) -> Date? {
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        if let date = try? Date.ISO8601FormatStyle().parse(text) { return date }
        if text.count == 10, let date = try? Date.ISO8601FormatStyle().year().month().day().parse(text) { return date }
        return nil
    }

    static func format(_ date: Date) -> String {
        date.formatted(
            Date.ISO8601FormatStyle(
                includingFractionalSeconds: date.timeIntervalSince1970.truncatingRemainder(dividingBy: 1) != 0))
    }
}
