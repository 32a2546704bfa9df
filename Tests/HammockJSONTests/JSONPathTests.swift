import HammockJSON
import Testing

@Suite("Paths")
struct JSONPathTests {
    @Test(
        "The dotted grammar: keys, indices and their nesting",
        arguments: [
            ("name", [JSONPath.Component.key("name")]),
            ("attributes.name", [.key("attributes"), .key("name")]),
            ("items[0].name", [.key("items"), .index(0), .key("name")]),
            ("matrix[1][2]", [.key("matrix"), .index(1), .index(2)]),
            ("[0]", [.index(0)]),
            ("[3].a[10].b", [.index(3), .key("a"), .index(10), .key("b")]),
            ("a b.ü", [.key("a b"), .key("ü")]),
        ])
    func grammar(text: String, components: [JSONPath.Component]) throws {
        let path = try JSONPath(parsing: text)
        #expect(path.components == components)
        #expect(path.description == text)
    }

    @Test(
        "Invalid paths are rejected with the reason and offset",
        arguments: [
            ("", JSONPathError.Reason.empty, 0),
            ("a..b", .emptySegment, 2),
            (".a", .emptySegment, 0),
            ("a.", .emptySegment, 2),
            ("a[1", .unbalancedBracket, 1),
            ("a]", .unbalancedBracket, 1),
            ("a[-1]", .negativeIndex, 2),
            ("a[]", .invalidIndex, 1),
            ("a[x]", .invalidIndex, 2),
            ("a[1]b", .unexpectedCharacter, 4),
            ("a.[0]", .emptySegment, 2),
            ("a[99999999999999999999]", .invalidIndex, 20),
        ])
    func invalid(text: String, reason: JSONPathError.Reason, offset: Int) throws {
        do {
            let error = try #require(throws: JSONPathError.self) {
                _ = try JSONPath(parsing: text)
            }
            #expect(error.reason == reason)
            #expect(error.offset == offset)
            #expect(error.description.hasPrefix("invalid path '\(text)'"))
        }
    }

    @Test("Keys holding dots or brackets are reachable through components")
    func programmaticKeys() {
        let json: JSON = ["a.b": ["[x]": 1]]
        let path = JSONPath([.key("a.b"), .key("[x]")])
        #expect(json[path] == 1)
        #expect(path.description == #"["a.b"]["[x]"]"#)
    }

    @Test("Reading: absent, null and present stay distinct")
    func reading() throws {
        let json: JSON = ["offers": [["price": 9.5, "note": nil]], "n": 1]
        #expect(json[try JSONPath(parsing: "offers[0].price")] == 9.5)
        #expect(json[try JSONPath(parsing: "offers[0].note")] == .null)
        #expect(json[try JSONPath(parsing: "offers[0].missing")] == nil)
        #expect(json[try JSONPath(parsing: "offers[1].price")] == nil)
        #expect(json[try JSONPath(parsing: "n.x")] == nil)
        #expect(json[try JSONPath(parsing: "n[0]")] == nil)
    }

    @Test("Writing creates containers, pads arrays, keeps order, and refuses conflicts")
    func writing() throws {
        var json: JSON = ["id": 1]
        try json.set("x", at: JSONPath(parsing: "a.b[2].c"))
        #expect(json == ["id": 1, "a": ["b": [nil, nil, ["c": "x"]]]])
        try json.set(5, at: JSONPath(parsing: "id"))
        #expect(json.objectValue?.keys == ["id", "a"] && json["id"] == 5)
        do {
            let error = try #require(throws: JSONPathError.self) {
                try json.set(1, at: JSONPath(parsing: "id.x"))
            }
            #expect(error.reason == .typeConflict(expected: "object", found: "integer"))
        }
        #expect(throws: JSONPathError.self) { try json.set(1, at: JSONPath(parsing: "a[0]")) }
        var root = JSON.null
        try root.set(true, at: JSONPath(parsing: "[1]"))
        #expect(root == [nil, true])
    }
}
