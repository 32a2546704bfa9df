import HammockJSON
import HammockSchema
import HammockServer
import HammockWire

/// An OpenAPI document's schemas, read in either dialect (3.0's `nullable` and `example`, 3.1's type
/// arrays and `examples`), with `$ref`s followed inside the document.
struct DocumentSchemas {
    let root: JSON
    /// What was worked out per `$ref`, so that a schema shared many times is worked out once: thirty
    /// schemas each an `allOf` of the next one twice took 2^30 merges (over 40 s) before.
    private let memo = Memo()

    /// Merged objects and null-ness by `$ref`, filled as they are worked out. A class so that the
    /// struct's readers (which do not mutate) share it; the importer uses it from one thread.
    private final class Memo {
        var objects: [String: JSONObject?] = [:]
        var nullable: [String: Bool] = [:]
        /// Each `$ref`'s target: a pointer is walked once, not once per use.
        var targets: [String: JSON?] = [:]
        /// The values every example of the document may still be made of together.
        var exampleValuesLeft = DocumentSchemas.maximumDocumentExampleValues
        /// Each `pattern` read once (`nil` for one the server cannot make strings for).
        var patterns: [String: TextPattern?] = [:]
    }

    init(root: JSON) { self.root = root }

    /// How many `$ref`s in a row are followed before giving up: a chain longer than this is a cycle.
    static let maximumHops = 32
    /// How deep an example is made. Recursion stops earlier, by its `$ref`s (``maximumExampleRecursion``):
    /// this bounds schemas nested by hand, which a real document keeps far shallower.
    static let maximumExampleDepth = 32
    /// How many times one `$ref` may appear on the way down an example: a comment, its replies, and
    /// theirs, then an empty list (a member the schema lets go is left out).
    static let maximumExampleRecursion = 2
    /// The most items an example's array is made of when `minItems` asks for more: the example's value
    /// budget bounds it too.
    static let maximumExampleItems = 256

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
        if let known = memo.targets[reference] { return known }
        let target = walk(to: reference)
        memo.targets[reference] = target
        return target
    }

    private func walk(to reference: String) -> JSON? {
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

    /// The schema as an object (after its `$ref`), with `allOf` parts merged into one. A schema that
    /// includes itself (`A = {allOf: [A, …]}`, or through others) contributes what it has up to where it
    /// comes round again: the cycle is cut there, never followed.
    func object(_ schema: JSON?) -> JSONObject? {
        var walk = Walk()
        return object(schema, walk: &walk)
    }

    /// The `$ref`s being worked out, outermost first, and how far out a cycle was cut: a result is kept
    /// in the memo only when every cut inside it came back to it or to something inside it, as then it
    /// is the same whichever way the walk came in.
    struct Walk {
        var depths: [String: Int] = [:]
        var lowestCut = Int.max

        /// Enters `reference`; `nil` when it is being worked out already (a cycle: cut here).
        mutating func enter(_ reference: String) -> Int? {
            if let depth = depths[reference] {
                lowestCut = min(lowestCut, depth)
                return nil
            }
            let depth = depths.count
            depths[reference] = depth
            return depth
        }

        /// Leaves `reference`, entered at `depth`; returns whether what was worked out may be kept.
        mutating func leave(_ reference: String, at depth: Int) -> Bool {
            depths[reference] = nil
            guard lowestCut >= depth else { return false }
            lowestCut = .max
            return true
        }
    }

    private func object(_ schema: JSON?, walk: inout Walk) -> JSONObject? {
        guard let reference = Self.reference(schema) else { return merged(schema, walk: &walk) }
        if let known = memo.objects[reference] { return known }
        guard let depth = walk.enter(reference) else { return nil }
        let object = merged(schema, walk: &walk)
        if walk.leave(reference, at: depth) { memo.objects[reference] = object }
        return object
    }

    private func merged(_ schema: JSON?, walk: inout Walk) -> JSONObject? {
        guard case .object(var object)? = resolve(schema) else { return nil }
        guard case .array(let parts)? = object["allOf"] else { return object }
        var properties = object["properties"]?.objectValue ?? JSONObject()
        var required = object["required"]?.arrayValue ?? []
        for part in parts {
            guard let resolved = self.object(part, walk: &walk) else { continue }
            for (name, property) in resolved["properties"]?.objectValue ?? JSONObject() where properties[name] == nil {
                properties[name] = property
            }
            for name in resolved["required"]?.arrayValue ?? [] where !required.contains(name) { required.append(name) }
            if object["type"] == nil, let type = resolved["type"] { object["type"] = type }
            // What a part says besides members: a union (`allOf: [{oneOf: [...]}]`, a common way to add a
            // description to a `$ref`), choices, a format, bounds. Dropped, an example of it was `{}`.
            for key in Self.mergedKeywords where object[key] == nil {
                if let value = resolved[key] { object[key] = value }
            }
        }
        if !properties.isEmpty || object["properties"] != nil { object["properties"] = .object(properties) }
        if !required.isEmpty || object["required"] != nil { object["required"] = .array(required) }
        object["allOf"] = nil
        return object
    }

    /// The keywords an `allOf` part passes on to the merged schema besides its members.
    static let mergedKeywords = [
        "oneOf", "anyOf", "discriminator", "enum", "const", "items", "format", "pattern", "minimum", "maximum",
        "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength", "minItems", "maxItems", "uniqueItems",
    ]

    /// The `$ref` a schema is, if it is one.
    static func reference(_ schema: JSON?) -> String? {
        guard case .object(let object)? = schema, case .string(let reference)? = object["$ref"] else { return nil }
        return reference
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
    /// null branch, or no type at all. A union that comes round to itself adds nothing on the way.
    func allowsNull(_ schema: JSON?) -> Bool {
        var walk = Walk()
        return allowsNull(schema, walk: &walk)
    }

    private func allowsNull(_ schema: JSON?, walk: inout Walk) -> Bool {
        guard let reference = Self.reference(schema) else { return allowsNullOnce(schema, walk: &walk) }
        if let known = memo.nullable[reference] { return known }
        guard let depth = walk.enter(reference) else { return false }
        let answer = allowsNullOnce(schema, walk: &walk)
        if walk.leave(reference, at: depth) { memo.nullable[reference] = answer }
        return answer
    }

    private func allowsNullOnce(_ schema: JSON?, walk: inout Walk) -> Bool {
        guard let object = object(schema) else { return true }
        if object["nullable"]?.boolValue == true { return true }
        switch object["type"] {
        case .string(let name)?: return name == "null"
        case .array(let names)?: return names.contains("null")
        default: break
        }
        for union in ["oneOf", "anyOf"] {
            if case .array(let choices)? = object[union] {
                return choices.contains { allowsNull($0, walk: &walk) }
            }
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

    /// The most values one example is made of: a schema whose members all refer back to it fans out as
    /// its member count to the depth's power (50 members, 6 levels: 10^10 values) without a bound.
    static let maximumExampleValues = 2_000
    /// The most values all of a document's examples are made of: a resource of forty such members makes
    /// an example per member (as generation rules), and took 30 s with only the bound per example.
    static let maximumDocumentExampleValues = 100_000

    /// A value that fits `schema`: its own example where it gives one, else one made from its type,
    /// format and bounds. The same schema always gives the same value (until the document's budget runs
    /// out; past it, examples are cut short, and members left out).
    func example(for schema: JSON?) -> JSON {
        let start = min(Self.maximumExampleValues, memo.exampleValuesLeft)
        var budget = start
        var path: [String] = []
        let value = example(for: schema, depth: 0, budget: &budget, path: &path) ?? .null
        memo.exampleValuesLeft -= start - max(budget, 0)
        return value
    }

    /// A value for `schema`, or `nil` where none can be made here: past the depth, the budget, or a
    /// `$ref` already ``maximumExampleRecursion`` times on `path` (the references followed so far).
    /// The caller leaves such a member out, or makes its array empty, rather than write a `null` the
    /// schema does not allow.
    private func example(for schema: JSON?, depth: Int, budget: inout Int, path: inout [String]) -> JSON? {
        guard depth <= Self.maximumExampleDepth, budget > 0 else { return nil }
        var reference: String?
        if case .object(let wrapper)? = schema, case .string(let target)? = wrapper["$ref"] {
            guard path.lazy.filter({ $0 == target }).count < Self.maximumExampleRecursion else { return nil }
            reference = target
        }
        guard let object = object(schema) else { return .null }
        if let reference { path.append(reference) }
        defer { if reference != nil { path.removeLast() } }
        budget -= 1
        if let given = givenExample(object) { return given }
        for union in ["oneOf", "anyOf"] {
            guard case .array(let choices)? = object[union], !choices.isEmpty else { continue }
            // The first branch that can be made and is not only `null`; its discriminator names it.
            for choice in choices where type(of: self.object(choice) ?? JSONObject()) != "null" {
                guard var made = example(for: choice, depth: depth + 1, budget: &budget, path: &path) else { continue }
                if case .object(var members) = made, let (name, value) = discriminator(of: object, choosing: choice) {
                    members[name] = .string(value)
                    made = .object(members)
                }
                return made
            }
            return nil
        }
        switch type(of: object) {
        case "object":
            var members = JSONObject()
            let required = Set(object["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            for (name, property) in object["properties"]?.objectValue ?? JSONObject() {
                // Each member looked at counts, made or not: a wide schema costs its width.
                budget -= 1
                if resolve(property)?.objectValue?["writeOnly"]?.boolValue == true { continue }
                if let value = example(for: property, depth: depth + 1, budget: &budget, path: &path) {
                    members[name] = value
                } else if required.contains(name), let fallback = emptyValue(of: property) {
                    // A required member that cannot be made here: its emptiest form, not a missing member.
                    members[name] = fallback
                }
            }
            return .object(members)
        case "array":
            guard let items = object["items"] else { return .array([]) }
            let minimum = max(0, min(object["minItems"]?.intValue ?? 1, Self.maximumExampleItems))
            let maximum = object["maxItems"]?.intValue ?? Int.max
            let count = maximum < 1 ? 0 : max(1, min(minimum, maximum))
            var made: [JSON] = []
            for _ in 0..<count {
                guard let item = example(for: items, depth: depth + 1, budget: &budget, path: &path) else { break }
                made.append(item)
            }
            // `uniqueItems`: the same schema makes the same value, so the others are variants of the first.
            if object["uniqueItems"]?.boolValue == true, made.count > 1 {
                var distinct = [made[0]]
                var tried = 0
                while distinct.count < made.count, tried < made.count * 4 {
                    tried += 1
                    guard let other = variant(of: items, base: made[0], index: tried) else { break }
                    if !distinct.contains(other) { distinct.append(other) }
                }
                made = distinct
            }
            return .array(made)
        case "string": return .string(Self.exampleString(object, pattern: textPattern(object)))
        case "integer": return .integer(Self.exampleInteger(object))
        case "number": return .double(Self.exampleNumber(object))
        case "boolean": return .bool(true)
        default: return .null
        }
    }

    /// A value of `schema` other than `base` (an example of it), the `index`th kind of change (from 1):
    /// another of an `enum`, a number a step or more away within the bounds, another string of the
    /// pattern or format, an array or object with one member changed so. `nil` where none is found.
    func variant(of schema: JSON?, base: JSON, index: Int, depth: Int = 0) -> JSON? {
        guard depth < 8, index > 0, let object = object(schema) else { return nil }
        if case .array(let choices)? = object["enum"] {
            let others = choices.filter { $0 != base }
            // Not `? … : nil`: JSON is ExpressibleByNilLiteral, and that `nil` would be `.null`.
            guard index <= others.count else { return nil }
            return others[index - 1]
        }
        guard object["const"] == nil else { return nil }
        for union in ["oneOf", "anyOf"] {
            guard case .array(let choices)? = object[union] else { continue }
            let branches = choices.filter { type(of: self.object($0) ?? JSONObject()) != "null" }
            // A change inside the first branch, else another branch's example, its discriminator set.
            if let first = branches.first, let other = variant(of: first, base: base, index: index, depth: depth + 1) {
                return other
            }
            guard index < branches.count else { return allowsNull(schema) && base != .null ? .null : nil }
            var made = example(for: branches[index])
            if case .object(var members) = made, let (name, value) = discriminator(of: object, choosing: branches[index]) {
                members[name] = .string(value)
                made = .object(members)
            }
            return made
        }
        if let other = typedVariant(of: object, base: base, index: index, depth: depth) { return other }
        // Nothing else: `null`, where the schema allows it.
        guard allowsNull(schema), base != .null else { return nil }
        return .null
    }

    /// ``variant(of:base:index:depth:)`` by the schema's type.
    private func typedVariant(of object: JSONObject, base: JSON, index: Int, depth: Int) -> JSON? {
        switch (type(of: object), base) {
        case ("boolean", .bool(let flag)):
            guard index == 1 else { return nil }
            return .bool(!flag)
        case ("integer", .integer(let value)):
            let step = object["multipleOf"]?.doubleValue.flatMap { $0 >= 1 && $0 < 1e9 ? Int($0) : nil } ?? 1
            for candidate in [value &+ index &* step, value &- index &* step] where Self.fits(Double(candidate), object) {
                return .integer(candidate)
            }
            return nil
        case ("number", let value) where value.doubleValue != nil:
            let start = value.doubleValue ?? 0
            let step = object["multipleOf"]?.doubleValue.flatMap { $0 > 0 && $0.isFinite ? $0 : nil } ?? 1
            for candidate in [start + Double(index) * step, start - Double(index) * step] where Self.fits(candidate, object) {
                return .double(candidate)
            }
            return nil
        case ("string", .string(let text)):
            let minimum = object["minLength"]?.intValue ?? 0
            let maximum = object["maxLength"]?.intValue ?? Int.max
            if let pattern = textPattern(object) {
                var random = SeededRandom(seed: MockServer.nameHash(pattern.source) &+ UInt64(index))
                for _ in 0..<64 {
                    let made = pattern.make(using: &random)
                    if made != text, (minimum...max(minimum, maximum)).contains(made.count) { return .string(made) }
                }
                return nil
            }
            let made: String
            switch object["format"]?.stringValue {
            case "uuid": made = String(text.dropLast(4)) + String(format4(index))
            case "date", "date-time": made = "2026-01-\(index % 28 + 1 < 10 ? "0" : "")\(index % 28 + 1)" + text.dropFirst(10)
            case "email": made = "ada\(index)@example.com"
            case "ipv4": made = "192.0.2.\(index % 254 + 1)"
            case "ipv6": made = "2001:db8::\(String(index % 0xFFFF + 1, radix: 16))"
            case "uri", "url": made = "https://example.com/\(index)"
            case "hostname": made = "host\(index).example.com"
            case nil:
                made =
                    text.count + String(index).count <= maximum
                    ? text + String(index) : String(text.dropLast(String(index).count)) + String(index)
            default: return nil
            }
            guard made != text, (minimum...max(minimum, maximum)).contains(made.count) else { return nil }
            return .string(made)
        case ("array", .array(let items)):
            if let first = items.first, let other = variant(of: object["items"], base: first, index: index, depth: depth + 1) {
                return .array([other] + items.dropFirst())
            }
            // The first item cannot change: one item fewer, where `minItems` allows.
            guard items.count > max(0, object["minItems"]?.intValue ?? 0) else { return nil }
            return .array(Array(items.dropLast()))
        case ("object", .object(let members)):
            let required = Set(object["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            let properties = object["properties"]?.objectValue ?? JSONObject()
            let names = members.keys.sorted { (required.contains($0) ? 0 : 1, $0) < (required.contains($1) ? 0 : 1, $1) }
            for name in names {
                guard let value = members[name], let property = properties[name],
                    let other = variant(of: property, base: value, index: index, depth: depth + 1)
                else { continue }
                var changed = members
                changed[name] = other
                return .object(changed)
            }
            // Nothing to change, and other members allowed (`{"type": "object"}`): one more tells it apart.
            guard object["additionalProperties"]?.boolValue != false, object["additionalProperties"]?.objectValue == nil,
                object["maxProperties"] == nil
            else { return nil }
            var changed = members
            changed["variant\(index)"] = .integer(index)
            return .object(changed)
        default:
            return nil
        }

        /// Four hexadecimal digits of `number`, for a UUID's variant.
        func format4(_ number: Int) -> String {
            let hex = String(number % 0x10000, radix: 16)
            return String(repeating: "0", count: 4 - hex.count) + hex
        }
    }

    /// Whether `value` is within the schema's bounds (inclusive and exclusive, in both dialects).
    static func fits(_ value: Double, _ schema: JSONObject) -> Bool {
        if let minimum = schema["minimum"]?.doubleValue {
            if schema["exclusiveMinimum"]?.boolValue == true ? value <= minimum : value < minimum { return false }
        }
        if let maximum = schema["maximum"]?.doubleValue {
            if schema["exclusiveMaximum"]?.boolValue == true ? value >= maximum : value > maximum { return false }
        }
        if let exclusive = schema["exclusiveMinimum"]?.doubleValue, value <= exclusive { return false }
        if let exclusive = schema["exclusiveMaximum"]?.doubleValue, value >= exclusive { return false }
        return true
    }

    /// The discriminator's member and the value that names `choice`: the mapping's key for its `$ref`,
    /// else the last part of the `$ref` (`#/components/schemas/Cat` is `Cat`), as OpenAPI defines it.
    func discriminator(of union: JSONObject, choosing choice: JSON) -> (String, String)? {
        guard case .object(let discriminator)? = union["discriminator"],
            case .string(let name)? = discriminator["propertyName"],
            case .object(let branch) = choice, case .string(let target)? = branch["$ref"]
        else { return nil }
        if case .object(let mapping)? = discriminator["mapping"],
            let key = mapping.first(where: { $0.value.stringValue == target })?.key
        {
            return (name, key)
        }
        return (name, String(target.split(separator: "/").last ?? ""))
    }

    /// The emptiest value of a schema's type: what a required member gets where recursion stops.
    func emptyValue(of schema: JSON) -> JSON? {
        guard let object = object(schema) else { return nil }
        if allowsNull(schema) { return .null }
        switch type(of: object) {
        case "array": return .array([])
        case "object": return .object(JSONObject())
        default: return nil
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

    /// The schema's `pattern`, read once per document, if the server can make strings for it.
    func textPattern(_ schema: JSONObject) -> TextPattern? {
        guard let source = schema["pattern"]?.stringValue else { return nil }
        if let known = memo.patterns[source] { return known }
        let pattern = try? TextPattern(source)
        memo.patterns[source] = pattern
        return pattern
    }

    static func exampleString(_ schema: JSONObject, pattern: TextPattern? = nil) -> String {
        let byFormat: [String: String] = [
            "date-time": "2026-01-01T09:30:00Z", "date": "2026-01-01", "time": "09:30:00",
            "uuid": "3f0c5a8e-2b1d-4c7a-9e6f-1a2b3c4d5e6f", "email": "ada@example.com", "uri": "https://example.com/",
            "url": "https://example.com/", "hostname": "example.com", "ipv4": "192.0.2.1", "ipv6": "2001:db8::1",
            "byte": "aGFtbW9jaw==", "password": "secret",
        ]
        let minimum = max(0, min(schema["minLength"]?.intValue ?? 0, 10_000))
        let maximum = schema["maxLength"]?.intValue ?? Int.max
        // A pattern the server can make strings for: the first of a few made strings that fits the
        // lengths too, from a seed of the pattern's own, so the same schema gives the same value.
        if let pattern {
            var random = SeededRandom(seed: MockServer.nameHash(pattern.source))
            // 64 tries: `^[A-Z]+$` within 2 to 4 characters fits about one made string in six.
            for _ in 0..<64 {
                let made = pattern.make(using: &random)
                if (minimum...max(minimum, maximum)).contains(made.count) { return made }
            }
        }
        var text = schema["format"]?.stringValue.flatMap { byFormat[$0] } ?? "string"
        if text.count < minimum { text += String(repeating: "x", count: minimum - text.count) }
        if let maximum = schema["maxLength"]?.intValue, maximum >= 0, text.count > maximum { text = String(text.prefix(maximum)) }
        return text
    }

    static func exampleInteger(_ schema: JSONObject) -> Int {
        func bound(_ key: String) -> Double? {
            guard let value = schema[key]?.doubleValue, value.isFinite, value < 9e18, value > -9e18 else { return nil }
            return value
        }
        var low: Int?
        var high: Int?
        if let minimum = bound("minimum") {
            // 3.0: `exclusiveMinimum: true` is a flag on minimum.
            low = schema["exclusiveMinimum"]?.boolValue == true ? Int(minimum.rounded(.down)) + 1 : Int(minimum.rounded(.up))
        }
        // 3.1: a number of its own.
        if let exclusive = bound("exclusiveMinimum") { low = max(low ?? Int.min, Int(exclusive.rounded(.down)) + 1) }
        if let maximum = bound("maximum") {
            high = schema["exclusiveMaximum"]?.boolValue == true ? Int(maximum.rounded(.up)) - 1 : Int(maximum.rounded(.down))
        }
        if let exclusive = bound("exclusiveMaximum") { high = min(high ?? Int.max, Int(exclusive.rounded(.up)) - 1) }
        var value = max(1, low ?? 1)
        if let high { value = min(value, high) }
        // `multipleOf`: the nearest multiple at or above the value, else the one below the upper bound.
        if let step = schema["multipleOf"]?.doubleValue, step >= 1, step < 1e9, step.rounded() == step {
            let step = Int(step)
            // Bounds are within ±9e18 and the step below 1e9: no sum or product here overflows.
            var multiple = (value >= 0 ? (value + step - 1) / step : value / step) * step
            if let high, multiple > high { multiple = (high >= 0 ? high / step : (high - step + 1) / step) * step }
            if low.map({ multiple >= $0 }) ?? true, high.map({ multiple <= $0 }) ?? true { value = multiple }
        }
        return value
    }

    static func exampleNumber(_ schema: JSONObject) -> Double {
        func bound(_ key: String) -> Double? {
            guard let value = schema[key]?.doubleValue, value.isFinite else { return nil }
            return value
        }
        var value = 1.5
        if let minimum = bound("minimum") { value = max(value, minimum) }
        if let exclusive = bound("exclusiveMinimum"), value <= exclusive { value = exclusive + 1 }
        if schema["exclusiveMinimum"]?.boolValue == true, let minimum = bound("minimum"), value <= minimum { value = minimum + 1 }
        if let maximum = bound("maximum") {
            value = min(value, maximum)
            if schema["exclusiveMaximum"]?.boolValue == true, value >= maximum { value = maximum - 1 }
        }
        if let exclusive = bound("exclusiveMaximum"), value >= exclusive { value = exclusive - 1 }
        if let step = bound("multipleOf"), step > 0 {
            var multiple = (value / step).rounded(.up) * step
            if let maximum = bound("maximum") ?? bound("exclusiveMaximum"), multiple > maximum {
                multiple = (maximum / step).rounded(.down) * step
            }
            if multiple.isFinite { value = multiple }
        }
        return value
    }
}
