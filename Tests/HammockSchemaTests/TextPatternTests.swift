import Foundation
import HammockTestSupport
import Testing

@testable import HammockSchema

/// Strings made from a regular expression, checked by another engine (Foundation's
/// `NSRegularExpression`, ICU's): what a key format or a schema's `pattern` promises.
@Suite("Text patterns")
struct TextPatternTests {
    static func fullyMatches(_ pattern: String, _ text: String) throws -> Bool {
        try ICUPattern.fullyMatches(pattern, text)
    }

    /// Key and value formats of the shapes public API documents use.
    static let patterns = [
        "^asst_[A-Za-z0-9]{24}$", "^[0-9]{17,20}$", "^\\d+$",
        "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$",
        "^[a-z][a-z0-9-]{2,30}$", "^(foo|bar|baz)-\\d{3}$", "^(?:[A-Z]{2})?[0-9]{5}(-[0-9]{4})?$",
        "[^,]+", "^\\w+@\\w+\\.(com|org)$", "^(?<year>\\d{4})-(?<month>0[1-9]|1[0-2])$", "^[[:alpha:]_][[:alnum:]_]*$",
        "^\\S+\\s\\S+$", "a.b", "^x{2,}y*z+$", "^\\x41\\u0042[\\-.]$", "^[a\\]b]{3}$", "^$", "abc", "^ab?c*?d+?$",
        "^[\\W]{4}$", "^(a|b(c|d(e|f)))+$", "^ü[α-ω]{2}$",
    ]

    @Test("Every string made from a pattern is matched whole by ICU's engine", arguments: patterns)
    func madeStringsMatch(pattern: String) throws {
        let text = try TextPattern(pattern)
        var random = SplitMix64(seed: 42)
        for _ in 0..<200 {
            let made = text.make(using: &random)
            #expect(try Self.fullyMatches(pattern, made), "\(pattern) made '\(made)'")
        }
    }

    @Test("The same seed makes the same strings")
    func seeded() throws {
        let pattern = try TextPattern("^ord_[0-9a-f]{8}$")
        var first = SplitMix64(seed: 7)
        var second = SplitMix64(seed: 7)
        #expect((0..<20).map { _ in pattern.make(using: &first) } == (0..<20).map { _ in pattern.make(using: &second) })
    }

    @Test(
        "What cannot be made without searching is refused with its place and reason",
        arguments: [
            ("^(?=a)b$", "lookaround"), ("(a)\\1", "backreference"), ("\\p{L}+", "not supported"), ("(?i)abc", "lookaround"),
            ("[b-a]", "backwards"), ("a{3,2}", "wrong way round"), ("(abc", "without its ')'"), ("abc)", "unmatched ')'"),
            ("[abc", "without its ']'"), ("*a", "repeats nothing"), ("[^\\x00-\\x{10FFFF}]", "no character"),
            ("a\\", "at the end"), ("[[:nope:]]", "not supported"),
        ])
    func refused(pattern: String, reason: String) {
        #expect {
            _ = try TextPattern(pattern)
        } throws: { error in
            (error as? TextPatternError)?.reason.contains(reason) == true
        }
    }

    @Test("A quantified anchor makes no text, as it matches none: `^{2}` is not the literal `{2}`")
    func quantifiedAnchor() throws {
        for source in ["^{2}-\\D}", "a$*b?", "\\b{1,3}x"] {
            let maker = try TextPattern(source)
            let matcher = try TextMatcher("^(?:\(source))$")
            var random = SplitMix64(seed: 3)
            for _ in 0..<20 {
                let made = maker.make(using: &random)
                #expect(!made.hasPrefix("{"), "'\(source)' made '\(made)'")
                if !source.contains("$"), !source.contains("\\b") {
                    #expect(matcher.matches(made), "'\(source)' made '\(made)'")
                }
            }
        }
    }

    @Test("A hostile pattern is refused or bounded: huge counts, nesting, open repetitions inside each other")
    func hostile() throws {
        // Shortest match beyond the bound, including by multiplication that would overflow.
        for pattern in ["a{5000}", "(a{100}){100}", "((a{99999}){99999}){99999}", String(repeating: "a", count: 5_000)] {
            #expect(throws: TextPatternError.self) { try TextPattern(pattern) }
        }
        // Nesting past the bound is refused before the parser recurses further.
        #expect(throws: TextPatternError.self) {
            try TextPattern(String(repeating: "(", count: 2_000) + "a" + String(repeating: ")", count: 2_000))
        }
        // Open repetitions nested 20 deep would make 17^20 characters; the text stops growing at the bound.
        let nested = try TextPattern(String(repeating: "(", count: 20) + "ab" + String(repeating: ")+", count: 20))
        var random = SplitMix64(seed: 1)
        for _ in 0..<5 {
            let made = nested.make(using: &random)
            #expect(made.count <= 2 * TextPattern.longestText)
            #expect(try Self.fullyMatches(nested.source, made))
        }
    }

    @Test("Random patterns built from the supported pieces make strings ICU matches")
    func randomPatterns() throws {
        var random = SplitMix64(seed: 2026)
        let atoms = ["a", "Z", "\\d", "\\w", "[a-f0-9]", "[^a-z]", ".", "(x|yz)", "(?:q)", "\\.", "[_-]", "\\s"]
        let quantifiers = ["", "", "?", "*", "+", "{2}", "{1,3}", "{0,}"]
        for _ in 0..<300 {
            var pattern = ""
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                pattern += atoms[Int.random(in: 0..<atoms.count, using: &random)]
                pattern += quantifiers[Int.random(in: 0..<quantifiers.count, using: &random)]
            }
            if Bool.random(using: &random) { pattern = "(\(pattern))|(\(pattern)){2}" }
            let text = try TextPattern(pattern)
            for _ in 0..<5 {
                let made = text.make(using: &random)
                #expect(try Self.fullyMatches(pattern, made), "\(pattern) made '\(made)'")
            }
        }
    }
}
