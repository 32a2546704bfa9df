/// Everything that can go wrong when making recipes or mapping ingredients, with its context.
///
/// ```swift
/// do { try Oven.populate(&product, from: json, recipe: productJSON) }
/// catch { print(error) }
/// // ProductJSON: field 'price' at offers[0].price: expected a number, found string
/// ```
public struct ModelError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure.
    public enum Kind: Sendable, Hashable {
        /// A recipe that cannot work: no fields, duplicate names, conflicting paths.
        case invalidRecipe
        /// An ingredient path that cannot be parsed.
        case invalidPath
        /// A value of the wrong type (or `null` for a non-optional property).
        case mapping
        /// A transformer that failed, is unknown, or cannot run in that direction.
        case transformer
        /// An identifier that is missing or of the wrong type.
        case identifier
        /// Ingredients of the wrong shape as a whole.
        case ingredients
        /// A recipe name that a box does not hold (or holds for another model type).
        case unknownRecipe
        /// A required field (or any field of a strict recipe) whose path the ingredients lack.
        case missing
    }

    /// What kind of failure.
    public var kind: Kind
    /// The recipe's name, if it has one.
    public var recipe: String?
    /// The field (property) concerned, if any.
    public var field: String?
    /// The ingredient path concerned, if any.
    public var path: String?
    /// What was expected, for mapping errors (`"a string"`).
    public var expected: String?
    /// What was found, for mapping errors (`"integer"`).
    public var found: String?
    /// A message saying what is wrong.
    public var message: String

    /// Creates an error.
    public init(
        _ kind: Kind, message: String, recipe: String? = nil, field: String? = nil, path: String? = nil,
        expected: String? = nil, found: String? = nil
    ) {
        self.kind = kind
        self.message = message
        self.recipe = recipe
        self.field = field
        self.path = path
        self.expected = expected
        self.found = found
    }

    /// `Recipe: field 'name' at path: message`.
    public var description: String {
        var context: [String] = []
        if let field { context.append("field '\(field)'") }
        if let path { context.append("at \(path)") }
        let prefix = (recipe.map { "\($0): " } ?? "") + (context.isEmpty ? "" : context.joined(separator: " ") + ": ")
        return prefix + message
    }

    func with(recipe: String?, field: String?, path: String?) -> ModelError {
        var copy = self
        copy.recipe = copy.recipe ?? recipe
        copy.field = copy.field ?? field
        copy.path = copy.path ?? path
        return copy
    }
}
