import HammockJSON
import HammockStore
import HammockWire

/// The resources a server serves, with their serializers and the route lookup over them.
struct ResourceRegistry: Sendable {
    private(set) var catalog = SchemaCatalog()
    var serializers: [String: any MockSerializer] = [:]
    /// What makes the keys of the resources with a key format, by name.
    var keyMakers: [String: KeyMaker] = [:]
    /// What makes the made fields of the resources that have them, by name.
    var memberMakers: [String: [MemberMaker]] = [:]

    var schemas: [String: ResourceSchema] { catalog.schemas }
    var orderedSchemas: [ResourceSchema] { catalog.orderedSchemas }

    func resolve(_ resource: MockResource) throws(SchemaError) -> ResourceSchema { try catalog.resolve(resource) }

    mutating func insert(_ schema: ResourceSchema) { catalog.insert(schema) }

    func resolveReplacement(_ resource: MockResource) throws(SchemaError) -> ResourceSchema {
        try catalog.resolveReplacement(resource)
    }

    mutating func replace(_ schema: ResourceSchema) { catalog.replace(schema) }

    mutating func remove(_ name: String) {
        catalog.remove(name)
        serializers[name] = nil
        keyMakers[name] = nil
        memberMakers[name] = nil
    }

    /// Resolves a request path (without query) to a route; `nil` for a path that names no resource.
    /// - Throws: ``HTTPProblem`` 400 for a malformed percent-encoding, 404 for a key of the wrong form.
    func route(forPath path: String) throws(HTTPProblem) -> Route? {
        // Most paths have one to three segments: found without building arrays, and split on the bytes
        // (a path is ASCII to HTTP; splitting on Characters walked grapheme clusters).
        let slash = UInt8(ascii: "/")
        let utf8 = path.utf8
        guard utf8.first == slash else { return nil }
        var end = utf8.endIndex
        if utf8.count > 1 && utf8.last == slash { end = utf8.index(before: end) }
        var segments: (Substring, Substring, Substring) = ("", "", "")
        var count = 0
        var start = utf8.index(after: utf8.startIndex)
        while count <= 3 {
            let stop = utf8[start..<end].firstIndex(of: slash) ?? end
            switch count {
            case 0: segments.0 = path[start..<stop]
            case 1: segments.1 = path[start..<stop]
            case 2: segments.2 = path[start..<stop]
            default: return try slowRoute(forPath: path)
            }
            count += 1
            guard stop < end else { break }
            start = utf8.index(after: stop)
        }
        var decoded: (String, String, String) = ("", "", "")
        for index in 0..<count {
            let segment = index == 0 ? segments.0 : (index == 1 ? segments.1 : segments.2)
            guard let value = PercentEncoding.decode(segment) else {
                throw HTTPProblem.badRequest("The path '\(path)' has a malformed percent-encoding")
            }
            guard !value.isEmpty else { return nil }
            switch index {
            case 0: decoded.0 = value
            case 1: decoded.1 = value
            default: decoded.2 = value
            }
        }
        return try route(first: decoded.0, second: count > 1 ? decoded.1 : nil, third: count > 2 ? decoded.2 : nil)
    }

    /// The route of decoded segments.
    func route(first: String, second: String?, third: String?) throws(HTTPProblem) -> Route? {
        guard let schema = schemas[first] else { return nil }
        guard let second else { return schema.resource.servesTopLevel ? .collection(schema) : nil }
        guard let key = schema.key(fromPathSegment: second) else {
            if let third, schemas[third]?.foreignKey(toParent: schema.name) == nil { return nil }
            throw HTTPProblem.notFound("No \(schema.name) with \(schema.key.name) '\(second)'")
        }
        guard let third else { return .item(schema, key: key) }
        guard let child = schemas[third], let foreignKey = child.foreignKey(toParent: schema.name) else { return nil }
        return .children(child, parent: schema, parentKey: key, foreignKey: foreignKey)
    }

    /// Paths of four segments or more: none is a route, but a malformed escape in a segment before the
    /// first empty one is still a 400, as for shorter paths.
    func slowRoute(forPath path: String) throws(HTTPProblem) -> Route? {
        var segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        if segments.count > 1, segments.last?.isEmpty == true { segments = segments.dropLast() }
        for segment in segments {
            guard let value = PercentEncoding.decode(segment) else {
                throw HTTPProblem.badRequest("The path '\(path)' has a malformed percent-encoding")
            }
            if value.isEmpty { return nil }
        }
        return nil
    }

    /// Every route pattern with the methods its ``Route`` allows, in the order resources were added.
    var routeTable: [RouteTableEntry] {
        var rows: [RouteTableEntry] = []
        for schema in orderedSchemas {
            // A sample key: the methods depend on the route's kind, never on the key.
            let sample = JSON.string("")
            let key = ":\(schema.key.name)"
            let collection = Route.collection(schema).allowedMethods
            if !collection.isEmpty, schema.resource.servesTopLevel {
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
