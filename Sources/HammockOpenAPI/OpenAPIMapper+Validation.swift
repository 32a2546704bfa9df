import HammockJSON
import HammockServer

extension OpenAPIMapper {
    /// The configuration's `validation` section: every operation the document has, with its parameters
    /// and request body, and the document's named schemas for their `$ref`s. The server checks each
    /// request against it (`RequestChecks`); `nil` when no operation has anything to check.
    func validation(for operations: [Operation]) -> JSON? {
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
                // A path parameter inside a segment (`{month}.csv`) is not captured by the route.
                if location == "path", !operation.segments.contains(.parameter(name)) { continue }
                var checkedParameter: JSONObject = ["name": .string(name), "in": .string(location)]
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
            guard entry.count > 2 else { continue }
            checked.append(.object(entry))
        }
        guard !checked.isEmpty else { return nil }
        var section: JSONObject = ["operations": .array(checked)]
        if case .object(let named)? = schemas.root["components"]?["schemas"], !named.isEmpty {
            section["schemas"] = .object(named)
        }
        return .object(section)
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
