public import HammockJSON

/// A ``MockResource`` resolved against the resources it refers to: every stored column with its type.
///
/// Stores receive schemas, not bare resources, so they know the type of each foreign key and which
/// resources are children of which. Records are objects with the schema's columns in order:
/// the primary key first, then the declared fields, then the foreign keys.
///
/// ```swift
/// let schema = server.schema(named: "cars")
/// schema?.columns.map(\.name)          // ["id", "name", "color", "person_id"]
/// schema?.foreignKey(toParent: "people")?.type   // .integer
/// ```
public struct ResourceSchema: Sendable, Hashable {
    /// A stored column.
    public struct Column: Sendable, Hashable {
        /// The column's name, as it appears in bodies.
        public var name: String
        /// What values it holds.
        public var type: FieldType
    }

    /// A foreign key column pointing at a parent resource.
    public struct ForeignKey: Sendable, Hashable {
        /// The column name, such as `person_id`.
        public var name: String
        /// The parent resource's name.
        public var parent: String
        /// The type of the parent's key (`integer` or `string`).
        public var type: FieldType
    }

    /// The resolved parts behind one reference. A schema travels with every request, in its route and
    /// its action request, so a copy should cost one retain, not one per string and array inside.
    private final class Storage: Sendable {
        let resource: MockResource
        let key: Column
        let isKeyGenerated: Bool
        let foreignKeys: [ForeignKey]
        let columns: [Column]
        /// The fields other than the key that are required or have a default: what a write checks besides types.
        let ruledFields: [MockResource.Field]

        init(resource: MockResource, key: Column, isKeyGenerated: Bool, foreignKeys: [ForeignKey], columns: [Column]) {
            self.resource = resource
            self.key = key
            self.isKeyGenerated = isKeyGenerated
            self.foreignKeys = foreignKeys
            self.columns = columns
            ruledFields = resource.fields.filter { $0.name != key.name && ($0.isRequired || $0.defaultValue != nil) }
        }
    }

    private let storage: Storage

    /// The resource as declared.
    public var resource: MockResource { storage.resource }
    /// The primary key column.
    public var key: Column { storage.key }
    /// Whether the server generates the key (an integer that is never reused).
    public var isKeyGenerated: Bool { storage.isKeyGenerated }
    /// The foreign keys, one per parent.
    public var foreignKeys: [ForeignKey] { storage.foreignKeys }
    /// Every column in record order: key, fields, foreign keys.
    public var columns: [Column] { storage.columns }
    /// The fields other than the key that are required or have a default.
    public var ruledFields: [MockResource.Field] { storage.ruledFields }

    public static func == (left: ResourceSchema, right: ResourceSchema) -> Bool {
        left.storage === right.storage
            || (left.resource == right.resource && left.key == right.key && left.isKeyGenerated == right.isKeyGenerated
                && left.foreignKeys == right.foreignKeys && left.columns == right.columns)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(resource)
        hasher.combine(key)
        hasher.combine(isKeyGenerated)
        hasher.combine(foreignKeys)
        hasher.combine(columns)
    }

    /// The resource's name.
    public var name: String { resource.name }

