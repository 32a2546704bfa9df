import HammockJSON
import HammockWire

/// The resources a server serves, resolved into schemas, with the route lookup over them.
struct ResourceRegistry: Sendable {
    private(set) var schemas: [String: ResourceSchema] = [:]
    /// Names in the order they were added, for route tables.
    private(set) var order: [String] = []
    var serializers: [String: any MockSerializer] = [:]

    /// Resolves a resource against those already present.
    func resolve(_ resource: Resource) throws(SchemaError) -> ResourceSchema {
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

    /// Resolves a request path (without query) to a route.
    func route(forPath path: String) throws(HTTPProblem) -> Route {
        var segments = path.split(separator: "/", omittingEmptySubsequences: false)
        // A leading slash gives an empty first segment; a trailing slash an empty last one.
        guard segments.first?.isEmpty == true else { throw HTTPProblem.notFound("No route for '\(path)'") }
        segments.removeFirst()
        if segments.count > 1, segments.last?.isEmpty == true { segments.removeLast() }
        var decoded: [String] = []
        for segment in segments {
            guard let value = PercentEncoding.decode(segment) else {
                throw HTTPProblem.badRequest("The path '\(path)' has a malformed percent-encoding")
            }
            guard !value.isEmpty else { throw HTTPProblem.notFound("No route for '\(path)'") }
            decoded.append(value)
        }
        guard let first = decoded.first, let schema = schemas[first] else {
            throw HTTPProblem.notFound("No route for '\(path)'")
        }
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
                throw HTTPProblem.notFound("No route for '\(path)'")
            }
            guard let key = schema.key(fromPathSegment: decoded[1]) else {
                throw HTTPProblem.notFound("No \(schema.name) with \(schema.key.name) '\(decoded[1])'")
            }
            return .children(child, parent: schema, parentKey: key, foreignKey: foreignKey)
        default:
            throw HTTPProblem.notFound("No route for '\(path)'")
        }
    }

    /// Every route pattern with its methods, for the start-up banner.
    var routeTable: [(methods: String, pattern: String, resource: String)] {
        var rows: [(String, String, String)] = []
        for schema in orderedSchemas {
            let actions = schema.resource.actions
            let key = ":\(schema.key.name)"
            var collection: [String] = []
            if actions.contains(.list) { collection.append("GET") }
            if actions.contains(.create) { collection.append("POST") }
            if !collection.isEmpty { rows.append((collection.joined(separator: ", "), "/\(schema.name)", schema.name)) }
            var item: [String] = []
            if actions.contains(.show) { item.append("GET") }
            if actions.contains(.update) { item += ["PUT", "PATCH"] }
            if actions.contains(.delete) { item.append("DELETE") }
            if !item.isEmpty { rows.append((item.joined(separator: ", "), "/\(schema.name)/\(key)", schema.name)) }
            for foreignKey in schema.foreignKeys where !collection.isEmpty {
                let parentKey = schemas[foreignKey.parent].map { ":\($0.key.name)" } ?? ":id"
                rows.append(
                    (collection.joined(separator: ", "), "/\(foreignKey.parent)/\(parentKey)/\(schema.name)", schema.name))
            }
        }
        return rows
    }
}
