import Foundation
import HammockTestSupport
import HammockWire
import Testing

@Suite("Header values and placeholders")
struct HeaderValueTests {
    @Test(
        "A media type is the part before the first ; outside quotes, parameters are unquoted",
        arguments: [
            ("application/json", "application/json", [String]()),
            (" Application/JSON ; charset=UTF-8", "Application/JSON", ["charset=UTF-8"]),
            ("text/plain; charset=\"utf-8\"", "text/plain", ["charset=utf-8"]),
            ("attachment; filename=\"a; b.pdf\"; size=3", "attachment", ["filename=a; b.pdf", "size=3"]),
            ("attachment; filename=\"say \\\"hi\\\".txt\"", "attachment", ["filename=say \"hi\".txt"]),
            ("", "", []),
            (";;", "", []),
        ])
    func parsing(text: String, value: String, parameters: [String]) {
        let parsed = HeaderValue(parsing: text)
        #expect(parsed.value == value)
        #expect(parsed.parameters.map { "\($0.name)=\($0.value)" } == parameters)
    }

    @Test("Any parameter value, quoted with escapes, reads back whole (property, seeded)")
    func quotedValuesRoundTrip() {
        var generator = SplitMix64(seed: 31)
        let alphabet = Array("aZ09 ;=\"\\,/é")
        for _ in 0..<2_000 {
            let value = String(
                (0..<Int.random(in: 0...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? "a" })
            let quoted =
                "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
            let parsed = HeaderValue(parsing: "text/plain; name=\(quoted); other=1")
            #expect(parsed.value == "text/plain")
            #expect(parsed.parameter("name") == value)
            #expect(parsed.parameter("other") == "1")
        }
    }

    @Test("The fast media type reading agrees with the full parse, lowercased (property, seeded)")
    func mediaTypes() {
        #expect(HeaderValue.mediaType(of: " Application/JSON ; charset=UTF-8") == "application/json")
        #expect(HeaderValue.mediaType(of: "text/plain") == "text/plain")
        #expect(HeaderValue.mediaType(of: "") == "")
        #expect(HeaderValue.mediaType(of: "\tTEXT/Ü+json\t;x") == "text/Ü+json")  // ASCII letters only are folded
        var generator = SplitMix64(seed: 33)
        let alphabet = Array("aZ/+-. \t;=\"xY")
        for _ in 0..<3_000 {
            let type = String(
                (0..<Int.random(in: 0...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? "a" }
            ).replacingOccurrences(of: "\"", with: "")
            let text = type + "; charset=\"a;b\""
            #expect(HeaderValue.mediaType(of: text) == HeaderValue(parsing: text).value.lowercased())
        }
    }

    @Test("RFC 8187 extended values decode UTF-8 and Latin-1, and refuse anything else")
    func extendedValues() {
        #expect(HeaderValue.extendedValue("UTF-8''na%C3%AFve.txt") == "naïve.txt")
        #expect(HeaderValue.extendedValue("iso-8859-1'en'na%EFve.txt") == "naïve.txt")
        #expect(HeaderValue.extendedValue("utf-16''x") == nil)
        #expect(HeaderValue.extendedValue("UTF-8''%zz") == nil)
    }

    @Test("Placeholders are found in order; an unclosed brace is nil")
    func placeholders() {
        #expect(Placeholders.find(in: "/users/{id}/repos?sort={order}") == ["id", "order"])
        #expect(Placeholders.find(in: "/plain") == [])
        #expect(Placeholders.find(in: "/users/{id") == nil)
        #expect(Placeholders.find(in: "{a}{a}") == ["a", "a"])
    }
}
