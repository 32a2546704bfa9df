import HammockJSON
import HammockOpenAPI
import HammockTestSupport
import Testing

@Suite("YAML read into JSON and written from it")
struct YAMLTextTests {
    @Test("Plain scalars read as JSON would read them (YAML 1.2's core schema); quoted ones are strings")
    func scalars() throws {
        let value = try YAMLText.json(
            from: """
                count: 12
                negative: -3
                ratio: 1.5
                big: 1e3
                on: true
                off: False
                nothing: ~
                empty:
                answer: yes
                quoted: "12"
                single: 'true'
                version: 1.0.0
                hex: 0x1F
                plus: +1
                text: hello world
                """)
        let expected: JSON = [
            "count": 12, "negative": -3, "ratio": 1.5, "big": 1000.0, "on": true, "off": false, "nothing": nil,
            "empty": nil, "answer": "yes", "quoted": "12", "single": "true", "version": "1.0.0", "hex": "0x1F",
            "plus": "+1", "text": "hello world",
        ]
        #expect(value == expected)
        #expect(value.objectValue?.keys == expected.objectValue?.keys)
    }

    @Test("Mappings keep their order; anchors and aliases repeat what they name")
    func orderAndAliases() throws {
        let value = try YAMLText.json(
            from: """
                zebra: 1
                apple: 2
                headers: &common
                  X-Env: qa
                routes:
                  - path: /a
                    headers: *common
                """)
        #expect(value.objectValue?.keys == ["zebra", "apple", "headers", "routes"])
        #expect(value["routes"]?[0]?["headers"] == ["X-Env": "qa"])
    }

    @Test("A key given twice, a key that is not a string, and text that is not YAML each name where")
    func failures() {
        let twice = #expect(throws: YAMLText.Failure.self) {
            try YAMLText.json(from: "resources:\n  - name: a\n    name: b\n")
        }
        #expect(twice?.line != nil)
        #expect(twice?.message.hasPrefix("'name' declared twice") == true)

        let listKey = #expect(throws: YAMLText.Failure.self) { try YAMLText.json(from: "? [a, b]\n: 1\n") }
        #expect(listKey?.message == "a key must be a string, not a list or a mapping")

        let broken = #expect(throws: YAMLText.Failure.self) { try YAMLText.json(from: "a: [1, 2\nb: 3\n") }
        #expect(broken?.line != nil)
        #expect(broken?.message.hasPrefix("not valid YAML") == true)
    }

    @Test("Aliases nested to expand into billions of values are refused, not expanded")
    func billionLaughs() {
        var text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for level in 1..<10 {
            let previous = "*a\(level - 1)"
            text += "a\(level): &a\(level) [\(Array(repeating: previous, count: 10).joined(separator: ", "))]\n"
        }
        let error = #expect(throws: YAMLText.Failure.self) { try YAMLText.json(from: text) }
        #expect(error?.message.contains("more than 2000000 values") == true)
    }

    @Test("Nesting past the JSON parser's depth is refused; a flow list thousands deep does not crash")
    func depth() throws {
        let within = String(repeating: "[", count: YAMLText.maximumDepth) + String(repeating: "]", count: YAMLText.maximumDepth)
        #expect(try YAMLText.json(from: within) != nil)
        for count in [YAMLText.maximumDepth + 2, 5_000] {
            let deep = String(repeating: "[", count: count) + String(repeating: "]", count: count)
            let error = #expect(throws: YAMLText.Failure.self) { try YAMLText.json(from: deep) }
            // Ours up to libyaml's own limit (1,000), then libyaml's "Maximum nesting level reached".
            #expect(error?.message.lowercased().contains("nest") == true, "\(String(describing: error))")
        }
    }

    @Test("Integers past 64 bits, and a huge exponent, read as JSON reads them, never as a trap")
    func numberExtremes() throws {
        let value = try YAMLText.json(
            from: "max: 9223372036854775807\nmin: -9223372036854775808\nbig: 92233720368547758070\nhuge: 1e400\n")
        #expect(value["max"] == .integer(Int.max))
        #expect(value["min"] == .integer(Int.min))
        #expect(value["big"] == (try JSON(parsing: Array("92233720368547758070".utf8))))
        #expect(value["huge"] == ((try? JSON(parsing: Array("1e400".utf8))) ?? "1e400"))
    }

    @Test("An empty document is null")
    func empty() throws {
        #expect(try YAMLText.json(from: "") == nil)
        #expect(try YAMLText.json(from: "# only a comment\n") == nil)
    }

    /// Strings that a plain scalar would read back as something else.
    static let trickyStrings = [
        "", "true", "False", "null", "~", "12", "-3", "1.5", "1e3", "yes", "no", "0x1F", "+1", ".5", "a: b", "- a", "#x",
        "a #b", " lead", "trail ", "multi\nline", "tab\there", "quote\"s", "back\\slash", "{x}", "[x]", "&anchor", "*alias",
        "!tag", "%directive", "@at", "`tick", "|", ">", "é", "😀", "\u{0}", "\u{7F}", "/people/{id}", "application/json",
        "---", "...", "?", ":", "'", "\"",
    ]

    @Test("JSON written as YAML reads back the same: tricky strings, numbers, nesting and order")
    func roundTrip() throws {
        var object = JSONObject()
        for (index, string) in Self.trickyStrings.enumerated() {
            object["s\(index)"] = .string(string)
            object[string.isEmpty ? "empty key" : string] = .integer(index)
        }
        object["numbers"] = [0, -1, 9_223_372_036_854_775_807, -9_223_372_036_854_775_808, 0.1, -2.5e-8, 1e300]
        object["nested"] = [["a": [], "b": [:], "c": [nil, true, false]]]
        let value = JSON.object(object)
        #expect(try YAMLText.json(from: YAMLText.text(from: value)) == value)

        var random = SplitMix64(seed: 29)
        for _ in 0..<200 {
            let generated = Self.randomValue(depth: 0, using: &random)
            let text = YAMLText.text(from: generated)
            #expect(try YAMLText.json(from: text) == generated, "\(text)")
        }
    }

    static func randomValue(depth: Int, using random: inout SplitMix64) -> JSON {
        let kind = depth > 3 ? Int.random(in: 0..<5, using: &random) : Int.random(in: 0..<7, using: &random)
        switch kind {
        case 0: return nil
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .integer(Int.random(in: Int.min...Int.max, using: &random))
        case 3: return .double(Double(Int.random(in: -1_000_000...1_000_000, using: &random)) / 64)
        case 4:
            if Bool.random(using: &random), let tricky = trickyStrings.randomElement(using: &random) { return .string(tricky) }
            let scalars = (0..<Int.random(in: 0..<12, using: &random)).compactMap { _ in
                Unicode.Scalar(UInt32.random(in: 0x20...0x2FF, using: &random))
            }
            return .string(String(String.UnicodeScalarView(scalars)))
        case 5:
            return .array((0..<Int.random(in: 0..<4, using: &random)).map { _ in randomValue(depth: depth + 1, using: &random) })
        default:
            var object = JSONObject()
            for _ in 0..<Int.random(in: 0..<4, using: &random) {
                let key = trickyStrings.randomElement(using: &random) ?? "k"
                object[key + String(Int.random(in: 0..<100, using: &random))] = randomValue(depth: depth + 1, using: &random)
            }
            return .object(object)
        }
    }
}
