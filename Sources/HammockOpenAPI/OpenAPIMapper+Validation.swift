import HammockJSON
import HammockServer

extension OpenAPIMapper {
    /// The configuration's `validation` section: every operation the document has, with its parameters
    /// and request body, and the document's named schemas for their `$ref`s. The server checks each
    /// request against it (`RequestChecks`); `nil` when no operation has anything to check.
    mutating func validation(for operations: [Operation]) -> JSON? {
        let root = schemas.root.objectValue ?? JSONObject()
        let schemes = securitySchemes(root)
        var used = Set<String>()
        var checked: [JSON] = []
        for operation in operations {
            // A path no route can have (a parameter named twice) is not mocked, and so not checked.
            let path = Self.routePattern(operation.segments)
            guard (try? PathPattern(path)) != nil else { continue }
            var entry: JSONObject = ["method": .string(operation.method), "path": .string(path)]
            var parameters: [JSON] = []
            var seen = Set<String>()
            for value in operation.object["parameters"]?.arrayValue ?? [] {
                guard case .object(let parameter)? = schemas.resolve(value),
                    case .string(let name)? = parameter["name"], case .string(let location)? = parameter["in"],
                    ["path", "query", "header", "cookie"].contains(location),
                    // The operation's own come first: a path item's parameter of the same name yields to it.
                    seen.insert("\(location) \(name)").inserted
                else { continue }
                var checkedParameter: JSONObject = ["name": .string(name), "in": .string(location)]
                // A path parameter inside a segment (`{month}.csv`) is read from that segment, when it is the
                // segment's only one; the route matches the segment as `*`.
                if location == "path", !operation.segments.contains(.parameter(name)) {
                    guard
                        let index = operation.segments.firstIndex(where: { segment in
                            guard case .partial(let text) = segment else { return false }
                            return text.contains("{\(name)}") && text.count(where: { $0 == "{" }) == 1
                        }), case .partial(let template) = operation.segments[index]
                    else { continue }
                    checkedParameter["segment"] = .integer(index)
                    checkedParameter["template"] = .string(template)
                }
                if parameter["required"]?.boolValue == true { checkedParameter["required"] = true }
                // A parameter given by `content` (JSON in a query item) is checked for presence only.
                if let schema = parameter["schema"] { checkedParameter["schema"] = schema }
                if case .string(let style)? = parameter["style"] { checkedParameter["style"] = .string(style) }
                if case .bool(let explode)? = parameter["explode"] { checkedParameter["explode"] = .bool(explode) }
                parameters.append(.object(checkedParameter))
            }
            if !parameters.isEmpty { entry["parameters"] = .array(parameters) }
            if case .object(let body)? = schemas.resolve(operation.object["requestBody"]) {
                var content = JSONObject()
                for (type, media) in body["content"]?.objectValue ?? JSONObject() {
                    var checkedMedia = JSONObject()
                    if let schema = media.objectValue?["schema"] { checkedMedia["schema"] = schema }
                    content[type] = .object(checkedMedia)
                }
                var checkedBody: JSONObject = ["content": .object(content)]
                if body["required"]?.boolValue == true { checkedBody["required"] = true }
                entry["body"] = .object(checkedBody)
            }
            // The operation's own requirements, else the document's; `[]` (or a `{}` among them) asks for none.
            if let requirements = security(of: operation, root: root, schemes: schemes) {
                // Each scheme with its scopes, which a bearer token of the mock's login must carry.
                entry["security"] = .array(requirements.map(JSON.object))
                for requirement in requirements { used.formUnion(requirement.keys) }
                usedSecuritySchemes.formUnion(used)
            }
            if let errors = documentedErrors(of: operation) { entry["errors"] = errors }
            guard entry.count > 2 else { continue }
            checked.append(.object(entry))
        }
        guard !checked.isEmpty else { return nil }
        var section: JSONObject = ["operations": .array(checked)]
        if !used.isEmpty {
            var defined = JSONObject()
            for name in used.sorted() { defined[name] = schemes[name] }
            section["securitySchemes"] = .object(defined)
        }
        if case .object(let named)? = schemas.root["components"]?["schemas"], !named.isEmpty {
            section["schemas"] = .object(named)
        }
        return .object(section)
    }

    /// The error answers an operation documents (a 4xx or 5xx code, `4XX`, `5XX`, `default`), each with
    /// its content type, its example (or one made from its schema) and where the problem's words go in it
    /// (`DocumentedErrors` on the server's side): the mock then answers its errors as the API does.
    func documentedErrors(of operation: Operation) -> JSON? {
        var entries: [JSON] = []
        let responses = operation.object["responses"]?.objectValue ?? JSONObject()
        for key in responses.keys.sorted() {
            let upper = key.uppercased()
            let status: String
            if upper == "DEFAULT" {
                status = "default"
            } else if upper == "4XX" || upper == "5XX" || Int(key).map({ (400...599).contains($0) }) == true {
                status = upper
            } else {
                continue
            }
            guard case .object(let response)? = schemas.resolve(responses[key]) else { continue }
            var entry: JSONObject = ["status": .string(status)]
            let content = response["content"]?.objectValue ?? JSONObject()
            if let json = Self.jsonMedia(content) {
                entry["contentType"] = .string(json.type.contains("*") ? "application/json" : json.type)
                let body = examples(of: json.media).first ?? schemas.example(for: json.media["schema"])
                entry["body"] = body
                if let schema = json.media["schema"] { entry["schema"] = schema }
                var fill = JSONObject()
                Self.problemPlaces(in: body, pointer: "", depth: 0, into: &fill)
                if !fill.isEmpty { entry["fill"] = .object(fill) }
            } else if let type = content.keys.sorted().first {
                entry["contentType"] = .string(type.contains("*") ? "text/plain" : type)
            }
            entries.append(.object(entry))
        }
        return entries.isEmpty ? nil : .array(entries)
    }

