import HammockJSON
import HammockTestSupport
import Testing

@testable import HammockSchema

/// Values checked against JSON Schemas as OpenAPI documents write them.
@Suite("Schema checks")
struct SchemaSetTests {
    static func violations(
        _ schema: JSON, _ value: JSON, named: JSONObject = [:], direction: SchemaSet.Direction = .request
    )
        -> [SchemaViolation]
    {
        var set = SchemaSet(named: named)
        let handle = set.add(schema, place: "test")
        return set.validate(value, against: handle, direction: direction)
    }

    /// `(keyword, pointer)` of each violation.
    static func found(
        _ schema: JSON, _ value: JSON, named: JSONObject = [:], direction: SchemaSet.Direction = .request
    )
        -> [String]
    {
        violations(schema, value, named: named, direction: direction).map { "\($0.keyword) \($0.pointer)" }
    }

    @Test("Each keyword refuses what it forbids and names itself and where; a value that keeps them all passes")
    func keywords() {
        let cases: [(JSON, JSON, JSON, String)] = [
            (["type": "integer"], 3, 3.5, "type "),
            (["type": ["string", "null"]], nil, 1, "type "),
            (["type": "number", "minimum": 0, "maximum": 10], 10, 10.5, "maximum "),
            (["type": "number", "exclusiveMinimum": 0], 0.1, 0, "exclusiveMinimum "),
            (["type": "number", "minimum": 0, "exclusiveMinimum": true], 1, 0, "exclusiveMinimum "),
            (["type": "number", "multipleOf": 0.01], 1.23, 1.234, "multipleOf "),
            (["type": "string", "minLength": 2, "maxLength": 3], "héé", "héél", "maxLength "),
            (["type": "string", "pattern": "^[0-9]{3}$"], "123", "1234", "pattern "),
            (["type": "string", "pattern": "ab"], "xaby", "xby", "pattern "),
            (["type": "string", "format": "date-time"], "2026-11-29T10:00:00.5+01:00", "2026-02-30T10:00:00Z", "format "),
            (["type": "string", "format": "date"], "2024-02-29", "2023-02-29", "format "),
            (["type": "string", "format": "uuid"], "6f1d2c3b-8a7e-4d5c-9b0a-112233445566", "6f1d2c3b", "format "),
            (["type": "string", "format": "email"], "ada@example.com", "ada", "format "),
            (["type": "string", "format": "ipv4"], "10.0.0.1", "10.0.0.256", "format "),
            (["enum": ["a", 1]], 1.0, "b", "enum "),
            (["const": "x"], "x", "y", "const "),
            (["type": "array", "minItems": 1, "maxItems": 2], [1], [], "minItems "),
            (["type": "array", "uniqueItems": true], [1, 2], [1, 1.0], "uniqueItems /1"),
            (["type": "array", "items": ["type": "string"]], ["a"], ["a", 2], "type /1"),
            (["type": "array", "prefixItems": [["type": "integer"]], "items": false], [1], [1, 2], "false /1"),
            (["type": "object", "required": ["a"]], ["a": 1], ["b": 1], "required "),
            (
                ["type": "object", "additionalProperties": false, "properties": ["a": [:]]], ["a": 1], ["a": 1, "b/c": 2],
                "additionalProperties /b~1c"
            ),
            (["type": "object", "additionalProperties": ["type": "integer"]], ["x": 1], ["x": "1"], "type /x"),
            (
                ["type": "object", "patternProperties": ["^x-": ["type": "string"]], "additionalProperties": false],
                ["x-a": "1"], ["x-a": 1], "type /x-a"
            ),
            (["type": "object", "minProperties": 1], ["a": 1], [:], "minProperties "),
            (["allOf": [["type": "object"], ["required": ["a"]]]], ["a": 1], [:], "required "),
            (["anyOf": [["type": "string"], ["type": "integer"]]], 1, 1.5, "anyOf "),
            (["oneOf": [["type": "integer"], ["type": "number"]]], 1.5, 1, "oneOf "),
            (["not": ["type": "string"]], 1, "a", "not "),
            (["type": "string", "nullable": true, "enum": ["a"]], nil, "b", "enum "),
        ]
        for (schema, valid, invalid, expected) in cases {
            #expect(Self.found(schema, valid).isEmpty, "\(schema) refused \(valid)")
            #expect(Self.found(schema, invalid).first == expected, "\(schema) on \(invalid)")
        }
    }

