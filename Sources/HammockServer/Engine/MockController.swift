public import HTTPTypes
public import HammockJSON
import HammockStore

/// Carries out the five actions behind the routes of every resource.
///
/// The default, ``CRUDController``, stores and answers records. A custom controller implements the
/// actions it wants to change and gets the default behaviour for the rest; inside an override,
/// `CRUDController()` is there to call, as a subclass would call `super`:
///
/// ```swift
/// struct StampingController: MockController {
///     func create(_ request: ActionRequest) async throws -> MockResponse {
///         var request = request
///         request.parameters?["createdBy"] = "mock"
///         return try await CRUDController().create(request)
///     }
/// }
/// let server = try await MockServer(resources: [notes], controller: StampingController())
/// ```
public protocol MockController: Sendable {
    /// `GET /people` and `GET /parents/:id/people`.
    func index(_ request: ActionRequest) async throws -> MockResponse
    /// `GET /people/:id`.
    func show(_ request: ActionRequest) async throws -> MockResponse
    /// `POST /people` and `POST /parents/:id/people`.
    func create(_ request: ActionRequest) async throws -> MockResponse
    /// `PUT` and `PATCH /people/:id`.
    func update(_ request: ActionRequest) async throws -> MockResponse
    /// `DELETE /people/:id`.
    func destroy(_ request: ActionRequest) async throws -> MockResponse
}

extension MockController {
    /// The default listing.
    public func index(_ request: ActionRequest) async throws -> MockResponse { try await CRUDController().index(request) }
    /// The default lookup.
    public func show(_ request: ActionRequest) async throws -> MockResponse { try await CRUDController().show(request) }
    /// The default creation.
    public func create(_ request: ActionRequest) async throws -> MockResponse { try await CRUDController().create(request) }
    /// The default merge of fields.
    public func update(_ request: ActionRequest) async throws -> MockResponse { try await CRUDController().update(request) }
    /// The default deletion.
    public func destroy(_ request: ActionRequest) async throws -> MockResponse { try await CRUDController().destroy(request) }
}

/// Everything an action needs: the route, the request, its parameters, the store and the serializer.
///
/// ```swift
/// func show(_ request: ActionRequest) async throws -> MockResponse {
///     guard let key = request.key, let record = try await request.store.record(of: request.schema, withKey: key)
///     else { throw HTTPProblem.notFound("nothing here") }
///     return request.respond(with: record)
/// }
/// ```
public struct ActionRequest: Sendable {
    /// The resource acted on.
    public var schema: ResourceSchema
    /// The route that matched.
    public var route: Route
    /// The request as received.
    public var request: MockRequest
    /// The body after the serializer's ``MockSerializer/parameters(fromBody:for:)``; `nil` without a body.
    public var parameters: JSONObject?
    /// How the body was encoded.
    public var bodyEncoding: BodyEncoding
    /// The store. For a write, every write made through it carries the request's change date and, for
    /// the record the route names, the request's preconditions (`If-Match`, `If-Unmodified-Since`,
    /// `If-None-Match`): the store checks them on the one read its write makes, and a write that finds
    /// them failed throws the 412 ``HTTPProblem``.
    public var store: any MockStore
    /// The serializer for this resource.
    public var serializer: any MockSerializer
    /// Every resource the server knows, by name, as the request found them.
    public var schemas: [String: ResourceSchema]
    /// The key of `/people/:id` routes.
    public var key: JSON? {
        if case .item(_, let key) = route { return key }
        return nil
    }

    /// A JSON response for one record, through the serializer.
    public func respond(
        with record: JSONObject, status: HTTPResponse.Status = .ok, headerFields: HTTPFields = [:]
    )
        -> MockResponse
    {
        MockResponse(status: status, headerFields: headerFields, json: serializer.serialize(record: record, of: schema.resource))
    }

    /// A JSON response for a list of records, through the serializer.
    public func respond(withCollection records: [JSONObject]) -> MockResponse {
        MockResponse(json: serializer.serialize(collection: records, of: schema.resource))
    }

    /// The default serializer writes records as they are stored: their stored bytes are the answer.
    /// (Not for a resource whose answers leave out members its stored bytes hold: nulls, write-only fields.)
    var servesStoredJSON: Bool { serializer is DefaultSerializer && !schema.resource.reshapesAnswers }

    /// A JSON response of bytes already serialized.
    func respond(withJSON body: [UInt8]) -> MockResponse {
        MockResponse(status: .ok, headerFields: HTTPFields(CollectionOfOne(MockResponse.jsonContentType)), body: body)
    }
}

