public import HTTPTypes
public import HammockJSON
import HammockSchema
import HammockStore
import HammockWire

/// The requests an API document describes, each checked before it is answered: its path, query, header
/// and cookie parameters against their schemas (400), its body's media type (415) and its body against
/// the schema (422), each failure named in a problem+json answer. A mock made from an OpenAPI document
/// carries them (the configuration's `validation` section, which `OpenAPIImport` writes); a request the
/// document does not describe is not checked.
///
/// ```json
/// "validation": {
///   "schemas": {"Pet": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}},
///   "operations": [
///     {"method": "GET", "path": "/pets", "parameters": [
///        {"name": "limit", "in": "query", "schema": {"type": "integer", "maximum": 100}}]},
///     {"method": "POST", "path": "/pets",
///      "body": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}}
///   ]
/// }
/// ```
/// `GET /pets?limit=500` is then a 400 naming `limit` and `maximum`; `POST /pets` with `{}` a 422 naming
/// `/name` and `required`. Paths are the server's patterns (`/pets/:petId`) inside its base path;
/// `schemas` are what `$ref`s to `#/components/schemas/NAME` find.
public struct RequestChecks: Sendable {
    /// Where a parameter travels.
    enum Location: String, Sendable, CaseIterable {
        case path, query, header, cookie
    }

    struct Parameter: Sendable {
        var name: String
        var location: Location
        var isRequired: Bool
        var schema: SchemaSet.Handle?
        /// An array sent as repeated items (`?tag=a&tag=b`) rather than one comma-separated item.
        var explodes: Bool
        /// `deepObject`: `?filter[status]=open`.
        var isDeepObject: Bool
    }

    struct Body: Sendable {
        var isRequired: Bool
        /// Each media type documented, with the schema of the JSON ones.
        var media: [(type: String, schema: SchemaSet.Handle?)]
    }

    struct Operation: Sendable {
        var method: HTTPRequest.Method
        var pattern: PathPattern
        var parameters: [Parameter]
        var body: Body?
        /// How many of the pattern's segments are literal: the most literal pattern wins a path that two
        /// match (`/pets/mine` before `/pets/:id`), as OpenAPI says.
        var literalSegments: Int
        /// `GET /pets/:petId`, for problems.
        var place: String { "\(method.rawValue) \(pattern)" }
    }

    let schemas: SchemaSet
    let operations: [Operation]
    /// What is not checked, and why (a schema keyword it cannot read, a pattern it cannot test).
    public let notes: [String]

    /// How many operations are checked.
    public var count: Int { operations.count }

    /// The keys of the `validation` section and of each operation, parameter and body.
    static let sectionKeys = ["schemas", "operations"]
    static let operationKeys = ["method", "path", "parameters", "body"]
    static let parameterKeys = ["name", "in", "required", "schema", "style", "explode"]
    static let bodyKeys = ["required", "content"]

    /// Reads a `validation` section; `fail` names the key path of a mistake.
    init(json: JSON, at path: String, fail: (String, String) -> ConfigurationError) throws(ConfigurationError) {
        guard case .object(let object) = json else { throw fail(path, "expected {\"schemas\": {...}, \"operations\": [...]}") }
        for key in object.keys where !Self.sectionKeys.contains(key) {
            throw fail("\(path).\(key)", "unknown key; expected schemas and operations")
        }
        var named = JSONObject()
        if let value = object["schemas"], !value.isNull {
            guard case .object(let given) = value else { throw fail("\(path).schemas", "expected an object of named schemas") }
            named = given
        }
        var schemas = SchemaSet(named: named)
        var operations: [Operation] = []
        guard case .array(let list)? = object["operations"] ?? .array([]) else {
            throw fail("\(path).operations", "expected an array of operations")
        }
        for (index, element) in list.enumerated() {
            operations.append(try Self.operation(element, at: "\(path).operations[\(index)]", schemas: &schemas, fail: fail))
        }
        self.schemas = schemas
        self.operations = operations
        notes = schemas.notes.map(\.description)
    }

