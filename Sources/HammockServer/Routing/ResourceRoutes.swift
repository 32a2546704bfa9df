import Foundation
import HTTPTypes
import HammockJSON
import HammockStore
import HammockWire
import Synchronization

/// The routes of every resource (`/people`, `/people/:id`, `/people/:id/cars`), answered by the
/// controller with the store and the resource's serializer.
///
/// Besides the controller's work, a route here decodes create and update bodies, sets `Last-Modified`
/// on what it lists and shows (``ModificationDates``), and hands a write's controller a store that
/// stamps its writes with the request's date and preconditions (``WriteScopedStore``).
final class ResourceRoutes: MockRoutes {
    let registry = Mutex(ResourceRegistry())
    let store: any MockStore
    let controller: any MockController
    let defaultSerializer: any MockSerializer
    let maximumBodySize: Int
    let modifications: ModificationDates
    /// Where a write request's changes are announced (WebSocket feeds). Only writes go through it: a read
    /// paid 0.2 to 0.4 µs of CPU (1-2 %) for the extra store call (scripts/bench-ab, docs/benchmarks.md).
    let changes: ResourceChanges

    init(
        store: any MockStore, controller: any MockController, serializer: any MockSerializer, maximumBodySize: Int,
        modifications: ModificationDates, changes: ResourceChanges
    ) {
        self.changes = changes
        self.store = store
        self.controller = controller
        self.defaultSerializer = serializer
        self.maximumBodySize = maximumBodySize
        self.modifications = modifications
    }

    /// Adds a resource, creating its storage; its routes answer at once.
    func add(_ resource: MockResource) async throws {
        let schema = try registry.withLock { registry throws(SchemaError) in try registry.resolve(resource) }
        let keyMaker = try KeyMaker(resource)
        let memberMakers = try MemberMaker.all(resource)
        try await store.addResource(schema)
        try registry.withLock { registry throws(SchemaError) in
            // Re-check: another task may have added the same name while the store worked.
            _ = try registry.resolve(resource)
            registry.insert(schema)
            registry.keyMakers[resource.name] = keyMaker
            registry.memberMakers[resource.name] = memberMakers.isEmpty ? nil : memberMakers
        }
        // Records already in a store kept from before count as changed now (a later date is always
        // safe); so do those of a server that shares the store and started earlier.
        try await modifications.record(schema)
    }

    /// Serves `resource`'s new definition in place of the current one; the store reshapes its records.
    func replace(_ resource: MockResource) async throws -> ResourceSchema {
        let schema = try registry.withLock { registry throws(SchemaError) in try registry.resolveReplacement(resource) }
        let keyMaker = try KeyMaker(resource)
        let memberMakers = try MemberMaker.all(resource)
        try await store.addResource(schema)
        registry.withLock { registry in
            registry.replace(schema)
            registry.keyMakers[resource.name] = keyMaker
            registry.memberMakers[resource.name] = memberMakers.isEmpty ? nil : memberMakers
        }
        try await modifications.record(schema)
        return schema
    }

    /// Stops serving the resource `name` and drops its records. Its children stay, with their foreign
    /// keys to it set to `null` (as a delete of every parent would) and no nested route under it.
    /// - Throws: 404 ``HTTPProblem`` for an unknown name; the store's error.
    func remove(_ name: String) async throws {
        guard let schema = registry.withLock({ $0.schemas[name] }) else {
            throw HTTPProblem.notFound("No resource named '\(name.prefix(100))'")
        }
        let children = registry.withLock { $0.orderedSchemas.filter { $0.foreignKey(toParent: name) != nil } }
        for child in children {
            guard let foreignKey = child.foreignKey(toParent: name) else { continue }
            for record in try await store.records(of: child) {
                guard let value = record[foreignKey.name], !value.isNull, let key = record[child.key.name] else { continue }
                _ = try await store.updateRecord(of: child, withKey: key, with: [foreignKey.name: .null])
            }
            var resource = child.resource
            resource.parents.removeAll { $0.resource == name }
            _ = try await replace(resource)
        }
        registry.withLock { $0.remove(name) }
        try await store.dropResource(schema)
    }

    var routeTable: [RouteTableEntry] { registry.withLock { $0.routeTable } }

