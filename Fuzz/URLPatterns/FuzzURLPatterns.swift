import FuzzSupport
import HammockWire

/// URL patterns: never a crash on any pattern and path (the first line is the pattern, the rest the
/// path), and a pattern without wildcards matches exactly its own text.
@main
struct FuzzTarget {
    static func main() {
        Fuzzer.run { data, count in
            let text = String(decoding: Fuzzer.bytes(data, count), as: UTF8.self)
            let parts = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
            let pattern = String(parts[0])
            let path = parts.count > 1 ? String(parts[1]) : ""
            _ = URLPattern(pattern).matches(path)
            // Paths are relative to the base URL and start with a slash, as patterns do once made.
            let literal = URLPattern(pattern).pattern
            if !literal.contains("*") {
                Fuzzer.check(URLPattern(pattern).matches(literal), "'\(pattern)' does not match itself")
            }
            return 0
        }
    }
}
