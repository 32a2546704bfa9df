public import HammockJSON
import HammockWire

extension SchemaSet {
    /// The most steps one validation takes (a step is one schema applied to one value): a 1 MB body
    /// against a real schema takes about 100,000. Past it the rest is accepted: a hostile body or
    /// document must not hold the server, and a mock accepts rather than refuses what it did not check.
    public static let mostSteps = 2_000_000

    /// The ways `value` breaks the schema, at most `limit` of them, the first found first; empty when it
    /// conforms. A `partial` value (a JSON merge patch, RFC 7396, whose schema is the whole resource's)
    /// need not have the members `required` names, at any depth. `steps` is the budget (at most
    /// ``mostSteps``): a caller that validates many values in a row may want less.
    public func validate(
        _ value: JSON, against handle: Handle, direction: Direction = .request, partial: Bool = false, limit: Int = 20,
        steps: Int = SchemaSet.mostSteps
    ) -> [SchemaViolation] {
        var validator = Validator(
            set: self, direction: direction, partial: partial, limit: max(1, limit),
            budget: min(max(1, steps), SchemaSet.mostSteps))
        var violations: [SchemaViolation] = []
        validator.check(handle.index, value, at: "", depth: 0, into: &violations)
        return Array(violations.prefix(limit))
    }

    /// Whether the schema allows one of `types` at its top (through `$ref` and `allOf`); `nil` when it
    /// does not say.
    func allowedTypes(_ index: Int, depth: Int = 0) -> Types? {
        guard depth < 16 else { return nil }
        let node = nodes[index]
        var types = node.types
        if let reference = node.reference, let referred = allowedTypes(reference, depth: depth + 1) {
            types = types.map { $0.intersection(referred) } ?? referred
        }
        for part in node.allOf {
            if let more = allowedTypes(part, depth: depth + 1) { types = types.map { $0.intersection(more) } ?? more }
        }
        let branches = node.oneOf + node.anyOf
        if types == nil, !branches.isEmpty {
            var union = Types()
            for branch in branches {
                guard let more = allowedTypes(branch, depth: depth + 1) else { return nil }
                union.formUnion(more)
            }
            types = union
        }
        if node.nullable { types?.insert(.null) }
        return types
    }

    /// A parameter's text as the value its schema wants: `"7"` is `7` where an integer is allowed,
    /// `"true"` is `true` where a boolean is; otherwise the text, for the schema to judge.
    public func parameterValue(_ text: String, for handle: Handle) -> JSON {
        let types = allowedTypes(handle.index) ?? []
        if types.contains(.integer), let integer = Int(text) { return .integer(integer) }
        // An integer beyond 64 bits (`-12990193908256203603968`) is still an integer to JSON Schema: as a
        // double, whose value is whole, bounds are checked on it.
        if types.contains(.integer), !text.isEmpty, text.utf8.count <= 400,
            text.utf8.dropFirst(text.hasPrefix("-") ? 1 : 0).allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            text != "-", let number = Double(text), number.isFinite
        {
            return .double(number)
        }
        if types.contains(.number), let number = Double(text), number.isFinite,
            text.utf8.allSatisfy({ $0 != UInt8(ascii: "n") && $0 != UInt8(ascii: "N") && $0 != UInt8(ascii: "x") })
        {
            return Int(text).map(JSON.integer) ?? .double(number)
        }
        if types.contains(.boolean), text == "true" || text == "false" { return .bool(text == "true") }
        if types.contains(.null), !types.contains(.string), text == "null" || text.isEmpty { return .null }
        return .string(text)
    }

    /// The schema of an array parameter's items, when the schema is an array's.
    public func itemSchema(of handle: Handle) -> Handle? {
        var index = handle.index
        for _ in 0..<16 {
            let node = nodes[index]
            if let items = node.items, node.types?.contains(.array) ?? true { return Handle(index: items) }
            if let reference = node.reference {
                index = reference
            } else if let first = node.allOf.first {
                index = first
            } else {
                return nil
            }
        }
        return nil
    }

    /// The schema of an object's member `name`, when the schema names one (through `$ref` and `allOf`).
    public func propertySchema(_ name: String, of handle: Handle) -> Handle? {
        var pending = [handle.index]
        var visited = 0
        while let index = pending.popLast(), visited < 32 {
            visited += 1
            let node = nodes[index]
            if let property = node.properties[name] { return Handle(index: property) }
            if let reference = node.reference { pending.append(reference) }
            pending += node.allOf
        }
        return nil
    }

