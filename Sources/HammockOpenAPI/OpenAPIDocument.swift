import HTTPTypes
public import HammockJSON
public import HammockServer

/// The OpenAPI 3.1 document of a running mock: a schema per resource (what it answers, and what a create
/// and an update accept), every route with its parameters (the whole query language on lists), request
/// bodies, every answer with its problem+json shapes and headers, the stubs and the Swift routes, and
/// examples from the records loaded.
///
/// ```swift
/// let document = await OpenAPIDocument.make(for: server, title: "People")
/// print(document.serializedString())               // or YAMLText.text(from: document)
/// ```
/// `hammock openapi CONFIG` prints it; a running `hammock serve` serves it at `/__hammock/openapi.json`
/// and `.yaml`.
public enum OpenAPIDocument {
    /// The version of the document's format: 3.1.0.
    public static let formatVersion = "3.1.0"

    /// The document for `server`.
    /// - Parameters:
    ///   - title: `info.title`.
    ///   - version: `info.version`, the version of the API described.
    ///   - examples: Whether to read up to two records of each resource as examples.
    public static func make(
        for server: MockServer, title: String = "Hammock mock", version: String = "1.0.0", examples: Bool = true
    ) async -> JSON {
        var builder = Builder(server: server)
        if examples { await builder.readExamples() }
        return builder.document(title: title, version: version)
    }
}

/// Assembles the document; one per call.
struct Builder {
    let server: MockServer
    /// The server's route table, each pattern inside the base path.
    let rows: [RouteTableEntry]
    let schemas: [ResourceSchema]
    /// The component name of each resource's schema (`Person` for `people`).
    let names: [String: String]
    /// Up to two records of each resource, as the API answers them.
    var examples: [String: [JSON]] = [:]
    /// Routes that OpenAPI cannot state (a `**` path, a method it has no field for), in the route table's words.
    var omitted: [String] = []
    /// The API document's named schemas that stubs' documented parameters and bodies refer to, each with
    /// its name in this document (renamed where a resource's schema has the name).
    var documentedNames: [String: String] = [:]
    /// Those schemas by their names here, their references rewritten.
    var documentedSchemaBodies: JSONObject = [:]

    init(server: MockServer) {
        self.server = server
        // Paths inside the base path, which `servers` names: `/search` under `/v3`, not `/v3/search` (a
        // client joining the two asked for `/v3/v3/search`).
        let base = server.options.basePath ?? ""
        rows = server.routeTable.map { row in
            var row = row
            if !base.isEmpty, row.pattern.hasPrefix(base) {
                row.pattern = String(row.pattern.dropFirst(base.count))
                if row.pattern.isEmpty { row.pattern = "/" }
            }
            return row
        }
        schemas = server.schemas
        var names: [String: String] = [:]
        var taken: Set<String> = ["Problem"]
        for schema in schemas {
            var name = Self.typeName(Inflection.singular(of: schema.name))
            if name.isEmpty || taken.contains(name) { name = Self.typeName(schema.name) + "Record" }
            while taken.contains(name) { name += "_" }
            taken.insert(name)
            names[schema.name] = name
        }
        self.names = names
    }

    /// `people` → `People`, `order-items` → `OrderItems`: letters and digits, each word capitalised.
    static func typeName(_ text: String) -> String {
        text.split(whereSeparator: { !($0.isLetter || $0.isNumber) }).map { $0.prefix(1).uppercased() + $0.dropFirst() }
            .joined()
    }

    mutating func readExamples() async {
        let base = server.options.basePath ?? ""
        for schema in schemas where schema.resource.actions.contains(.list) {
            let response = await server.respond(to: MockRequest(.get, "\(base)/\(schema.name)?_limit=2"))
            if response.status.code == 200, let list = try? response.json().arrayValue, !list.isEmpty {
                examples[schema.name] = list
            }
        }
    }

    mutating func document(title: String, version: String) -> JSON {
        var paths = JSONObject()
        for row in rows {
            guard let (template, variables) = Self.template(row.pattern) else {
                omitted.append("\(row.methodList) \(row.pattern)")
                continue
            }
            var item = paths[template]?.objectValue ?? JSONObject()
            if isLoginRow(row) {
                addLoginOperations(row, to: &item)
            } else if let resource = row.resource, let schema = schemas.first(where: { $0.name == resource }) {
                addResourceOperations(row, schema: schema, variables: variables, to: &item)
            } else {
                addOwnOperations(row, variables: variables, to: &item)
            }
            secure(row, in: &item)
            if !item.keys.isEmpty { paths[template] = .object(item) }
        }
        var info: JSONObject = ["title": .string(title), "version": .string(version)]
        info["description"] =
            "Served by Hammock. Lists take json-server's query language; errors are application/problem+json (RFC 9457)."
        var document: JSONObject = ["openapi": .string(OpenAPIDocument.formatVersion), "info": .object(info)]
        document["servers"] = [["url": .string(server.options.basePath ?? "/")]]
        document["paths"] = .object(paths)
        var components = components()
        if let login = loginComponents() {
            components["securitySchemes"] = .object(login.schemes)
            var named = components["schemas"]?.objectValue ?? JSONObject()
            for (name, schema) in login.schemas where named[name] == nil { named[name] = schema }
            components["schemas"] = .object(named)
        }
        document["components"] = .object(components)
        if !omitted.isEmpty { document["x-hammock-omitted"] = .array(omitted.map(JSON.string)) }
        return .object(document)
    }

