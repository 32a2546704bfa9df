import HammockJSON

/// Resources resolved into schemas, each against those before it: names are unique (also ignoring
/// case), parents must be known. The server's registry and the configuration reader both use it, so a
/// file is checked exactly as a server would check its resources.
package struct SchemaCatalog: Sendable {
    package init() {}

    package private(set) var schemas: [String: ResourceSchema] = [:]
    /// Names in the order they were added, for route tables.
    package private(set) var order: [String] = []

    /// Resolves a resource against those already present.
    package func resolve(_ resource: MockResource) throws(SchemaError) -> ResourceSchema {
        guard schemas[resource.name] == nil else {
            throw SchemaError(resource: resource.name, message: "a resource with this name already exists")
        }
        // SQLite table names ignore case, so names that differ only in case would share a table.
        let folded = resource.name.lowercased()
        if let existing = order.first(where: { $0.lowercased() == folded }) {
            throw SchemaError(
                resource: resource.name,
                message: "the name differs from the resource '\(existing)' only in case; names must differ in more than case")
        }
        return try ResourceSchema(resolving: resource) { schemas[$0]?.key.type }
    }

    package mutating func insert(_ schema: ResourceSchema) {
        schemas[schema.name] = schema
        order.append(schema.name)
    }

    /// Resolves a new definition of a resource already present, against the others.
    package func resolveReplacement(_ resource: MockResource) throws(SchemaError) -> ResourceSchema {
        var others = self
        others.remove(resource.name)
        return try others.resolve(resource)
    }

    /// Puts `schema` in place of the one of its name, keeping its place in the order.
    package mutating func replace(_ schema: ResourceSchema) {
        if schemas[schema.name] == nil { order.append(schema.name) }
        schemas[schema.name] = schema
    }

    package mutating func remove(_ name: String) {
        schemas[name] = nil
        order.removeAll { $0 == name }
    }

    /// The schemas in the order they were added.
    package var orderedSchemas: [ResourceSchema] { order.compactMap { schemas[$0] } }
}

extension ResourceSchema {
    /// The schemas of `resources`, resolved as a server resolves them (parents first, names unique,
    /// parents known): for a store's own tests, which then add them to the store as a server's start does.
    ///
    /// ```swift
    /// for schema in try ResourceSchema.resolving([people, cars]) { try await store.addResource(schema) }
    /// ```
    public static func resolving(_ resources: [MockResource]) throws(SchemaError) -> [ResourceSchema] {
        var catalog = SchemaCatalog()
        var schemas: [ResourceSchema] = []
        for resource in try MockResource.parentsFirst(resources) {
            let schema = try catalog.resolve(resource)
            catalog.insert(schema)
            schemas.append(schema)
        }
        return schemas
    }
}
