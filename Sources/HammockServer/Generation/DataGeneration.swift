public import HammockJSON
import HammockStore

/// Records to make up for empty resources: how many per resource, and optionally how each field is
/// filled. The configuration's `generate` section:
///
/// ```json
/// "generate": {
///   "people": 50,
///   "cars": {"count": 120, "fields": {"color": {"oneOf": ["red", "blue"]}, "year": {"min": 1990, "max": 2024}}}
/// }
/// ```
/// Without a rule a field gets a value that suits its type and name: `name` on `people` a person's
/// name, `email` an address, `age` 18 to 90, `createdAt` a timestamp, a foreign key one of the parent's
/// keys. The same seed gives the same records.
///
/// ```swift
/// let generation = DataGeneration([.init("people", count: 50)])
/// let reports = try await server.generateData(generation, seed: 42)
/// ```
public struct DataGeneration: Sendable, Hashable {
    /// One resource's records.
    public struct Resource: Sendable, Hashable {
        /// The resource's name.
        public var name: String
        /// How many records to make.
        public var count: Int
        /// Rules by field name; other fields are filled by their type and name.
        public var fields: [String: FieldRule]
        /// Keys the first records take, in order (the rest are made as usual): an API document's example
        /// keys (`vs_abc123`), so that the requests its examples show name records. Only for a key the
        /// store does not generate; more keys than ``count`` make that many records.
        public var keys: [JSON]

        /// `count` records of the resource `name`, the first with `keys`.
        public init(_ name: String, count: Int, fields: [String: FieldRule] = [:], keys: [JSON] = []) {
            self.name = name
            self.count = count
            self.fields = fields
            self.keys = keys
        }
    }

    /// How one field is filled. `choices` wins over the rest; a range applies to integer, float and date
    /// fields; a kind to string fields.
    public struct FieldRule: Sendable, Hashable {
        /// What a string field holds.
        public var kind: TextKind?
        /// The smallest value: a number, or a date as `YYYY-MM-DD`.
        public var minimum: JSON?
        /// The largest value: a number, or a date as `YYYY-MM-DD`.
        public var maximum: JSON?
        /// Values to pick from (`oneOf`).
        public var choices: [JSON]?
        /// A regular expression a string field's values match (`^SKU-[0-9]{6}$`), made as a key format's
        /// pattern is; wins over ``kind``.
        public var pattern: String?

        /// A rule; every part is optional.
        public init(
            kind: TextKind? = nil, minimum: JSON? = nil, maximum: JSON? = nil, choices: [JSON]? = nil, pattern: String? = nil
        ) {
            self.kind = kind
            self.minimum = minimum
            self.maximum = maximum
            self.choices = choices
            self.pattern = pattern
        }
    }

    /// What a generated string looks like.
    public enum TextKind: String, Sendable, Hashable, CaseIterable {
        /// "Amy Lee".
        case fullName
        /// "Amy".
        case firstName
        /// "Lee".
        case lastName
        /// "amy.lee12@example.com" (the record's number keeps addresses distinct).
        case email
        /// "amy_lee12".
        case username
        /// "+1 555 0142".
        case phone
        /// "Lisbon".
        case city
        /// "Portugal".
        case country
        /// "12 Harbor Street".
        case street
        /// "Northwind Labs".
        case company
        /// "https://example.com/amber-harbor".
        case url
        /// "https://example.com/images/12.png".
        case imageURL
        /// "teal".
        case color
        /// "harbor".
        case word
        /// "Quiet Harbor": a title-cased pair of words.
        case title
        /// A sentence of six to twelve words.
        case sentence
        /// Three sentences.
        case paragraph
        /// "quiet-harbor-12".
        case slug
        /// A version 4 UUID.
        case uuid
    }

    /// The resources, in any order: parents are filled before their children.
    public var resources: [Resource]

    /// A generation of `resources`.
    public init(_ resources: [Resource]) { self.resources = resources }
}
