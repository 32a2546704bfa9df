/// One way a value breaks a schema: where in the value, which keyword, and what was wanted.
///
/// ```swift
/// let violations = schemas.validate(["age": -1], against: "Person")
/// violations.first?.description   // "/age: -1 is less than the minimum, 0 (minimum)"
/// ```
public struct SchemaViolation: Sendable, Hashable, CustomStringConvertible {
    /// A JSON pointer into the value (RFC 6901); empty for the value itself.
    public var pointer: String
    /// The schema keyword the value broke: `type`, `required`, `maximum`, `pattern`, ….
    public var keyword: String
    /// What was wanted, in words, naming the value where it is short.
    public var message: String

    public init(pointer: String, keyword: String, message: String) {
        self.pointer = pointer
        self.keyword = keyword
        self.message = message
    }

    /// `/age: -1 is less than the minimum, 0 (minimum)`; without the pointer for the value itself.
    public var description: String {
        pointer.isEmpty ? "\(message) (\(keyword))" : "\(pointer): \(message) (\(keyword))"
    }
}

/// A schema that cannot be used, and where.
public struct SchemaDefinitionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where in the schemas: `Person/properties/age`.
    public var place: String
    public var message: String

    public init(place: String, message: String) {
        self.place = place
        self.message = message
    }

    public var description: String { "\(place): \(message)" }
}
