import HammockJSON
import HammockOpenAPI
import HammockSchema
import HammockServer
import HammockTestSupport
import Testing

/// Bodies the import makes up from a document's schemas keep those schemas: random schemas (strings with
/// lengths, patterns, formats and enums; bounded numbers; arrays with item counts and unique items;
/// objects with required members and no others; nullable values; `allOf`, `oneOf` with a discriminator;
/// `$ref`s to named schemas), each answered by a stub, each body checked by `SchemaSet`.
@Suite("Made-up bodies against random schemas")
struct MadeUpBodyPropertyTests {
    struct Maker {
        var random: SplitMix64
        var named: JSONObject = [:]

        mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }
        mutating func number(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }

        mutating func schema(depth: Int) -> JSON {
            let kinds = depth >= 3 ? 4 : 9
            switch number(0...(kinds - 1)) {
            case 0: return string()
            case 1: return integer()
            case 2:
                var number: JSONObject = [
                    "type": "number", "minimum": .double(Double(self.number(-5...5)) / 2), "maximum": 100.5,
                ]
                if chance(30) { number["multipleOf"] = 0.25 }
                if chance(30) { number["exclusiveMaximum"] = 50 }
                return .object(number)
            case 3: return nullable(["type": "boolean"])
            case 4: return array(depth: depth)
            case 5, 6: return object(depth: depth)
            case 7: return union(depth: depth)
            default:
                // The name is taken before the schema is made: one made inside it must not reuse it (a
                // schema that requires itself has no finite value).
                let name = "S\(named.count)"
                named[name] = ["type": "object"]
                named[name] = object(depth: depth + 1)
                return ["$ref": .string("#/components/schemas/\(name)")]
            }
        }

        mutating func nullable(_ schema: JSON) -> JSON {
            guard chance(25), case .object(var object) = schema, case .string(let type)? = object["type"] else { return schema }
            object["type"] = [.string(type), "null"]
            return .object(object)
        }

        mutating func string() -> JSON {
            var schema: JSONObject = ["type": "string"]
            switch number(0...5) {
            case 0:
                let minimum = number(0...4)
                schema["minLength"] = .integer(minimum)
                schema["maxLength"] = .integer(minimum + number(0...6))
            case 1:
                schema["pattern"] = .string(
                    ["^[a-z]{3,8}$", "^[0-9]{4}-[0-9]{2}$", "^C[0-9A-Z]{8}$", "^(cat|dog)s?$"][number(0...3)])
            case 2: schema["format"] = .string(["date-time", "date", "uuid", "email", "ipv4"][number(0...4)])
            case 3: schema["enum"] = ["red", "green", "blue"]
            case 4:
                schema["pattern"] = "^[A-Z]+$"
                schema["minLength"] = 2
                schema["maxLength"] = 4
            default: break
            }
            return nullable(.object(schema))
        }

        mutating func integer() -> JSON {
            var schema: JSONObject = ["type": "integer"]
            let low = number(-20...20)
            let step = [2, 3, 5][number(0...2)]
            let withStep = chance(25)
            if chance(60) { schema["minimum"] = .integer(low) }
            // A range that holds a multiple of the step, when there is one: a schema nothing fits is no test.
            if chance(60) { schema["maximum"] = .integer(low + number(0...40) + (withStep ? step : 0)) }
            if chance(25) { schema["exclusiveMinimum"] = .integer(low - 1) }
            if chance(20) { schema["exclusiveMaximum"] = .integer(low + 45 + step) }
            if withStep { schema["multipleOf"] = .integer(step) }
            return nullable(.object(schema))
        }