    func endpoint(for request: MockRequest) throws -> MockEndpoint? {
        let found = try registry.withLock {
            registry throws(HTTPProblem) -> (Route, any MockSerializer, [String: ResourceSchema])? in
            guard let route = try registry.route(forPath: request.path) else { return nil }
            return (route, registry.serializers[route.schema.name] ?? defaultSerializer, registry.schemas)
        }
        guard let (route, serializer, schemas) = found else { return nil }
        let matched = MatchedRoute(kind: .resource, pattern: route.pattern, resource: route.schema.name)
        return MockEndpoint(methods: route.allowedMethods, route: matched) { request in
            try await self.respond(to: request, route: route, serializer: serializer, schemas: schemas)
        }
    }

    func respond(
        to request: MockRequest, route: Route, serializer: any MockSerializer, schemas: [String: ResourceSchema]
    ) async throws -> MockResponse {
        do {
            return try await carryOut(request, route: route, serializer: serializer, schemas: schemas)
        } catch let error where !(error is HTTPProblem) && registry.withLock({ $0.schemas[route.schema.name] == nil }) {
            // The resource was removed while the request ran (its table dropped under it, "no such
            // table"): the answer a request after the removal gets, not a 500.
            throw HTTPProblem.notFound("No resource named '\(route.schema.name.prefix(100))': it was removed")
        }
    }

    private func carryOut(
        _ request: MockRequest, route: Route, serializer: any MockSerializer, schemas: [String: ResourceSchema]
    ) async throws -> MockResponse {
        // The router only hands over methods the route allows, and each of those has an action.
        guard let action = route.action(for: request.method) else {
            throw HTTPProblem.methodNotAllowed(request.method, allowed: route.allowedMethods)
        }
        var parameters: JSONObject?
        var encoding = BodyEncoding.json
        if action == .update, request.method == .patch, request.body.isEmpty {
            parameters = [:]  // a patch of nothing: the controller answers the record unchanged
        } else if action == .create || action == .update {
            let (body, bodyEncoding) = try RequestBody.decode(request, limit: maximumBodySize)
            parameters = try serializer.parameters(fromBody: body, for: route.schema.resource)
            encoding = bodyEncoding
        }
        var store = self.store
        if let scope = request.ownerScope {
            // Held to their own records: the owner field filled in or checked before the body is
            // validated (a required `ownerId` the client leaves out is the caller's), the rest in the store.
            if action == .create || (action == .update && request.method == .put), let given = parameters {
                parameters = try scope.stamped(given, of: route.schema, doing: action == .create ? "create" : "replace")
            }
            var named: (String, JSON)?
            if case .item(let schema, let key) = route { named = (schema.name, key) }
            store = OwnerScopedStore(base: store, scope: scope, routeRecord: named)
        }
        if action == .create || action == .update || action == .destroy {
            // The request's writes carry its date and, for the record it names, its preconditions: the
            // store keeps both in the write's unit of work (one read of the record, no date lost).
            var precondition: (schema: String, key: JSON, condition: StoreWrite.Condition)?
            if action != .create, let conditions = WritePreconditions(request), case .item(let schema, let key) = route {
                // The date only where a condition reads it (If-Unmodified-Since without If-Match).
                let lastModified =
                    conditions.readsLastModified ? try await modifications.lastModified(of: route, marking: false) : nil
                let condition = conditions.condition(
                    key: key, schema: schema, serializer: serializer, lastModified: lastModified, now: modifications.now())
                precondition = (schema.name, key, condition)
            }
            store = WriteScopedStore(
                base: store, second: modifications.second(), precondition: precondition, changes: changes)
        }
        let actionRequest = ActionRequest(
            schema: route.schema, route: route, request: request, parameters: parameters, bodyEncoding: encoding,
            store: store, serializer: serializer, schemas: schemas)
        // Read before the data: a change landing in between leaves the copy newer than its date.
        let modified = action == .index || action == .show ? try await modifications.lastModified(of: route) : nil
        var response: MockResponse
        switch action {
        case .index: response = try await controller.index(actionRequest)
        case .show: response = try await controller.show(actionRequest)
        case .create: response = try await create(actionRequest)
        case .update: response = try await controller.update(actionRequest)
        case .destroy: response = try await controller.destroy(actionRequest)
        }
        if action == .index, response.status == .ok, let envelope = route.schema.resource.listEnvelope {
            Self.wrap(&response, in: envelope)
        }
        if !route.schema.resource.successStatuses.isEmpty, response.status.kind == .successful {
            Self.answer(&response, as: route.schema.resource.successStatuses[action.configurationAction])
        }
        if action == .index || action == .show, response.status == .ok {
            if let modified {
                let stamp = HTTPDate.format(modified)
                if response.headerFields[.lastModified] == nil {
                    response.headerFields.append(HTTPField(name: .lastModified, value: stamp))
                } else {
                    response.headerFields[.lastModified] = stamp
                }
            } else {
                response.headerFields[.lastModified] = nil
            }
        }
        return response
    }

