public import HTTPTypes
public import HammockJSON
import HammockStore
import HammockWire

/// Where a request path leads: a collection, one record, or a parent's children (shallow nesting).
///
/// Controllers read it from ``ActionRequest/route``:
///
/// ```swift
/// if case .children(_, let parent, let parentKey, _) = request.route {
///     print("listing the cars of \(parent.name) \(parentKey)")
/// }
/// ```
public enum Route: Sendable, Hashable {
    /// `/people`.
    case collection(ResourceSchema)
    /// `/people/:id`.
    case item(ResourceSchema, key: JSON)
    /// `/people/:id/cars`.
    case children(ResourceSchema, parent: ResourceSchema, parentKey: JSON, foreignKey: ResourceSchema.ForeignKey)

    /// The resource the route acts on.
    public var schema: ResourceSchema {
        switch self {
        case .collection(let schema), .item(let schema, _), .children(let schema, _, _, _): schema
        }
    }

    /// The methods this route answers, given the resource's allowed actions, in a fixed order.
    public var allowedMethods: [HTTPRequest.Method] {
        let actions = schema.resource.actions
        switch self {
        case .collection, .children:
            if actions.isSuperset(of: [.list, .create]) { return Self.collectionMethods }
            var methods: [HTTPRequest.Method] = []
            if actions.contains(.list) { methods += [.get, .head] }
            if actions.contains(.create) { methods.append(.post) }
            return methods
        case .item:
            if actions.isSuperset(of: [.show, .update, .delete]) { return Self.itemMethods }
            var methods: [HTTPRequest.Method] = []
            if actions.contains(.show) { methods += [.get, .head] }
            if actions.contains(.update) { methods += [.put, .patch] }
            if actions.contains(.delete) { methods.append(.delete) }
            return methods
        }
    }

    /// Every method of a collection and of an item, built once rather than on each request.
    static let collectionMethods: [HTTPRequest.Method] = [.get, .head, .post]
    static let itemMethods: [HTTPRequest.Method] = [.get, .head, .put, .patch, .delete]

    /// The controller action for `method`, if the route allows it.
    public func action(for method: HTTPRequest.Method) -> Action? {
        let actions = schema.resource.actions
        switch (self, method) {
        case (.collection, .get), (.collection, .head), (.children, .get), (.children, .head):
            return actions.contains(.list) ? .index : nil
        case (.collection, .post), (.children, .post): return actions.contains(.create) ? .create : nil
        case (.item, .get), (.item, .head): return actions.contains(.show) ? .show : nil
        case (.item, .put), (.item, .patch): return actions.contains(.update) ? .update : nil
        case (.item, .delete): return actions.contains(.delete) ? .destroy : nil
        default: return nil
        }
    }

    /// The five controller actions.
    public enum Action: String, Sendable, Hashable {
        /// List a collection or a parent's children.
        case index
        /// Show one record.
        case show
        /// Create a record.
        case create
        /// Merge fields into a record (PUT and PATCH).
        case update
        /// Delete a record.
        case destroy

        /// The resource's action it is (`MockResource.Actions`).
        var configurationAction: MockResource.Actions {
            switch self {
            case .index: .list
            case .show: .show
            case .create: .create
            case .update: .update
            case .destroy: .delete
            }
        }
    }
}

extension ResourceSchema {
    /// The key named by a path segment, if it has the key's type.
    func key(fromPathSegment segment: String) -> JSON? {
        switch key.type {
        case .integer:
            // Only the canonical spelling names a record: `/people/01` and `/people/+1` are not `/people/1`,
            // so every record has exactly one URL (and one cache entry in a client).
            guard let first = segment.utf8.first, first == UInt8(ascii: "-") || (first &- UInt8(ascii: "0")) < 10,
                let value = Int(segment), String(value) == segment
            else { return nil }
            return .integer(value)
        default:
            return .string(segment)
        }
    }

    /// The path of one record, for `Location` headers.
    func path(forKey key: JSON) -> String {
        let segment: String
        switch key {
        case .integer(let value): segment = String(value)
        case .string(let value): segment = PercentEncoding.encode(value)
        default: segment = key.serializedString()
        }
        return "/" + PercentEncoding.encode(name) + "/" + segment
    }
}

extension Route {
    /// The route table's pattern for this route: `/people`, `/people/:id`, `/people/:id/cars`.
    var pattern: String {
        switch self {
        case .collection(let schema): "/\(schema.name)"
        case .item(let schema, _): "/\(schema.name)/:\(schema.key.name)"
        case .children(let schema, let parent, _, _): "/\(parent.name)/:\(parent.key.name)/\(schema.name)"
        }
    }
}
