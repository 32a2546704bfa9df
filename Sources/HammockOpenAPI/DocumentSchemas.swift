import HammockJSON
import HammockServer
import HammockWire

/// An OpenAPI document's schemas, read in either dialect (3.0's `nullable` and `example`, 3.1's type
/// arrays and `examples`), with `$ref`s followed inside the document.
struct DocumentSchemas {
    let root: JSON

    /// How many `$ref`s in a row are followed before giving up: a chain longer than this is a cycle.
    static let maximumHops = 32
    /// How deep an example is made: a recursive schema (a comment with replies) stops here.
    static let maximumExampleDepth = 6

    /// `value` with its `$ref` followed, or `value` itself; `nil` for a reference outside the document
    /// (another file or a URL), to nothing, or around in a cycle.
    func resolve(_ value: JSON?) -> JSON? {
        var current = value
        for _ in 0..<Self.maximumHops {
            guard case .object(let object)? = current, case .string(let reference)? = object["$ref"] else { return current }
            current = lookUp(reference)
            if current == nil { return nil }
        }
        return nil
    }

    /// Whether `value` is a `$ref` that cannot be followed inside the document.
    func isUnresolvable(_ value: JSON?) -> Bool {
        guard case .object(let object)? = value, object["$ref"] != nil else { return false }
        return resolve(value) == nil
    }

