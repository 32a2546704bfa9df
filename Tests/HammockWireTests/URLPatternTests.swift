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

/// SplitMix64: a small seeded generator, so random tests repeat.
struct SplitMix64: RandomNumberGenerator {
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