    /// `/people/:id/cars` → (`/people/{id}/cars`, ["id"]); `nil` for a pattern with `*` or `**`.
    static func template(_ pattern: String) -> (String, [String])? {
        var variables: [String] = []
        var segments: [String] = []
        for segment in pattern.split(separator: "/", omittingEmptySubsequences: false) {
            if segment.hasPrefix(":") {
                let name = String(segment.dropFirst())
                variables.append(name)
                segments.append("{\(name)}")
            } else if segment.contains("*") {
                return nil
            } else {
                segments.append(String(segment))
            }
        }
        let path = segments.joined(separator: "/")
        return (path.isEmpty ? "/" : path, variables)
    }

    static func operationKey(_ method: HTTPRequest.Method) -> String? {
        switch method {
        case .get, .put, .post, .delete, .patch, .options, .trace: method.rawValue.lowercased()
        default: nil  // HEAD answers as GET does; other methods have no field in a path item
        }
    }

    // MARK: Resources

    mutating func addResourceOperations(
        _ row: RouteTableEntry, schema: ResourceSchema, variables: [String], to item: inout JSONObject
    ) {
        let isRecord = row.pattern.split(separator: "/").last?.hasPrefix(":") ?? false
        let name = names[schema.name] ?? "Record"
        let read: JSON = ["$ref": .string("#/components/schemas/\(name)")]
        // The variable of a nested list names its parent's key; that of a record, the record's.
        let parameters = variables.enumerated().map { index, variable in
            pathParameter(
                variable,
                type: isRecord && index == variables.count - 1
                    ? schema.key.type : parentKeyType(of: schema, variable: variable, in: row.pattern))
        }
        for method in row.methods {
            guard let key = Self.operationKey(method), key != "options" else { continue }
            var operation = JSONObject()
            operation["tags"] = [.string(schema.name)]
            operation["parameters"] = .array(parameters)
            var responses = JSONObject()
            switch (isRecord, method) {
            case (false, .get):
                operation["operationId"] = .string(operationID("list", schema, row))
                operation["summary"] = .string("List \(schema.name), filtered, searched, sorted and paged")
                operation["parameters"] = .array(parameters + listParameters(for: schema))
                var listSchema: JSON = ["type": "array", "items": read]
                var listExample = examples[schema.name].map(JSON.array)
                if let envelope = schema.resource.listEnvelope {
                    // The page inside the resource's envelope: the records, the total, whether more follow,
                    // and the fixed members as the mock answers them.
                    var properties: JSONObject = [envelope.items: listSchema]
                    var required: [JSON] = [.string(envelope.items)]
                    if let total = envelope.total {
                        properties[total] = ["type": ["integer", "null"]]
                        required.append(.string(total))
                    }
                    if let hasMore = envelope.hasMore {
                        properties[hasMore] = ["type": "boolean"]
                        required.append(.string(hasMore))
                    }
                    if let nextCursor = envelope.nextCursor {
                        properties[nextCursor] = ["type": ["string", "null"]]
                        required.append(.string(nextCursor))
                    }
                    for (name, value) in envelope.members {
                        properties[name] = ["const": value]
                        required.append(.string(name))
                    }
                    listSchema = ["type": "object", "properties": .object(properties), "required": .array(required)]
                    if let records = listExample {
                        var wrapped = envelope.members
                        wrapped[envelope.items] = records
                        if let total = envelope.total { wrapped[total] = .integer(records.arrayValue?.count ?? 0) }
                        if let hasMore = envelope.hasMore { wrapped[hasMore] = false }
                        if let nextCursor = envelope.nextCursor { wrapped[nextCursor] = .null }
                        listExample = .object(wrapped)
                    }
                }
                var answer = response(
                    "One page of \(schema.name) (all of them unless paged)", schema: listSchema, example: listExample)
                answer["headers"] = [
                    "X-Total-Count": ["$ref": "#/components/headers/XTotalCount"],
                    "Link": ["$ref": "#/components/headers/Link"],
                    "X-Next-Cursor": ["$ref": "#/components/headers/XNextCursor"],
                    "ETag": ["$ref": "#/components/headers/ETag"],
                    "Last-Modified": ["$ref": "#/components/headers/LastModified"],
                ]
                responses["200"] = .object(answer)
                responses["304"] = ["description": "Not modified since the ETag or date the client sent"]
                addProblems([400, 404], to: &responses)
            case (false, .post):
                operation["operationId"] = .string(operationID("create", schema, row))
                operation["summary"] = .string("Create a record of \(schema.name)")
                operation["requestBody"] = requestBody("\(name)Create")
                var answer = response("Created", schema: read, example: examples[schema.name]?.first)
                answer["headers"] = [
                    "Location": ["$ref": "#/components/headers/Location"], "ETag": ["$ref": "#/components/headers/ETag"],
                ]
                if let links = links(toRecordOf: schema) { answer["links"] = .object(links) }
                responses["201"] = .object(answer)
                addProblems([400, 404, 409, 413, 415, 422], to: &responses)
            case (true, .get):
                operation["operationId"] = .string(operationID("get", schema, row))
                operation["summary"] = .string("A record of \(schema.name)")
                operation["parameters"] = .array(parameters + relationParameters(for: schema))
                var answer = response("The record", schema: read, example: examples[schema.name]?.first)
                answer["headers"] = [
                    "ETag": ["$ref": "#/components/headers/ETag"],
                    "Last-Modified": ["$ref": "#/components/headers/LastModified"],
                ]
                responses["200"] = .object(answer)
                responses["304"] = ["description": "Not modified since the ETag or date the client sent"]
                addProblems([400, 404], to: &responses)
            case (true, .put), (true, .patch):
                let verb = method == .put ? "replace" : "update"
                operation["operationId"] = .string(operationID(verb, schema, row))
                operation["summary"] = .string(
                    method == .put
                        ? "Update a record of \(schema.name): the members sent, the others kept (PUT merges)"
                        : "Update the members sent of a record of \(schema.name)")
                operation["parameters"] = .array(parameters + [conditionalHeader("If-Match")])
                operation["requestBody"] = requestBody("\(name)Update")
                var answer = response("The record as updated", schema: read, example: examples[schema.name]?.first)
                answer["headers"] = ["ETag": ["$ref": "#/components/headers/ETag"]]
                responses["200"] = .object(answer)
                addProblems([400, 404, 409, 412, 413, 415, 422], to: &responses)
            case (true, .delete):
                operation["operationId"] = .string(operationID("delete", schema, row))
                operation["summary"] = .string("Delete a record of \(schema.name); its children keep theirs with a null key")
                var deleteParameters = parameters + [conditionalHeader("If-Match")]
                if !children(of: schema).isEmpty {
                    deleteParameters.append(
                        queryParameter(
                            "_dependent",
                            schema: namesSchema(children(of: schema).map(\.name)),
                            "Child resources deleted with the record (`_dependent=cars`)"))
                }
                operation["parameters"] = .array(deleteParameters)
                responses["204"] = ["description": "Deleted"]
                addProblems([400, 404, 412], to: &responses)
            default:
                continue
            }
            // A resource whose action answers another success status (an imported API's create that
            // answers 200) says so here too.
            let usual: (MockResource.Actions, String)? =
                switch (isRecord, method) {
                case (false, .get): (.list, "200")
                case (false, .post): (.create, "201")
                case (true, .get): (.show, "200")
                case (true, .put), (true, .patch): (.update, "200")
                case (true, .delete): (.delete, "204")
                default: nil
                }
            if let (action, code) = usual, let status = schema.resource.successStatuses[action], String(status) != code,
                case .object(var answer)? = responses[code]
            {
                responses[code] = nil
                if status == 204 || status == 205 { answer["content"] = nil }
                responses[String(status)] = .object(answer)
            }
            addProblems([431], to: &responses)
            operation["responses"] = .object(responses)
            item[key] = .object(operation)
        }
    }

