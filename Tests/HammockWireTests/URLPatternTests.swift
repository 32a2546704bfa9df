import HammockTestSupport
import HammockWire
import Testing

@Suite("URL patterns")
struct URLPatternTests {
    @Test("One star stays within a segment, two cross segments, a trailing /** matches its parent")
    func semantics() {
        #expect(URLPattern("/items/*").matches("/items/123"))
        #expect(!URLPattern("/items/*").matches("/items/123/related"))
        #expect(URLPattern("/items/**").matches("/items/123/related"))
        #expect(URLPattern("/items/**").matches("/items"))
        #expect(URLPattern("/a/*/c/**").matches("/a/b/c/d/e"))
        #expect(!URLPattern("/a/*/c").matches("/a/b/x/c"))
        #expect(URLPattern("items").matches("/items"))
        #expect(URLPattern("/**").matches("/"))
        #expect(URLPattern("/*x*y").matches("/axxby"))
        #expect(!URLPattern("/*x*y").matches("/axx/by"))
    }

    @Test("Patterns with many stars match in time proportional to their length (the fuzzer found exponential backtracking)")
    func manyStars() {
        let stars = "/" + String(repeating: "*", count: 60) + "x"
        let path = "/" + String(repeating: "a", count: 2_000)
        #expect(!URLPattern(stars).matches(path))
        let doubles = String(repeating: "/**", count: 40) + "/end"
        #expect(!URLPattern(doubles).matches(String(repeating: "/seg", count: 500)))
        #expect(URLPattern(doubles).matches(String(repeating: "/seg", count: 500) + "/end"))
    }
}
