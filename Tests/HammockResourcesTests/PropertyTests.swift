import Foundation
import HammockClient
import HammockResources
import HammockTesting
import Testing

@Suite("Properties over random inputs")
struct PropertyTests {
    /// The glob semantics written as a regular expression, to check the hand-written matcher against.
    static func oracle(_ pattern: String, _ path: String) -> Bool {
        func regex(_ pattern: String) -> String {
            var out = "^"
            var characters = Array(pattern)[...]
            while let character = characters.first {
                if character == "*", characters.dropFirst().first == "*" {
                    out += ".*"
                    characters = characters.dropFirst(2)
                } else if character == "*" {
                    out += "[^/]*"
                    characters = characters.dropFirst()
                } else {
                    out += NSRegularExpression.escapedPattern(for: String(character))
                    characters = characters.dropFirst()
                }
            }
            return out + "$"
        }
        func matches(_ pattern: String) -> Bool {
            guard let expression = try? NSRegularExpression(pattern: regex(pattern)) else { return false }
            return expression.firstMatch(in: path, range: NSRange(path.startIndex..., in: path)) != nil
        }
        if matches(pattern) { return true }
        if pattern.hasSuffix("/**") {
            let parent = String(pattern.dropLast(3))
            return matches(parent.isEmpty ? "/" : parent)
        }
        return false
    }

    @Test("URLPattern agrees with a regular-expression oracle on 5,000 random patterns and paths")
    func patternsAgreeWithOracle() {
        var random = SplitMix64(seed: 20_261_122)
        let pieces = ["a", "b", "ab", "/", "*", "**", "x"]
        for _ in 0..<5_000 {
            let pattern =
                "/" + (0..<Int.random(in: 1...5, using: &random)).map { _ in pieces.randomElement(using: &random) ?? "" }.joined()
            let path =
                "/"
                + (0..<Int.random(in: 0...6, using: &random)).map { _ in ["a", "b", "x", "/"].randomElement(using: &random) ?? ""
                }.joined()
            #expect(URLPattern(pattern).matches(path) == Self.oracle(pattern, path), "pattern \(pattern), path \(path)")
        }
    }

    @MainActor
    @Test("query parameters in any order, by any route, give one instance")
    func parameterOrder() throws {
        let api = try Service(baseURL: "http://api.test", transport: MockTransport { _, _ in throw FakeNetworkError() })
        var random = SplitMix64(seed: 42)
        let names = ["page", "sort", "q", "limit", "filter"]
        for _ in 0..<200 {
            let chosen = names.shuffled(using: &random).prefix(Int.random(in: 1...5, using: &random))
            let values = Dictionary(uniqueKeysWithValues: chosen.map { ($0, "v \(Int.random(in: 0...9, using: &random))+") })
            var byParams = api.resource("/items")
            for name in chosen.shuffled(using: &random) { byParams = byParams.withParam(name, values[name]) }
            var again = api.resource("/items")
            for name in chosen.shuffled(using: &random) { again = again.withParam(name, values[name]) }
            #expect(byParams === again)
            let query = byParams.url.query ?? ""
            let fromPath = api.resource("/items?" + query.split(separator: "&").shuffled(using: &random).joined(separator: "&"))
            #expect(fromPath === byParams, "\(query)")
            let sortedNames = query.split(separator: "&").map { String($0.split(separator: "=")[0]) }
            #expect(sortedNames == sortedNames.sorted())
        }
    }
}