    /// The links of a create's answer to the new record's own operations (read, update, replace, delete),
    /// each given the key the answer carries: what a client (and schemathesis's stateful phase) follows
    /// from `POST /people` to `GET /people/{id}`. `nil` when the record has no route of its own.
    func links(toRecordOf schema: ResourceSchema) -> JSONObject? {
        // The record's own route: `/people/:id`, the shortest of the resource's routes that ends in a variable.
        let item = rows.filter { row in
            row.resource == schema.name && row.pattern.split(separator: "/").last?.hasPrefix(":") == true
        }.min { $0.pattern.count < $1.pattern.count }
        // A record whose answers leave its key out gives a link nothing to follow (its `Location` has the
        // key, but a runtime expression cannot take a path segment from a header).
        guard schema.resource.answersKey, let item, let variable = item.pattern.split(separator: "/").last?.dropFirst(),
            Self.template(item.pattern) != nil
        else { return nil }
        let name = names[schema.name] ?? "Record"
        let key = "$response.body#/" + schema.key.name.replacing("~", with: "~0").replacing("/", with: "~1")
        var links = JSONObject()
        for (method, verb, title) in [
            (HTTPRequest.Method.get, "get", "Get"), (.patch, "update", "Update"), (.put, "replace", "Replace"),
            (.delete, "delete", "Delete"),
        ] where item.methods.contains(method) {
            links["\(title)\(name)"] = [
                "operationId": .string(operationID(verb, schema, item)),
                "parameters": [String(variable): .string(key)],
                "description": .string("The record just created, by its key"),
            ]
        }
        return links.isEmpty ? nil : links
    }

