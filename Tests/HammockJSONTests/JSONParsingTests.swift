import HammockJSON
import Testing

@Suite("Parsing")
struct JSONParsingTests {
    @Test("Scalars keep integers and decimals apart")
    func scalars() throws {
        #expect(try JSON(parsing: "1") == .integer(1))
        // The one integer literal whose sign an Int cannot keep: a float field written `-0` keeps it.
        #expect(try JSON(parsing: "-0").doubleValue?.sign == .minus)
        #expect(try JSON(parsing: "-0") == .double(-0.0))
        #expect(try JSON(parsing: "0") == .integer(0))
        #expect(try JSON(parsing: "1.0") == .double(1.0))
        #expect(try JSON(parsing: "1e2") == .double(100))
        #expect(try JSON(parsing: "-2.5E-3") == .double(-0.0025))
        #expect(try JSON(parsing: "9223372036854775807") == .integer(Int.max))
        #expect(try JSON(parsing: "-9223372036854775808") == .integer(Int.min))
        #expect(try JSON(parsing: "9223372036854775808") == .double(9_223_372_036_854_775_808))
        #expect(try JSON(parsing: "true") == .bool(true))
        #expect(try JSON(parsing: " false ") == .bool(false))
        #expect(try JSON(parsing: "null") == .null)
        #expect(try JSON(parsing: #""hi""#) == .string("hi"))
    }

    @Test(
        "Doubles round correctly on both the fast and slow paths",
        arguments: [
            "0.1", "3.141592653589793", "1e22", "1e23", "2.2250738585072014e-308", "123456789012345678.5",
            "0.000001", "-1.7976931348623157e308", "4.9e-324",
        ])
    func doubles(text: String) throws {
        let expected = try #require(Double(text))
        #expect(try JSON(parsing: text) == .double(expected))
    }

