extension JSON: ExpressibleByNilLiteral {
    /// Creates `null`.
    public init(nilLiteral: ()) { self = .null }
}

extension JSON: ExpressibleByBooleanLiteral {
    /// Creates `true` or `false`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSON: ExpressibleByIntegerLiteral {
    /// Creates an integer.
    public init(integerLiteral value: Int) { self = .integer(value) }
}

extension JSON: ExpressibleByFloatLiteral {
    /// Creates a double.
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension JSON: ExpressibleByStringLiteral {
    /// Creates a string.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension JSON: ExpressibleByArrayLiteral {
    /// Creates an array.
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
}

extension JSON: ExpressibleByDictionaryLiteral {
    /// Creates an object whose keys keep the order of the literal.
    public init(dictionaryLiteral elements: (String, JSON)...) {
        var object = JSONObject(minimumCapacity: elements.count)
        for (key, value) in elements { object[key] = value }
        self = .object(object)
    }
}

extension JSON: CustomStringConvertible {
    /// The compact serialized form.
    public var description: String { serializedString() }
}
