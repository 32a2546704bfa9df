/// A JSON value that keeps integers and decimals apart and keeps the order of object keys.
///
/// `JSON` is the value every part of Hammock shares: the mock server stores and answers with it, the
/// client encodes and decodes with it, and model recipes read paths out of it.
///
/// ```swift
/// let person: JSON = ["id": 1, "name": "john", "height": 1.82, "kids": nil]
/// person["name"]?.stringValue          // "john"
/// person["id"]                          // .integer(1), never .double(1.0)
/// let parsed = try JSON(parsing: #"{"id":1,"name":"john"}"#)
/// parsed.serializedString()             // {"id":1,"name":"john"}, keys in their original order
/// ```
///
/// Equality follows JSON semantics: two objects are equal when they hold the same keys with equal
/// values, whatever their order. `.integer(1)` and `.double(1)` are different values.
public enum JSON: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without a fraction or exponent that fits in `Int`.
    case integer(Int)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSON])
    /// An object whose keys keep the order in which they were written or inserted.
    ///
    /// Boxed (`indirect`): an object's three references made every `JSON` 32 bytes where the largest
    /// other payload, a `String`, needs 16, and a store holds a million records' values as `JSON`
    /// (six fields: 192 bytes a record, 144 boxed; the box costs objects, which are few, one allocation).
    indirect case object(JSONObject)
}

extension JSON {
    /// The string, if this is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, if this is an integer, or a double with an exact integer value.
    public var intValue: Int? {
        switch self {
        case .integer(let value): return value
        case .double(let value): return Int(exactly: value)
        default: return nil
        }
    }

    /// The number as a `Double`, if this is an integer or a double.
    public var doubleValue: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    /// The Boolean, if this is `true` or `false`.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements, if this is an array.
    public var arrayValue: [JSON]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The object, if this is an object.
    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Whether this is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The name of this value's kind, as used in error messages: `"null"`, `"boolean"`, `"integer"`,
    /// `"number"`, `"string"`, `"array"` or `"object"`.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer: "integer"
        case .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// The value stored under `key`, if this is an object that has it.
    public subscript(key: String) -> JSON? {
        get { objectValue?[key] }
        set {
            guard case .object(var object) = self else { return }
            self = .null  // release the payload so the object is mutated in place
            object[key] = newValue
            self = .object(object)
        }
    }

    /// The element at `index`, if this is an array and the index is in range.
    public subscript(index: Int) -> JSON? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }
}