    /// `listPeople`, `getPeople`, `createPeopleCars` (`POST /people/:id/cars`): the verb and the path's
    /// literal segments, unique per method and path.
    func operationID(_ verb: String, _ schema: ResourceSchema, _ row: RouteTableEntry) -> String {
        verb + Self.typeName(row.pattern.split(separator: "/").filter { !$0.hasPrefix(":") }.joined(separator: " "))
    }

    /// The type of a nested list's variable: the key of the parent the segment before it names
    /// (`/garages/:id/cars` → the garages' key), as the child's foreign key to that parent holds it.
    func parentKeyType(of schema: ResourceSchema, variable: String, in pattern: String) -> FieldType {
        let segments = pattern.split(separator: "/").map(String.init)
        guard let position = segments.firstIndex(of: ":" + variable), position > 0 else { return .string }
        let parent = segments[position - 1]
        return schema.foreignKey(toParent: parent)?.type ?? schemas.first { $0.name == parent }?.key.type ?? .string
    }

    func children(of schema: ResourceSchema) -> [ResourceSchema] {
        schemas.filter { $0.foreignKeys.contains { $0.parent == schema.name } }
    }

    // MARK: Parameters

    func pathParameter(_ name: String, type: FieldType) -> JSON {
        ["name": .string(name), "in": "path", "required": true, "schema": Self.valueSchema(type)]
    }

    func queryParameter(_ name: String, schema: JSON, _ description: String) -> JSON {
        ["name": .string(name), "in": "query", "required": false, "schema": schema, "description": .string(description)]
    }

    func conditionalHeader(_ name: String) -> JSON {
        [
            // Any visible text: a value that is not the record's tag (a malformed one too) is a 412.
            "name": .string(name), "in": "header", "required": false,
            "schema": ["type": "string", "pattern": "^[\\x20-\\x7E]*$"],
            "description": "`*` or the record's ETag: written only if it matches (412 otherwise)",
        ]
    }

    /// One or more of `names`, separated by commas: what `_embed`, `_expand` and `_dependent` accept.
    func namesSchema(_ names: [String]) -> JSON {
        let choice = "(" + names.map(Self.regexEscaped).joined(separator: "|") + ")"
        return [
            "type": "string", "pattern": .string("^\(choice)(,\(choice))*$"),
            "description": .string("One or more of \(names.joined(separator: ", ")), separated by commas"),
        ]
    }