    static func operation(
        _ json: JSON, at path: String, schemas: inout SchemaSet, fail: (String, String) -> ConfigurationError
    ) throws(ConfigurationError) -> Operation {
        guard case .object(let object) = json else { throw fail(path, "expected an operation object") }
        for key in object.keys where !operationKeys.contains(key) {
            throw fail("\(path).\(key)", "unknown key; expected one of \(operationKeys.joined(separator: ", "))")
        }
        guard case .string(let methodName)? = object["method"], let method = HTTPRequest.Method(methodName.uppercased())
        else { throw fail("\(path).method", "expected an HTTP method such as \"GET\"") }
        guard case .string(let text)? = object["path"] else {
            throw fail("\(path).path", "expected a path such as \"/pets/:petId\"")
        }
        let pattern: PathPattern
        do {
            pattern = try PathPattern(text)
        } catch {
            throw fail("\(path).path", error.message)
        }
        var parameters: [Parameter] = []
        if let value = object["parameters"], !value.isNull {
            guard case .array(let list) = value else { throw fail("\(path).parameters", "expected an array of parameters") }
            for (index, element) in list.enumerated() {
                let place = "\(path).parameters[\(index)]"
                guard case .object(let parameter) = element else { throw fail(place, "expected a parameter object") }
                for key in parameter.keys where !parameterKeys.contains(key) {
                    throw fail("\(place).\(key)", "unknown key; expected one of \(parameterKeys.joined(separator: ", "))")
                }
                guard case .string(let name)? = parameter["name"], !name.isEmpty else {
                    throw fail("\(place).name", "expected the parameter's name")
                }
                guard case .string(let where_)? = parameter["in"], let location = Location(rawValue: where_) else {
                    throw fail("\(place).in", "expected path, query, header or cookie")
                }
                let style = parameter["style"]?.stringValue
                let schema = parameter["schema"].map {
                    schemas.add($0, place: "\(methodName) \(text) \(location.rawValue) \(name)")
                }
                parameters.append(
                    Parameter(
                        name: name, location: location,
                        isRequired: location == .path || parameter["required"]?.boolValue == true, schema: schema,
                        explodes: parameter["explode"]?.boolValue ?? (style == nil || style == "form"),
                        isDeepObject: style == "deepObject"))
            }
        }
        var body: Body?
        if let value = object["body"], !value.isNull {
            guard case .object(let given) = value else {
                throw fail("\(path).body", "expected {\"required\": …, \"content\": {…}}")
            }
            for key in given.keys where !bodyKeys.contains(key) {
                throw fail("\(path).body.\(key)", "unknown key; expected required and content")
            }
            var media: [(type: String, schema: SchemaSet.Handle?)] = []
            for (type, entry) in given["content"]?.objectValue ?? JSONObject() {
                let schema = Self.isJSON(type) ? entry.objectValue?["schema"] : nil
                media.append((type.lowercased(), schema.map { schemas.add($0, place: "\(methodName) \(text) body") }))
            }
            body = Body(isRequired: given["required"]?.boolValue ?? false, media: media)
        }
        let literals = pattern.segments.count { if case .literal = $0 { true } else { false } }
        return Operation(method: method, pattern: pattern, parameters: parameters, body: body, literalSegments: literals)
    }

    /// `application/json`, `application/problem+json`, `*/*`: a media type whose body is JSON.
    static func isJSON(_ type: String) -> Bool {
        let name = HeaderValue.mediaType(of: type)
        return name == "application/json" || name.hasSuffix("+json") || name == "*/*" || name == "application/*"
    }

    // MARK: Checking

    /// The operation a request is, when the document has it: `HEAD` is checked as its `GET`.
    func operation(for request: MockRequest) -> (Operation, [String: String])? {
        let method = request.method == .head ? .get : request.method
        var best: (Operation, [String: String])?
        for operation in operations where operation.method == method {
            guard let captures = operation.pattern.match(request.path) else { continue }
            if best.map({ operation.literalSegments > $0.0.literalSegments }) ?? true { best = (operation, captures) }
        }
        return best
    }