    /// Whether the schema says its value is an array (through `$ref` and `allOf`).
    public func isArray(_ handle: Handle) -> Bool {
        guard let types = allowedTypes(handle.index) else { return false }
        return types.subtracting(.null) == .array
    }

    /// Whether the schema says its value is an object.
    public func isObject(_ handle: Handle) -> Bool {
        guard let types = allowedTypes(handle.index) else { return false }
        return types.subtracting(.null) == .object
    }
}

/// One validation's walk: the set, the direction, and how many steps are left.
struct Validator {
    let set: SchemaSet
    let direction: SchemaSet.Direction
    let partial: Bool
    /// How many violations to collect; 1 while a branch is only probed (`not`, `anyOf`, `oneOf` need to
    /// know whether it fails, and report at most its first violation).
    var limit: Int
    let budget: Int
    var steps = 0

    /// Whether no step is left: a walk that has taken `budget` steps stops, and what it did not reach passes.
    var exhausted: Bool { steps >= budget }

    /// Whether `value` fails node `index`, and its first violation when it does: the walk stops at the
    /// first (a oneOf of 2 object branches with 20 members each stops at 1 violation, not 20).
    mutating func probe(_ index: Int, _ value: JSON, at pointer: String, depth: Int) -> SchemaViolation? {
        let outer = limit
        limit = 1
        defer { limit = outer }
        var inner: [SchemaViolation] = []
        check(index, value, at: pointer, depth: depth, into: &inner)
        return inner.first
    }

    /// Appends to `violations` what `value` breaks in node `index`.
    mutating func check(_ index: Int, _ value: JSON, at pointer: String, depth: Int, into violations: inout [SchemaViolation]) {
        steps += 1
        // A reference cycle that never descends into the value (`A: {allOf: [$ref A]}`) ends here.
        guard steps <= budget, depth < 256, violations.count < limit else { return }
        let node = set.nodes[index]
        if node.rejectsAll {
            violations.append(SchemaViolation(pointer: pointer, keyword: "false", message: "no value is allowed here"))
            return
        }
        if let reference = node.reference { check(reference, value, at: pointer, depth: depth + 1, into: &violations) }
        if value == .null, node.nullable { return }
        if let types = node.types, !Self.value(value, isOneOf: types) {
            violations.append(
                SchemaViolation(
                    pointer: pointer, keyword: "type", message: "\(Self.show(value)) is not \(Self.phrase(types))"))
            return
        }
        if let enumeration = node.enumeration, !enumeration.contains(where: { Self.same($0, value) }) {
            let choices = enumeration.prefix(10).map(Self.show).joined(separator: ", ")
            violations.append(
                SchemaViolation(
                    pointer: pointer, keyword: "enum",
                    message: "\(Self.show(value)) is not one of \(choices)\(enumeration.count > 10 ? ", …" : "")"))
        }
        if let constant = node.constant, !Self.same(constant, value) {
            violations.append(
                SchemaViolation(pointer: pointer, keyword: "const", message: "\(Self.show(value)) is not \(Self.show(constant))"))
        }
        switch value {
        case .integer, .double: checkNumber(node, value, at: pointer, into: &violations)
        case .string(let text): checkString(node, text, at: pointer, into: &violations)
        case .array(let elements): checkArray(node, elements, at: pointer, depth: depth, into: &violations)
        case .object(let object): checkObject(node, object, at: pointer, depth: depth, into: &violations)
        case .null, .bool: break
        }
        for part in node.allOf { check(part, value, at: pointer, depth: depth + 1, into: &violations) }
        if let chosen = discriminated(node, value) {
            check(chosen, value, at: pointer, depth: depth + 1, into: &violations)
        } else {
            checkChoices(node, value, at: pointer, depth: depth, into: &violations)
        }
        if let not = node.not {
            if probe(not, value, at: pointer, depth: depth + 1) == nil && !exhausted {
                violations.append(SchemaViolation(pointer: pointer, keyword: "not", message: "matches a schema it must not"))
            }
        }
    }

    /// The branch a discriminator names, when the value names one the document maps.
    func discriminated(_ node: SchemaSet.Node, _ value: JSON) -> Int? {
        guard let (property, mapping) = node.discriminator, case .string(let name)? = value[property] else { return nil }
        return mapping[name]
    }

