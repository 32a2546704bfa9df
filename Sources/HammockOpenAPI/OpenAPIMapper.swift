import HammockJSON
import HammockSchema
import HammockServer

/// Maps an OpenAPI document (as JSON, either dialect) to a Hammock configuration: see ``OpenAPIImport``.
struct OpenAPIMapper {
    let schemas: DocumentSchemas
    var notes: [OpenAPIImport.Note] = []
    private(set) var configuration: JSON = .object(JSONObject())
    private(set) var resourceNames: [String] = []
    private(set) var stubPlaces: [String] = []
    /// The path every route is served under (from the first server), which the stubs' `Location`s add.
    private(set) var basePath: String?
    /// The security schemes some operation's requirements name (those the mock can check).
    var usedSecuritySchemes = Set<String>()

    /// Made-up records for a resource the document gives no example of.
    static let generatedCount = 10
    /// The methods an OpenAPI path item may hold, in the order they are read.
    static let methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    init(schemas: DocumentSchemas) { self.schemas = schemas }

    struct Operation {
        var method: String
        var path: String
        var segments: [Segment]
        var object: JSONObject
        var place: String { "\(method) \(path)" }
    }

    enum Segment: Equatable {
        case literal(String)
        case parameter(String)
        /// A parameter inside a segment, such as `{month}.csv`.
        case partial(String)
    }

    /// A collection and its items that may become a resource.
    struct Candidate {
        var name: String
        var collection: [String: Operation] = [:]
        var item: [String: Operation] = [:]
        var itemParameter: String?
        /// `/parents/{parentId}/name` operations, by parent.
        var nested: [(parent: String, parameter: String, operations: [String: Operation])] = []
    }

    /// A field of a resource made, with the property schema it came from.
    struct Field {
        var name: String
        var type: FieldType
        var schema: JSON
        var isRequired = false
        var defaultValue: JSON?
        /// Sent by clients, never answered (`writeOnly: true`).
        var isWriteOnly = false
    }

    /// A resource made, before it is written as configuration.
    struct Made {
        var name: String
        var key: String
        var keyIsClientChosen: Bool
        /// How the server makes a string key a create leaves out, if it does.
        var keyFormat: MockResource.KeyFormat?
        var fields: [Field]
        var parents: [(resource: String, foreignKey: String)] = []
        var actions: [String]
        var records: [JSON] = []
        /// Whether answers leave out null members (the document allows no null for some optional one).
        var omitsNulls = false
        /// The fields whose nulls answers leave out.
        var nullOmitted: [String] = []
        /// The lists' documented query parameters mapped onto the query language (`limit` → `_limit`).
        var queryNames: [String: String] = [:]
        /// Members the server fills when a create leaves them out (`created`, `confirmationCode`).
        var madeFields: [String: MockResource.MadeValue] = [:]
        /// An action's documented success status where it is not Hammock's usual one.
        var successStatuses: [MockResource.Actions: Int] = [:]
        /// The object the list's records are answered in, where the document wraps them.
        var listEnvelope: MockResource.ListEnvelope?
        /// Whether the document has the top-level collection (`/messages`), or lists them only nested.
        var servesTopLevel = true
        /// Whether the key is `readOnly` and made by the server: one a create sends is ignored.
        var keyIsReadOnly = false
        /// How many records a list answers unless asked: its limit's documented default, or its `maxItems`.
        var defaultPageSize: Int?
        /// The keys the document's examples name (`GET /vector_stores/vs_abc123`): made records take them.
        var exampleKeys: [JSON] = []
        /// Whether the records have their key as a member; a document's `Pet` without an `id` has its key
        /// only in paths, and answers never show the one the store makes.
        var answersKey = true
        /// The foreign keys the document never allows to be null: their records are deleted with their
        /// parent, where a `null` key would break the schema (a task of a deleted project).
        var deletedWithParent: Set<String> = []
    }

    // MARK: The whole document

    mutating func map() {
        let root = schemas.root.objectValue ?? JSONObject()
        var output = JSONObject()
        // A mock from a document keeps its records in memory: an SQLite file beside a team's API document
        // would be a surprise (`--store` chooses another).
        output["store"] = "memory"
        basePath = serverPath(root["servers"])
        var operations = collectOperations(root)
        // Every path under one literal prefix (`/v2/Flows`, `/v2/Flows/{Sid}`): the prefix joins the base
        // path, so the collections under it become resources as they would at the root.
        if let prefix = Self.commonPrefix(operations) {
            let joined = (basePath ?? "") + "/" + prefix.joined(separator: "/")
            if MockServer.Options.isValidBasePath(joined), let normalized = MockServer.Options.normalizedBasePath(joined) {
                basePath = normalized
                for index in operations.indices { operations[index].segments.removeFirst(prefix.count) }
            }
        }
        if let basePath { output["basePath"] = .string(basePath) }
        noteWhatIsNotMocked(root, operations: operations)

        var made: [Made] = []
        var claimed = Set<String>()
        for candidate in candidates(operations) {
            guard let resource = resource(from: candidate, madeSoFar: made, claimed: &claimed) else { continue }
            made.append(resource)
        }
        made = Self.parentsFirst(made)
        resourceNames = made.map(\.name)

        var resources: [JSON] = []
        var data = JSONObject()
        var generate = JSONObject()
        for resource in made {
            resources.append(configuration(of: resource))
            if !resource.records.isEmpty {
                data[resource.name] = .array(resource.records)
            } else {
                generate[resource.name] = generation(of: resource)
            }
        }
        var routes: [JSON] = []
        let resourcePaths = Set(made.map(\.name))
        for operation in Self.specificFirst(operations.filter { !claimed.contains($0.place) }) {
            guard var route = stub(for: operation) else { continue }
            // An action on a record (`POST /tasks/{taskId}/complete`) answers 404 for a record there is
            // none of, as the API would; it looks as if it read or changed the record, which it does not.
            if operation.segments.count >= 2, case .literal(let first) = operation.segments[0], resourcePaths.contains(first),
                case .parameter(let parameter) = operation.segments[1]
            {
                route["requires"] = [parameter: .string(first)]
                if !notes.contains(where: { $0.place == operation.place }) {
                    notes.append(
                        .init(
                            place: operation.place,
                            message: "a stub with a fixed answer: the records of \(first) are not read or changed by it"))
                }
            }
            routes.append(route)
            stubPlaces.append(operation.place)
        }
        if !resources.isEmpty { output["resources"] = .array(resources) }
        if !data.isEmpty { output["data"] = .object(data) }
        if !generate.isEmpty { output["generate"] = .object(generate) }
        if !routes.isEmpty { output["routes"] = .array(routes) }
        if let validation = validation(for: operations) { output["validation"] = validation }
        if let login = login(root) { output["auth"] = login }
        let webhooks = webhooks(for: operations)
        if !webhooks.isEmpty { output["webhooks"] = .array(webhooks) }
        configuration = .object(output)
    }

