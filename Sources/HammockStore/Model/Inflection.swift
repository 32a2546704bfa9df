/// English singular forms for naming foreign keys (`people` → `person`, `categories` → `category`).
public enum Inflection {
    static let irregular: [String: String] = [
        "people": "person", "children": "child", "men": "man", "women": "woman", "mice": "mouse",
        "geese": "goose", "teeth": "tooth", "feet": "foot", "oxen": "ox", "data": "datum",
        "indices": "index", "matrices": "matrix", "vertices": "vertex", "series": "series", "species": "species",
        "news": "news", "statuses": "status", "analyses": "analysis", "crises": "crisis", "quizzes": "quiz",
    ]

    /// The singular form of a plural English noun; the word itself when no rule applies.
    ///
    /// ```swift
    /// Inflection.singular(of: "people")       // "person"
    /// Inflection.singular(of: "categories")   // "category"
    /// Inflection.singular(of: "boxes")        // "box"
    /// ```
    public static func singular(of word: String) -> String {
        let lower = word.lowercased()
        if let match = irregular[lower] {
            return lower == word ? match : String(word.prefix(1)) + match.dropFirst()
        }
        func drop(_ count: Int, adding suffix: String = "") -> String { String(word.dropLast(count)) + suffix }
        if lower.hasSuffix("ies") && lower.count > 3 { return drop(3, adding: "y") }
        for suffix in ["sses", "shes", "ches", "xes", "zzes"] where lower.hasSuffix(suffix) { return drop(2) }
        if lower.hasSuffix("s") && !lower.hasSuffix("ss") && !lower.hasSuffix("us") && !lower.hasSuffix("is") {
            return drop(1)
        }
        return word
    }
}
