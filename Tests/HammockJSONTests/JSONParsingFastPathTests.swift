import HammockJSON
import HammockTestSupport
import Testing

/// The parser's shortcuts (keys shared with the previous object at the same depth, strings scanned
/// eight bytes at a time) must give exactly what the plain path gives, wherever the input departs from
/// what the shortcut expects.
@Suite("Parsing: fast paths")
struct JSONParsingFastPathTests {
    @Test("Objects that repeat, shorten, extend or reorder their predecessor's keys parse to what they say")
    func sharedKeys() throws {
        let text = """
            [{"id": 1, "name": "a", "kilometersWalked": 1.5},
             {"id": 2, "name": "b", "kilometersWalked": 2.5},
             {"id": 3, "name": "c"},
             {"id": 4, "name": "d", "kilometersWalked": 4.5, "extra": true},
             {"name": "e", "id": 5},
             {"n\\u0061me": "f", "id": 6},
             {"id": 7, "names": "g"},
             {"id": 8, "name": "h", "id": 9},
             {},
             {"id": 10, "inner": {"x": 1}, "name": "i"},
             {"id": 11, "inner": {"y": 2}, "name": "j"}]
            """
        let expected: JSON = [
            ["id": 1, "name": "a", "kilometersWalked": 1.5],
            ["id": 2, "name": "b", "kilometersWalked": 2.5],
            ["id": 3, "name": "c"],
            ["id": 4, "name": "d", "kilometersWalked": 4.5, "extra": true],
            ["name": "e", "id": 5],
            ["name": "f", "id": 6],
            ["id": 7, "names": "g"],
            ["id": 9, "name": "h"],
            [:],
            ["id": 10, "inner": ["x": 1], "name": "i"],
            ["id": 11, "inner": ["y": 2], "name": "j"],
        ]
        let value = try JSON(parsing: text)
        #expect(value == expected)
        // Key order is part of the value: check it where equality would not.
        #expect(value[4]?.objectValue?.keys == ["name", "id"])
        #expect(value[7]?.objectValue?.keys == ["id", "name"])
    }

    @Test("A key repeated after a shared prefix is still found: the last value wins, or the parse is refused")
    func duplicateAfterSharedKeys() throws {
        let text = #"[{"a": 1, "b": 2}, {"a": 3, "b": 4, "a": 5}]"#
        #expect(try JSON(parsing: text) == [["a": 1, "b": 2], ["a": 5, "b": 4]])
        let error = try #require(throws: JSONParsingError.self) {
            _ = try JSON(parsing: text, duplicateKeys: .reject)
        }
        #expect(error.reason == .duplicateKey("a"))
        #expect(error.offset == 36)
    }

    @Test("Keys whose raw bytes would read differently are not taken for the previous object's keys")
    func rawBytesAreNotDecodedKeys() throws {
        // The first object's key is `a\b` (three bytes); the second's raw bytes are the same three
        // bytes, but they mean `a` and a backspace.
        let value = try JSON(parsing: #"[{"a\\b": 1}, {"a\b": 2}]"#)
        #expect(value[0]?.objectValue?.keys == ["a\\b"])
        #expect(value[1]?.objectValue?.keys == ["a\u{08}"])
        // A key with a quote in it (escaped) and a later key that stops where the quote was.
        let quoted = try JSON(parsing: #"[{"a\"b": 1}, {"a": 2}]"#)
        #expect(quoted[1]?.objectValue?.keys == ["a"])
    }

    @Test("Large objects with shared keys keep their index")
    func largeSharedObjects() throws {
        let object = "{" + (0..<40).map { #""key number \#($0)": \#($0)"# }.joined(separator: ",") + "}"
        let value = try JSON(parsing: "[\(object),\(object),\(object)]")
        for index in 0..<3 {
            #expect(value[index]?["key number 39"] == 39)
            #expect(value[index]?.objectValue?.count == 40)
        }
    }

    @Test("Random arrays of records survive a round trip, whatever their keys share")
    func randomRecords() throws {
        var generator = SplitMix64(seed: 15)
        let pool = ["id", "name", "kilometersWalked", "a\"b", "tab\there", "é", "very long key name over sixteen bytes", "x"]
        for _ in 0..<200 {
            var records: [JSON] = []
            for _ in 0..<Int.random(in: 0..<8, using: &generator) {
                var object = JSONObject()
                for _ in 0..<Int.random(in: 0..<6, using: &generator) {
                    let key = pool[Int.random(in: 0..<pool.count, using: &generator)]
                    object[key] = .integer(Int.random(in: -5..<5, using: &generator))
                }
                records.append(.object(object))
            }
            let value = JSON.array(records)
            let parsed = try JSON(parsing: value.serialized())
            #expect(parsed == value)
            #expect(parsed.arrayValue?.map { $0.objectValue?.keys } == records.map { $0.objectValue?.keys })
        }
    }

    @Test("A quote, backslash, control character or non-ASCII byte is found at every offset of a long string")
    func stringScanOffsets() throws {
        for offset in 0..<24 {
            let prefix = String(repeating: "a", count: offset)
            let suffix = String(repeating: "b", count: 24 - offset)
            #expect(try JSON(parsing: "\"\(prefix)\"") == .string(prefix))
            #expect(try JSON(parsing: #""\#(prefix)\"\#(suffix)""#) == .string(prefix + "\"" + suffix))
            #expect(try JSON(parsing: "\"\(prefix)é\(suffix)\"") == .string(prefix + "é" + suffix))
            let control = try #require(throws: JSONParsingError.self) {
                _ = try JSON(parsing: "\"\(prefix)\n\(suffix)\"")
            }
            #expect(control.reason == .controlCharacterInString)
            #expect(control.offset == offset + 1)
            let invalid = try #require(throws: JSONParsingError.self) {
                _ = try JSON(parsing: [0x22] + Array(prefix.utf8) + [0xFF] + Array(suffix.utf8) + [0x22])
            }
            #expect(invalid.reason == .invalidUTF8)
            #expect(invalid.offset == offset + 1)
        }
    }
}

@Suite("Serialization: fast paths")
struct JSONSerializationFastPathTests {
    @Test("A character that needs escaping is escaped at every offset of a string, and plain text is copied")
    func escapesAtEveryOffset() throws {
        for offset in 0..<24 {
            let prefix = String(repeating: "a", count: offset)
            let suffix = String(repeating: "é", count: (24 - offset) / 2)
            for (character, escaped) in [("\"", #"\""#), ("\\", #"\\"#), ("\n", #"\n"#), ("\u{01}", #"\u0001"#)] {
                let value = JSON.string(prefix + character + suffix)
                #expect(value.serializedString() == "\"" + prefix + escaped + suffix + "\"")
                #expect(try JSON(parsing: value.serialized()) == value)
            }
            #expect(JSON.string(prefix + suffix).serializedString() == "\"\(prefix)\(suffix)\"")
        }
    }
}