    @Test("References reach named schemas and pointers inside them; a recursive schema checks a deep value")
    func references() {
        let named: JSONObject = [
            "Node": [
                "type": "object", "required": ["name"],
                "properties": [
                    "name": ["type": "string"], "children": ["type": "array", "items": ["$ref": "#/components/schemas/Node"]],
                ],
            ],
            "Name": ["$ref": "#/components/schemas/Node/properties/name"],
        ]
        var tree: JSON = ["name": "leaf"]
        for level in 0..<50 { tree = ["name": .string("level \(level)"), "children": [tree]] }
        let schema: JSON = ["$ref": "#/components/schemas/Node"]
        #expect(Self.found(schema, tree, named: named).isEmpty)
        var broken: JSON = ["name": 5]
        for _ in 0..<3 { broken = ["name": "x", "children": [broken]] }
        #expect(Self.found(schema, broken, named: named) == ["type /children/0/children/0/children/0/name"])
        #expect(Self.found(["$ref": "#/components/schemas/Name"], 5, named: named) == ["type "])
        #expect(Self.found(["$ref": "#/$defs/Name"], "x", named: named).isEmpty)
    }

    @Test("A discriminator checks only the branch it names; without one, oneOf wants exactly one branch")
    func discriminators() {
        let named: JSONObject = [
            "Cat": [
                "type": "object", "required": ["kind", "purrs"],
                "properties": ["kind": ["type": "string"], "purrs": ["type": "boolean"]],
            ],
            "Dog": [
                "type": "object", "required": ["kind", "barks"],
                "properties": ["kind": ["type": "string"], "barks": ["type": "boolean"]],
            ],
        ]
        let pet: JSON = [
            "oneOf": [["$ref": "#/components/schemas/Cat"], ["$ref": "#/components/schemas/Dog"]],
            "discriminator": ["propertyName": "kind"],
        ]
        #expect(Self.found(pet, ["kind": "Cat", "purrs": true], named: named).isEmpty)
        // Named a Dog, it is checked as one: the bark is missing, whatever a Cat would say.
        #expect(Self.found(pet, ["kind": "Dog", "purrs": true], named: named) == ["required "])
        let mapped: JSON = [
            "oneOf": [["$ref": "#/components/schemas/Cat"], ["$ref": "#/components/schemas/Dog"]],
            "discriminator": ["propertyName": "kind", "mapping": ["woof": "#/components/schemas/Dog"]],
        ]
        #expect(Self.found(mapped, ["kind": "woof", "barks": true], named: named).isEmpty)
        // A value both branches take is refused by oneOf, as JSON Schema says.
        let both: JSON = ["oneOf": [["type": "object"], ["required": ["a"]]]]
        #expect(Self.found(both, ["a": 1]) == ["oneOf "])
    }

    @Test("A request need not send a read-only member, nor a response a write-only one")
    func directions() {
        let schema: JSON = [
            "type": "object", "required": ["id", "password"],
            "properties": ["id": ["type": "integer", "readOnly": true], "password": ["type": "string", "writeOnly": true]],
        ]
        #expect(Self.found(schema, ["password": "x"], direction: .request).isEmpty)
        #expect(Self.found(schema, ["id": 1], direction: .response).isEmpty)
        #expect(Self.found(schema, ["id": 1], direction: .request) == ["required "])
    }

    @Test("What cannot be read accepts every value and is noted once")
    func unreadable() {
        var set = SchemaSet(named: [:])
        let handle = set.add(
            ["properties": ["a": ["pattern": "(?<=x)y"], "b": ["$ref": "#/components/schemas/Missing"], "c": 5]], place: "test")
        #expect(set.validate(["a": "zzz", "b": 1, "c": 1], against: handle).isEmpty)
        #expect(set.notes.count == 3)
    }