    /// `text` as a literal in an ECMA 262 pattern.
    static func regexEscaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if "\\^$.|?*+()[]{}".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }

    /// Every field's filters, search, order, pages, relations.
    func listParameters(for schema: ResourceSchema) -> [JSON] {
        var parameters: [JSON] = []
        let fields = Self.fields(of: schema)
        for (field, type) in fields {
            let value = Self.valueSchema(type)
            parameters.append(queryParameter(field, schema: value, "Records whose \(field) equals this"))
            parameters.append(queryParameter(field + "_ne", schema: value, "Records whose \(field) differs from this"))
            // The server's own rules (ListQuery): an order for text, dates and numbers; `_like` for text.
            if [.string, .date, .integer, .float].contains(type) {
                for (suffix, meaning) in [
                    ("_gt", "is greater than"), ("_gte", "is at least"), ("_lt", "is less than"), ("_lte", "is at most"),
                ] {
                    parameters.append(queryParameter(field + suffix, schema: value, "Records whose \(field) \(meaning) this"))
                }
            }
            if [.string, .date, .blob].contains(type) {
                parameters.append(
                    queryParameter(
                        field + "_like", schema: ["type": "string"], "Records whose \(field) contains this, in any case"))
            }
            parameters.append(
                queryParameter(
                    field + "_null", schema: ["type": "boolean"], "Records whose \(field) is null (true) or is not (false)"))
        }
        let sortable = "-?(" + fields.map { Self.regexEscaped($0.0) }.joined(separator: "|") + ")"
        parameters.append(queryParameter("q", schema: ["type": "string"], "Records with a text field containing this"))
        parameters.append(
            queryParameter(
                "_sort", schema: ["type": "string", "pattern": .string("^\(sortable)(,\(sortable))*$")],
                "Fields to sort by, separated by commas, `-` before one for descending"))
        parameters.append(
            queryParameter(
                "_order", schema: ["type": "string", "pattern": "^(asc|desc)(,(asc|desc))*$"],
                "asc or desc, once or once per field of _sort; only with _sort"))
        let count: JSON = ["type": "integer", "format": "int64", "minimum": 1]
        let offset: JSON = ["type": "integer", "format": "int64", "minimum": 0]
        // Two forms of paging, never together (a 400 names the contradiction): pages, or a range.
        parameters.append(queryParameter("_page", schema: count, "The page to answer, from 1 (not with _start, _end or _limit)"))
        parameters.append(
            queryParameter("_per_page", schema: count, "Records per page, 10 unless given (not with _start, _end or _limit)"))
        parameters.append(queryParameter("_start", schema: offset, "The first record to answer, from 0 (not with _page)"))
        parameters.append(
            queryParameter("_end", schema: offset, "The record after the last to answer, not below _start, not with _limit"))
        parameters.append(queryParameter("_limit", schema: offset, "At most this many records (not with _end or _page)"))
        parameters.append(
            queryParameter(
                "_cursor", schema: ["type": "string", "maxLength": 64],
                "Pages by cursor: empty for the first, then X-Next-Cursor of each answer (only with _limit)"))
        parameters += relationParameters(for: schema)
        // Parameters the server does not know, and that do not start with `_`, are ignored (and named in
        // X-Hammock-Ignored-Query); one that starts with `_` is a 400.
        let known = parameters.compactMap { $0["name"] }
        parameters.append(
            [
                "name": "other", "in": "query", "required": false, "style": "form", "explode": true,
                "description": "Any other parameter, not starting with _, is ignored and named in X-Hammock-Ignored-Query",
                "schema": [
                    "type": "object", "additionalProperties": ["type": "string"],
                    "propertyNames": ["pattern": "^[^_]", "not": ["enum": .array(known)]],
                ],
            ])
        return parameters
    }

    func relationParameters(for schema: ResourceSchema) -> [JSON] {
        var parameters: [JSON] = []
        // A relation named like one of the record's fields is refused (its member would hide the field).
        let fieldNames = Set(Self.fields(of: schema).map(\.0))
        let children = children(of: schema).map(\.name).filter { !fieldNames.contains($0) }
        if !children.isEmpty {
            parameters.append(queryParameter("_embed", schema: namesSchema(children), "Child resources to add to each record"))
        }
        // A parent is named in the singular or by its resource's name (`person`, `people`).
        var parents: [String] = []
        for parent in schema.foreignKeys.flatMap({ [Inflection.singular(of: $0.parent), $0.parent] })
        where !parents.contains(parent) && !fieldNames.contains(parent) {
            parents.append(parent)
        }
        if !parents.isEmpty {
            parameters.append(queryParameter("_expand", schema: namesSchema(parents), "Parents to add to each record"))
        }
        return parameters
    }

    // MARK: Bodies and answers

    func requestBody(_ component: String) -> JSON {
        [
            "required": true,
            "content": ["application/json": ["schema": ["$ref": .string("#/components/schemas/\(component)")]]],
        ]
    }

    func response(_ description: String, schema: JSON, example: JSON?) -> JSONObject {
        var media: JSONObject = ["schema": schema]
        if let example { media["example"] = example }
        return ["description": .string(description), "content": ["application/json": .object(media)]]
    }

    static let problems: [(Int, String, String)] = [
        (400, "BadRequest", "A query or body the server cannot use; `parameter` names the query parameter"),
        (401, "Unauthorized", "No valid credentials; WWW-Authenticate says which the server takes and what was wrong"),
        (403, "Forbidden", "The credentials do not allow this: a role the token lacks, or another user's record"),
        (404, "NotFound", "No such record (or parent)"),
        (405, "MethodNotAllowed", "The path does not answer this method; `Allow` lists those it does"),
        (409, "Conflict", "A record with this key exists already, or a store constraint refused the write"),
        (412, "PreconditionFailed", "The record changed since the ETag sent in If-Match"),
        (413, "ContentTooLarge", "The body is larger than the server accepts"),
        (415, "UnsupportedMediaType", "The body is not JSON"),
        (422, "UnprocessableContent", "A member of the body has another type than its field"),
        (431, "HeaderFieldsTooLarge", "The request's header fields are too large"),
    ]

    func addProblems(_ statuses: [Int], to responses: inout JSONObject) {
        for status in statuses {
            guard let name = Self.problems.first(where: { $0.0 == status })?.1 else { continue }
            responses[String(status)] = ["$ref": .string("#/components/responses/\(name)")]
        }
    }

    // MARK: Routes of your own

    mutating func addOwnOperations(_ row: RouteTableEntry, variables: [String], to item: inout JSONObject) {
        let added = server.addedRoutes.filter { $0.path.description == row.pattern }
        for method in row.methods where method != .head {
            guard let key = Self.operationKey(method) else {
                omitted.append("\(method.rawValue) \(row.pattern)")
                continue
            }
            let routes = added.filter { $0.method == method }
            var operation = JSONObject()
            operation["tags"] = ["routes"]
            var parameters = variables.map { pathParameter($0, type: .string) }
            var responses = JSONObject()
            if routes.isEmpty {
                // A family of routes of your own: the table names the path, not the answers.
                responses["default"] = ["description": "Answered by a route of your own"]
            }
            for route in routes {
                if let summary = route.summary { operation["summary"] = .string(summary) }
                guard let stub = route.stub else {
                    if responses["default"] == nil { responses["default"] = ["description": "Answered by a Swift route"] }
                    continue
                }
                for (name, value) in stub.match.query.sorted(by: { $0.key < $1.key })
                where !parameters.contains(where: { $0["name"] == .string(name) }) {
                    parameters.append(
                        [
                            "name": .string(name), "in": "query", "required": false,
                            "schema": ["type": "string", "examples": [.string(value)]],
                            "description": .string("This stub answers when it is \(value)"),
                        ])
                }
                for condition in stub.match.conditions {
                    guard case .query(let name) = condition.place, !parameters.contains(where: { $0["name"] == .string(name) })
                    else { continue }
                    parameters.append(
                        [
                            "name": .string(name), "in": "query", "required": false, "schema": ["type": "string"],
                            "description": .string("This stub answers when it is \(condition.matcher)"),
                        ])
                }
                // A stub made from an API document's operation takes what the document says it takes.
                if let (documented, body) = server.requestChecks?.documented(method, row.pattern) {
                    for parameter in documented {
                        guard let name = parameter["name"], let place = parameter["in"]?.stringValue,
                            place != "path" || variables.contains(name.stringValue ?? "")
                        else { continue }
                        parameters.removeAll { $0["name"] == name && $0["in"] == .string(place) }
                        parameters.append(adoptingDocumentedSchemas(parameter))
                    }
                    if let body, operation["requestBody"] == nil { operation["requestBody"] = adoptingDocumentedSchemas(body) }
                }
                let readsBody = stub.match.conditions.contains { if case .body = $0.place { true } else { false } }
                if !stub.match.body.keys.isEmpty || readsBody, operation["requestBody"] == nil {
                    operation["requestBody"] = [
                        "required": false,
                        "content": [
                            "application/json": [
                                "schema": ["type": "object"],
                                "example": .object(Self.exampleBody(from: stub.match.body)),
                            ]
                        ],
                    ]
                }
                for answer in stub.answers where responses[String(answer.status.code)] == nil {
                    responses[String(answer.status.code)] = Self.stubResponse(answer)
                }
            }
            operation["parameters"] = .array(parameters)
            operation["operationId"] = .string(
                key
                    + Self.typeName(
                        row.pattern.split(separator: "/").map { $0.hasPrefix(":") ? "by " + $0.dropFirst() : $0 }
                            .joined(separator: " ")))
            operation["responses"] = .object(responses.keys.isEmpty ? ["default": ["description": "Answer"]] : responses)
            item[key] = .object(operation)
        }
    }

    /// `json` with its `$ref`s to the API document's schemas pointing at their names here, each schema it
    /// reaches (and those reach) noted to be written among the components.
    mutating func adoptingDocumentedSchemas(_ json: JSON) -> JSON {
        let named = server.requestChecks?.documentedSchemas ?? [:]
        let prefix = "#/components/schemas/"
        var pending: [String] = []
        func rewrite(_ value: JSON, depth: Int, _ builder: inout Builder) -> JSON {
            // Deeper than the checks read (64 levels), a hostile document's nesting is left as it is: no
            // recursion without a bound on a third party's document.
            guard depth < 80 else { return value }
            switch value {
            case .object(var object):
                if case .string(let reference)? = object["$ref"], reference.hasPrefix(prefix) {
                    let name = String(reference.dropFirst(prefix.count))
                    if named[name] != nil {
                        if builder.documentedNames[name] == nil {
                            var chosen = name
                            let taken = Set(builder.names.values.flatMap { [$0, $0 + "Create", $0 + "Update"] })
                                .union(builder.documentedNames.values).union(["Problem"])
                            while taken.contains(chosen) { chosen += "_" }
                            builder.documentedNames[name] = chosen
                            pending.append(name)
                        }
                        object["$ref"] = .string(prefix + (builder.documentedNames[name] ?? name))
                    }
                }
                for (key, member) in object where key != "$ref" { object[key] = rewrite(member, depth: depth + 1, &builder) }
                return .object(object)
            case .array(let items):
                return .array(items.map { rewrite($0, depth: depth + 1, &builder) })
            default:
                return value
            }
        }
        let result = rewrite(json, depth: 0, &self)
        // The schemas reached, rewritten in turn (each once: a name is pending only when first seen).
        while let name = pending.popLast() {
            guard let schema = named[name], let chosen = documentedNames[name] else { continue }
            let rewritten = rewrite(schema, depth: 0, &self)
            documentedSchemaBodies[chosen] = rewritten
        }
        return result
    }

    /// A stub's `match.body` (JSON paths to values) as the body it accepts, for its simple paths.
    static func exampleBody(from match: JSONObject) -> JSONObject {
        var body = JSONObject()
        for key in match.keys where !key.contains(".") && !key.contains("[") { body[key] = match[key] }
        return body
    }

    static func stubResponse(_ answer: StubAnswer) -> JSON {
        var response: JSONObject = [
            "description": .string(answer.status.reasonPhrase.isEmpty ? "Answer" : answer.status.reasonPhrase)
        ]
        let declared = answer.headers.first { $0.name == .contentType }?.value
        var content = JSONObject()
        switch answer.body {
        case .json(let value)?:
            content[declared ?? "application/json"] = ["schema": schema(describing: value), "example": value]
        case .text(let text)?:
            content[declared ?? "text/plain"] = ["schema": ["type": "string"], "example": .string(text)]
        case .bytes?, .file?:
            content[declared ?? "application/octet-stream"] = ["schema": ["type": "string"]]
        case .events?:
            content["text/event-stream"] = ["schema": ["type": "string"]]
        case .webSocket?:
            // OpenAPI has no words for a WebSocket: the operation says what opening one looks like.
            response["description"] = "A WebSocket: open it with 'Upgrade: websocket' (101 Switching Protocols)"
        case nil:
            break
        }
        if !content.keys.isEmpty { response["content"] = .object(content) }
        var headers = JSONObject()
        for (name, _) in answer.headers where name != .contentType && name != .contentLength {
            headers[name.rawName] = ["schema": ["type": "string"]]
        }
        if !headers.keys.isEmpty { response["headers"] = .object(headers) }
        return .object(response)
    }

    /// The shape of an example value: its types, not its values (placeholders are strings).
    static func schema(describing value: JSON) -> JSON {
        switch value {
        case .null: return ["type": "null"]
        case .bool: return ["type": "boolean"]
        case .integer: return ["type": "integer"]
        case .double: return ["type": "number"]
        case .string: return ["type": "string"]
        case .array(let values):
            return values.first.map { ["type": "array", "items": schema(describing: $0)] } ?? ["type": "array"]
        case .object(let object):
            var properties = JSONObject()
            for key in object.keys { properties[key] = schema(describing: object[key] ?? .null) }
            return ["type": "object", "properties": .object(properties)]
        }
    }

    // MARK: Components

    /// The key, then every other column (foreign keys included), each once.
    static func fields(of schema: ResourceSchema) -> [(String, FieldType)] {
        var fields = [(schema.key.name, schema.key.type)]
        for column in schema.columns where !fields.contains(where: { $0.0 == column.name }) {
            fields.append((column.name, column.type))
        }
        for foreignKey in schema.foreignKeys where !fields.contains(where: { $0.0 == foreignKey.name }) {
            fields.append((foreignKey.name, foreignKey.type))
        }
        return fields
    }

    /// A field's value: what a filter compares with, a key, a member.
    static func valueSchema(_ type: FieldType) -> JSON {
        switch type {
        case .string: ["type": "string"]
        case .integer:
            ["type": "integer", "format": "int64", "minimum": .integer(Int.min), "maximum": .integer(Int.max)]
        case .float: ["type": "number"]
        case .boolean: ["type": "boolean"]
        case .blob:
            [
                "type": "string", "contentEncoding": "base64",
                "pattern": "^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$",
            ]
        case .date:
            [
                "type": "string", "description": "An ISO 8601 date or date-time",
                "anyOf": [["format": "date"], ["format": "date-time"]],
            ]
        case .json: [:]
        }
    }

    /// A member that may be null.
    static func nullable(_ type: FieldType) -> JSON {
        guard type != .json, case .object(var object) = valueSchema(type), case .string(let name)? = object["type"] else {
            return [:]
        }
        object["type"] = [.string(name), "null"]
        return .object(object)
    }

    func components() -> JSONObject {
        var schemasObject = JSONObject()
        for schema in schemas {
            let name = names[schema.name] ?? "Record"
            var properties = JSONObject()
            for (field, type) in Self.fields(of: schema) {
                // The key and required fields are never null; every other member may be (a field no one
                // set, a parent deleted), or is left out for a resource that omits null members.
                let declared = schema.resource.field(named: field)
                let alwaysSet = field == schema.key.name || declared?.isRequired == true
                var property =
                    alwaysSet || schema.resource.omitsNull(of: field) ? Self.valueSchema(type) : Self.nullable(type)
                if let value = declared?.defaultValue, case .object(var object) = property {
                    object["default"] = value
                    property = .object(object)
                }
                // A key the server makes has the form it makes.
                if field == schema.key.name, let format = schema.resource.keyFormat, case .object(var object) = property {
                    switch format {
                    case .uuid: object["format"] = "uuid"
                    case .pattern(let pattern): object["pattern"] = .string(pattern)
                    }
                    property = .object(object)
                }
                // A write-only field is taken from requests and never answered.
                if declared?.isWriteOnly == true, case .object(var object) = property {
                    object["writeOnly"] = true
                    property = .object(object)
                }
                properties[field] = property
            }
            // Every member is answered, but for null ones of a resource that omits them, and the key of a
            // resource whose answers leave it out.
            var readProperties = properties
            if !schema.resource.answersKey { readProperties[schema.key.name] = nil }
            let answered = readProperties.keys.filter { field in
                let declared = schema.resource.field(named: field)
                guard declared?.isWriteOnly != true else { return false }
                return !schema.resource.omitsNull(of: field) || field == schema.key.name || declared?.isRequired == true
            }
            var read: JSONObject = [
                "type": "object", "properties": .object(readProperties), "required": .array(answered.map(JSON.string)),
            ]
            read["description"] = .string("A record of \(schema.name), as the server answers it")
            if let examples = examples[schema.name] { read["examples"] = .array(examples) }
            schemasObject[name] = .object(read)

            // A create: every member optional but a key the client must choose; unknown members ignored.
            var writable = properties
            if schema.isKeyGenerated || schema.resource.keyIsReadOnly { writable[schema.key.name] = nil }
            var create: JSONObject = ["type": "object", "properties": .object(writable)]
            let keyIsMade = schema.isKeyGenerated || schema.resource.keyFormat != nil
            create["description"] = .string(
                "A new record of \(schema.name): members it does not name are ignored"
                    + (schema.isKeyGenerated || schema.resource.keyIsReadOnly
                        ? "; its key is chosen by the server"
                        : keyIsMade
                            ? "; its key is the client's to choose, or made by the server if left out"
                            : "; its key is the client's to choose"))
            // The client's key, and the required fields without a default.
            let mustGive =
                (keyIsMade ? [] : [schema.key.name])
                + schema.ruledFields.filter { $0.isRequired && $0.defaultValue == nil }.map(\.name)
            // Written even when empty: a reader that finds no `required` on the create may take the record's,
            // where every member is required (Hammock's own import does, as documents that share one schema
            // for both need).
            create["required"] = .array(mustGive.map(JSON.string))
            // The server refuses a body that names no field it knows (422).
            create["anyOf"] = .array(writable.keys.map { ["required": [.string($0)]] })
            schemasObject[name + "Create"] = .object(create)

            var updateProperties = properties
            updateProperties[schema.key.name] = nil
            var update: JSONObject = ["type": "object", "properties": .object(updateProperties)]
            update["anyOf"] = .array(updateProperties.keys.map { ["required": [.string($0)]] })
            update["description"] = .string(
                "The members to change of a record of \(schema.name) (PUT and PATCH both merge; the others are kept)")
            schemasObject[name + "Update"] = .object(update)
        }
        for (name, schema) in documentedSchemaBodies { schemasObject[name] = schema }
        schemasObject["Problem"] = [
            "type": "object", "description": "RFC 9457 problem details",
            "required": ["title", "status"],
            "properties": [
                "type": ["type": "string"], "title": ["type": "string"], "status": ["type": "integer"],
                "detail": ["type": "string"], "parameter": ["type": "string"],
            ],
        ]
        var responses = JSONObject()
        for (status, name, description) in Self.problems {
            var response: JSONObject = [
                "description": .string(description),
                "content": ["application/problem+json": ["schema": ["$ref": "#/components/schemas/Problem"]]],
            ]
            if status == 405 { response["headers"] = ["Allow": ["schema": ["type": "string"]]] }
            if status == 401 { response["headers"] = ["WWW-Authenticate": ["schema": ["type": "string"]]] }
            responses[name] = .object(response)
        }
        let headers: JSONObject = [
            "ETag": ["description": "The representation's tag, for If-None-Match and If-Match", "schema": ["type": "string"]],
            "LastModified": ["description": "When the resource last changed (HTTP date)", "schema": ["type": "string"]],
            "Location": ["description": "The path of the record created", "schema": ["type": "string"]],
            "XTotalCount": ["description": "Records that matched before the page was cut", "schema": ["type": "integer"]],
            "Link": ["description": "first, prev, next and last pages (RFC 8288)", "schema": ["type": "string"]],
            "XNextCursor": [
                "description": "The _cursor of the next page, on a page asked for by cursor that is not the last",
                "schema": ["type": "string"],
            ],
        ]
        return ["schemas": .object(schemasObject), "responses": .object(responses), "headers": .object(headers)]
    }
}

extension MockServer {
    /// Serves the server's OpenAPI document in its admin API, made afresh on each request (resources and
    /// routes may change while it runs): `GET /__hammock/openapi.json` and `/__hammock/openapi.yaml`.
    /// - Returns: Whether both were added (false without an admin API).
    @discardableResult
    public func serveOpenAPIDocument(title: String = "Hammock mock", version: String = "1.0.0") -> Bool {
        let json = addAdminEndpoint("openapi.json") { [weak self] _ in
            guard let self else { throw HTTPProblem(.serviceUnavailable, detail: "The server is gone") }
            let document = await OpenAPIDocument.make(for: self, title: title, version: version)
            return MockResponse(json: document)
        }
        let yaml = addAdminEndpoint("openapi.yaml") { [weak self] _ in
            guard let self else { throw HTTPProblem(.serviceUnavailable, detail: "The server is gone") }
            let document = await OpenAPIDocument.make(for: self, title: title, version: version)
            return MockResponse(
                status: .ok, headerFields: [.contentType: "application/yaml; charset=utf-8"],
                body: Array(YAMLText.text(from: document).utf8))
        }
        return json && yaml
    }
}