    /// Throws the problem a request has, if any: parameters first (400), then the body's media type
    /// (415), then the body (422; 400 when it is not JSON at all).
    func check(_ request: MockRequest) throws(HTTPProblem) {
        guard let (operation, captures) = operation(for: request) else { return }
        var problems: [(JSON, String)] = []
        var query: [ListQuery.Item]?
        for parameter in operation.parameters where problems.count < 20 {
            let texts: [String]
            switch parameter.location {
            case .path:
                texts = captures[parameter.name].map { [$0] } ?? []
            case .query:
                if query == nil {
                    do {
                        query = try ListQuery.items(of: request.query ?? "")
                    } catch {
                        throw HTTPProblem(.badRequest, detail: error.description)
                    }
                }
                if parameter.isDeepObject {
                    // Members are checked by the object's schema: `filter[status]=open` → {"status": "open"}.
                    let prefix = parameter.name + "["
                    let members = query?.filter { $0.name.hasPrefix(prefix) && $0.name.hasSuffix("]") } ?? []
                    guard !members.isEmpty else {
                        if parameter.isRequired { problems.append(Self.missing(parameter)) }
                        continue
                    }
                    guard let schema = parameter.schema else { continue }
                    var object = JSONObject()
                    for member in members {
                        let name = String(member.name.dropFirst(prefix.count).dropLast())
                        object[name] = .string(member.value)
                    }
                    problems += violations(of: .object(object), parameter: parameter, schema: schema, coercing: true)
                    continue
                }
                texts = query?.filter { $0.name == parameter.name }.map(\.value) ?? []
            case .header:
                guard !Self.ignoredHeaders.contains(parameter.name.lowercased()), let name = HTTPField.Name(parameter.name)
                else { continue }
                texts = request.headerFields[values: name]
            case .cookie:
                texts = Self.cookies(in: request.headerFields[values: .cookie]).filter { $0.name == parameter.name }.map(\.value)
            }
            guard !texts.isEmpty else {
                if parameter.isRequired { problems.append(Self.missing(parameter)) }
                continue
            }
            guard let schema = parameter.schema else { continue }
            let value: JSON
            if schemas.isArray(schema) {
                let items =
                    parameter.explodes && parameter.location == .query
                    ? texts : texts.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
                let itemSchema = schemas.itemSchema(of: schema)
                value = .array(items.map { item in itemSchema.map { schemas.parameterValue(item, for: $0) } ?? .string(item) })
            } else if schemas.isObject(schema) {
                // An object in a parameter's other styles (`form` exploded into its members, say) is not read.
                continue
            } else {
                value = schemas.parameterValue(texts[texts.count - 1], for: schema)
            }
            problems += violations(of: value, parameter: parameter, schema: schema, coercing: false)
        }
        if !problems.isEmpty { throw Self.problem(.badRequest, problems, operation: operation, what: "parameters") }
        guard let body = operation.body else { return }
        try check(request, body: body, operation: operation)
    }

    func check(_ request: MockRequest, body: Body, operation: Operation) throws(HTTPProblem) {
        guard !request.body.isEmpty else {
            guard body.isRequired else { return }
            throw Self.problem(
                .unprocessableContent,
                [(["in": "body", "pointer": "", "keyword": "required", "detail": "a body is required"], "a body is required")],
                operation: operation, what: "body")
        }
        guard !body.media.isEmpty else { return }
        let sent = request.headerFields[.contentType].map(HeaderValue.mediaType(of:)) ?? ""
        let chosen: (type: String, schema: SchemaSet.Handle?)?
        if sent.isEmpty {
            // No Content-Type: read as JSON when the document takes JSON, as the server's routes do.
            chosen = body.media.first { Self.isJSON($0.type) }
        } else {
            // JSON in another JSON type than the one listed (`application/json` where the document says
            // `application/merge-patch+json`) is read as the listed one: the server reads both alike.
            chosen =
                body.media.first { Self.mediaType(sent, matches: $0.type) }
                ?? (Self.isJSON(sent) ? body.media.first { Self.isJSON($0.type) } : nil)
        }
        guard let chosen else {
            let listed = body.media.map(\.type).joined(separator: ", ")
            throw HTTPProblem(
                .unsupportedMediaType,
                detail: "\(operation.place) takes \(listed); the request's Content-Type is '\(sent.prefix(100))'",
                extensions: ["operation": .string(operation.place)])
        }
        guard let schema = chosen.schema else { return }
        let value: JSON
        do {
            value = try JSON(parsing: request.body)
        } catch {
            throw HTTPProblem(.badRequest, detail: "The body is not valid JSON: \(error.description)")
        }
        // A merge patch is a part of the resource its schema describes: what it leaves out stays as it is.
        let partial = HeaderValue.mediaType(of: chosen.type) == "application/merge-patch+json"
        let found = schemas.validate(value, against: schema, direction: .request, partial: partial)
        guard !found.isEmpty else { return }
        let problems: [(JSON, String)] = found.map { violation in
            (
                [
                    "in": "body", "pointer": .string(violation.pointer), "keyword": .string(violation.keyword),
                    "detail": .string(violation.message),
                ],
                violation.pointer.isEmpty ? "body: \(violation.message)" : "body \(violation.pointer): \(violation.message)"
            )
        }
        throw Self.problem(.unprocessableContent, problems, operation: operation, what: "body")
    }

