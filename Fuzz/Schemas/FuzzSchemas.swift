import FuzzSupport
import HammockJSON
import HammockSchema
import HammockTestSupport

/// The request checks' schema reader and validator on random schemas and values, and the pattern reader
/// both ways: schema graphs that refer to themselves and each other (`$ref`, `allOf`, `anyOf`, `oneOf`,
/// `not`, items, members, bounds, patterns, formats), checked against random values. Never a crash, never
/// past libFuzzer's `-timeout` (a hostile document or body must not hold the server), the same answer
/// twice, at most the violations asked for; and every string made from a pattern is matched whole by the
/// automaton read from the same pattern (when it has no anchors or boundaries inside it, which make no
/// text but do test it).
@main
struct FuzzTarget {
    static func main() {
        Fuzzer.run { data, count in
            var reader = ByteReader(Fuzzer.bytes(data, count))
            let pattern = Self.pattern(&reader)
            Self.checkPattern(pattern, seed: UInt64(reader.byte()))
            let (named, root) = Self.schemas(&reader, pattern: pattern)
            var set = SchemaSet(named: named)
            let handle = set.add(root, place: "fuzz")
            let value = Self.value(&reader, depth: 0)
            let limit = 1 + reader.choose(5)
            // A twentieth of the server's budget: -Onone with AddressSanitizer is ~400 times slower than a release
            // build (a value that reaches 2,000,000 steps took 28 s there, past libFuzzer's 10 s).
            let first = set.validate(value, against: handle, limit: limit, steps: 100_000)
            let second = set.validate(value, against: handle, limit: limit, steps: 100_000)
            Fuzzer.check(first == second, "two validations of one value differ: \(first) / \(second)")
            Fuzzer.check(first.count <= limit, "\(first.count) violations where \(limit) were asked for")
            _ = set.parameterValue(value.serializedString(), for: handle)
            return 0
        }
    }

    static let pieces = [
        "a", "b", "0", ".", "\\d", "\\w", "\\s", "\\D", "[a-c]", "[^a]", "(", ")", "|", "*", "+", "?", "{2}", "{1,3}",
        "{2,}", "^", "$", "\\b", "(?:", "[[:alpha:]]", "\\.", "-", "_", "é", "\\x41", "\\u00e9", "[", "]", "{", "}",
    ]

    static func pattern(_ reader: inout ByteReader) -> String {
        var text = ""
        for _ in 0..<reader.choose(12) { text += reader.pick(pieces) }
        return text
    }

    /// A string made from a pattern is matched whole by the automaton of the same pattern.
    static func checkPattern(_ source: String, seed: UInt64) {
        guard let maker = try? TextPattern(source), let matcher = try? TextMatcher("^(?:\(source))$") else { return }
        // An anchor or boundary inside the pattern tests text that making ignores: `a^b` makes "ab".
        let inner = source.dropFirst(source.hasPrefix("^") ? 1 : 0).dropLast(source.hasSuffix("$") ? 1 : 0)
        guard !inner.contains("^"), !inner.contains("$"), !inner.contains("\\b") else { return }
        var random = SplitMix64(seed: seed)
        for _ in 0..<3 {
            let made = maker.make(using: &random)
            Fuzzer.check(matcher.matches(made), "'\(source)' made '\(made)', which its automaton does not match")
        }
    }

    /// 1 to 8 named schemas over each other, and a root that refers to one.
    static func schemas(_ reader: inout ByteReader, pattern: String) -> (JSONObject, JSON) {
        let count = 1 + reader.choose(8)
        func reference(_ reader: inout ByteReader) -> JSON {
            ["$ref": .string("#/components/schemas/S\(reader.choose(count + 1))")]
        }
        func schema(_ reader: inout ByteReader, depth: Int) -> JSON {
            guard depth < 4 else { return reference(&reader) }
            switch reader.choose(14) {
            case 0: return reference(&reader)
            case 1:
                return [
                    "type": "array", "items": schema(&reader, depth: depth + 1), "minItems": .integer(reader.choose(3)),
                    "uniqueItems": .bool(reader.choose(2) == 0),
                ]
            case 2:
                return [
                    "oneOf": [schema(&reader, depth: depth + 1), schema(&reader, depth: depth + 1)],
                    "discriminator": ["propertyName": "kind"],
                ]
            case 3: return ["anyOf": [schema(&reader, depth: depth + 1), ["type": "null"]]]
            case 4: return ["allOf": [schema(&reader, depth: depth + 1), reference(&reader)]]
            case 5: return ["not": schema(&reader, depth: depth + 1)]
            case 6:
                return [
                    "type": "integer", "minimum": .integer(Int(reader.byte()) - 128),
                    "exclusiveMaximum": .integer(Int(reader.byte())), "multipleOf": .double(Double(1 + reader.choose(4)) / 2),
                ]
            case 7: return ["type": "string", "pattern": .string(pattern), "maxLength": .integer(reader.choose(20))]
            case 8:
                return [
                    "type": "string",
                    "format": .string(reader.pick(["date-time", "date", "time", "uuid", "email", "ipv4", "x"])),
                ]
            case 9: return ["enum": [1, "a", nil, 1.0]]
            case 10: return .bool(reader.choose(2) == 0)
            case 11: return ["type": ["string", "null"], "nullable": true, "const": "a"]
            default:
                var properties = JSONObject()
                for index in 0..<reader.choose(4) { properties["m\(index)"] = schema(&reader, depth: depth + 1) }
                return [
                    "type": "object", "properties": .object(properties), "required": ["m0", "kind"],
                    "additionalProperties": reader.choose(2) == 0 ? false : schema(&reader, depth: depth + 1),
                    "patternProperties": [.init(stringLiteral: pattern): ["readOnly": true]],
                    "maxProperties": .integer(reader.choose(5)),
                ]
            }
        }
        var named = JSONObject()
        for index in 0..<count { named["S\(index)"] = schema(&reader, depth: 0) }
        return (named, reader.choose(3) == 0 ? schema(&reader, depth: 0) : reference(&reader))
    }

    static func value(_ reader: inout ByteReader, depth: Int) -> JSON {
        switch reader.choose(depth > 5 ? 6 : 9) {
        case 0: return .null
        case 1: return .bool(reader.choose(2) == 0)
        case 2: return .integer(Int(Int8(bitPattern: reader.byte())))
        case 3: return .double(Double(Int8(bitPattern: reader.byte())) / 4)
        case 4: return .string(pattern(&reader))
        case 5:
            return .string(
                reader.pick([
                    "2026-11-29T10:00:00Z", "2026-02-30", "6f1d2c3b-8a7e-4d5c-9b0a-112233445566", "a@b.c", "10.0.0.1", "",
                ]))
        case 6, 7: return .array((0..<reader.choose(4)).map { _ in value(&reader, depth: depth + 1) })
        default:
            var object = JSONObject()
            for index in 0..<reader.choose(4) {
                object[reader.pick(["m\(index)", "kind", "S0", "x"])] = value(&reader, depth: depth + 1)
            }
            return .object(object)
        }
    }
}