    @Test("Parameters as text become the value their schema wants")
    func parameterValues() {
        var set = SchemaSet(named: ["Count": ["type": "integer"]])
        let count = set.add(["$ref": "#/components/schemas/Count"], place: "a")
        let flag = set.add(["type": "boolean"], place: "b")
        let either = set.add(["oneOf": [["type": "number"], ["type": "string"]]], place: "c")
        let tags = set.add(["type": "array", "items": ["type": "integer"]], place: "d")
        #expect(set.parameterValue("7", for: count) == 7)
        #expect(set.parameterValue("seven", for: count) == "seven")
        #expect(set.parameterValue("true", for: flag) == true)
        #expect(set.parameterValue("1.5", for: either) == 1.5)
        #expect(set.parameterValue("nan", for: either) == "nan")
        #expect(set.isArray(tags))
        #expect(set.itemSchema(of: tags).map { set.parameterValue("3", for: $0) } == 3)
        // An integer past 64 bits is an integer still, out of any bound a document gives; "-" is no number.
        let huge = set.parameterValue("-12990193908256203603968", for: count)
        #expect(set.validate(huge, against: count).isEmpty)
        let bounded = set.add(["type": "integer", "minimum": 1, "maximum": 100], place: "e")
        #expect(
            set.validate(set.parameterValue("-12990193908256203603968", for: bounded), against: bounded).map(\.keyword) == [
                "minimum"
            ])
        #expect(set.parameterValue("-", for: count) == "-")
    }

    @Test("A hostile schema or value ends: a reference cycle that never descends, a deep value, a backtracking pattern")
    func hostile() {
        let named: JSONObject = ["Loop": ["allOf": [["$ref": "#/components/schemas/Loop"]]]]
        #expect(Self.found(["$ref": "#/components/schemas/Loop"], 1, named: named).isEmpty)
        var deep: JSON = 1
        for _ in 0..<2_000 { deep = [deep] }
        #expect(
            Self.found(
                ["items": ["$ref": "#/components/schemas/Any"]], deep,
                named: ["Any": ["items": ["$ref": "#/components/schemas/Any"]]]
            ).isEmpty)
        // Exponential for a backtracking engine; linear here.
        let text = String(repeating: "a", count: 50_000) + "b"
        #expect(Self.found(["type": "string", "pattern": "^(a+)+$"], .string(text)) == ["pattern "])
        // A chain of 20,000 references, each schema naming the next, is compiled without recursing down it.
        var chain = JSONObject()
        for index in 0..<20_000 { chain["S\(index)"] = ["$ref": .string("#/components/schemas/S\(index + 1)")] }
        chain["S20000"] = ["type": "integer"]
        var long = SchemaSet(named: chain)
        let start = long.add(["$ref": "#/components/schemas/S0"], place: "chain")
        // Checking it stops 256 references down and accepts: no value is refused for what was not read.
        #expect(long.validate("text", against: start).isEmpty)
        let near = long.add(["$ref": "#/components/schemas/S19990"], place: "near")
        #expect(long.validate("text", against: near).map(\.keyword) == ["type"])
        // A counted repetition too large for the automaton is noted, not compiled.
        var set = SchemaSet()
        _ = set.add(["pattern": "a{1,100000}"], place: "x")
        #expect(set.notes.count == 1)
    }

    @Test("A validation stops at the step budget its caller gives and accepts what it did not reach")
    func stepBudget() {
        var set = SchemaSet()
        let strings = set.add(["type": "array", "items": ["type": "string"]], place: "list")
        let numbers: JSON = .array((0..<10).map { .integer($0) })
        #expect(set.validate(numbers, against: strings, limit: 100).count == 10)
        // One step for the array, then one per item: four steps reach three items.
        #expect(set.validate(numbers, against: strings, limit: 100, steps: 4).map(\.pointer) == ["/0", "/1", "/2"])
        // A budget past the server's most is the most; a budget below one is one.
        #expect(set.validate(numbers, against: strings, limit: 100, steps: .max).count == 10)
        #expect(set.validate(numbers, against: strings, limit: 100, steps: -5).isEmpty)
    }

    @Test("A choice none of whose branches matches names the first branch's first violation")
    func choiceReason() {
        let person: JSON = [
            "type": "object", "required": ["name", "age"],
            "properties": ["name": ["type": "string"], "age": ["type": "integer"]],
        ]
        for keyword in ["anyOf", "oneOf"] {
            let found = Self.violations([.init(stringLiteral: keyword): [person, ["type": "string"]]], ["name": 1, "age": "x"])
            #expect(found.map(\.keyword) == [keyword])
            #expect(found.first?.message.contains("the first: /name: 1 is not a string (type)") == true, "\(found)")
        }
    }

    @Test("The matcher finds what ICU's engine finds, on the patterns documents use and strings near them")
    func matcherAgreesWithICU() throws {
        let patterns = [
            "^asst_[A-Za-z0-9]{24}$", "^[0-9]{17,20}$", "^\\d+$", "[a-z]+@[a-z]+\\.com", "^(\\+|-)?\\d+(\\.\\d+)?$",
            "^[A-Z]{2}-\\d{4}$", "\\bcat\\b", "^$", "colou?r", "^(ab|cd)*e$", "^[^,]+,[^,]+$", "^\\S+\\s\\S+$",
            "^[[:alpha:]]{3}$", "x{2,}y", "^(?:[0-9a-f]{2}:){5}[0-9a-f]{2}$", "^\\w+$", "^.{3}$", "\\Bb", "^a|b$",
        ]
        var random = SplitMix64(seed: 29)
        let alphabet = Array("ab019 _-,.:@+ZxcEtcolurASST")
        for source in patterns {
            let matcher = try TextMatcher(source)
            let maker = try TextPattern(source)
            var texts: [String] = ["", "a", "cat", "the cat sat"]
            for _ in 0..<40 {
                var made = Array(maker.make(using: &random))
                texts.append(String(made))
                // A mutation of a match: a character changed, dropped or added.
                if !made.isEmpty {
                    let position = Int.random(in: 0..<made.count, using: &random)
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0: made[position] = alphabet[Int.random(in: 0..<alphabet.count, using: &random)]
                    case 1: made.remove(at: position)
                    default: made.insert(alphabet[Int.random(in: 0..<alphabet.count, using: &random)], at: position)
                    }
                }
                texts.append(String(made))
            }
            for text in texts {
                #expect(matcher.matches(text) == (try ICUPattern.searches(pattern: source, in: text)), "\(source) on '\(text)'")
            }
        }
    }
}