    /// Members of an error body that say what a problem's `detail`, `title` and `status` say, by the names
    /// APIs give them (`message`, `error_description`; `title`; `code`, `status`), down to three levels
    /// (`{"error": {"message": …}}`, `{"errors": [{"detail": …}]}`).
    static func problemPlaces(in body: JSON, pointer: String, depth: Int, into fill: inout JSONObject) {
        guard depth < 3 else { return }
        switch body {
        case .object(let members):
            for (name, value) in members {
                let place = pointer + "/" + name.replacing("~", with: "~0").replacing("/", with: "~1")
                let lowered = name.lowercased().filter { $0 != "_" && $0 != "-" }
                switch value {
                case .string:
                    if detailNames.contains(lowered), !fill.values.contains("detail") {
                        fill[place] = "detail"
                    } else if titleNames.contains(lowered), !fill.values.contains("title") {
                        fill[place] = "title"
                    } else if statusNames.contains(lowered), !fill.values.contains("status") {
                        fill[place] = "status"
                    }
                case .integer, .double:
                    if statusNames.contains(lowered), !fill.values.contains("status") { fill[place] = "status" }
                case .object, .array:
                    problemPlaces(in: value, pointer: place, depth: depth + 1, into: &fill)
                default: continue
                }
            }
        case .array(let items):
            if let first = items.first { problemPlaces(in: first, pointer: pointer + "/0", depth: depth + 1, into: &fill) }
        default: return
        }
    }

    static let detailNames: Set<String> = [
        "message", "detail", "details", "description", "errordescription", "errormessage", "msg", "reason",
    ]
    static let titleNames: Set<String> = ["title", "error", "summary", "errortitle"]
    static let statusNames: Set<String> = ["code", "status", "statuscode", "httpstatus", "httpcode", "errorcode"]

    /// The document's security schemes the mock can check, by name: an unknown type is noted and left out.
    mutating func securitySchemes(_ root: JSONObject) -> [String: JSON] {
        var schemes: [String: JSON] = [:]
        for (name, value) in root["components"]?["securitySchemes"]?.objectValue ?? JSONObject() {
            guard case .object(let scheme)? = schemas.resolve(value), case .string(let type)? = scheme["type"] else { continue }
            var kept: JSONObject = ["type": .string(type)]
            switch type {
            case "http":
                guard case .string(let name)? = scheme["scheme"], !name.isEmpty, name.utf8.count <= 100 else { continue }
                kept["scheme"] = .string(name)
            case "apiKey":
                guard case .string(let key)? = scheme["name"], !key.isEmpty, case .string(let place)? = scheme["in"],
                    ["header", "query", "cookie"].contains(place)
                else {
                    notes.append(
                        .init(
                            place: "components.securitySchemes.\(name)",
                            message: "not checked: an API key without a name or place"))
                    continue
                }
                kept["name"] = .string(key)
                kept["in"] = .string(place)
            case "oauth2", "openIdConnect", "mutualTLS":
                break
            default:
                notes.append(
                    .init(
                        place: "components.securitySchemes.\(name)", message: "not checked: an unknown type, \(type.prefix(100))")
                )
                continue
            }
            schemes[name] = .object(kept)
        }
        return schemes
    }

    /// The requirements an operation has, each the schemes it needs together with their scopes
    /// (`{"oauth": ["tasks:write"]}`); `nil` when it needs none. A requirement naming a scheme the document
    /// does not define is noted and dropped.
    mutating func security(of operation: Operation, root: JSONObject, schemes: [String: JSON]) -> [JSONObject]? {
        guard case .array(let requirements)? = operation.object["security"] ?? root["security"] else { return nil }
        var kept: [JSONObject] = []
        for requirement in requirements {
            guard case .object(let names) = requirement else { continue }
            if names.isEmpty { return nil }
            let unknown = names.keys.filter { schemes[$0] == nil }
            guard unknown.isEmpty else {
                notes.append(
                    .init(
                        place: operation.place,
                        message:
                            "security: \(unknown.joined(separator: ", ").prefix(200)) is no security scheme the mock can check; that way in is not offered"
                    ))
                continue
            }
            var requirement = JSONObject()
            for (name, scopes) in names {
                requirement[name] = .array((scopes.arrayValue ?? []).filter { $0.stringValue?.isEmpty == false })
            }
            kept.append(requirement)
        }
        return kept.isEmpty ? nil : kept
    }

    /// A path's segments as a route pattern (`/pets/:petId`); a segment with a parameter inside it
    /// (`{month}.csv`) is any one segment.
    static func routePattern(_ segments: [Segment]) -> String {
        var pattern = ""
        for segment in segments {
            switch segment {
            case .literal(let text): pattern += "/" + text
            case .parameter(let name): pattern += "/:" + name
            case .partial: pattern += "/*"
            }
        }
        return pattern.isEmpty ? "/" : pattern
    }
}