    @Test("Objects keep key order; duplicate keys keep the last value")
    func objectOrder() throws {
        let value = try JSON(parsing: #"{"z": 1, "a": 2, "m": {"y": [], "b": {}}, "a": 3}"#)
        let object = try #require(value.objectValue)
        #expect(object.keys == ["z", "a", "m"])
        #expect(object["a"] == 3)
        #expect(value["m"]?.objectValue?.keys == ["y", "b"])
    }

    @Test("Large objects are indexed and still ordered")
    func largeObject() throws {
        let text = "{" + (0..<100).map { #""k\#($0)": \#($0)"# }.joined(separator: ",") + "}"
        let object = try #require(try JSON(parsing: text).objectValue)
        #expect(object.keys.first == "k0" && object.keys.last == "k99")
        #expect(object["k57"] == 57)
        var copy = object
        copy["k3"] = nil
        #expect(copy["k4"] == 4 && copy["k3"] == nil && copy.count == 99)
    }

    @Test("Escapes and surrogate pairs decode")
    func escapes() throws {
        let value = try JSON(parsing: #""a\"b\\c\/d\b\f\n\r\t\u00e9\u20AC\ud83d\ude00""#)
        #expect(value == .string("a\"b\\c/d\u{08}\u{0C}\n\r\té€😀"))
        #expect(try JSON(parsing: "\"caf\u{E9} 😀\"") == .string("café 😀"))
    }

    @Test("Parses from bytes, arrays and non-contiguous collections")
    func inputs() throws {
        let text = #"[1,{"a":"b"}]"#
        let expected: JSON = [1, ["a": "b"]]
        #expect(try JSON(parsing: Array(text.utf8)) == expected)
        #expect(try JSON(parsing: text.utf8) == expected)
        #expect(try JSON(parsing: text.utf8.reversed().reversed()) == expected)
    }

    struct Failure: Sendable, CustomTestStringConvertible {
        let text: String
        let reason: JSONParsingError.Reason
        let offset: Int
        var testDescription: String { text }
    }

    @Test(
        "Malformed input reports the reason and byte offset",
        arguments: [
            Failure(text: "", reason: .unexpectedEnd, offset: 0),
            Failure(text: "  ", reason: .unexpectedEnd, offset: 2),
            Failure(text: "[1,", reason: .unexpectedEnd, offset: 3),
            Failure(text: "[1 2]", reason: .unexpectedByte(UInt8(ascii: "2")), offset: 3),
            Failure(text: "[1,]", reason: .unexpectedByte(UInt8(ascii: "]")), offset: 3),
            Failure(text: #"{"a" 1}"#, reason: .unexpectedByte(UInt8(ascii: "1")), offset: 5),
            Failure(text: #"{"a":1,}"#, reason: .unexpectedByte(UInt8(ascii: "}")), offset: 7),
            Failure(text: "{a:1}", reason: .unexpectedByte(UInt8(ascii: "a")), offset: 1),
            Failure(text: "tru", reason: .invalidLiteral, offset: 0),
            Failure(text: "nul1", reason: .invalidLiteral, offset: 0),
            Failure(text: "01", reason: .invalidNumber, offset: 0),
            Failure(text: "-", reason: .invalidNumber, offset: 0),
            Failure(text: "1.", reason: .invalidNumber, offset: 0),
            Failure(text: ".5", reason: .unexpectedByte(UInt8(ascii: ".")), offset: 0),
            Failure(text: "1e", reason: .invalidNumber, offset: 0),
            Failure(text: "+1", reason: .unexpectedByte(UInt8(ascii: "+")), offset: 0),
            Failure(text: "1e999", reason: .invalidNumber, offset: 0),
            Failure(text: #""\x""#, reason: .invalidEscape, offset: 1),
            Failure(text: #""\u12G4""#, reason: .invalidUnicodeEscape, offset: 1),
            Failure(text: #""\ud800""#, reason: .invalidUnicodeEscape, offset: 1),
            Failure(text: #""\udc00""#, reason: .invalidUnicodeEscape, offset: 1),
            Failure(text: "\"a\nb\"", reason: .controlCharacterInString, offset: 2),
            Failure(text: #""abc"#, reason: .unexpectedEnd, offset: 4),
            Failure(text: "[1] x", reason: .trailingCharacters, offset: 4),
            Failure(text: "{} {}", reason: .trailingCharacters, offset: 3),
        ])
    func malformed(failure: Failure) {
        #expect {
            try JSON(parsing: failure.text)
        } throws: { error in
            guard let error = error as? JSONParsingError else { return false }
            return error.reason == failure.reason && error.offset == failure.offset
        }
    }

    @Test("Errors report line and column, and read as a sentence")
    func lineAndColumn() throws {
        do {
            let error = try #require(throws: JSONParsingError.self) {
                _ = try JSON(parsing: "{\n  \"a\": 1,\n  \"b\": tru\n}")
            }
            #expect(error.line == 3)
            #expect(error.column == 8)
            #expect(error.description == "Invalid literal at byte 19 (line 3, column 8)")
        }
    }

    @Test("Invalid UTF-8 is rejected, valid multi-byte text is kept")
    func invalidUTF8() throws {
        let bad: [UInt8] = [0x22, 0x61, 0xC3, 0x28, 0x22]  // "a\xC3(" : truncated sequence
        #expect(throws: JSONParsingError.self) { try JSON(parsing: bad) }
        do {
            let error = try #require(throws: JSONParsingError.self) {
                _ = try JSON(parsing: bad)
            }
            #expect(error.reason == .invalidUTF8)
            #expect(error.offset == 2)
        }
        let overlong: [UInt8] = [0x22, 0xC0, 0xAF, 0x22]
        #expect(throws: JSONParsingError.self) { try JSON(parsing: overlong) }
    }

    @Test("The depth limit stops deep nesting without exhausting the stack")
    func depthLimit() throws {
        let deep = String(repeating: "[", count: 100_000)
        do {
            let error = try #require(throws: JSONParsingError.self) {
                _ = try JSON(parsing: deep)
            }
            #expect(error.reason == .tooDeep(limit: JSON.defaultMaximumDepth))
        }
        let ok = String(repeating: "[", count: 10) + String(repeating: "]", count: 10)
        #expect(throws: JSONParsingError.self) { try JSON(parsing: ok, maximumDepth: 9) }
        #expect(try JSON(parsing: ok, maximumDepth: 10).arrayValue?.count == 1)
    }

    @Test("A UTF-8 byte order mark before the value is ignored, as RFC 8259 allows; anywhere else it is an error")
    func byteOrderMark() throws {
        #expect(try JSON(parsing: [0xEF, 0xBB, 0xBF] + Array(#"{"a": 1}"#.utf8)) == ["a": 1])
        #expect(throws: JSONParsingError.self) { try JSON(parsing: Array("[1,".utf8) + [0xEF, 0xBB, 0xBF] + Array("2]".utf8)) }
        #expect(throws: JSONParsingError.self) { try JSON(parsing: [0xEF, 0xBB]) }
    }

}