    /// Resolves `resource`; `parentKeyType` answers the key type of each parent.
    init(resolving resource: MockResource, parentKeyType: (String) -> FieldType?) throws(SchemaError) {
        guard Self.isValidName(resource.name) else {
            throw SchemaError(
                resource: resource.name, message: "the name must be a non-empty path segment without '/', '?', '#' or '%'")
        }
        var seen = Set<String>()
        let key: Column
        let isKeyGenerated: Bool
        for field in resource.fields {
            guard !field.name.isEmpty else { throw SchemaError(resource: resource.name, message: "a field has an empty name") }
            guard seen.insert(field.name).inserted else {
                throw SchemaError(resource: resource.name, message: "the field '\(field.name)' is declared twice")
            }
            if let value = field.defaultValue {
                guard field.name != resource.primaryKey else {
                    // Every create without a key would take the same one.
                    throw SchemaError(resource: resource.name, message: "the primary key '\(field.name)' cannot have a default")
                }
                switch Self.convert(value, to: field.type, encoding: .json) {
                case .success(.null):
                    throw SchemaError(resource: resource.name, message: "the default of '\(field.name)' is null; leave it out")
                case .success: break
                case .failure(let problem):
                    throw SchemaError(
                        resource: resource.name, message: "the default of '\(field.name)' does not fit: \(problem.message)")
                }
            }
        }
        if let declared = resource.field(named: resource.primaryKey) {
            guard declared.type == .integer || declared.type == .string else {
                throw SchemaError(
                    resource: resource.name,
                    message: "the primary key '\(declared.name)' must be a string or integer field, not \(declared.type.rawValue)"
                )
            }
            key = Column(name: declared.name, type: declared.type)
            isKeyGenerated = false
            if resource.keyFormat != nil, declared.type != .string {
                throw SchemaError(
                    resource: resource.name,
                    message: "a key format makes string keys; the primary key '\(declared.name)' is \(declared.type.rawValue)")
            }
        } else {
            if resource.keyFormat != nil {
                throw SchemaError(
                    resource: resource.name,
                    message:
                        "a key format needs the primary key '\(resource.primaryKey)' declared as a string field; undeclared, it is a generated integer"
                )
            }
            guard !resource.primaryKey.isEmpty else {
                throw SchemaError(resource: resource.name, message: "the primary key has an empty name")
            }
            key = Column(name: resource.primaryKey, type: .integer)
            isKeyGenerated = true
            seen.insert(resource.primaryKey)
        }
        var foreignKeys: [ForeignKey] = []
        for parent in resource.parents {
            guard let type = parentKeyType(parent.resource) else {
                throw SchemaError(resource: resource.name, message: "the parent '\(parent.resource)' is not a known resource")
            }
            guard seen.insert(parent.foreignKey).inserted else {
                throw SchemaError(
                    resource: resource.name,
                    message: "the foreign key '\(parent.foreignKey)' clashes with another field; name it explicitly")
            }
            foreignKeys.append(ForeignKey(name: parent.foreignKey, parent: parent.resource, type: type))
        }
        var columns = [key]
        columns += resource.fields.filter { $0.name != resource.primaryKey }.map { Column(name: $0.name, type: $0.type) }
        columns += foreignKeys.map { Column(name: $0.name, type: $0.type) }
        guard columns.count > (isKeyGenerated ? 1 : 0) else {
            // Every write would be refused for naming no known field.
            throw SchemaError(resource: resource.name, message: "there is no field to write; declare at least one field")
        }
        storage = Storage(
            resource: resource, key: key, isKeyGenerated: isKeyGenerated, foreignKeys: foreignKeys, columns: columns)
    }

    package static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".."
            && !name.contains { "/?#% ".contains($0) || $0.isNewline }
    }

    /// The foreign key that points at `parent`, if this resource is its child.
    public func foreignKey(toParent parent: String) -> ForeignKey? { foreignKeys.first { $0.parent == parent } }

    /// A record with every column in order: given values, `null` for the rest.
    public func makeRecord(key: JSON, values: JSONObject) -> JSONObject {
        var record = JSONObject(minimumCapacity: columns.count)
        record[self.key.name] = key
        for column in columns.dropFirst() { record[column.name] = column.normalized(values[column.name] ?? .null) }
        return record
    }
}

extension ResourceSchema.Column {
    /// The value in the form every store keeps for this column's type (integers in float columns become doubles).
    public func normalized(_ value: JSON) -> JSON {
        switch (type, value) {
        case (.float, .integer(let number)):
            return .double(Double(number))
        case (.blob, .string(let text)):
            // Canonical base64, as the bytes read back from any store would be encoded.
            return Base64.decode(text).map { .string(Base64.encode($0)) } ?? value
        default:
            return value
        }
    }
}

/// A resource definition that cannot be served, with the reason.
///
/// ```swift
/// do { try await server.addResource(MockResource("cars", fields: [:], parents: ["boats"])) }
/// catch let error as SchemaError { print(error) }   // resource 'cars': the parent 'boats' is not a known resource
/// ```
public struct SchemaError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The resource's name.
    public var resource: String
    /// What is wrong.
    public var message: String
    /// `resource 'people': ...`.
    public var description: String { "resource '\(resource)': \(message)" }

    package init(resource: String, message: String) {
        self.resource = resource
        self.message = message
    }
}
