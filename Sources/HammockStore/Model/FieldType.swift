public import HammockJSON

/// The type of a resource field, which decides what a request may send and how a store keeps it.
///
/// ```swift
/// let people = MockResource("people", fields: ["name": .string, "born": .date, "avatar": .blob])
/// ```
public enum FieldType: String, Sendable, Hashable, CaseIterable {
    /// A JSON string.
    case string
    /// A JSON number without fraction (a double with an exact integer value is accepted).
    case integer
    /// Any JSON number, kept as a double.
    case float
    /// `true` or `false`.
    case boolean
    /// Binary data, sent and answered as a base64 string.
    case blob
    /// An ISO 8601 date (`2024-05-01`) or date-time (`2024-05-01T12:00:00Z`) string.
    case date
    /// Any JSON value, kept as it is.
    case json
}

extension MockResource {
    /// One declared field of a resource.
    ///
    /// ```swift
    /// let notes = MockResource("notes", fields: [MockResource.Field("text", .string), MockResource.Field("pinned", .boolean)])
    /// ```
    public struct Field: Sendable, Hashable {
        /// The field's name, as it appears in request and response bodies.
        public var name: String
        /// The field's type.
        public var type: FieldType
        /// Whether a create must give it (unless it has a ``defaultValue``) and no write may set it to
        /// `null`: a 422 naming it otherwise.
        public var isRequired: Bool
        /// What a create that leaves it out stores, if anything (else `null`). Of the field's type.
        public var defaultValue: JSON?
        /// Whether requests may set it but answers never show it (a password, a callback URL): what an API
        /// document's `writeOnly` means.
        public var isWriteOnly = false

        /// Creates a field.
        public init(_ name: String, _ type: FieldType, isRequired: Bool = false, defaultValue: JSON? = nil) {
            self.name = name
            self.type = type
            self.isRequired = isRequired
            self.defaultValue = defaultValue
        }
    }
}