    /// The value at a local JSON pointer such as `#/components/schemas/Pet`.
    func lookUp(_ reference: String) -> JSON? {
        guard reference.hasPrefix("#") else { return nil }
        let pointer = reference.dropFirst()
        guard pointer.isEmpty || pointer.hasPrefix("/") else { return nil }
        var current: JSON? = root
        for rawToken in pointer.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            let token = Self.unescape(PercentEncoding.decode(rawToken) ?? String(rawToken))
            switch current {
            case .object(let object)?: current = object[token]
            case .array(let elements)?:
                guard let index = Int(token), elements.indices.contains(index) else { return nil }
                current = elements[index]
            default: return nil
            }
        }
        return current
    }

    /// The schema as an object (after its `$ref`), with `allOf` parts merged into one.
    func object(_ schema: JSON?) -> JSONObject? {
        guard case .object(var object)? = resolve(schema) else { return nil }
        if case .array(let parts)? = object["allOf"] {
            var properties = object["properties"]?.objectValue ?? JSONObject()
            var required = object["required"]?.arrayValue ?? []
            for part in parts {
                guard let resolved = self.object(part) else { continue }
                for (name, property) in resolved["properties"]?.objectValue ?? JSONObject() where properties[name] == nil {
                    properties[name] = property
                }
                required += resolved["required"]?.arrayValue ?? []
                if object["type"] == nil, let type = resolved["type"] { object["type"] = type }
            }
            object["properties"] = .object(properties)
            object["required"] = .array(required)
            object["allOf"] = nil
        }
        return object
    }

    /// The schema's type other than `null`: from `type` (a string, or 3.1's array), else implied by
    /// `properties` (object) or `items` (array); `nil` when the schema allows anything.
    func type(of schema: JSONObject) -> String? {
        switch schema["type"] {
        case .string(let name)?: return name
        case .array(let names)?:
            return names.compactMap(\.stringValue).first { $0 != "null" }
        default:
            if schema["properties"] != nil { return "object" }
            if schema["items"] != nil { return "array" }
            return nil
        }
    }

    /// Whether the schema allows `null`: 3.1's `"null"` among the types, 3.0's `nullable`, a union with a
    /// null branch, or no type at all.
    func allowsNull(_ schema: JSON?) -> Bool {
        guard let object = object(schema) else { return true }
        if object["nullable"]?.boolValue == true { return true }
        switch object["type"] {
        case .string(let name)?: return name == "null"
        case .array(let names)?: return names.contains("null")
        default: break
        }
        for union in ["oneOf", "anyOf"] {
            if case .array(let choices)? = object[union] { return choices.contains { allowsNull($0) } }
        }
        return object["properties"] == nil && object["items"] == nil && object["enum"] == nil && object["const"] == nil
    }

    /// The record properties of an object schema, in document order; `nil` when it is no object schema.
    func recordProperties(_ schema: JSON?) -> JSONObject? {
        guard let object = object(schema), type(of: object) == "object" || object["properties"] != nil,
            case .object(let properties)? = object["properties"], !properties.isEmpty
        else { return nil }
        return properties
    }

    /// The schema of an array's items, when `schema` is an array.
    func items(_ schema: JSON?) -> JSON? {
        guard let object = object(schema), type(of: object) == "array" else { return nil }
        return object["items"]
    }

    /// The field type that keeps a property's values: `format: date` and `date-time` are dates, `byte` is
    /// base64 (a blob), objects, arrays and unions are JSON.
    func fieldType(_ schema: JSON?) -> FieldType {
        guard let object = object(schema) else { return .json }
        // A string that is a date or a date-time (how Hammock's own documents say a date field).
        let formats = (object["anyOf"] ?? object["oneOf"])?.arrayValue?.map { $0.objectValue ?? JSONObject() }
        if let formats, type(of: object) == "string",
            formats.allSatisfy({ $0.keys == ["format"] && ["date", "date-time"].contains($0["format"]?.stringValue ?? "") })
        {
            return .date
        }
        if object["oneOf"] != nil || object["anyOf"] != nil { return .json }
        switch type(of: object) {
        case "string":
            if object["contentEncoding"]?.stringValue == "base64" { return .blob }
            switch object["format"]?.stringValue {
            case "date", "date-time": return .date
            case "byte": return .blob
            default: return .string
            }
        case "integer": return .integer
        case "number": return .float
        case "boolean": return .boolean
        default: return .json
        }
    }

    /// The example the schema gives (3.1's `examples`, 3.0's `example`, `const`, `default`, the first
    /// of `enum`), if any.
    func givenExample(_ schema: JSONObject) -> JSON? {
        if case .array(let examples)? = schema["examples"], let first = examples.first { return first }
        if let example = schema["example"] { return example }
        if let constant = schema["const"] { return constant }
        if let value = schema["default"] { return value }
        if case .array(let choices)? = schema["enum"], let first = choices.first { return first }
        return nil
    }

    /// A value that fits `schema`: its own example where it gives one, else one made from its type,
    /// format and bounds. The same schema always gives the same value.
    func example(for schema: JSON?, depth: Int = 0) -> JSON {
        guard depth <= Self.maximumExampleDepth, let object = object(schema) else { return .null }
        if let given = givenExample(object) { return given }
        for union in ["oneOf", "anyOf"] {
            if case .array(let choices)? = object[union], let first = choices.first {
                return example(for: first, depth: depth + 1)
            }
        }
        switch type(of: object) {
        case "object":
            var members = JSONObject()
            for (name, property) in object["properties"]?.objectValue ?? JSONObject() {
                if resolve(property)?.objectValue?["writeOnly"]?.boolValue == true { continue }
                // Past the depth a recursive member is left out rather than written as null.
                if depth + 1 > Self.maximumExampleDepth, type(of: self.object(property) ?? JSONObject()) == "object" {
                    continue
                }
                members[name] = example(for: property, depth: depth + 1)
            }
            return .object(members)
        case "array":
            guard depth + 1 <= Self.maximumExampleDepth, let items = object["items"] else { return .array([]) }
            return .array([example(for: items, depth: depth + 1)])
        case "string": return .string(Self.exampleString(object))
        case "integer": return .integer(Self.exampleInteger(object))
        case "number": return .double(Self.exampleNumber(object))
        case "boolean": return .bool(true)
        default: return .null
        }
    }

    /// A JSON pointer token with `~1` read as `/` and `~0` as `~` (RFC 6901).
    static func unescape(_ token: String) -> String {
        guard token.contains("~") else { return token }
        var result = ""
        var escaping = false
        for character in token {
            if escaping {
                result.append(character == "1" ? "/" : character == "0" ? "~" : character)
                escaping = false
            } else if character == "~" {
                escaping = true
            } else {
                result.append(character)
            }
        }
        return result
    }

    static func exampleString(_ schema: JSONObject) -> String {
        let byFormat: [String: String] = [
            "date-time": "2026-01-01T09:30:00Z", "date": "2026-01-01", "time": "09:30:00",
            "uuid": "3f0c5a8e-2b1d-4c7a-9e6f-1a2b3c4d5e6f", "email": "ada@example.com", "uri": "https://example.com/",
            "url": "https://example.com/", "hostname": "example.com", "ipv4": "192.0.2.1", "ipv6": "2001:db8::1",
            "byte": "aGFtbW9jaw==", "password": "secret",
        ]
        var text = schema["format"]?.stringValue.flatMap { byFormat[$0] } ?? "string"
        let minimum = max(0, min(schema["minLength"]?.intValue ?? 0, 10_000))
        if text.count < minimum { text += String(repeating: "x", count: minimum - text.count) }
        if let maximum = schema["maxLength"]?.intValue, maximum >= 0, text.count > maximum { text = String(text.prefix(maximum)) }
        return text
    }

    static func exampleInteger(_ schema: JSONObject) -> Int {
        var value = 1
        if let minimum = schema["minimum"]?.doubleValue, minimum.isFinite, minimum < 9e18, minimum > -9e18 {
            value = max(value, Int(minimum.rounded(.up)))
        }
        // 3.1: a number; 3.0: a flag on minimum.
        if let exclusive = schema["exclusiveMinimum"]?.doubleValue, exclusive.isFinite, exclusive < 9e18, exclusive > -9e18 {
            value = max(value, Int(exclusive.rounded(.down)) + 1)
        } else if schema["exclusiveMinimum"]?.boolValue == true, let minimum = schema["minimum"]?.intValue, value == minimum {
            value = minimum + 1
        }
        if let maximum = schema["maximum"]?.doubleValue, maximum.isFinite, maximum < 9e18, maximum > -9e18 {
            value = min(value, Int(maximum.rounded(.down)))
        }
        return value
    }

    static func exampleNumber(_ schema: JSONObject) -> Double {
        var value = 1.5
        if let minimum = schema["minimum"]?.doubleValue, minimum.isFinite { value = max(value, minimum) }
        if let exclusive = schema["exclusiveMinimum"]?.doubleValue, exclusive.isFinite, value <= exclusive {
            value = exclusive + 1
        }
        if let maximum = schema["maximum"]?.doubleValue, maximum.isFinite { value = min(value, maximum) }
        return value
    }
}
