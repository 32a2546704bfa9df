import Foundation
import HammockJSON
import Testing

@Suite("Value and serialization")
struct JSONValueTests {
    @Test("Literals build ordered values")
    func literals() {
        let value: JSON = ["id": 1, "name": "john", "height": 1.82, "kids": nil, "tags": ["a", true]]
        #expect(value.objectValue?.keys == ["id", "name", "height", "kids", "tags"])
        #expect(value["id"] == .integer(1))
        #expect(value["height"] == .double(1.82))
        #expect(value["kids"] == .null)
        #expect(value["missing"] == nil)
        #expect(value["tags"]?[1] == .bool(true))
        #expect(value["tags"]?[2] == nil)
    }

    @Test("Accessors convert only where no information is lost")
    func accessors() {
        #expect(JSON.integer(3).doubleValue == 3)
        #expect(JSON.double(3).intValue == 3)
        #expect(JSON.double(3.5).intValue == nil)
        #expect(JSON.string("3").intValue == nil)
        #expect(JSON.null.isNull)
        #expect(JSON.bool(true).kindName == "boolean")
        #expect(JSON.double(1).kindName == "number")
    }

    @Test("Object equality ignores order; integer and double differ")
    func equality() {
        let a: JSON = ["x": 1, "y": [1, 2]]
        let b: JSON = ["y": [1, 2], "x": 1]
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(Set([a, b]).count == 1)
        #expect(JSON.integer(1) != JSON.double(1))
        #expect(a != ["x": 1, "y": [2, 1]])
        #expect(a != ["x": 1])
    }

    @Test("Setting through subscripts keeps position, appends new keys, removes on nil")
    func mutation() {
        var value: JSON = ["a": 1, "b": 2]
        value["a"] = 10
        value["c"] = 3
        value["b"] = nil
        #expect(value.objectValue?.keys == ["a", "c"])
        #expect(value.serializedString() == #"{"a":10,"c":3}"#)
    }

    @Test("Serialization is compact, ordered and escaped")
    func serialization() {
        let value: JSON = ["b": "q\"\\\n\t\u{01}/é😀", "a": [1, -20, 2.5, 3.0, 1e300, nil, false], "e": [:], "f": []]
        #expect(
            value.serializedString()
                == #"{"b":"q\"\\\n\t\u0001/é😀","a":[1,-20,2.5,3.0,1e+300,null,false],"e":{},"f":[]}"#)
        #expect(JSON.integer(Int.min).serializedString() == "-9223372036854775808")
        #expect(JSON.double(.nan).serializedString() == "null")
        #expect(JSON.double(-0.0).serializedString() == "-0.0")
    }

    @Test("Pretty printing and sorted keys")
    func writingOptions() {
        let value: JSON = ["b": [1, 2], "a": ["c": nil]]
        #expect(value.serializedString(options: .sortedKeys) == #"{"a":{"c":null},"b":[1,2]}"#)
        #expect(
            value.serializedString(options: .prettyPrinted) == """
                {
                  "b": [
                    1,
                    2
                  ],
                  "a": {
                    "c": null
                  }
                }
                """)
    }

    @Test("Codable: JSON round-trips through Foundation's encoder and decoder")
    func codable() throws {
        let value: JSON = ["b": [1, 2.5, "x", nil, true], "a": ["nested": [:]]]
        let data = try JSONEncoder().encode(value)
        #expect(try JSON(parsing: [UInt8](data)) == value)
        #expect(try JSONDecoder().decode(JSON.self, from: data) == value)
    }

    @Test("Random documents survive a serialize-parse round trip", arguments: 0..<20)
    func roundTrip(seed: Int) throws {
        var generator = SplitMix(seed: UInt64(seed))
        let value = JSON.random(depth: 4, using: &generator)
        let text = value.serialized()
        let parsed = try JSON(parsing: text)
        #expect(parsed == value)
        #expect(parsed.serialized() == text)  // same bytes: order and number forms preserved
        let pretty = try JSON(parsing: value.serialized(options: .prettyPrinted))
        #expect(pretty == value)
    }
}

struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension JSON {
    static func random(depth: Int, using generator: inout SplitMix) -> JSON {
        let choice = Int.random(in: 0..<(depth > 0 ? 8 : 6), using: &generator)
        switch choice {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .integer(Int.random(in: Int.min...Int.max, using: &generator) >> Int.random(in: 0..<63, using: &generator))
        case 3:
            let double = Double(bitPattern: generator.next())
            return .double(double.isFinite ? double : 0.5)
        case 4, 5:
            let scalars = (0..<Int.random(in: 0..<12, using: &generator)).map { _ -> Character in
                let pool: [Character] = ["a", "\"", "\\", "\n", "\u{01}", "é", "😀", "/", " ", "€"]
                return pool[Int.random(in: 0..<pool.count, using: &generator)]
            }
            return .string(String(scalars))
        case 6:
            return .array((0..<Int.random(in: 0..<5, using: &generator)).map { _ in random(depth: depth - 1, using: &generator) })
        default:
            var object = JSONObject()
            for index in 0..<Int.random(in: 0..<15, using: &generator) {
                object["k\(index)\(Int.random(in: 0..<3, using: &generator))"] = random(depth: depth - 1, using: &generator)
            }
            return .object(object)
        }
    }
}
