import Foundation
import HammockTestSupport
import HammockWire
import Testing

@Suite("Percent-encoding")
struct PercentEncodingTests {
    @Test("Only unreserved characters stay as they are; a plus stays a plus")
    func strict() {
        #expect(PercentEncoding.encode("a/b c+d&e=f~g.h_i-j") == "a%2Fb%20c%2Bd%26e%3Df~g.h_i-j")
        #expect(PercentEncoding.encodeForm("a b+c") == "a+b%2Bc")
        #expect(PercentEncoding.encode("café 🌴") == "caf%C3%A9%20%F0%9F%8C%B4")
    }

    @Test(
        "Decoding reads escapes in either case, and refuses malformed escapes and invalid UTF-8",
        arguments: [
            ("caf%C3%A9", "café"), ("caf%c3%a9", "café"), ("a+b", "a+b"), ("%2F", "/"), ("", ""), ("%00", "\u{0}"),
        ])
    func decoding(text: String, expected: String) {
        #expect(PercentEncoding.decode(Substring(text)) == expected)
    }

    @Test("Malformed input is refused, never guessed", arguments: ["%", "%4", "%zz", "%C3%28", "%FF", "a%"])
    func malformed(text: String) {
        #expect(PercentEncoding.decode(Substring(text)) == nil)
        #expect(PercentEncoding.decodeForm(Array(text.utf8)[...]) == nil)
    }

    @Test("Form components: a plus is a space, escapes are bytes")
    func form() {
        #expect(PercentEncoding.decodeForm(Array("J%C3%BCrgen+Smith".utf8)[...]) == "Jürgen Smith")
        #expect(PercentEncoding.decodeForm(Array("%2B".utf8)[...]) == "+")
    }

    @Test("Any text, encoded either way, decodes back whole (property, seeded)")
    func roundTrips() {
        var generator = SplitMix64(seed: 5)
        let alphabet = Array("aZ09-._~ +/%&=?#\u{0}\té€🌴\u{301}")
        for _ in 0..<2_000 {
            let text = String(
                (0..<Int.random(in: 0...24, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? "a" })
            #expect(PercentEncoding.decode(Substring(PercentEncoding.encode(text))) == text)
            #expect(PercentEncoding.decodeForm(Array(PercentEncoding.encodeForm(text).utf8)[...]) == text)
        }
    }
}

@Suite("Percent-encoding: path segments and hand-written query text")
struct PercentEncodingVariantTests {
    @Test("A path segment keeps what RFC 3986 allows in one, and escapes / ; % ? # and the rest")
    func pathSegments() {
        #expect(PercentEncoding.encodePathSegment("a:b@c!$&'()*+,=") == "a:b@c!$&'()*+,=")
        #expect(PercentEncoding.encodePathSegment("a/b;c%d?e#f g") == "a%2Fb%3Bc%25d%3Fe%23f%20g")
        #expect(PercentEncoding.encodePathSegment("café") == "caf%C3%A9")
    }

    @Test("A path segment is encoded as Foundation's urlPathAllowed without ?#;% encoded it (property, seeded)")
    func pathSegmentsMatchFoundation() {
        // The resources' child URLs used Foundation; the shared encoder must not change a single URL.
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#;%")
        var generator = SplitMix64(seed: 21)
        let alphabet = Array("aZ09-._~ !$&'()*+,;=:@?#%[]{}|\\^`\"<>\u{0}\té€🌴\u{301}")
        for _ in 0..<3_000 {
            let text = String(
                (0..<Int.random(in: 0...16, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? "a" })
            #expect(PercentEncoding.encodePathSegment(text) == text.addingPercentEncoding(withAllowedCharacters: allowed))
            #expect(PercentEncoding.decode(Substring(PercentEncoding.encodePathSegment(text))) == text)
        }
    }

    @Test("Query text keeps escapes already there and what a query may hold, and escapes the rest")
    func queryText() {
        #expect(PercentEncoding.encodeQueryText("q=a%20b&sort=name:asc/x?y") == "q=a%20b&sort=name:asc/x?y")
        #expect(PercentEncoding.encodeQueryText("q=a b{c}é") == "q=a%20b%7Bc%7D%C3%A9")
        var generator = SplitMix64(seed: 22)
        let alphabet = Array("aZ09-._~ !$&'()*+,;=:@/?{}|^\"<>é🌴")
        let kept = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@/?%".utf8)
        for _ in 0..<2_000 {
            let text = String(
                (0..<Int.random(in: 0...16, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? "a" })
            let encoded = PercentEncoding.encodeQueryText(text)
            #expect(encoded.utf8.allSatisfy(kept.contains))
            #expect(PercentEncoding.decode(Substring(encoded)) == text)  // no % in the alphabet: nothing was kept as an escape
        }
    }

    @Test("A request target handed to a URL parser keeps its escapes and what a URL holds, and escapes the rest once")
    func urlTarget() throws {
        #expect(PercentEncoding.encodeURLTarget("/people/3?q=a%20b&sort=name:asc") == "/people/3?q=a%20b&sort=name:asc")
        #expect(PercentEncoding.encodeURLTarget("/a%20b/p|q?f[x]=1&y={2}") == "/a%20b/p%7Cq?f%5Bx%5D=1&y=%7B2%7D")
        // A `%` that starts no escape is escaped itself, as are `#` (a fragment to a parser) and non-ASCII.
        #expect(PercentEncoding.encodeURLTarget("/100%?p=%zz&h=#x&e=é%4") == "/100%25?p=%25zz&h=%23x&e=%C3%A9%254")
        // A whole URL: the scheme and authority as written, the rest escaped once, the fragment apart.
        #expect(PercentEncoding.encodeURLText("https://h:1/a b?f[x]=%41#t op") == "https://h:1/a%20b?f%5Bx%5D=%41#t%20op")
        #expect(PercentEncoding.encodeURLText("http://h") == "http://h")
        // What comes out is what Foundation's parser keeps as it is (it escaped the whole text again before).
        for target in ["/a%20b/p|q?f[x]=a%20b", "/x^y`z?q=\"1\"<2>", "/%?%%"] {
            let encoded = PercentEncoding.encodeURLTarget(target)
            let url = try #require(URL(string: "http://h" + encoded))
            let components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
            #expect(components.percentEncodedPath + (components.percentEncodedQuery.map { "?" + $0 } ?? "") == encoded)
        }
    }
}
