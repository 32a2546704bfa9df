public import HammockJSON

/// JSON Schemas compiled to be checked against many values: the dialect OpenAPI 3.0 and 3.1 documents
/// write (JSON Schema 2020-12 with `nullable`, boolean `exclusiveMinimum`, `readOnly` and `writeOnly` as
/// OpenAPI reads them), with `$ref` to named schemas.
///
/// ```swift
/// var schemas = SchemaSet(named: ["Pet": ["type": "object", "required": ["name"],
///                                          "properties": ["name": ["type": "string", "maxLength": 20]]]])
/// let pet = schemas.add(["$ref": "#/components/schemas/Pet"], place: "POST /pets")
/// schemas.validate(["name": 7], against: pet)   // [/name: 7 is not a string (type)]
/// ```
/// What it checks: `type` (and 3.0's `nullable`), `enum`, `const`, numeric bounds and `multipleOf`,
/// lengths, `pattern` (``TextMatcher``: linear time), the formats `date-time`, `date`, `time`, `uuid`,
/// `email`, `ipv4`, `int32` and `int64`, item counts, `uniqueItems`, `items` and `prefixItems`,
/// `properties`, `required`, `additionalProperties`, `patternProperties`, member counts, `allOf`,
/// `anyOf`, `oneOf` (with a `discriminator`'s choice), `not`, and `$ref` to
/// `#/components/schemas/…`, `#/schemas/…`, `#/$defs/…` and `#/definitions/…`, with pointers below a
/// name. What it does not read (another keyword, a pattern it cannot test, a reference it cannot
/// resolve) accepts every value and is listed in ``notes``: a mock must not refuse what the document
/// allows.
public struct SchemaSet: Sendable {
    /// A compiled schema in the set.
    public struct Handle: Sendable, Hashable {
        let index: Int
    }

    /// Which side of an exchange a value is: a request skips `readOnly` members, a response `writeOnly`
    /// ones, as OpenAPI says.
    public enum Direction: Sendable, Hashable {
        case request, response
    }

    struct Types: OptionSet, Sendable, Hashable {
        let rawValue: UInt8
        static let null = Types(rawValue: 1)
        static let boolean = Types(rawValue: 2)
        static let integer = Types(rawValue: 4)
        static let number = Types(rawValue: 8)
        static let string = Types(rawValue: 16)
        static let array = Types(rawValue: 32)
        static let object = Types(rawValue: 64)
    }

    struct Bound: Sendable, Hashable {
        var value: Double
        var exclusive: Bool
    }

    enum Format: String, Sendable, Hashable {
        case dateTime = "date-time"
        case date, time, uuid, email, ipv4, int32, int64
    }

    /// One compiled schema: each keyword it has, children as indices into ``nodes``.
    struct Node: Sendable {
        /// `false`, or `not: {}`: no value.
        var rejectsAll = false
        var types: Types?
        var nullable = false
        var enumeration: [JSON]?
        var constant: JSON?
        var minimum: Bound?
        var maximum: Bound?
        var multipleOf: Double?
        var minLength: Int?
        var maxLength: Int?
        var pattern: TextMatcher?
        var format: Format?
        var minItems: Int?
        var maxItems: Int?
        var uniqueItems = false
        var prefixItems: [Int] = []
        var items: Int?
        var properties: [String: Int] = [:]
        var required: [String] = []
        /// `nil`: any other member; `.some(nil)`: none; `.some(index)`: each must match it.
        var additionalProperties: Int??
        var patternProperties: [(TextMatcher, Int)] = []
        var minProperties: Int?
        var maxProperties: Int?
        var allOf: [Int] = []
        var anyOf: [Int] = []
        var oneOf: [Int] = []
        var not: Int?
        var reference: Int?
        var readOnly = false
        var writeOnly = false
        /// The discriminator's member and the branch each value names.
        var discriminator: (property: String, mapping: [String: Int])?
    }

    /// The compiled schemas; a `$ref` points at one by index.
    var nodes: [Node] = []
    /// Named schemas as given, for `$ref`.
    let named: JSONObject
    /// Each reference compiled, by its text.
    var references: [String: Int] = [:]
    /// References met but not compiled yet: their node, the schema they name, their text.
    var pendingReferences: [(Int, JSON, String)] = []
    /// What is not checked, and why.
    public private(set) var notes: [SchemaDefinitionError] = []

    /// How deeply one schema may nest inline (references do not count): real ones nest under 20.
    public static let deepestSchema = 64
    /// The most nodes a set compiles: a 1 MB document makes about 40,000. Past it, schemas accept anything.
    public static let largestSet = 500_000

    /// A set whose `$ref`s resolve to `named` (the members of `components.schemas`, say).
    public init(named: JSONObject = [:]) {
        self.named = named
    }

    /// Compiles `schema`; `place` names it in ``notes``.
    public mutating func add(_ schema: JSON, place: String) -> Handle {
        let index = compile(schema, place: place, depth: 0)
        compilePendingReferences()
        return Handle(index: index)
    }

