import HTTPTypes
import HammockJSON
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
        /// For a path parameter inside a segment (`{month}.csv`): which segment, and the text around it.
        var segment: (index: Int, prefix: String, suffix: String)?
    }

    struct Body: Sendable {
        var isRequired: Bool
        /// Each media type documented, with the schema of the JSON ones.
        var media: [(type: String, schema: SchemaSet.Handle?)]
    }

    /// How a client proves who it is, as OpenAPI's `securitySchemes` say.
    enum Scheme: Sendable, Hashable {
        /// `Authorization: Bearer TOKEN` (`http` with `bearer`, `oauth2`, `openIdConnect`).
        case bearer
        /// `Authorization: Basic BASE64`.
        case basic
        /// `Authorization: SCHEME …` for another HTTP scheme (`Digest`, say).
        case http(String)
        /// A key in a header, query parameter or cookie.
        case apiKey(Location, String)
        /// Mutual TLS: the mock serves plain HTTP, so it cannot ask; it lets the request in.
        case notChecked
    }

    struct Operation: Sendable {
        var method: HTTPRequest.Method
        var pattern: PathPattern
        var parameters: [Parameter]
        var body: Body?
        /// Each way the request may prove who it is, every scheme of one required together; empty when it
        /// need not (or the document lets anyone in with `{}`).
        var security: [[(name: String, scheme: Scheme)]] = []
        /// The error answers the document gives, sent in place of problem+json.
        var errors: DocumentedErrors?

        /// The scopes each way in with a bearer token asks of it (OAuth 2.0's, as the requirement lists
        /// them); empty when no way in takes a bearer token.
        var bearerScopes: [[String]] = []

        /// Whether one way in the document offers is a bearer token.
        var acceptsBearer: Bool { !bearerScopes.isEmpty }
        /// How many of the pattern's segments are literal: the most literal pattern wins a path that two
        /// match (`/pets/mine` before `/pets/:id`), as OpenAPI says.
        var literalSegments: Int
        /// `GET /pets/:petId`, for problems.
        var place: String { "\(method.rawValue) \(pattern)" }
    }

    let schemas: SchemaSet
    let operations: [Operation]
    /// Each operation's entry as the section gives it, in the order of ``operations``.
    let entries: [JSONObject]
    /// What is not checked, and why (a schema keyword it cannot read, a pattern it cannot test).
    public let notes: [String]
    /// The section's named schemas, which `$ref`s to `#/components/schemas/NAME` in ``documented(_:_:)``'s
    /// parameters and bodies find.
    public let documentedSchemas: JSONObject

    /// What the document says the operation `method` on `pattern` (the server's pattern, `/pets/:petId`)
    /// takes: its parameters (`name`, `in`, `required`, `schema`, `style`, `explode`) and its body
    /// (`required`, `content`), as OpenAPI writes them; `nil` when the section has no such operation. What
    /// the mock's own document lists for a stub made from an operation.
    public func documented(_ method: HTTPRequest.Method, _ pattern: String) -> (parameters: [JSON], body: JSON?)? {
        guard
            let index = operations.indices.first(where: { index in
                operations[index].method == method && entries[index]["path"]?.stringValue == pattern
            })
        else { return nil }
        let entry = entries[index]
        let parameters = (entry["parameters"]?.arrayValue ?? []).map { parameter in
            var object = parameter.objectValue ?? [:]
            object["segment"] = nil
            object["template"] = nil
            return JSON.object(object)
        }
        return (parameters, entry["body"])
    }

    /// How many operations are checked.
    public var count: Int { operations.count }

    /// The keys of the `validation` section and of each operation, parameter and body.
    static let sectionKeys = ["schemas", "securitySchemes", "operations"]
    static let operationKeys = ["method", "path", "parameters", "body", "security", "errors"]
    static let parameterKeys = ["name", "in", "required", "schema", "style", "explode", "segment", "template"]
    static let bodyKeys = ["required", "content"]

    /// Reads a `validation` section; `fail` names the key path of a mistake.
    init(json: JSON, at path: String, fail: (String, String) -> ConfigurationError) throws(ConfigurationError) {
        guard case .object(let object) = json else { throw fail(path, "expected {\"schemas\": {...}, \"operations\": [...]}") }
        for key in object.keys where !Self.sectionKeys.contains(key) {
            throw fail("\(path).\(key)", "unknown key; expected schemas, securitySchemes and operations")
        }
        var schemes: [String: Scheme] = [:]
        var schemeNotes: [String] = []
        if let value = object["securitySchemes"], !value.isNull {
            guard case .object(let given) = value else {
                throw fail("\(path).securitySchemes", "expected an object of named security schemes")
            }
            for (name, definition) in given {
                let (scheme, note) = try Self.scheme(definition, at: "\(path).securitySchemes.\(name)", fail: fail)
                schemes[name] = scheme
                if let note { schemeNotes.append("security scheme \(name): \(note)") }
            }
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
            operations.append(
                try Self.operation(element, at: "\(path).operations[\(index)]", schemas: &schemas, schemes: schemes, fail: fail))
        }
        self.schemas = schemas
        self.operations = operations
        entries = list.map { $0.objectValue ?? [:] }
        documentedSchemas = named
        notes = schemeNotes.sorted() + schemas.notes.map(\.description)
    }

    /// A `securitySchemes` entry as OpenAPI writes it, and a note when the mock cannot check it.
    static func scheme(
        _ json: JSON, at path: String, fail: (String, String) -> ConfigurationError
    ) throws(ConfigurationError) -> (Scheme, String?) {
        guard case .object(let object) = json, case .string(let type)? = object["type"] else {
            throw fail(path, "expected {\"type\": \"http\", \"scheme\": \"bearer\"} or another OpenAPI security scheme")
        }
        switch type {
        case "http":
            guard case .string(let name)? = object["scheme"], !name.isEmpty, name.utf8.count <= 100 else {
                throw fail("\(path).scheme", "expected an HTTP authentication scheme such as \"bearer\" or \"basic\"")
            }
            switch name.lowercased() {
            case "bearer": return (.bearer, nil)
            case "basic": return (.basic, nil)
            default: return (.http(name), nil)
            }
        case "oauth2", "openIdConnect":
            return (.bearer, nil)
        case "apiKey":
            guard case .string(let name)? = object["name"], !name.isEmpty else {
                throw fail("\(path).name", "expected the name of the header, query parameter or cookie")
            }
            guard case .string(let place)? = object["in"], let location = Location(rawValue: place), location != .path else {
                throw fail("\(path).in", "expected header, query or cookie")
            }
            return (.apiKey(location, name), nil)
        case "mutualTLS":
            return (.notChecked, "mutual TLS is not asked for over plain HTTP; every request is let in")
        default:
            throw fail(
                "\(path).type", "unknown type '\(type.prefix(100))'; expected http, apiKey, oauth2, openIdConnect or mutualTLS")
        }
    }

    static func operation(
        _ json: JSON, at path: String, schemas: inout SchemaSet, schemes: [String: Scheme],
        fail: (String, String) -> ConfigurationError
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
                // `"segment": 2, "template": "{month}.csv"`: the parameter is inside the path's third segment.
                var segment: (index: Int, prefix: String, suffix: String)?
                if let index = parameter["segment"] {
                    guard location == .path, case .integer(let position) = index, (0..<pattern.segments.count).contains(position),
                        case .string(let template)? = parameter["template"], let range = template.firstRange(of: "{\(name)}")
                    else {
                        throw fail(
                            "\(place).segment",
                            "expected the index of a path segment and its template, such as \"segment\": 2, \"template\": \"{\(name)}.csv\""
                        )
                    }
                    segment = (position, String(template[..<range.lowerBound]), String(template[range.upperBound...]))
                }
                let schema = parameter["schema"].map {
                    schemas.add($0, place: "\(methodName) \(text) \(location.rawValue) \(name)")
                }
                parameters.append(
                    Parameter(
                        name: name, location: location,
                        isRequired: location == .path || parameter["required"]?.boolValue == true, schema: schema,
                        explodes: parameter["explode"]?.boolValue ?? (style == nil || style == "form"),
                        isDeepObject: style == "deepObject", segment: segment))
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
                let schema = Self.isJSON(type) || Self.isForm(type) ? entry.objectValue?["schema"] : nil
                media.append((type.lowercased(), schema.map { schemas.add($0, place: "\(methodName) \(text) body") }))
            }
            body = Body(isRequired: given["required"]?.boolValue ?? false, media: media)
        }
        var security: [[(name: String, scheme: Scheme)]] = []
        var bearerScopes: [[String]] = []
        if let value = object["security"], !value.isNull {
            guard case .array(let requirements) = value else {
                throw fail("\(path).security", "expected an array of requirements such as [{\"bearerAuth\": []}]")
            }
            for (index, requirement) in requirements.enumerated() {
                guard case .object(let names) = requirement else {
                    throw fail("\(path).security[\(index)]", "expected an object naming security schemes")
                }
                var all: [(name: String, scheme: Scheme)] = []
                var scopes: [String]?
                for (name, listed) in names {
                    guard let scheme = schemes[name] else {
                        throw fail("\(path).security[\(index)].\(name)", "no security scheme is named '\(name.prefix(100))'")
                    }
                    guard case .array(let values) = listed, values.allSatisfy({ $0.stringValue != nil }) else {
                        throw fail("\(path).security[\(index)].\(name)", "expected an array of scopes such as [\"tasks:write\"]")
                    }
                    all.append((name, scheme))
                    if scheme == .bearer { scopes = (scopes ?? []) + values.compactMap(\.stringValue) }
                }
                // `{}` lets a request in without credentials: the operation asks for none.
                if all.isEmpty {
                    security = []
                    bearerScopes = []
                    break
                }
                security.append(all)
                if let scopes { bearerScopes.append(scopes) }
            }
        }
        var errors: DocumentedErrors?
        if let value = object["errors"], !value.isNull {
            errors = try DocumentedErrors(
                json: value, at: "\(path).errors", schemas: &schemas, place: "\(methodName) \(text)", fail: fail)
        }
        let literals = pattern.segments.count { if case .literal = $0 { true } else { false } }
        return Operation(
            method: method, pattern: pattern, parameters: parameters, body: body, security: security, errors: errors,
            bearerScopes: bearerScopes,
            literalSegments: literals)
    }

    /// `application/json`, `application/problem+json`, `*/*`: a media type whose body is JSON.
    static func isJSON(_ type: String) -> Bool {
        let name = HeaderValue.mediaType(of: type)
        return name == "application/json" || name.hasSuffix("+json") || name == "*/*" || name == "application/*"
    }

    /// `application/x-www-form-urlencoded` and `multipart/form-data`: a body of named fields whose values
    /// arrive as text (or files), which are checked as their properties' schemas want them.
    static func isForm(_ type: String) -> Bool {
        let name = HeaderValue.mediaType(of: type)
        return name == "application/x-www-form-urlencoded" || name == "multipart/form-data"
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
        try check(request, operation: operation, captures: captures)
    }

    /// The same for the operation the request is (``operation(for:)``) and the path's captures.
    func check(_ request: MockRequest, operation: Operation, captures: [String: String]) throws(HTTPProblem) {
        if !operation.security.isEmpty { try checkCredentials(request, operation: operation) }
        var problems: [(JSON, String)] = []
        var query: [ListQuery.Item]?
        for parameter in operation.parameters where problems.count < 20 {
            let texts: [String]
            switch parameter.location {
            case .path:
                if let (index, prefix, suffix) = parameter.segment {
                    let segments = request.path.split(separator: "/", omittingEmptySubsequences: true)
                    guard index < segments.count, let segment = PercentEncoding.decode(segments[index]) else { continue }
                    guard segment.hasPrefix(prefix), segment.hasSuffix(suffix), segment.count >= prefix.count + suffix.count
                    else {
                        problems.append(Self.notShaped(parameter, segment: segment, prefix: prefix, suffix: suffix))
                        continue
                    }
                    texts = [String(segment.dropFirst(prefix.count).dropLast(suffix.count))]
                } else {
                    texts = captures[parameter.name].map { [$0] } ?? []
                }
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
        if Self.isForm(sent) {
            let fields =
                sent == "multipart/form-data"
                ? try MultipartForm.decode(request.body, contentType: request.headerFields[.contentType] ?? "")
                : try FormURLEncoded.decode(request.body)
            value = .object(formValues(fields, schema: schema))
        } else {
            do {
                value = try JSON(parsing: request.body)
            } catch {
                throw HTTPProblem(.badRequest, detail: "The body is not valid JSON: \(error.description)")
            }
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

    /// The document's answer in place of a problem the mock has for a request to `operation`, when the
    /// document covers its status (``DocumentedErrors``).
    func documentedAnswer(to problem: HTTPProblem, for operation: Operation) -> MockResponse? {
        operation.errors?.answer(to: problem, schemas: schemas)
    }

    // MARK: Credentials

    /// Throws a 401 unless one of the operation's requirements is met: every scheme it names has a
    /// well-formed credential. Any well-formed credential is accepted: the document says how a client
    /// proves who it is, not who may.
    func checkCredentials(_ request: MockRequest, operation: Operation) throws(HTTPProblem) {
        let authorization = request.headerFields[.authorization]
        var malformedBearer = false
        for requirement in operation.security {
            var met = true
            for (_, scheme) in requirement {
                switch Self.credential(for: scheme, in: request, authorization: authorization) {
                case .present: continue
                case .malformed:
                    if scheme == .bearer { malformedBearer = true }
                    met = false
                case .absent: met = false
                }
            }
            if met { return }
        }
        var challenges: [String] = []
        var wanted: [String] = []
        for requirement in operation.security {
            var parts: [String] = []
            for (_, scheme) in requirement {
                switch scheme {
                case .bearer:
                    let error = malformedBearer ? #", error="invalid_token""# : ""
                    challenges.append(#"Bearer realm="hammock"\#(error)"#)
                    parts.append("a bearer token (Authorization: Bearer …)")
                case .basic:
                    challenges.append(#"Basic realm="hammock""#)
                    parts.append("a user and password (Authorization: Basic …)")
                case .http(let name):
                    challenges.append(#"\#(name) realm="hammock""#)
                    parts.append("Authorization: \(name) …")
                case .apiKey(let location, let name):
                    // No standard challenge names an API key; this one says where it goes.
                    challenges.append(#"ApiKey realm="hammock", in="\#(location.rawValue)", name="\#(name.prefix(100))""#)
                    parts.append("an API key in the \(location.rawValue) \(name.prefix(100))")
                case .notChecked: continue
                }
            }
            wanted.append(parts.joined(separator: " and "))
        }
        var fields = HTTPFields()
        for challenge in Self.unique(challenges) { fields.append(HTTPField(name: .wwwAuthenticate, value: challenge)) }
        throw HTTPProblem(
            .unauthorized,
            detail:
                "\(operation.place) needs \(Self.unique(wanted).joined(separator: ", or "))\(malformedBearer ? "; the bearer token sent is malformed" : "")",
            headerFields: fields, extensions: ["operation": .string(operation.place)])
    }

    enum Credential {
        case present, malformed, absent
    }

    static func credential(for scheme: Scheme, in request: MockRequest, authorization: String?) -> Credential {
        func token(after name: String) -> Credential {
            guard let authorization else { return .absent }
            let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard parts.first?.lowercased() == name.lowercased() else { return .absent }
            guard parts.count == 2, isToken68(parts[1].trimmingSpaces) else { return .malformed }
            return .present
        }
        switch scheme {
        case .bearer: return token(after: "Bearer")
        case .basic: return token(after: "Basic")
        case .http(let name):
            guard let authorization else { return .absent }
            return authorization.lowercased().hasPrefix(name.lowercased() + " ") ? .present : .absent
        case .apiKey(let location, let name):
            let values: [String]
            switch location {
            case .header: values = HTTPField.Name(name).map { request.headerFields[values: $0] } ?? []
            case .query: values = ((try? ListQuery.items(of: request.query ?? "")) ?? []).filter { $0.name == name }.map(\.value)
            case .cookie: values = cookies(in: request.headerFields[values: .cookie]).filter { $0.name == name }.map(\.value)
            case .path: values = []
            }
            return values.contains { !$0.isEmpty } ? .present : .absent
        case .notChecked: return .present
        }
    }

    /// RFC 7235's token68: what a bearer token or a Basic credential is made of.
    static func isToken68(_ text: Substring) -> Bool {
        var sawPadding = false
        guard !text.isEmpty else { return false }
        for byte in text.utf8 {
            if byte == UInt8(ascii: "=") {
                sawPadding = true
                continue
            }
            let isLetterOrDigit = (byte | 0x20) &- UInt8(ascii: "a") < 26 || byte &- UInt8(ascii: "0") < 10
            guard !sawPadding, isLetterOrDigit || "-._~+/".utf8.contains(byte) else { return false }
        }
        return true
    }

    static func unique(_ texts: [String]) -> [String] {
        var seen = Set<String>()
        return texts.filter { seen.insert($0).inserted }
    }

    /// Whether a sent media type is one the document lists (`*/*` and `type/*` take their kind).
    static func mediaType(_ sent: String, matches listed: String) -> Bool {
        let name = HeaderValue.mediaType(of: listed)
        if name == "*/*" || name == sent { return true }
        if name.hasSuffix("/*") { return sent.hasPrefix(name.dropLast()) }
        return false
    }

    /// A form's fields as their properties' schemas want them: `"7"` is `7` for an integer, a field sent
    /// once is a one-item array for an array, a JSON text is its object for an object (OpenAPI's default
    /// encoding of an object part); a file part stays the base64 text it arrives as.
    func formValues(_ fields: JSONObject, schema: SchemaSet.Handle) -> JSONObject {
        func typed(_ value: JSON, _ property: SchemaSet.Handle) -> JSON {
            guard case .string(let text) = value else { return value }
            if schemas.isObject(property), let parsed = try? JSON(parsing: Array(text.utf8)), parsed.objectValue != nil {
                return parsed
            }
            return schemas.parameterValue(text, for: property)
        }
        var object = JSONObject(minimumCapacity: fields.count)
        for (name, value) in fields {
            guard let property = schemas.propertySchema(name, of: schema) else {
                object[name] = value
                continue
            }
            if schemas.isArray(property) {
                let items = schemas.itemSchema(of: property)
                object[name] = .array((value.arrayValue ?? [value]).map { item in items.map { typed(item, $0) } ?? item })
            } else {
                object[name] = typed(value, property)
            }
        }
        return object
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

    static func notShaped(_ parameter: Parameter, segment: String, prefix: String, suffix: String) -> (JSON, String) {
        let detail = "'\(segment.prefix(100))' is not of the form \(prefix){\(parameter.name)}\(suffix)"
        return (
            [
                "in": "path", "name": .string(parameter.name), "pointer": "", "keyword": "template",
                "detail": .string(detail),
            ],
            "path parameter '\(parameter.name.prefix(100))': \(detail)"
        )
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

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.last == " " { text = text.dropLast() }
        return text
    }
}
