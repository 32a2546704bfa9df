import Foundation

/// Foundation's `NSRegularExpression` (ICU's engine): the independent judge that tests hold Hammock's
/// own pattern reader and matcher to.
public enum ICUPattern {
    /// Whether ICU's engine matches the whole of `text` with `pattern`.
    public static func fullyMatches(_ pattern: String, _ text: String) throws -> Bool {
        try searches(pattern: "^(?:\(pattern))$", in: text)
    }

    /// Whether ICU's engine finds `pattern` anywhere in `text`.
    public static func searches(pattern: String, in text: String) throws -> Bool {
        let regex = try NSRegularExpression(pattern: pattern)
        let range = NSRange(text.startIndex..., in: text)
        return regex.firstMatch(in: text, range: range) != nil
    }
}