    mutating func checkChoices(
        _ node: SchemaSet.Node, _ value: JSON, at pointer: String, depth: Int, into violations: inout [SchemaViolation]
    ) {
        if !node.anyOf.isEmpty {
            var first: SchemaViolation?
            var matched = false
            for branch in node.anyOf {
                guard let failure = probe(branch, value, at: pointer, depth: depth + 1) else {
                    matched = true
                    break
                }
                if first == nil { first = failure }
            }
            if !matched && !exhausted {
                violations.append(Self.noChoice(node.anyOf.count, "anyOf", first, at: pointer))
            }
        }
        if !node.oneOf.isEmpty {
            var first: SchemaViolation?
            var matches = 0
            for branch in node.oneOf {
                if let failure = probe(branch, value, at: pointer, depth: depth + 1) {
                    if first == nil { first = failure }
                } else {
                    matches += 1
                }
            }
            guard !exhausted else { return }
            if matches == 0 {
                violations.append(Self.noChoice(node.oneOf.count, "oneOf", first, at: pointer))
            } else if matches > 1 {
                violations.append(
                    SchemaViolation(
                        pointer: pointer, keyword: "oneOf",
                        message: "matches \(matches) of the \(node.oneOf.count) choices; exactly one is allowed"))
            }
        }
    }

    static func noChoice(_ count: Int, _ keyword: String, _ first: SchemaViolation?, at pointer: String) -> SchemaViolation {
        let reason = first.map { "; the first: \($0)" } ?? ""
        return SchemaViolation(pointer: pointer, keyword: keyword, message: "matches none of the \(count) choices\(reason)")
    }

    func checkNumber(_ node: SchemaSet.Node, _ value: JSON, at pointer: String, into violations: inout [SchemaViolation]) {
        guard let number = value.doubleValue else { return }
        if let minimum = node.minimum, minimum.exclusive ? !(number > minimum.value) : !(number >= minimum.value) {
            violations.append(
                SchemaViolation(
                    pointer: pointer, keyword: minimum.exclusive ? "exclusiveMinimum" : "minimum",
                    message:
                        "\(Self.show(value)) is \(minimum.exclusive ? "not more than" : "less than") \(Self.number(minimum.value))"
                ))
        }
        if let maximum = node.maximum, maximum.exclusive ? !(number < maximum.value) : !(number <= maximum.value) {
            violations.append(
                SchemaViolation(
                    pointer: pointer, keyword: maximum.exclusive ? "exclusiveMaximum" : "maximum",
                    message:
                        "\(Self.show(value)) is \(maximum.exclusive ? "not less than" : "more than") \(Self.number(maximum.value))"
                ))
        }
        if let step = node.multipleOf {
            let quotient = number / step
            // Decimal steps (0.01) are not exact in binary: a quotient within a millionth of a whole passes.
            if quotient.isFinite, abs(quotient - quotient.rounded()) > 1e-6 * max(1, abs(quotient)) {
                violations.append(
                    SchemaViolation(
                        pointer: pointer, keyword: "multipleOf",
                        message: "\(Self.show(value)) is not a multiple of \(Self.number(step))"))
            }
        }
    }

    mutating func checkString(
        _ node: SchemaSet.Node, _ text: String, at pointer: String, into violations: inout [SchemaViolation]
    ) {
        if node.minLength != nil || node.maxLength != nil {
            let length = text.unicodeScalars.count
            if let minimum = node.minLength, length < minimum {
                violations.append(
                    SchemaViolation(
                        pointer: pointer, keyword: "minLength",
                        message: "\(Self.show(.string(text))) is shorter than \(minimum) characters"))
            }
            if let maximum = node.maxLength, length > maximum {
                violations.append(
                    SchemaViolation(
                        pointer: pointer, keyword: "maxLength",
                        message: "\(Self.show(.string(text))) is longer than \(maximum) characters"))
            }
        }
        if let pattern = node.pattern {
            // The automaton's steps are the text's length times its size: counted against the budget.
            steps += text.unicodeScalars.count * max(1, pattern.size / 8)
            if !exhausted, !pattern.matches(text) {
                violations.append(
                    SchemaViolation(
                        pointer: pointer, keyword: "pattern",
                        message: "\(Self.show(.string(text))) does not match \(pattern.source.prefix(200))"))
            }
        }
        if let format = node.format, let valid = Formats.check(format, text), !valid {
            violations.append(
                SchemaViolation(
                    pointer: pointer, keyword: "format",
                    message: "\(Self.show(.string(text))) is not \(Formats.phrase(format))"))
        }
    }