    /// The path of the first server's URL (its variables at their defaults), when it has one.
    mutating func serverPath(_ servers: JSON?) -> String? {
        guard case .array(let list)? = servers, case .object(let server)? = list.first,
            case .string(var url)? = server["url"]
        else { return nil }
        for (name, variable) in server["variables"]?.objectValue ?? JSONObject() {
            if case .string(let value)? = variable.objectValue?["default"] { url = url.replacing("{\(name)}", with: value) }
        }
        if let scheme = url.firstRange(of: "://") {
            let afterHost = url[scheme.upperBound...].firstIndex(of: "/") ?? url.endIndex
            url = String(url[afterHost...])
        }
        if let query = url.firstIndex(where: { $0 == "?" || $0 == "#" }) { url = String(url[..<query]) }
        guard url.hasPrefix("/"), url != "/" else { return nil }
        guard MockServer.Options.isValidBasePath(url), let normalized = MockServer.Options.normalizedBasePath(url) else {
            notes.append(
                .init(place: "servers[0].url", message: "the path '\(url)' cannot be a base path; routes are served from /"))
            return nil
        }
        if list.count > 1 {
            notes.append(.init(place: "servers", message: "served under the first server's path, \(normalized)"))
        }
        return normalized
    }

    /// The literal segments every operation's path starts with, when after them each path goes on with a
    /// literal (`/v2/Flows…`, `/v2/Calls…`): `["v2"]`. `nil` when there are none, when an operation is at
    /// the prefix itself (`/users` beside `/users/{id}`: a collection, not a prefix), or when a parameter
    /// follows it.
    static func commonPrefix(_ operations: [Operation]) -> [String]? {
        guard let first = operations.first else { return nil }
        var prefix: [String] = []
        for segment in first.segments {
            guard case .literal(let text) = segment else { break }
            prefix.append(text)
        }
        for operation in operations.dropFirst() {
            var shared = 0
            while shared < prefix.count, shared < operation.segments.count, operation.segments[shared] == .literal(prefix[shared])
            {
                shared += 1
            }
            prefix.removeLast(prefix.count - shared)
        }
        // Keep one literal after the prefix in every path: that one names the collection.
        while !prefix.isEmpty {
            let count = prefix.count
            let goesOn = operations.allSatisfy { operation in
                guard operation.segments.count > count, case .literal = operation.segments[count] else { return false }
                return true
            }
            if goesOn { return prefix }
            prefix.removeLast()
        }
        return nil
    }

    func collectOperations(_ root: JSONObject) -> [Operation] {
        var operations: [Operation] = []
        for (path, value) in root["paths"]?.objectValue ?? JSONObject() {
            guard case .object(let item)? = schemas.resolve(value) else { continue }
            let segments = Self.segments(of: path)
            for method in Self.methods {
                guard case .object(var operation)? = item[method] else { continue }
                // Parameters of the path item apply to each of its operations, unless an operation redefines one.
                if case .array(let shared)? = item["parameters"] {
                    let own = operation["parameters"]?.arrayValue ?? []
                    operation["parameters"] = .array(own + shared)
                }
                operations.append(Operation(method: method.uppercased(), path: path, segments: segments, object: operation))
            }
        }
        return operations
    }

    static func segments(of path: String) -> [Segment] {
        path.split(separator: "/").map { part in
            if part.hasPrefix("{"), part.hasSuffix("}"), part.count > 2,
                !part.dropFirst().dropLast().contains(where: { "{}".contains($0) })
            {
                return .parameter(String(part.dropFirst().dropLast()))
            }
            return part.contains("{") ? .partial(String(part)) : .literal(String(part))
        }
    }

    mutating func noteWhatIsNotMocked(_ root: JSONObject, operations: [Operation]) {
        for (name, _) in root["webhooks"]?.objectValue ?? JSONObject() {
            notes.append(
                .init(
                    place: "webhooks.\(name)",
                    message: "not sent: the document names no URL to send it to; a configuration's webhooks can"))
        }
    }

    // MARK: Callbacks

    /// An operation's callbacks as the configuration's webhooks: each (URL expression, method) of each
    /// callback follows the operation's 2xx answer, to the URL its runtime expression reads (`{$request.body#/callbackUrl}`
    /// becomes `{{request.body./callbackUrl}}`), with its body's example. A callback whose expression the
    /// mock cannot read (`$url`, `$method`) is noted instead.
    mutating func webhooks(for operations: [Operation]) -> [JSON] {
        var made: [JSON] = []
        var names = Set<String>()
        for operation in operations {
            let route =
                operation.method + " /"
                + operation.segments.map { segment in
                    switch segment {
                    case .literal(let text): text
                    case .parameter(let name): ":" + name
                    case .partial: "*"
                    }
                }.joined(separator: "/")
            for (callback, value) in (operation.object["callbacks"]?.objectValue ?? JSONObject()).sorted(by: { $0.key < $1.key })
            {
                let place = "\(operation.place) callbacks.\(callback)"
                guard case .object(let expressions)? = schemas.resolve(value) else { continue }
                for (expression, item) in expressions.sorted(by: { $0.key < $1.key }) {
                    guard let url = Self.template(ofRuntimeExpression: expression) else {
                        notes.append(
                            .init(
                                place: place,
                                message:
                                    "not sent: the URL '\(expression.prefix(120))' reads what the mock cannot ($url, $method)"))
                        continue
                    }
                    guard case .object(let pathItem)? = schemas.resolve(item) else { continue }
                    for method in ["post", "put", "patch", "get", "delete"] {
                        guard case .object(let callOperation)? = pathItem[method] else { continue }
                        let base = Self.webhookName(operation.object["operationId"]?.stringValue ?? operation.place, callback)
                        var name = base
                        var number = 2
                        while !names.insert(name).inserted {
                            name = String(base.prefix(60)) + "-\(number)"
                            number += 1
                        }
                        var webhook: JSONObject = [
                            "name": .string(name), "on": .string(route), "method": .string(method.uppercased()),
                            "url": .string(url),
                        ]
                        let call = Operation(method: method.uppercased(), path: expression, segments: [], object: callOperation)
                        if let schema = requestSchema(of: call) { webhook["body"] = schemas.example(for: schema) }
                        if (try? Webhook(json: .object(webhook))) == nil, webhook["body"] != nil {
                            // An example with `{{` in it would read as placeholders.
                            webhook["body"] = nil
                            if (try? Webhook(json: .object(webhook))) != nil {
                                notes.append(
                                    .init(place: place, message: "sent without its example body, which reads as placeholders"))
                            }
                        }
                        guard (try? Webhook(json: .object(webhook))) != nil else {
                            notes.append(.init(place: place, message: "not sent: '\(expression.prefix(120))' makes no webhook"))
                            continue
                        }
                        made.append(.object(webhook))
                    }
                }
            }
        }
        return made
    }

