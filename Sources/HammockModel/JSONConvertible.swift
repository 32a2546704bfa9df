public import HammockJSON

/// A value that converts to and from `JSON` without a transformer.
///
/// `String`, `Bool`, `Int`, `Double`, `JSON`, and optionals, arrays and string-keyed dictionaries of
/// them conform. Conform your own types to use them in a ``Field`` directly:
///
/// ```swift
/// extension Money: JSONConvertible {
///     init(json: JSON) throws(ModelError) { cents = try Int(json: json) }
///     var json: JSON { .integer(cents) }
/// }
/// ```
public protocol JSONConvertible: SendableMetatype {
    /// Converts from JSON; throw a ``ModelError/Kind/mapping`` error for a value of the wrong type.
    init(json: JSON) throws(ModelError)
    /// Converts to JSON.
    var json: JSON { get }
}

extension ModelError {
    /// A mapping error: `expected` (an article and a type) against the JSON that was found.
    public static func typeMismatch(expected: String, found: JSON) -> ModelError {
        let foundName = found.kindName
        return ModelError(.mapping, message: "expected \(expected), found \(foundName)", expected: expected, found: foundName)
    }
}

extension String: JSONConvertible {
    /// A JSON string.
    @inlinable
    public init(json: JSON) throws(ModelError) {
        guard case .string(let value) = json else { throw .typeMismatch(expected: "a string", found: json) }
        self = value
    }
    /// A JSON string.
    public var json: JSON { .string(self) }
}

extension Bool: JSONConvertible {
    /// `true` or `false`.
    @inlinable
    public init(json: JSON) throws(ModelError) {
        guard case .bool(let value) = json else { throw .typeMismatch(expected: "a boolean", found: json) }
        self = value
    }
    /// `true` or `false`.
    public var json: JSON { .bool(self) }
}

extension Int: JSONConvertible {
    /// A JSON integer, or a double with an exact integer value.
    @inlinable
    public init(json: JSON) throws(ModelError) {
        guard let value = json.intValue else { throw .typeMismatch(expected: "an integer", found: json) }
        self = value
    }
    /// A JSON integer.
    public var json: JSON { .integer(self) }
}

extension Double: JSONConvertible {
    /// Any JSON number.
    @inlinable
    public init(json: JSON) throws(ModelError) {
        guard let value = json.doubleValue else { throw .typeMismatch(expected: "a number", found: json) }
        self = value
    }
    /// A JSON double.
    public var json: JSON { .double(self) }
}

extension JSON: JSONConvertible {
    /// The value itself.
    @inlinable
    public init(json: JSON) throws(ModelError) { self = json }
    /// The value itself.
    public var json: JSON { self }
}

extension Optional: JSONConvertible where Wrapped: JSONConvertible {
    /// `nil` for `null`, the wrapped value otherwise.
    @inlinable
    public init(json: JSON) throws(ModelError) {
        if case .null = json {
            self = .none
        } else {
            self = .some(try Wrapped(json: json))
        }
    }
    /// `null` for `nil`.
    public var json: JSON { self?.json ?? .null }
}

extension Array: JSONConvertible where Element: JSONConvertible {
    /// A JSON array whose elements all convert.
    @inlinable
    public init(json: JSON) throws(ModelError) {
        guard case .array(let elements) = json else { throw .typeMismatch(expected: "an array", found: json) }
        var result: [Element] = []
        result.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            do throws(ModelError) {
                result.append(try Element(json: element))
            } catch {
                throw error.prefixingPath("[\(index)]")
            }
        }
        self = result
    }
    /// A JSON array.
    public var json: JSON { .array(map(\.json)) }
}

extension Dictionary: JSONConvertible where Key == String, Value: JSONConvertible {
    /// A JSON object whose values all convert.
    @inlinable
    public init(json: JSON) throws(ModelError) {
        guard case .object(let object) = json else { throw .typeMismatch(expected: "an object", found: json) }
        var result: [String: Value] = [:]
        for (key, value) in object { result[key] = try Value(json: value) }
        self = result
    }
    /// A JSON object with keys sorted, so output is stable.
    public var json: JSON {
        var object = JSONObject(minimumCapacity: count)
        for key in keys.sorted() { object[key] = self[key]?.json }
        return .object(object)
    }
}

extension ModelError {
    /// Notes that the problem was inside this value, at `step` (`[3]` or `.name`).
    @usableFromInline
    func prefixingPath(_ step: String) -> ModelError {
        var copy = self
        copy.path = step + (path.map { $0.hasPrefix("[") ? $0 : "." + $0 } ?? "")
        return copy
    }

    /// Puts an error from inside a field (a nested recipe or an element) in the field's context:
    /// the outer recipe and field, and the full path from the outer ingredients.
    func inField(_ field: String, at path: JSONPath, recipe: String?) -> ModelError {
        var copy = prefixingPath(path.description)
        copy.recipe = recipe
        copy.field = field
        return copy
    }
}