    /// Compiles the named schema `name` (as a `$ref` to it would).
    public mutating func handle(named name: String) -> Handle? {
        guard named[name] != nil else { return nil }
        let index = reference("#/components/schemas/" + Self.escaped(name), place: name)
        compilePendingReferences()
        return Handle(index: index)
    }

    /// Compiles the schemas references named, one after the other: a chain of ten thousand `$ref`s (each
    /// schema only a reference to the next) compiled as it was met would recurse ten thousand deep and
    /// overflow the stack, and a document is a third party's.
    mutating func compilePendingReferences() {
        while let (index, target, text) = pendingReferences.popLast() {
            let compiled = compile(target, place: String(text.prefix(200)), depth: 0)
            nodes[index] = Node(reference: compiled)
        }
    }

    static func escaped(_ name: String) -> String {
        name.replacing("~", with: "~0").replacing("/", with: "~1")
    }

    mutating func note(_ place: String, _ message: String) {
        // One note per place and message: a schema used by a hundred operations is compiled once anyway.
        guard notes.count < 1_000 else { return }
        notes.append(SchemaDefinitionError(place: place, message: message))
    }

    /// A node that accepts every value.
    mutating func anything() -> Int {
        nodes.append(Node())
        return nodes.count - 1
    }

    mutating func compile(_ schema: JSON, place: String, depth: Int) -> Int {
        switch schema {
        case .bool(let allowed):
            nodes.append(Node(rejectsAll: !allowed))
            return nodes.count - 1
        case .object(let object):
            guard depth < Self.deepestSchema, nodes.count < Self.largestSet else {
                note(place, "nested deeper than \(Self.deepestSchema) levels (or too many schemas): not checked below")
                return anything()
            }
            let index = anything()
            let node = compileObject(object, place: place, depth: depth)
            nodes[index] = node
            return index
        default:
            note(place, "a schema must be an object or a boolean: not checked")
            return anything()
        }
    }

    mutating func compileObject(_ object: JSONObject, place: String, depth: Int) -> Node {
        var node = Node()
        func child(_ value: JSON, _ keyword: String) -> Int {
            compile(value, place: place + "/" + keyword, depth: depth + 1)
        }
        func count(_ keyword: String) -> Int? {
            guard let value = object[keyword] else { return nil }
            guard let number = value.intValue ?? value.doubleValue.flatMap({ $0 < 1e15 ? Int($0) : nil }), number >= 0
            else {
                note(place, "'\(keyword)' is not a count: not checked")
                return nil
            }
            return number
        }
        if case .string(let reference)? = object["$ref"] {
            node.reference = self.reference(reference, place: place)
        }
        switch object["type"] {
        case .string(let name)?:
            node.types = Self.types(named: name)
        case .array(let names)?:
            node.types = names.reduce(into: Types()) { types, name in
                types.formUnion(name.stringValue.flatMap(Self.types(named:)) ?? [])
            }
        default: break
        }
        if node.types == [] {
            note(place, "'type' names no JSON type: not checked")
            node.types = nil
        }
        node.nullable = object["nullable"]?.boolValue ?? false
        node.enumeration = object["enum"]?.arrayValue
        node.constant = object["const"]
        node.minimum = bound(object, "minimum", "exclusiveMinimum", place: place, lower: true)
        node.maximum = bound(object, "maximum", "exclusiveMaximum", place: place, lower: false)
        if let step = object["multipleOf"]?.doubleValue, step > 0, step.isFinite { node.multipleOf = step }
        node.minLength = count("minLength")
        node.maxLength = count("maxLength")
        if case .string(let source)? = object["pattern"] {
            node.pattern = matcher(source, place: place)
        }
        if case .string(let format)? = object["format"] { node.format = Format(rawValue: format) }
        node.minItems = count("minItems")
        node.maxItems = count("maxItems")
        node.uniqueItems = object["uniqueItems"]?.boolValue ?? false
        if case .array(let prefix)? = object["prefixItems"] {
            node.prefixItems = prefix.map { child($0, "prefixItems") }
        }
        switch object["items"] {
        case .array(let tuple)?:  // the tuple form of older drafts
            node.prefixItems = tuple.map { child($0, "items") }
            if let additional = object["additionalItems"] { node.items = child(additional, "additionalItems") }
        case let items?:
            node.items = child(items, "items")
        case nil: break
        }
        if case .object(let properties)? = object["properties"] {
            for (name, schema) in properties { node.properties[name] = child(schema, "properties/" + Self.escaped(name)) }
        }
        if case .array(let required)? = object["required"] { node.required = required.compactMap(\.stringValue) }
        switch object["additionalProperties"] {
        case .bool(false)?: node.additionalProperties = .some(nil)
        case .object(let schema)? where !schema.isEmpty:
            node.additionalProperties = .some(child(.object(schema), "additionalProperties"))
        default: break
        }
        if case .object(let patterns)? = object["patternProperties"] {
            for (source, schema) in patterns {
                guard let matcher = matcher(source, place: place) else {
                    // A member it cannot place might be one the pattern allows: nothing is refused as extra.
                    node.additionalProperties = nil
                    continue
                }
                node.patternProperties.append((matcher, child(schema, "patternProperties")))
            }
        }
        node.minProperties = count("minProperties")
        node.maxProperties = count("maxProperties")
        if case .array(let all)? = object["allOf"] { node.allOf = all.map { child($0, "allOf") } }
        if case .array(let any)? = object["anyOf"] { node.anyOf = any.map { child($0, "anyOf") } }
        if case .array(let one)? = object["oneOf"] { node.oneOf = one.map { child($0, "oneOf") } }
        if let not = object["not"] { node.not = child(not, "not") }
        node.readOnly = object["readOnly"]?.boolValue ?? false
        node.writeOnly = object["writeOnly"]?.boolValue ?? false
        if case .object(let discriminator)? = object["discriminator"],
            case .string(let property)? = discriminator["propertyName"], !(node.oneOf + node.anyOf).isEmpty
        {
            var mapping: [String: Int] = [:]
            if case .object(let given)? = discriminator["mapping"] {
                for (value, target) in given {
                    guard case .string(let target) = target else { continue }
                    // A mapping names a reference or, as a shorthand, a schema's name.
                    let reference = target.hasPrefix("#") ? target : "#/components/schemas/" + Self.escaped(target)
                    mapping[value] = self.reference(reference, place: place)
                }
            }
            // Without a mapping, a branch `$ref` to a named schema answers to that name.
            for branch in node.oneOf + node.anyOf {
                guard let target = nodes[branch].reference else { continue }
                for (text, index) in references where index == target {
                    if let name = text.split(separator: "/").last, mapping[String(name)] == nil {
                        mapping[String(name)] = target
                    }
                }
            }
            node.discriminator = (property, mapping)
        }
        return node
    }