    /// `{$request.body#/callbackUrl}?id={$request.query.id}` as a template; `nil` when it reads what the
    /// mock cannot. OpenAPI's runtime expressions: `$request.body#/…`, `$request.query.…`, `$request.header.…`,
    /// `$request.path.…`, `$response.body#/…`, `$response.header.…`, `$statusCode`.
    static func template(ofRuntimeExpression expression: String) -> String? {
        var output = ""
        var rest = Substring(expression)
        while let open = rest.firstIndex(of: "{") {
            output += rest[..<open]
            guard let close = rest[open...].firstIndex(of: "}") else { return nil }
            let inner = rest[rest.index(after: open)..<close]
            rest = rest[rest.index(after: close)...]
            guard let (prefix, replacement) = Self.runtimeExpressions.first(where: { inner.hasPrefix($0.0) }) else {
                return nil
            }
            let placeholder = replacement + inner.dropFirst(prefix.count)
            output += "{{" + placeholder + "}}"
        }
        return output + rest
    }

    /// OpenAPI's runtime expressions the mock reads, and the placeholder each becomes (its rest kept).
    static let runtimeExpressions: [(String, String)] = [
        ("$statusCode", "response.status"), ("$request.body#", "request.body."), ("$response.body#", "response.body."),
        ("$request.query.", "request.query."), ("$request.header.", "request.headers."), ("$request.path.", "path."),
        ("$response.header.", "response.headers."),
    ]

    /// `createTask-taskDue`: the operation's id (or place) and the callback's name, as a webhook may be named.
    static func webhookName(_ operation: String, _ callback: String) -> String {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
        let name = (operation + "-" + callback).map { allowed.contains($0) ? $0 : "-" }
        return String(String(name).prefix(64))
    }

    // MARK: Resources

    /// Collections, items and nested collections, by name in the order the document first names them.
    func candidates(_ operations: [Operation]) -> [Candidate] {
        var order: [String] = []
        var byName: [String: Candidate] = [:]
        func touch(_ name: String) {
            if byName[name] == nil {
                byName[name] = Candidate(name: name)
                order.append(name)
            }
        }
        for operation in operations {
            let segments = operation.segments
            if segments.count == 1, case .literal(let name) = segments[0] {
                touch(name)
                byName[name]?.collection[operation.method] = operation
            } else if segments.count == 2, case .literal(let name) = segments[0], case .parameter(let parameter) = segments[1] {
                touch(name)
                if byName[name]?.itemParameter == nil || byName[name]?.itemParameter == parameter {
                    byName[name]?.itemParameter = parameter
                    byName[name]?.item[operation.method] = operation
                }
            } else if segments.count == 3, case .literal(let parent) = segments[0], case .parameter(let parameter) = segments[1],
                case .literal(let name) = segments[2]
            {
                touch(name)
                if let index = byName[name]?.nested.firstIndex(where: { $0.parent == parent }) {
                    byName[name]?.nested[index].operations[operation.method] = operation
                } else {
                    byName[name]?.nested.append((parent, parameter, [operation.method: operation]))
                }
            }
        }
        // A parent before the resources nested under it, whatever the document's order: `/owners/{id}/cats`
        // written before `/owners` still makes cats the owners' children.
        var ordered: [String] = []
        var waiting = order
        while !waiting.isEmpty {
            var later: [String] = []
            for name in waiting {
                let ready =
                    byName[name]?.nested.allSatisfy {
                        $0.parent == name || byName[$0.parent] == nil || ordered.contains($0.parent)
                    }
                    ?? true
                if ready { ordered.append(name) } else { later.append(name) }
            }
            // A cycle of parents (a/{id}/b and b/{id}/a): the rest in document order.
            if later.count == waiting.count {
                ordered += later
                break
            }
            waiting = later
        }
        return ordered.compactMap { byName[$0] }
    }