    mutating func checkArray(
        _ node: SchemaSet.Node, _ elements: [JSON], at pointer: String, depth: Int, into violations: inout [SchemaViolation]
    ) {
        if let minimum = node.minItems, elements.count < minimum {
            violations.append(
                SchemaViolation(
                    pointer: pointer, keyword: "minItems",
                    message: "has \(elements.count) item\(elements.count == 1 ? "" : "s"); at least \(minimum) are required"))
        }
        if let maximum = node.maxItems, elements.count > maximum {
            violations.append(
                SchemaViolation(
                    pointer: pointer, keyword: "maxItems",
                    message: "has \(elements.count) items; at most \(maximum) are allowed"))
        }
        if node.uniqueItems {
            var seen = Set<JSON>()
            for (position, element) in elements.enumerated() where !seen.insert(Self.normalized(element)).inserted {
                violations.append(
                    SchemaViolation(
                        pointer: pointer + "/\(position)", keyword: "uniqueItems",
                        message: "\(Self.show(element)) is repeated; items must be unique"))
                break
            }
        }
        for (position, element) in elements.enumerated() {
            guard violations.count < limit, !exhausted else { return }
            let schema = position < node.prefixItems.count ? node.prefixItems[position] : node.items
            if let schema { check(schema, element, at: pointer + "/\(position)", depth: depth + 1, into: &violations) }
        }
    }

    mutating func checkObject(
        _ node: SchemaSet.Node, _ object: JSONObject, at pointer: String, depth: Int, into violations: inout [SchemaViolation]
    ) {
        for name in node.required where !partial && object[name] == nil {
            // A member the other side fills: a request need not send a read-only one, nor an answer a
            // write-only one.
            if let property = node.properties[name], skips(property) { continue }
            violations.append(
                SchemaViolation(pointer: pointer, keyword: "required", message: "the member '\(name.prefix(100))' is required"))
        }
        if let minimum = node.minProperties, object.count < minimum {
            violations.append(
                SchemaViolation(
                    pointer: pointer, keyword: "minProperties",
                    message: "has \(object.count) members; at least \(minimum) are required"))
        }
        if let maximum = node.maxProperties, object.count > maximum {
            violations.append(
                SchemaViolation(
                    pointer: pointer, keyword: "maxProperties",
                    message: "has \(object.count) members; at most \(maximum) are allowed"))
        }
        for (name, member) in object {
            guard violations.count < limit, !exhausted else { return }
            let place = pointer + "/" + SchemaSet.escaped(name)
            var placed = false
            if let property = node.properties[name] {
                placed = true
                check(property, member, at: place, depth: depth + 1, into: &violations)
            }
            for (pattern, schema) in node.patternProperties where pattern.matches(name) {
                placed = true
                check(schema, member, at: place, depth: depth + 1, into: &violations)
            }
            guard !placed, let additional = node.additionalProperties else { continue }
            if let schema = additional {
                check(schema, member, at: place, depth: depth + 1, into: &violations)
            } else {
                violations.append(
                    SchemaViolation(
                        pointer: place, keyword: "additionalProperties",
                        message: "the member '\(name.prefix(100))' is not allowed"))
            }
        }
    }

    /// Whether a member's schema is one this direction leaves to the other side.
    func skips(_ index: Int) -> Bool {
        var node = set.nodes[index]
        if let reference = node.reference, !node.readOnly, !node.writeOnly { node = set.nodes[reference] }
        return direction == .request ? node.readOnly : node.writeOnly
    }

    static func value(_ value: JSON, isOneOf types: SchemaSet.Types) -> Bool {
        switch value {
        case .null: types.contains(.null)
        case .bool: types.contains(.boolean)
        case .integer: types.contains(.integer) || types.contains(.number)
        case .double(let number):
            types.contains(.number) || (types.contains(.integer) && number.rounded() == number && number.isFinite)
        case .string: types.contains(.string)
        case .array: types.contains(.array)
        case .object: types.contains(.object)
        }
    }

    /// Equality as JSON Schema has it: `1` and `1.0` are the same number.
    static func same(_ lhs: JSON, _ rhs: JSON) -> Bool {
        switch (lhs, rhs) {
        case (.integer(let left), .double(let right)), (.double(let right), .integer(let left)): Double(left) == right
        default: lhs == rhs
        }
    }

    /// A whole double as an integer, so `uniqueItems` finds `1` and `1.0` the same.
    static func normalized(_ value: JSON) -> JSON {
        if case .double(let number) = value, let whole = Int(exactly: number) { return .integer(whole) }
        return value
    }

    static func phrase(_ types: SchemaSet.Types) -> String {
        let names: [(SchemaSet.Types, String)] = [
            (.object, "an object"), (.array, "an array"), (.string, "a string"), (.integer, "an integer"),
            (.number, "a number"), (.boolean, "a boolean"), (.null, "null"),
        ]
        let listed = names.filter { types.contains($0.0) }.map(\.1)
        guard listed.count > 1 else { return listed.first ?? "allowed" }
        return listed.dropLast().joined(separator: ", ") + " or " + (listed.last ?? "")
    }

