import HammockJSON
import HammockWire

/// The resources a server serves, resolved into schemas, with the route lookup over them.
struct ResourceRegistry: Sendable {
    private(set) var schemas: [String: ResourceSchema] = [:]
    /// Names in the order they were added, for route tables.
    private(set) var order: [String] = []
    var serializers: [String: any MockSerializer] = [:]

    /// Resolves a resource against those already present.
    func resolve(_ resource: MockResource) throws(SchemaError) -> ResourceSchema {
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

    mutating func insert(_ schema: ResourceSchema) {
        schemas[schema.name] = schema
        order.append(schema.name)
    }

    /// The schemas in the order they were added.
    var orderedSchemas: [ResourceSchema] { order.compactMap { schemas[$0] } }

    /// Resolves a request path (without query) to a route; `nil` for a path that names no resource.
    /// - Throws: ``HTTPProblem`` 400 for a malformed percent-encoding, 404 for a key of the wrong form.
    func route(forPath path: String) throws(HTTPProblem) -> Route? {
        var segments = path.split(separator: "/", omittingEmptySubsequences: false)
        // A leading slash gives an empty first segment; a trailing slash an empty last one.
        guard segments.first?.isEmpty == true else { return nil }
        segments.removeFirst()
        if segments.count > 1, segments.last?.isEmpty == true { segments.removeLast() }
        var decoded: [String] = []
        for segment in segments {
            guard let value = PercentEncoding.decode(segment) else {
                throw HTTPProblem.badRequest("The path '\(path)' has a malformed percent-encoding")
            }
            guard !value.isEmpty else { return nil }
            decoded.append(value)
        }
        guard let first = decoded.first, let schema = schemas[first] else { return nil }
        switch decoded.count {
        case 1:
            return .collection(schema)
        case 2:
            guard let key = schema.key(fromPathSegment: decoded[1]) else {
                throw HTTPProblem.notFound("No \(schema.name) with \(schema.key.name) '\(decoded[1])'")
            }
            return .item(schema, key: key)
        case 3:
            guard let child = schemas[decoded[2]], let foreignKey = child.foreignKey(toParent: schema.name) else {
                return nil
            }
            guard let key = schema.key(fromPathSegment: decoded[1]) else {
                throw HTTPProblem.notFound("No \(schema.name) with \(schema.key.name) '\(decoded[1])'")
            }
            return .children(child, parent: schema, parentKey: key, foreignKey: foreignKey)
        default:
            return nil
        }
    }

    /// Every route pattern with the methods its ``Route`` allows, in the order resources were added.
    var routeTable: [RouteTableEntry] {
        var rows: [RouteTableEntry] = []
        for schema in orderedSchemas {
            // A sample key: the methods depend on the route's kind, never on the key.
            let sample = JSON.string("")
            let key = ":\(schema.key.name)"
            let collection = Route.collection(schema).allowedMethods
            if !collection.isEmpty {
                rows.append(RouteTableEntry(methods: collection, pattern: "/\(schema.name)", resource: schema.name))
            }
            let item = Route.item(schema, key: sample).allowedMethods
            if !item.isEmpty {
                rows.append(RouteTableEntry(methods: item, pattern: "/\(schema.name)/\(key)", resource: schema.name))
            }
            for foreignKey in schema.foreignKeys {
                guard let parent = schemas[foreignKey.parent] else { continue }
                let children = Route.children(schema, parent: parent, parentKey: sample, foreignKey: foreignKey).allowedMethods
                guard !children.isEmpty else { continue }
                rows.append(
                    RouteTableEntry(
                        methods: children, pattern: "/\(parent.name)/:\(parent.key.name)/\(schema.name)", resource: schema.name))
            }
        }
        return rows
    }
}