    static func types(named name: String) -> Types? {
        switch name {
        case "null": .null
        case "boolean": .boolean
        case "integer": .integer
        case "number": .number
        case "string": .string
        case "array": .array
        case "object": .object
        default: nil
        }
    }

    /// `minimum` with OpenAPI 3.0's boolean `exclusiveMinimum`, or 3.1's numeric one (the tighter wins).
    mutating func bound(_ object: JSONObject, _ inclusive: String, _ exclusive: String, place: String, lower: Bool) -> Bound? {
        var result = object[inclusive]?.doubleValue.map { Bound(value: $0, exclusive: false) }
        switch object[exclusive] {
        case .bool(true)?:
            result?.exclusive = true
        case let value? where value.doubleValue != nil:
            let candidate = Bound(value: value.doubleValue ?? 0, exclusive: true)
            if let current = result {
                let tighter = lower ? candidate.value >= current.value : candidate.value <= current.value
                if tighter { result = candidate }
            } else {
                result = candidate
            }
        default: break
        }
        return result
    }

    mutating func matcher(_ source: String, place: String) -> TextMatcher? {
        do {
            return try TextMatcher(source)
        } catch {
            note(place, "\(error): not checked")
            return nil
        }
    }

    /// The node a `$ref` names, compiled once (a recursive schema refers to itself by index).
    mutating func reference(_ text: String, place: String) -> Int {
        if let index = references[text] { return index }
        let index = anything()
        references[text] = index
        guard let target = resolve(text) else {
            note(place, "the reference '\(text.prefix(200))' is not resolved: not checked")
            return index
        }
        pendingReferences.append((index, target, text))
        return index
    }

    /// `#/components/schemas/Name/properties/x` and its kin: a name, then a pointer inside it.
    func resolve(_ text: String) -> JSON? {
        let prefixes = ["#/components/schemas/", "#/schemas/", "#/$defs/", "#/definitions/"]
        guard let prefix = prefixes.first(where: text.hasPrefix) else { return nil }
        var parts = text.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false).map {
            String($0).replacing("~1", with: "/").replacing("~0", with: "~")
                .removingPercentEncodingIfValid
        }
        guard !parts.isEmpty, var value = named[parts.removeFirst()] else { return nil }
        for part in parts {
            switch value {
            case .object(let object):
                guard let member = object[part] else { return nil }
                value = member
            case .array(let elements):
                guard let position = Int(part), elements.indices.contains(position) else { return nil }
                value = elements[position]
            default: return nil
            }
        }
        return value
    }
}

extension String {
    /// `%7B` → `{` in a reference's pointer; the text itself when it is not valid percent-encoding.
    fileprivate var removingPercentEncodingIfValid: String {
        guard contains("%") else { return self }
        var bytes: [UInt8] = []
        var utf8 = Array(self.utf8)[...]
        while let byte = utf8.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) else {
                return self
            }
            bytes.append(value)
            utf8 = utf8.dropFirst(2)
        }
        return String(validating: bytes, as: UTF8.self) ?? self
    }
}