    /// A value as a message shows it: JSON, cut at 60 characters.
    static func show(_ value: JSON) -> String {
        let text = value.serializedString()
        return text.count > 60 ? String(text.prefix(57)) + "…" : text
    }

    static func number(_ value: Double) -> String {
        if let whole = Int(exactly: value) { return String(whole) }
        return String(value)
    }
}

/// The `format`s checked, each strictly as its RFC says; others are not checked.
enum Formats {
    /// `nil` when the format is not one for strings.
    static func check(_ format: SchemaSet.Format, _ text: String) -> Bool? {
        switch format {
        case .dateTime:
            // RFC 3339: a full date, `T`, a full time with its offset.
            guard let separator = text.firstIndex(where: { $0 == "T" || $0 == "t" || $0 == " " }) else { return false }
            return isDate(text[..<separator]) && isTime(text[text.index(after: separator)...], needsOffset: true)
        case .date: return isDate(text[...])
        case .time: return isTime(text[...], needsOffset: true)
        case .uuid: return isUUID(text)
        case .email: return isEmail(text)
        case .ipv4: return isIPv4(text)
        case .int32, .int64: return nil
        }
    }

    static func phrase(_ format: SchemaSet.Format) -> String {
        switch format {
        case .dateTime: "a date-time (RFC 3339: 2026-11-29T10:00:00Z)"
        case .date: "a date (RFC 3339: 2026-11-29)"
        case .time: "a time (RFC 3339: 10:00:00Z)"
        case .uuid: "a UUID"
        case .email: "an email address"
        case .ipv4: "an IPv4 address"
        case .int32, .int64: "an \(format.rawValue)"
        }
    }

    static func digits(_ text: Substring.UTF8View.SubSequence, _ count: Int) -> Int? {
        guard text.count == count, text.allSatisfy({ $0 &- UInt8(ascii: "0") < 10 }) else { return nil }
        return text.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }

    static func isDate(_ text: Substring) -> Bool {
        let parts = text.utf8.split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
        guard parts.count == 3, let year = digits(parts[0], 4), let month = digits(parts[1], 2),
            let day = digits(parts[2], 2), (1...12).contains(month)
        else { return false }
        return (1...HTTPDate.daysIn(month: month, year: year)).contains(day)
    }

    static func isTime(_ text: Substring, needsOffset: Bool) -> Bool {
        var body = text
        if body.hasSuffix("Z") || body.hasSuffix("z") {
            body = body.dropLast()
        } else if let sign = body.lastIndex(where: { $0 == "+" || $0 == "-" }) {
            let offset = body[body.index(after: sign)...].utf8.split(
                separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
            guard offset.count == 2, let hours = digits(offset[0], 2), let minutes = digits(offset[1], 2), hours < 24,
                minutes < 60
            else { return false }
            body = body[..<sign]
        } else if needsOffset {
            return false
        }
        var seconds = body
        if let dot = body.firstIndex(of: ".") {
            let fraction = body[body.index(after: dot)...]
            guard !fraction.isEmpty, fraction.utf8.allSatisfy({ $0 &- UInt8(ascii: "0") < 10 }) else { return false }
            seconds = body[..<dot]
        }
        let parts = seconds.utf8.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard parts.count == 3, let hour = digits(parts[0], 2), let minute = digits(parts[1], 2),
            let second = digits(parts[2], 2)
        else { return false }
        return hour < 24 && minute < 60 && second <= 60
    }

    static func isUUID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (position, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(position) {
                guard byte == UInt8(ascii: "-") else { return false }
            } else {
                let isHex = (byte &- UInt8(ascii: "0") < 10) || (byte | 0x20) &- UInt8(ascii: "a") < 6
                guard isHex else { return false }
            }
        }
        return true
    }

    /// One `@`, something before it, a dot-separated domain after it, no spaces: what every address
    /// has, without RFC 5322's quoted forms (which no API sends).
    static func isEmail(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return false }
        guard !text.contains(where: { $0.isWhitespace }) else { return false }
        return parts[1].split(separator: ".", omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty }
    }

    static func isIPv4(_ text: String) -> Bool {
        let parts = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        return parts.allSatisfy { part in
            guard (1...3).contains(part.count), part.allSatisfy({ $0 &- UInt8(ascii: "0") < 10 }) else { return false }
            if part.count > 1 && part.first == UInt8(ascii: "0") { return false }
            return part.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) } <= 255
        }
    }
}