    /// Whether a sent media type is one the document lists (`*/*` and `type/*` take their kind).
    static func mediaType(_ sent: String, matches listed: String) -> Bool {
        let name = HeaderValue.mediaType(of: listed)
        if name == "*/*" || name == sent { return true }
        if name.hasSuffix("/*") { return sent.hasPrefix(name.dropLast()) }
        return false
    }

    /// Fields OpenAPI says a header parameter never describes: the exchange's own.
    static let ignoredHeaders: Set<String> = ["accept", "content-type", "authorization"]

    func violations(of value: JSON, parameter: Parameter, schema: SchemaSet.Handle, coercing: Bool) -> [(JSON, String)] {
        var checked = value
        if coercing, case .object(let object) = value {
            // deepObject members arrive as text: each as its property's schema wants it.
            var typed = JSONObject()
            for (name, member) in object {
                guard case .string(let text) = member else { continue }
                typed[name] = schemas.parameterValue(text, for: schemas.propertySchema(name, of: schema) ?? schema)
            }
            checked = .object(typed)
        }
        return schemas.validate(checked, against: schema, direction: .request, limit: 5).map { violation in
            let label = "\(parameter.location.rawValue) parameter '\(parameter.name.prefix(100))'"
            return (
                [
                    "in": .string(parameter.location.rawValue), "name": .string(parameter.name),
                    "pointer": .string(violation.pointer), "keyword": .string(violation.keyword),
                    "detail": .string(violation.message),
                ],
                "\(label)\(violation.pointer.isEmpty ? "" : " " + violation.pointer): \(violation.message)"
            )
        }
    }

    static func missing(_ parameter: Parameter) -> (JSON, String) {
        let label = "\(parameter.location.rawValue) parameter '\(parameter.name.prefix(100))'"
        return (
            [
                "in": .string(parameter.location.rawValue), "name": .string(parameter.name), "pointer": "",
                "keyword": "required", "detail": "is required",
            ],
            "\(label) is required"
        )
    }

    static func problem(
        _ status: HTTPResponse.Status, _ problems: [(JSON, String)], operation: Operation, what: String
    ) -> HTTPProblem {
        let first = problems.first?.1 ?? ""
        let more = problems.count > 1 ? " (and \(problems.count - 1) more)" : ""
        return HTTPProblem(
            status, title: "The request does not match the API document",
            detail: "\(first)\(more)",
            extensions: ["operation": .string(operation.place), "errors": .array(problems.map(\.0))])
    }

    /// `a=1; b=2` pairs, in order.
    static func cookies(in fields: [String]) -> [(name: String, value: String)] {
        fields.flatMap { field in
            field.split(separator: ";").compactMap { pair -> (name: String, value: String)? in
                guard let equals = pair.firstIndex(of: "=") else { return nil }
                return (
                    String(pair[..<equals].drop(while: { $0 == " " })),
                    String(pair[pair.index(after: equals)...])
                )
            }
        }
    }
}