/// The default controller: create, read, update and delete against the store.
///
/// ```swift
/// let response = try await CRUDController().create(request)   // from inside a custom controller
/// ```
public struct CRUDController: MockController {
    /// Creates the default controller.
    public init() {}

    public func index(_ request: ActionRequest) async throws -> MockResponse {
        let query = try ListQuery(
            parsing: request.request.query, for: request.schema, ignoringUnknownOptions: request.request.isDocumented)
        guard query.isEmpty else { return try await Self.index(request, query: query) }
        var response = try await Self.wholeList(request)
        if !query.ignored.isEmpty { response.headerFields.append(contentsOf: query.responseFields(total: 0, path: "")) }
        return response
    }

    /// A list with filters, a search, an order or a page.
    static func index(_ request: ActionRequest, query: ListQuery) async throws -> MockResponse {
        let store = request.store
        let schema = request.schema
        let relations = try Relations(embed: query.embed, expand: query.expand, of: schema, among: request.schemas)
        var scoped = query
        if case .children(_, let parent, let parentKey, let foreignKey) = request.route {
            guard try await store.record(of: parent, withKey: parentKey) != nil else {
                throw HTTPProblem.notFound(Self.missing(parent, parentKey))
            }
            // A nested list is the query with one more filter: the parent's key.
            scoped.filters.append(ListQuery.Filter(field: foreignKey.name, comparison: .equal, values: [parentKey]))
        }
        let (page, total) = try await store.storedRecords(of: schema, answering: scoped)
        var response: MockResponse
        if !relations.isEmpty {
            response = request.respond(
                withCollection: try await relations.apply(to: page.map(\.fields), of: schema, store: store))
        } else if request.servesStoredJSON {
            response = request.respond(withJSON: StoredRecord.jsonArray(page))
        } else {
            response = request.respond(withCollection: page.map(\.fields))
        }
        response.headerFields.append(contentsOf: query.responseFields(total: total, path: request.request.path))
        return response
    }

    /// The whole list in key order: the stored bytes joined, or the records through the serializer.
    static func wholeList(_ request: ActionRequest) async throws -> MockResponse {
        let store = request.store
        if case .children(let schema, let parent, let parentKey, let foreignKey) = request.route {
            guard try await store.record(of: parent, withKey: parentKey) != nil else {
                throw HTTPProblem.notFound(Self.missing(parent, parentKey))
            }
            if request.servesStoredJSON {
                let stored = try await store.storedRecords(of: schema, where: foreignKey, is: parentKey)
                return request.respond(withJSON: StoredRecord.jsonArray(stored))
            }
            return request.respond(withCollection: try await store.records(of: schema, where: foreignKey, is: parentKey))
        }
        if request.servesStoredJSON {
            // A page is the records' stored bytes joined: nothing is serialized on a read.
            return request.respond(withJSON: StoredRecord.jsonArray(try await store.storedRecords(of: request.schema)))
        }
        return request.respond(withCollection: try await store.records(of: request.schema))
    }

    public func show(_ request: ActionRequest) async throws -> MockResponse {
        let key = try Self.requireKey(request)
        // The usual lookup has no query: nothing to parse, no header to add.
        guard request.request.query != nil else { return try await Self.plainShow(request, key: key) }
        let options = try ListQuery.recordOptions(
            parsing: request.request.query, dependent: false, ignoringUnknownOptions: request.request.isDocumented)
        var ignored = HTTPFields()
        if !options.ignored.isEmpty { ignored[.ignoredQuery] = options.ignored.joined(separator: ", ") }
        if !options.embed.isEmpty || !options.expand.isEmpty {
            let relations = try Relations(
                embed: options.embed, expand: options.expand, of: request.schema, among: request.schemas)
            guard let record = try await request.store.record(of: request.schema, withKey: key) else {
                throw HTTPProblem.notFound(Self.missing(request.schema, key))
            }
            let related = try await relations.apply(to: [record], of: request.schema, store: request.store)
            return request.respond(with: related.first ?? record, headerFields: ignored)
        }
        var response = try await Self.plainShow(request, key: key)
        response.headerFields.append(contentsOf: ignored)
        return response
    }

    /// One record as stored.
    static func plainShow(_ request: ActionRequest, key: JSON) async throws -> MockResponse {
        if request.servesStoredJSON {
            guard let stored = try await request.store.storedRecord(of: request.schema, withKey: key) else {
                throw HTTPProblem.notFound(Self.missing(request.schema, key))
            }
            return request.respond(withJSON: stored.json)
        }
        guard let record = try await request.store.record(of: request.schema, withKey: key) else {
            throw HTTPProblem.notFound(Self.missing(request.schema, key))
        }
        return request.respond(with: record)
    }