    /// A list's answer in the resource's envelope: the records' bytes as they are under `items` (not
    /// parsed again), the total from `X-Total-Count`, whether a `Link` names a next page, and the other
    /// members, and the next page's cursor. The headers stay.
    static func wrap(_ response: inout MockResponse, in envelope: MockResource.ListEnvelope) {
        // A custom controller's streamed list is sent as it is.
        guard response.stream == nil else { return }
        var members = envelope.members
        if let total = envelope.total {
            // An unpaged list has no X-Total-Count: its records are all there is (counted once more here,
            // on resources with an envelope only).
            let counted =
                response.headerFields[.totalCount].flatMap(Int.init) ?? (try? JSON(parsing: response.body))?.arrayValue?.count
            members[total] = counted.map(JSON.integer) ?? .null
        }
        if let hasMore = envelope.hasMore {
            members[hasMore] = .bool(response.headerFields[.link]?.contains(#"rel="next""#) == true)
        }
        if let nextCursor = envelope.nextCursor {
            // Only a page asked for by `_cursor` names its successor so; any other page answers null.
            members[nextCursor] = response.headerFields[.nextCursor].map(JSON.string) ?? .null
        }
        members[envelope.items] = nil
        var body = Array("{".utf8) + JSON.string(envelope.items).serialized() + Array(":".utf8) + response.body
        let rest = JSON.object(members).serialized()
        if rest.count > 2 { body += Array(",".utf8) + rest.dropFirst() } else { body += Array("}".utf8) }
        response.body = body
    }

    /// The success answer with the status a resource's ``MockResource/successStatuses`` give its action
    /// (an API whose create answers 200): its headers kept, its body dropped for a 204 or 205.
    static func answer(_ response: inout MockResponse, as status: Int?) {
        guard let status, (200...299).contains(status), status != response.status.code else { return }
        response.status = HTTPResponse.Status(code: status)
        if status == 204 || status == 205 {
            response.body = []
            response.headerFields[.contentType] = nil
        }
    }

    /// A create through the controller. For a resource with a key format, a body that leaves the key
    /// out (or sends `null`) gets one made, and made again if the store finds it taken: a pattern with
    /// few strings (`^[0-9]{2}$`) fills up, and a 409 for a key the client never chose would surprise.
    private func create(_ request: ActionRequest) async throws -> MockResponse {
        let name = request.schema.name
        let (keyMaker, memberMakers) = registry.withLock { ($0.keyMakers[name], $0.memberMakers[name]) }
        var random = SystemRandomNumberGenerator()
        var request = request
        // Made fields first (a creation date, a confirmation code): what the create left out or sent as null.
        if let memberMakers, var parameters = request.parameters {
            let date = modifications.now()
            for maker in memberMakers where parameters[maker.field] == nil || parameters[maker.field] == .null {
                parameters[maker.field] = maker.make(at: date, using: &random)
            }
            request.parameters = parameters
        }
        let key = request.schema.key.name
        // A read-only key is the server's whatever the body says.
        if keyMaker != nil, request.schema.resource.keyIsReadOnly { request.parameters?[key] = nil }
        guard let parameters = request.parameters, parameters[key] == nil || parameters[key] == .null, let keyMaker
        else { return try await controller.create(request) }
        var attempt = request
        var retries = 0
        while true {
            attempt.parameters?[key] = .string(keyMaker.make(using: &random))
            do {
                return try await controller.create(attempt)
            } catch StoreError.duplicateKey where retries < KeyMaker.attempts {
                retries += 1
            }
        }
    }
}