    /// The resource a candidate becomes, claiming the operations it answers; `nil` when its records have
    /// no JSON object schema anywhere (then its operations are stubs).
    mutating func resource(from candidate: Candidate, madeSoFar: [Made], claimed: inout Set<String>) -> Made? {
        // A name a resource cannot have (a line break, a space, `%`) is served by stubs, as written.
        guard ResourceSchema.isValidName(candidate.name) else { return nil }
        // A collection whose records nothing reads (no list, no item, no nested list) is an operation that
        // answers a request (`POST /embeddings`, `POST /login`), not a store: its operations are stubs.
        guard
            candidate.collection["GET"] != nil || !candidate.item.isEmpty
                || candidate.nested.contains(where: { $0.operations["GET"] != nil })
        else { return nil }
        // A POST that answers another shape than it sends is a stub beside the resource, not its create.
        var candidate = candidate
        if let post = candidate.collection["POST"], !createsRecord(post) { candidate.collection["POST"] = nil }
        for index in candidate.nested.indices {
            if let post = candidate.nested[index].operations["POST"], !createsRecord(post) {
                candidate.nested[index].operations["POST"] = nil
            }
        }
        // Notes are kept only if the candidate becomes a resource: otherwise its operations are plain stubs.
        var notes: [OpenAPIImport.Note] = []
        let listSchema = candidate.collection["GET"].flatMap { successSchema(of: $0) }
        let nestedListSchemas = candidate.nested.compactMap { $0.operations["GET"].flatMap { successSchema(of: $0) } }
        // A list in an envelope makes a resource only beside the collection's other operations: a lone
        // `GET /search` answering `{"hits": [...]}` is a question answered, a stub.
        var envelope = envelope(of: listSchema)
        if envelope != nil, candidate.item.isEmpty, candidate.collection["POST"] == nil, candidate.nested.isEmpty {
            envelope = nil
        }
        // The documented example's other members (`"object": "list"`) are what the mock answers beside the records.
        if var found = envelope, let list = candidate.collection["GET"],
            case .object(let example)? = successExamples(of: list).first
        {
            for (name, value) in example
            where ![found.envelope.items, found.envelope.total, found.envelope.hasMore, found.envelope.nextCursor].contains(name)
            {
                found.envelope.members[name] = value
            }
            envelope = found
        }
        let sources: [JSON?] =
            [candidate.item["GET"].flatMap { successSchema(of: $0) }, schemas.items(listSchema), envelope?.itemSchema]
            + nestedListSchemas.map { schemas.items($0) }
            + [
                candidate.collection["POST"].flatMap { successSchema(of: $0) },
                candidate.collection["POST"].flatMap { requestSchema(of: $0) },
                candidate.item["PUT"].flatMap { requestSchema(of: $0) },
                candidate.item["PATCH"].flatMap { requestSchema(of: $0) },
            ]
        guard let recordSchema = sources.lazy.compactMap({ $0 }).first(where: { schemas.recordProperties($0) != nil }),
            let properties = schemas.recordProperties(recordSchema)
        else { return nil }
        guard candidate.collection.isEmpty == false || candidate.item.isEmpty == false || candidate.nested.isEmpty == false
        else { return nil }

        // The key: `id` if the records have one, else the item path's parameter if they have that (in any
        // case: Twilio's `/Flows/{Sid}` names the member `sid`). Records with neither keep a generated `id`
        // that answers leave out.
        let parameter = candidate.itemParameter ?? "id"
        let key =
            properties["id"] != nil
            ? "id"
            : properties[parameter] != nil
                ? parameter : properties.keys.sorted().first { $0.lowercased() == parameter.lowercased() } ?? "id"
        let keyType = properties[key].map { schemas.fieldType($0) }
        let keyIsClientChosen = keyType != nil && !(key == "id" && keyType == .integer)

        // Parents, from nested collections whose records carry the parent's key.
        var parents: [(resource: String, foreignKey: String)] = []
        var nestedClaimed: [Operation] = []
        for nested in candidate.nested {
            let singular = Inflection.singular(of: nested.parent)
            let foreignKey = [nested.parameter, singular + "Id", singular + "_id"].first { properties[$0] != nil && $0 != key }
            guard madeSoFar.contains(where: { $0.name == nested.parent }), let foreignKey else {
                let reason =
                    madeSoFar.contains(where: { $0.name == nested.parent })
                    ? "its records carry no \(nested.parameter), \(singular)Id or \(singular)_id to link them"
                    : "\(nested.parent) is no resource"
                for operation in nested.operations.values where ["GET", "POST"].contains(operation.method) {
                    // Kept either way: a nested path that is not nested surprises.
                    self.notes.append(.init(place: operation.place, message: "a stub, not a nested list: \(reason)"))
                }
                continue
            }
            parents.append((nested.parent, foreignKey))
            nestedClaimed += nested.operations.values.filter { ["GET", "POST"].contains($0.method) }
        }
        let foreignKeys = Set(parents.map(\.foreignKey))
        // Required members become required fields, but not what the server writes (`readOnly`), which a
        // create does not send; defaults that fit the field's type are kept. What a create must carry is
        // what the create's body schema requires, nothing when it requires nothing (OpenAI's
        // `CreateThreadRequest`); only without a body schema, the record's (where it may mean "always
        // answered" rather than "always sent").
        let createSchema = (candidate.collection["POST"] ?? candidate.nested.lazy.compactMap { $0.operations["POST"] }.first)
            .flatMap { requestSchema(of: $0) }
        let requiredSource = createSchema ?? recordSchema
        let required = Set(schemas.object(requiredSource)?["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        // What every answer must carry: the record's own `required`, read-only members included.
        let alwaysAnswered = Set(schemas.object(recordSchema)?["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        var fields: [Field] = []
        for (name, schema) in properties where !foreignKeys.contains(name) && !(name == key && !keyIsClientChosen) {
            let type = schemas.fieldType(schema)
            let property = schemas.object(schema) ?? JSONObject()
            var field = Field(name: name, type: type, schema: schema)
            if name != key {
                field.isRequired = required.contains(name) && property["readOnly"]?.boolValue != true
                field.isWriteOnly = property["writeOnly"]?.boolValue == true
                if let value = property["default"],
                    case .success(let converted) = ResourceSchema.convert(value, to: type, encoding: .json),
                    !converted.isNull
                {
                    field.defaultValue = converted
                }
            }
            fields.append(field)
        }
        // Records that hold nothing but the key the server makes cannot be a resource (nothing a write
        // could set): their operations stay stubs.
        guard !fields.isEmpty else { return nil }

        // The actions the document lists, and the operations they answer.
        var actions: [String] = []
        var answered: [(Operation, MockResource.Actions, hammockStatus: Int)] = []
        if let list = candidate.collection["GET"] {
            if listSchema == nil || schemas.items(listSchema) != nil || envelope != nil {
                actions.append("list")
                answered.append((list, .list, 200))
            } else {
                notes.append(
                    .init(place: list.place, message: "a stub: it answers an object, and a resource's list answers an array"))
            }
        }
        let nestedLists = nestedClaimed.filter { $0.method == "GET" }
        if !actions.contains("list"), !nestedLists.isEmpty { actions.append("list") }
        answered += nestedLists.map { ($0, .list, 200) }
        if let show = candidate.item["GET"] {
            actions.append("show")
            answered.append((show, .show, 200))
        }
        let creates = [candidate.collection["POST"]].compactMap { $0 } + nestedClaimed.filter { $0.method == "POST" }
        if !creates.isEmpty {
            actions.append("create")
            answered += creates.map { ($0, .create, 201) }
        }
        let updates = [candidate.item["PUT"], candidate.item["PATCH"]].compactMap { $0 }
        if !updates.isEmpty {
            actions.append("update")
            answered += updates.map { ($0, .update, 200) }
        }
        if let delete = candidate.item["DELETE"] {
            actions.append("delete")
            answered.append((delete, .delete, 204))
        }
        guard !actions.isEmpty else { return nil }
        // An integer `id` is made by the store; a key the create's body requires (and that is not
        // `readOnly`) is the client's, as documented. Another string key is made as the document describes
        // it: its pattern, else a UUID (for `format: uuid` and for a plain string alike). Any other key is
        // one a create must carry, which the document does not say: noted.
        let createRequiresKey =
            schemas.object(createSchema)?["required"]?.arrayValue?.contains(.string(key)) == true
            && schemas.object(properties[key] ?? .null)?["readOnly"]?.boolValue != true
        let serverMakesKey = keyIsClientChosen && !createRequiresKey
        var keyFormat: MockResource.KeyFormat?
        if serverMakesKey, let keySchema = properties[key], keyType == .string {
            let property = schemas.object(keySchema) ?? JSONObject()
            if let pattern = property["pattern"]?.stringValue {
                var probe = MockResource(candidate.name, fields: [MockResource.Field(key, .string)], primaryKey: key)
                probe.keyFormat = .pattern(pattern)
                do {
                    try probe.checkKeyFormat()
                    keyFormat = probe.keyFormat
                } catch {
                    keyFormat = .uuid
                    notes.append(
                        .init(
                            place: candidate.name,
                            message: "its keys are made as UUIDs, not by the pattern '\(pattern.prefix(100))': \(error.message)"))
                }
            } else {
                keyFormat = .uuid
            }
        } else if serverMakesKey, actions.contains("create") {
            notes.append(
                .init(
                    place: candidate.name,
                    message:
                        "its key '\(key)' is not a generated integer or a string, so a create must carry it"
                ))
        }
        // An action whose operation documents another success status answers that one (a create
        // documented as 200, a delete as 200); where two operations of one action disagree, the first
        // sets it and the other is noted.
        var statuses: [MockResource.Actions: Int] = [:]
        for (operation, action, status) in answered {
            claimed.insert(operation.place)
            let documented = successStatuses(of: operation)
            let answers = statuses[action] ?? status
            guard !documented.isEmpty, !documented.contains(answers) else { continue }
            if statuses[action] == nil, let first = documented.first {
                statuses[action] = first
                continue
            }
            let listed = documented.map(String.init).joined(separator: ", ")
            notes.append(.init(place: operation.place, message: "answers \(answers); the document says \(listed)"))
        }

        // A field a create left out (neither required nor with a default) has no value: where the document
        // does not allow null for one, answers leave such members out (`omitNulls`), as an optional member
        // is. One the record's schema requires in every answer but a create need not send (read-only, the
        // server's to fill) is absent then, which the document does not allow: noted.
        let notNullable = fields.filter {
            $0.name != key && !$0.isRequired && !$0.isWriteOnly && $0.defaultValue == nil && !schemas.allowsNull($0.schema)
        }.map(\.name)
        // The server fills those when the record is made: a date as the write's moment, an id or a code as
        // its format or pattern says, anything else as the schema's example. Only what cannot be made so
        // is noted.
        var madeFields: [String: MockResource.MadeValue] = [:]
        var unfilled: [String] = []
        for name in notNullable where alwaysAnswered.contains(name) {
            guard let index = fields.firstIndex(where: { $0.name == name }) else { continue }
            if let made = madeValue(of: fields[index]) {
                madeFields[name] = made
            } else if case .success(let value) = ResourceSchema.convert(
                schemas.example(for: fields[index].schema), to: fields[index].type, encoding: .json), !value.isNull
            {
                fields[index].defaultValue = value
            } else {
                unfilled.append(name)
            }
        }
        if !unfilled.isEmpty, actions.contains("create") {
            notes.append(
                .init(
                    place: candidate.name,
                    message: "a create leaves out \(unfilled.joined(separator: ", ")), which every answer should carry"))
        }

        var made = Made(
            name: candidate.name, key: key, keyIsClientChosen: keyIsClientChosen, keyFormat: keyFormat, fields: fields,
            parents: parents, actions: actions)
        made.omitsNulls = !notNullable.isEmpty
        // Those, and the optional nullable ones (either way is right for them); never a nullable member every
        // answer carries (OpenAI's `name: string | null`, required), which is answered `null`.
        let optional = fields.filter { $0.name != key && !$0.isRequired && !alwaysAnswered.contains($0.name) }.map(\.name)
        made.nullOmitted = Array(Set(notNullable + optional))
        made.madeFields = madeFields
        made.successStatuses = statuses
        made.listEnvelope = envelope?.envelope
        // Listed and created only under a parent in the document: no `/messages` the document does not have.
        made.servesTopLevel = !(candidate.collection.isEmpty && !nestedClaimed.isEmpty && !parents.isEmpty)
        made.answersKey = properties[key] != nil
        made.keyIsReadOnly =
            keyFormat != nil && schemas.object(properties[key] ?? .null)?["readOnly"]?.boolValue == true
        made.deletedWithParent = Set(
            parents.map(\.foreignKey).filter { name in properties[name].map { !schemas.allowsNull($0) } == true })
        let lists = [candidate.collection["GET"]].compactMap { $0 } + nestedLists
        let (queryNames, unmapped) = self.queryNames(
            of: lists, fields: fields.map(\.name) + [key] + parents.map(\.foreignKey), key: key,
            dates: fields.filter { $0.type == .date }.map(\.name))
        made.queryNames = queryNames
        made.defaultPageSize = defaultPageSize(of: lists, queryNames: queryNames, envelope: made.listEnvelope)
        for (place, names) in unmapped {
            notes.append(
                .init(
                    place: place,
                    message:
                        "the query parameter\(names.count == 1 ? "" : "s") \(names.joined(separator: ", ")) \(names.count == 1 ? "is" : "are") not used: the list answers as if \(names.count == 1 ? "it were" : "they were") not sent"
                ))
        }
        made.records = exampleRecords(candidate: candidate, nested: nestedLists, key: key)
        // The keys the document's example requests name are records' keys, so `GET /vector_stores/vs_abc123`
        // as the document shows it answers a record: the first records made take them, or copies of the
        // first example record do. Not for a key the store generates.
        if keyIsClientChosen, let keyType {
            let examples = documentedKeys(of: candidate).filter { example in
                guard case .success(let converted) = ResourceSchema.convert(example, to: keyType, encoding: .json) else {
                    return false
                }
                return converted == example
            }
            if made.records.isEmpty {
                made.exampleKeys = examples
            } else if case .object(let first)? = made.records.first {
                for example in examples where !made.records.contains(where: { $0[key] == example }) {
                    var copy = first
                    copy[key] = example
                    made.records.append(.object(copy))
                }
            }
        }
        self.notes += notes
        return made
    }

    /// The envelope a list answers its records in, when its schema is an object with one array of
    /// records (`data`, `items`, `results`, … or the only one): its items member, a total (an integer
    /// named `total`, `total_count`, `count`), a has-more flag (a boolean named `has_more`, `hasMore`),
    /// and the other required or fixed members with their examples (`"object": "list"`).
    /// The page a list answers when the request asks for none, as the document has it: the default of
    /// the parameter read as `_limit` or `_per_page` (chat.yaml's `limit` defaults to 20), and at most the
    /// answer's `maxItems` (a list documented as at most 100 pets must not answer 101); the smallest of
    /// the lists'. `nil` where the document says neither.
    func defaultPageSize(of lists: [Operation], queryNames: [String: String], envelope: MockResource.ListEnvelope?) -> Int? {
        var sizes: [Int] = []
        for list in lists {
            for value in list.object["parameters"]?.arrayValue ?? [] {
                guard case .object(let parameter)? = schemas.resolve(value), parameter["in"]?.stringValue == "query",
                    let name = parameter["name"]?.stringValue, ["_limit", "_per_page"].contains(queryNames[name] ?? ""),
                    let size = schemas.object(parameter["schema"])?["default"]?.intValue, size > 0
                else { continue }
                sizes.append(size)
            }
            var array = successSchema(of: list)
            if let envelope { array = schemas.object(array)?["properties"]?[envelope.items] }
            if let most = schemas.object(array)?["maxItems"]?.intValue, most > 0 { sizes.append(most) }
        }
        return sizes.min().map { min($0, 100_000) }
    }

    func envelope(of listSchema: JSON?) -> (envelope: MockResource.ListEnvelope, itemSchema: JSON)? {
        guard let object = schemas.object(listSchema), schemas.items(listSchema) == nil,
            let properties = object["properties"]?.objectValue
        else { return nil }
        let arrays = Set(
            properties.compactMap { name, property in
                schemas.items(property).map { schemas.recordProperties($0) != nil } == true ? name : nil
            })
        let preferred = ["data", "items", "results", "records", "entries", "values", "list", "content"]
        guard let items = arrays.count == 1 ? arrays.first : preferred.first(where: { arrays.contains($0) }),
            let itemSchema = properties[items].flatMap({ schemas.items($0) })
        else { return nil }
        func named(_ names: Set<String>, type: String) -> String? {
            properties.keys.sorted().first { name in
                names.contains(name.lowercased().filter { $0 != "_" })
                    && schemas.object(properties[name]).map { self.schemas.type(of: $0) } == type
            }
        }
        let total = named(["total", "totalcount", "count", "totalresults", "totalitems"], type: "integer")
        let hasMore = named(["hasmore", "more", "hasnext", "hasnextpage"], type: "boolean")
        let nextCursor = named(
            ["nextcursor", "cursor", "nextpagetoken", "nexttoken", "continuationtoken", "nextpagecursor"], type: "string")
        let required = Set(object["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        var members = JSONObject()
        for (name, property) in properties where ![items, total, hasMore, nextCursor].contains(name) {
            let fixed = schemas.object(property).map { $0["enum"] != nil || $0["const"] != nil } ?? false
            guard required.contains(name) || fixed else { continue }
            members[name] = schemas.example(for: property)
        }
        return (
            MockResource.ListEnvelope(
                items: items, total: total, hasMore: hasMore, nextCursor: nextCursor, members: members),
            itemSchema
        )
    }

    /// How the server makes a member a create leaves out but every answer carries, where its schema says
    /// what it is: a `date-time` (or an integer or number named like a time, `created`, `updated_at`) is the
    /// write's moment, a `date` its day, a `uuid` a new UUID, a string with a pattern the mock can make one
    /// that matches. `nil`: the schema's example stands in.
    func madeValue(of field: Field) -> MockResource.MadeValue? {
        guard let property = schemas.object(field.schema) else { return nil }
        let format = property["format"]?.stringValue
        switch field.type {
        case .date: return format == "date" ? .today : .now
        case .integer, .float:
            // Seconds since 1970 (OpenAI's `created`, `created_at`): by name only, as a number says no more.
            let name = field.name.lowercased().filter { $0 != "_" && $0 != "-" }
            let timeNames: Set<String> = ["created", "updated", "modified", "timestamp", "createdon", "updatedon"]
            return timeNames.contains(name) || field.name.hasSuffix("_at") || field.name.hasSuffix("At") ? .now : nil
        case .string:
            if format == "date-time" { return .now }
            if format == "date" { return .today }
            if format == "uuid" { return .format(.uuid) }
            if case .string(let pattern)? = property["pattern"], schemas.textPattern(property) != nil {
                return .format(.pattern(pattern))
            }
            return nil
        default: return nil
        }
    }

    /// Records from the documented examples: of the item's GET and of the lists, each once.
    /// The examples the document gives the item path's parameter (`example`, each of `examples`, its
    /// schema's `example`), on the item's operations, strings and integers only, at most ten.
    func documentedKeys(of candidate: Candidate) -> [JSON] {
        guard let parameter = candidate.itemParameter else { return [] }
        var found: [JSON] = []
        for method in candidate.item.keys.sorted() {
            for value in candidate.item[method]?.object["parameters"]?.arrayValue ?? [] {
                guard case .object(let given)? = schemas.resolve(value), given["in"]?.stringValue == "path",
                    given["name"]?.stringValue == parameter
                else { continue }
                var examples: [JSON] = []
                if let example = given["example"] { examples.append(example) }
                for name in (given["examples"]?.objectValue ?? JSONObject()).keys.sorted() {
                    if let example = schemas.resolve(given["examples"]?[name])?.objectValue?["value"] { examples.append(example) }
                }
                if let example = schemas.object(given["schema"])?["example"] { examples.append(example) }
                for example in examples where found.count < 10 && !found.contains(example) {
                    switch example {
                    case .string(let text) where !text.isEmpty && ResourceSchema.unreachableKeyProblem(text) == nil:
                        found.append(example)
                    case .integer: found.append(example)
                    default: continue
                    }
                }
            }
        }
        return found
    }

    func exampleRecords(candidate: Candidate, nested: [Operation], key: String) -> [JSON] {
        var records: [JSON] = []
        func add(_ record: JSON) {
            guard case .object(let object) = record else { return }
            if let value = object[key], records.contains(where: { $0.objectValue?[key] == value }) { return }
            if !records.contains(record) { records.append(record) }
        }
        for list in [candidate.collection["GET"]].compactMap({ $0 }) + nested {
            // An envelope's example holds the records under its items member.
            let items = envelope(of: successSchema(of: list))?.envelope.items
            for example in successExamples(of: list) {
                (items.flatMap { example[$0] } ?? example).arrayValue?.forEach(add)
            }
        }
        if let show = candidate.item["GET"] {
            successExamples(of: show).forEach(add)
        }
        return records
    }

    func configuration(of resource: Made) -> JSON {
        var object = JSONObject()
        object["name"] = .string(resource.name)
        var fields = JSONObject()
        for field in resource.fields {
            guard field.isRequired || field.defaultValue != nil || field.isWriteOnly else {
                fields[field.name] = .string(field.type.rawValue)
                continue
            }
            var details: JSONObject = ["type": .string(field.type.rawValue)]
            if field.isRequired { details["required"] = true }
            if field.isWriteOnly { details["writeOnly"] = true }
            if let value = field.defaultValue { details["default"] = value }
            fields[field.name] = .object(details)
        }
        object["fields"] = .object(fields)
        if resource.keyIsClientChosen || resource.key != "id" { object["primaryKey"] = .string(resource.key) }
        if let keyFormat = resource.keyFormat { object["keyFormat"] = keyFormat.configurationValue }
        if resource.keyIsReadOnly { object["keyReadOnly"] = true }
        if let size = resource.defaultPageSize { object["pageSize"] = .integer(size) }
        if resource.omitsNulls {
            // The list where some other member may be null (a nullable one every answer carries); else all.
            let nullable = resource.fields.contains { !resource.nullOmitted.contains($0.name) && $0.name != resource.key }
            object["omitNulls"] = nullable ? .array(resource.nullOmitted.sorted().map(JSON.string)) : true
        }
        if let envelope = resource.listEnvelope { object["listEnvelope"] = envelope.configurationValue }
        if !resource.servesTopLevel { object["topLevel"] = false }
        if !resource.answersKey { object["answersKey"] = false }
        if !resource.successStatuses.isEmpty {
            var statuses = JSONObject()
            for (name, action) in MockResource.Actions.names {
                if let status = resource.successStatuses[action] { statuses[name] = .integer(status) }
            }
            object["statuses"] = .object(statuses)
        }
        if !resource.madeFields.isEmpty {
            var made = JSONObject()
            for (name, value) in resource.madeFields.sorted(by: { $0.key < $1.key }) { made[name] = value.configurationValue }
            object["made"] = .object(made)
        }
        if !resource.queryNames.isEmpty {
            var names = JSONObject()
            for (name, target) in resource.queryNames.sorted(by: { $0.key < $1.key }) { names[name] = .string(target) }
            object["queryNames"] = .object(names)
        }
        if resource.actions.count < 5 { object["actions"] = .array(resource.actions.map { .string($0) }) }
        if !resource.parents.isEmpty {
            object["parents"] = .array(
                resource.parents.map { parent in
                    var link: JSONObject = ["resource": .string(parent.resource), "foreignKey": .string(parent.foreignKey)]
                    if resource.deletedWithParent.contains(parent.foreignKey) { link["onDelete"] = "cascade" }
                    return .object(link)
                })
        }
        return .object(object)
    }

    /// `generate`'s entry for a resource: a count, and rules from the schema (enums, bounds, formats).
    func generation(of resource: Made) -> JSON {
        var rules = JSONObject()
        for field in resource.fields {
            guard let schema = schemas.object(field.schema) else { continue }
            var rule = JSONObject()
            if case .array(let choices)? = schema["enum"], !choices.isEmpty {
                rule["oneOf"] = .array(choices)
            } else if field.type == .integer || field.type == .float {
                if let minimum = schema["minimum"], minimum.doubleValue != nil { rule["min"] = minimum }
                if let maximum = schema["maximum"], maximum.doubleValue != nil { rule["max"] = maximum }
            } else if field.type == .string, let pattern = schemas.textPattern(schema) {
                rule["pattern"] = .string(pattern.source)
            } else if field.type == .string, let format = schema["format"]?.stringValue {
                let kinds = ["email": "email", "uri": "url", "url": "url", "uuid": "uuid", "hostname": "slug"]
                if let kind = kinds[format] { rule["kind"] = .string(kind) }
            } else if field.type == .date, let format = schema["format"]?.stringValue {
                // A date-time's bounds with times make values with times, a date's without, whatever the name.
                rule["min"] = format == "date" ? "2015-01-01" : "2020-01-01T00:00:00Z"
                rule["max"] = format == "date" ? "2025-12-31" : "2025-12-31T23:59:59Z"
            } else if field.type == .json {
                // Made-up JSON would be null, which an array or object schema does not allow: its example instead.
                rule["oneOf"] = .array([schemas.example(for: field.schema)])
            }
            if !rule.isEmpty { rules[field.name] = .object(rule) }
        }
        guard !rules.isEmpty || !resource.exampleKeys.isEmpty else { return .integer(Self.generatedCount) }
        var generation: JSONObject = ["count": .integer(Self.generatedCount)]
        if !rules.isEmpty { generation["fields"] = .object(rules) }
        if !resource.exampleKeys.isEmpty { generation["keys"] = .array(resource.exampleKeys) }
        return .object(generation)
    }

    /// Resources with their parents before them (the order a configuration needs).
    static func parentsFirst(_ resources: [Made]) -> [Made] {
        var placed: [Made] = []
        var remaining = resources
        while !remaining.isEmpty {
            let names = Set(placed.map(\.name))
            let ready = remaining.firstIndex { $0.parents.allSatisfy { names.contains($0.resource) } } ?? 0
            var next = remaining.remove(at: ready)
            // A cycle of parents (a child of its own child) keeps the links that point back.
            next.parents = next.parents.filter { names.contains($0.resource) }
            placed.append(next)
        }
        return placed
    }

    // MARK: Operations' parts

    /// The documented success statuses (`2XX` and `default` are left out).
    func successStatuses(of operation: Operation) -> [Int] {
        (operation.object["responses"]?.objectValue ?? JSONObject()).keys.compactMap { Int($0) }.filter {
            (200...299).contains($0)
        }
        .sorted()
    }

    /// The response an operation is mocked with: the lowest 2xx, else `2XX`, else `default`, else the
    /// lowest documented; its status.
    func chosenResponse(of operation: Operation) -> (status: Int, response: JSONObject)? {
        let responses = operation.object["responses"]?.objectValue ?? JSONObject()
        let numbered = responses.keys.compactMap { key in Int(key).map { (key, $0) } }.sorted { $0.1 < $1.1 }
        let pick: (String, Int)? =
            numbered.first { (200...299).contains($0.1) } ?? (responses["2XX"] != nil ? ("2XX", 200) : nil)
            ?? (responses["default"] != nil ? ("default", 200) : nil) ?? numbered.first { (200...599).contains($0.1) }
        guard let (key, status) = pick else { return nil }
        return (status, schemas.resolve(responses[key])?.objectValue ?? JSONObject())
    }

    /// The JSON media type of a content map (`application/json`, or another `…+json`).
    static func jsonMedia(_ content: JSONObject) -> (type: String, media: JSONObject)? {
        for (type, media) in content {
            let lowered = type.lowercased()
            let essence = lowered.split(separator: ";").first.map(String.init) ?? lowered
            if essence == "application/json" || essence.hasSuffix("+json") || essence == "*/*", case .object(let object) = media {
                return (type, object)
            }
        }
        return nil
    }

    func successSchema(of operation: Operation) -> JSON? {
        guard let response = chosenResponse(of: operation)?.response, let content = response["content"]?.objectValue,
            let media = Self.jsonMedia(content)
        else { return nil }
        return media.media["schema"]
    }

    /// Whether a POST creates a record: it has a body, and most of the members it sends come back in its
    /// answer. One that answers another shape (`POST /embeddings` sends `input` and `model`, answers
    /// `data` and `usage`) is a request answered, not a record stored; with a body but without both
    /// schemas, it is taken as a create.
    func createsRecord(_ operation: Operation) -> Bool {
        // No body at all (`POST /jobs/run?force=true`): nothing to store.
        guard operation.object["requestBody"] != nil else { return false }
        guard let sent = schemas.recordProperties(requestSchema(of: operation)),
            let answered = schemas.recordProperties(successSchema(of: operation))
        else { return true }
        let kept = sent.keys.filter { answered[$0] != nil }.count
        return kept * 2 >= sent.count
    }

    /// The schema of an operation's body: its JSON one, else its form's (`multipart/form-data`,
    /// `application/x-www-form-urlencoded`), whose fields the server reads as a JSON body's members.
    func requestSchema(of operation: Operation) -> JSON? {
        guard case .object(let body)? = schemas.resolve(operation.object["requestBody"]),
            let content = body["content"]?.objectValue, let media = Self.jsonMedia(content) ?? Self.formMedia(content)
        else { return nil }
        return media.media["schema"]
    }

    /// The first form media type of a body's content, in name order.
    static func formMedia(_ content: JSONObject) -> (type: String, media: JSONObject)? {
        for type in content.keys.sorted() {
            let essence = type.lowercased().split(separator: ";").first.map(String.init) ?? ""
            guard essence == "multipart/form-data" || essence == "application/x-www-form-urlencoded",
                case .object(let media)? = content[type]
            else { continue }
            return (type, media)
        }
        return nil
    }

    /// The examples a media type gives: `example`, each of `examples` (their `value`), else the schema's.
    func examples(of media: JSONObject) -> [JSON] {
        if let example = media["example"] { return [example] }
        if case .object(let named)? = media["examples"], !named.isEmpty {
            return named.values.compactMap { schemas.resolve($0)?.objectValue?["value"] }
        }
        if let schema = schemas.object(media["schema"]), let given = schemas.givenExample(schema) { return [given] }
        // An array of one item's own example, where one item is right (not under `minItems: 2` or `maxItems: 0`).
        if let items = schemas.items(media["schema"]), let item = schemas.object(items), let given = schemas.givenExample(item),
            let array = schemas.object(media["schema"]), array["minItems"]?.intValue ?? 0 <= 1,
            array["maxItems"]?.intValue ?? 1 >= 1
        {
            return [.array([given])]
        }
        return []
    }

    func successExamples(of operation: Operation) -> [JSON] {
        guard let response = chosenResponse(of: operation)?.response, let content = response["content"]?.objectValue,
            let media = Self.jsonMedia(content)
        else { return [] }
        return examples(of: media.media)
    }

    // MARK: Stubs

    /// Stubs with literal segments before parameters at the first place they differ (`/users/login`
    /// before `/users/{name}`), otherwise in document order.
    static func specificFirst(_ operations: [Operation]) -> [Operation] {
        func rank(_ segment: Segment) -> Int {
            switch segment {
            case .literal: 0
            case .partial: 1
            case .parameter: 2
            }
        }
        return operations.enumerated().sorted { left, right in
            for (a, b) in zip(left.element.segments, right.element.segments) where rank(a) != rank(b) || a != b {
                if rank(a) != rank(b) { return rank(a) < rank(b) }
                break
            }
            return left.offset < right.offset
        }.map(\.element)
    }

    /// The stub route answering an operation, or `nil` (noted) when its path cannot be routed.
    mutating func stub(for operation: Operation) -> JSON? {
        let pattern = Self.routePattern(operation.segments)
        for case .partial(let text) in operation.segments {
            notes.append(.init(place: operation.place, message: "'\(text)' is matched as any one segment"))
        }
        do {
            _ = try PathPattern(pattern)
        } catch {
            notes.append(.init(place: operation.place, message: "not mocked: its path \(error.message)"))
            return nil
        }
        var route = JSONObject()
        route["method"] = .string(operation.method)
        route["path"] = .string(pattern)
        guard let (status, response) = chosenResponse(of: operation) else {
            notes.append(.init(place: operation.place, message: "documents no response; answers 200 with no body"))
            return .object(route)
        }
        route["status"] = .integer(status)
        let content = response["content"]?.objectValue ?? JSONObject()
        if let json = Self.jsonMedia(content) {
            let given = examples(of: json.media).first
            if given == nil, schemas.isUnresolvable(json.media["schema"]) {
                let reference = json.media["schema"]?.objectValue?["$ref"]?.stringValue ?? ""
                notes.append(
                    .init(
                        place: operation.place,
                        message: "answers no body: its schema's $ref '\(reference)' leads outside the document or around a cycle")
                )
            }
            route["body"] = given ?? schemas.example(for: json.media["schema"])
            if json.type.lowercased() != "application/json", !json.type.contains("*") {
                route["headers"] = .object(["Content-Type": .string(json.type)])
            }
        } else if let (type, media) = content.first(where: { _ in true }) {
            let text = (media.objectValue.map { examples(of: $0) } ?? []).first?.stringValue
            if let text {
                route["text"] = .string(text)
            } else {
                notes.append(.init(place: operation.place, message: "answers no body: no text example for \(type)"))
            }
            route["headers"] = .object(["Content-Type": .string(type)])
        }
        var headers = route["headers"]?.objectValue ?? JSONObject()
        for (name, value) in response["headers"]?.objectValue ?? JSONObject() where name.lowercased() != "content-type" {
            guard let header = schemas.resolve(value)?.objectValue else { continue }
            let example = header["example"] ?? schemas.object(header["schema"]).flatMap { schemas.givenExample($0) }
            switch example {
            case .string(var text)?:
                // The server adds the base path to a stub's relative Location; a documented one already has it.
                if name.lowercased() == "location", let basePath, text.hasPrefix(basePath + "/") {
                    text.removeFirst(basePath.count)
                }
                headers[name] = .string(text)
            case .integer(let number)?: headers[name] = .string(String(number))
            case .double(let number)?: headers[name] = .string(String(number))
            case .bool(let flag)?: headers[name] = .string(String(flag))
            default: continue
            }
        }
        if !headers.isEmpty { route["headers"] = .object(headers) }
        if let alternatives = alternatives(of: operation, answering: status) { route["alternatives"] = alternatives }
        return .object(route)
    }

    /// The answers a request may ask a stub for (`Prefer: code=404`, `Prefer: example=NAME`): every other
    /// documented status with its example (or a body made from its schema), and each named example.
    func alternatives(of operation: Operation, answering chosen: Int) -> JSON? {
        var alternatives: [JSON] = []
        let responses = operation.object["responses"]?.objectValue ?? JSONObject()
        for key in responses.keys.sorted() {
            guard let code = Int(key), (200...599).contains(code), case .object(let response)? = schemas.resolve(responses[key])
            else { continue }
            // 204, 205 and 304 carry no body.
            let allowsBody = ![204, 205, 304].contains(code)
            guard allowsBody, let json = Self.jsonMedia(response["content"]?.objectValue ?? JSONObject()) else {
                if code != chosen { alternatives.append(["status": .integer(code)]) }
                continue
            }
            var answer: JSONObject = ["status": .integer(code)]
            if json.type.lowercased() != "application/json", !json.type.contains("*") {
                answer["headers"] = .object(["Content-Type": .string(json.type)])
            }
            if case .object(let named)? = json.media["examples"], !named.isEmpty {
                for name in named.keys.sorted() {
                    guard let value = schemas.resolve(named[name])?.objectValue?["value"] else { continue }
                    var example = answer
                    example["name"] = .string(name)
                    example["body"] = value
                    alternatives.append(.object(example))
                }
            } else if code != chosen {
                answer["body"] = examples(of: json.media).first ?? schemas.example(for: json.media["schema"])
                alternatives.append(.object(answer))
            }
        }
        return alternatives.isEmpty ? nil : .array(alternatives)
    }
}