    public func create(_ request: ActionRequest) async throws -> MockResponse {
        let schema = request.schema
        var values = try schema.validate(request.parameters ?? [:], encoding: request.bodyEncoding, mode: .create)
        if case .children(_, _, let parentKey, let foreignKey) = request.route {
            values[foreignKey.name] = parentKey  // the path decides the parent; the store checks it exists
        }
        let record: JSONObject
        do {
            record = try await request.store.createRecord(of: schema, with: values)
        } catch StoreError.missingParent(let field, let parent, let parentKey) {
            throw Self.parentProblem(field: field, parent: parent, key: parentKey, in: request)
        }
        let key = record[schema.key.name] ?? .null
        return request.respond(with: record, status: .created, headerFields: [.location: schema.path(forKey: key)])
    }

    public func update(_ request: ActionRequest) async throws -> MockResponse {
        let key = try Self.requireKey(request)
        let schema = request.schema
        let parameters = request.parameters ?? [:]
        // A merge patch of nothing (`{}`, or no body) changes nothing and answers the record, as RFC 7396
        // has it; a PUT of nothing, or a body of unknown members only, is still refused.
        let values =
            request.request.method == .patch && parameters.isEmpty
            ? [:] : try schema.validate(parameters, encoding: request.bodyEncoding, mode: .update(key: key))
        let outcome: ConditionalWrite<WriteResult>
        do {
            outcome = try await request.store.perform(StoreWrite(schema, .update(key: key, values: values)))
        } catch StoreError.missingParent(let field, let parent, let parentKey) {
            throw Self.parentProblem(field: field, parent: parent, key: parentKey, in: request)
        }
        switch outcome {
        case .written(let result): return request.respond(with: result.records.first ?? [:])
        case .missing: throw HTTPProblem.notFound(Self.missing(schema, key))
        case .changed: throw HTTPProblem.preconditionFailed(schema, key: key)
        case .refused(let reason): throw reason
        }
    }

    public func destroy(_ request: ActionRequest) async throws -> MockResponse {
        let key = try Self.requireKey(request)
        let options = try ListQuery.recordOptions(
            parsing: request.request.query, dependent: true, ignoringUnknownOptions: request.request.isDocumented)
        // `_dependent=cars`: the record's cars go with it (otherwise they stay, their key nulled), as do
        // the children of a resource that is deleted with its parent (``MockResource/Parent/deletesWithParent``).
        var dependents: [StoreWrite.Dependent] = []
        let children = Relations.children(of: request.schema, among: request.schemas)
        for name in options.dependent {
            let (child, foreignKey) = try Relations.child(named: name, for: "_dependent", of: request.schema, among: children)
            dependents.append(StoreWrite.Dependent(child, foreignKey))
        }
        for (child, foreignKey) in children where !dependents.contains(where: { $0.schema.name == child.name }) {
            let parent = child.resource.parents.first { $0.resource == request.schema.name && $0.foreignKey == foreignKey.name }
            if parent?.deletesWithParent == true { dependents.append(StoreWrite.Dependent(child, foreignKey)) }
        }
        // The dependents, the conditions and the record: one write, so a 412 or a 404 leaves every
        // dependent in place.
        switch try await request.store.perform(StoreWrite(request.schema, .delete(key: key, dependents: dependents))) {
        case .written: return MockResponse(status: .noContent)
        case .missing: throw HTTPProblem.notFound(Self.missing(request.schema, key))
        case .changed: throw HTTPProblem.preconditionFailed(request.schema, key: key)
        case .refused(let reason): throw reason
        }
    }

    static func requireKey(_ request: ActionRequest) throws(HTTPProblem) -> JSON {
        guard let key = request.key else {
            throw HTTPProblem(.internalServerError, detail: "this action needs a /\(request.schema.name)/:key route")
        }
        return key
    }

    /// The answer to a write whose parent is missing, which only the controller can word: 404 for the
    /// parent the path names, 422 naming the field for a key in the body. (Every other store error
    /// becomes its answer in one place, ``ProblemMiddleware``.)
    static func parentProblem(field: String, parent: String, key: JSON, in request: ActionRequest) -> HTTPProblem {
        let detail = request.schemas[parent].map { Self.missing($0, key) } ?? "No \(parent) \(key.serializedString())"
        if case .children(_, _, _, let foreignKey) = request.route, foreignKey.name == field {
            return HTTPProblem.notFound(detail)
        }
        return HTTPProblem.invalidFields([FieldProblem(field: field, detail: detail)])
    }

    static func missing(_ schema: ResourceSchema, _ key: JSON) -> String {
        "No \(schema.name) with \(schema.key.name) \(key.serializedString())"
    }
}