        mutating func array(depth: Int) -> JSON {
            let items = self.schema(depth: depth + 1)
            var schema: JSONObject = ["type": "array", "items": items]
            let minimum = number(0...3)
            if chance(60) { schema["minItems"] = .integer(minimum) }
            if chance(50) { schema["maxItems"] = .integer(minimum + number(0...2)) }
            // Unique items of a kind that has enough values: three booleans, or two closed empty objects,
            // cannot be told apart, and no body fits such a schema.
            let few = items["type"] == "boolean" || items["type"] == ["boolean", "null"] || items["$ref"] != nil
            if chance(30), !few { schema["uniqueItems"] = true }
            return .object(schema)
        }

        mutating func object(depth: Int, prefix: String = "m") -> JSON {
            var properties: JSONObject = [:]
            var required: [JSON] = []
            for index in 0..<number(0...4) {
                properties["\(prefix)\(index)"] = schema(depth: depth + 1)
                if chance(50) { required.append(.string("\(prefix)\(index)")) }
            }
            var schema: JSONObject = ["type": "object", "properties": .object(properties)]
            if !required.isEmpty { schema["required"] = .array(required) }
            if chance(40) { schema["additionalProperties"] = false }
            return .object(schema)
        }

        mutating func union(depth: Int) -> JSON {
            if chance(50) {
                // Parts with members of their own and no ban on others': parts that contradict each other
                // describe nothing, and no body could fit them.
                guard case .object(var first) = object(depth: depth + 1, prefix: "a"),
                    case .object(var second) = object(depth: depth + 1, prefix: "b")
                else { return object(depth: depth) }
                first["additionalProperties"] = nil
                second["additionalProperties"] = nil
                return ["allOf": [.object(first), .object(second)]]
            }
            // Branches told apart by their discriminator's value, as APIs write them.
            var branches: [JSON] = []
            for index in 0..<number(2...3) {
                let name = "B\(named.count)x\(index)"
                named[name] = ["type": "object"]
                guard case .object(var branch) = object(depth: depth + 1) else { continue }
                var properties = branch["properties"]?.objectValue ?? [:]
                properties["kind"] = ["type": "string", "enum": [.string(name)]]
                branch["properties"] = .object(properties)
                branch["required"] = .array((branch["required"]?.arrayValue ?? []) + ["kind"])
                named[name] = .object(branch)
                branches.append(["$ref": .string("#/components/schemas/\(name)")])
            }
            let union: JSON = ["oneOf": .array(branches), "discriminator": ["propertyName": "kind"]]
            // A union inside `allOf` (how documents add a description to one), or a scalar union.
            switch number(0...3) {
            case 0: return ["allOf": [union], "description": "wrapped"]
            case 1: return ["allOf": [["oneOf": [["type": "string", "enum": ["auto"]], object(depth: depth + 1)]]]]
            default: return union
            }
        }
    }

    @Test("Every body made up from 400 random schemas passes the schema's own check")
    func randomSchemas() throws {
        var failures: [String] = []
        for seed in 0..<400 {
            var maker = Maker(random: SplitMix64(seed: UInt64(seed)))
            let root = maker.schema(depth: 0)
            let document: JSON = [
                "openapi": "3.1.0", "info": ["title": "Random", "version": "1"],
                // A POST without a request body is a stub whatever it answers (an array of objects from a
                // GET would make a resource).
                "paths": [
                    "/jobs/run": [
                        "post": ["responses": ["200": ["description": "ok", "content": ["application/json": ["schema": root]]]]]
                    ]
                ],
                "components": ["schemas": .object(maker.named)],
            ]
            let mock = try OpenAPIImport.make(from: document, file: "random-\(seed).json")
            let body = mock.configuration["routes"]?[0]?["body"] ?? .null
            var set = SchemaSet(named: maker.named)
            let handle = set.add(root, place: "random")
            let violations = set.validate(body, against: handle, direction: .response, limit: 3)
            if !violations.isEmpty, failures.count < 5 {
                failures.append(
                    "seed \(seed): \(violations.map(\.description).joined(separator: "; "))\n  schema \(root.serializedString())\n  named \(JSON.object(maker.named).serializedString())\n  body \(body.serializedString())"
                )
            }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }
}
