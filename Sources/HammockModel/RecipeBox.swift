import Synchronization

/// Named recipes, one per name, shared safely between threads.
///
/// ```swift
/// try RecipeBox.default.add(productJSON)                      // filed under its name
/// let recipe = try RecipeBox.default.recipe(named: "ProductJSON", for: Product.self)
/// let box = RecipeBox()                                        // or a box of your own, for tests
/// ```
public final class RecipeBox: Sendable {
    /// A box shared by the whole process. Tests that add recipes should prefer a box of their own.
    public static let `default` = RecipeBox()

    private let recipes = Mutex<[String: any Sendable]>([:])

    /// Creates an empty box.
    public init() {}

    /// Files `recipe` under its name.
    /// - Throws: ``ModelError`` (invalid recipe) if it has no name, or the name is taken.
    public func add<Model>(_ recipe: Recipe<Model>) throws(ModelError) {
        guard let name = recipe.name, !name.isEmpty else {
            throw ModelError(.invalidRecipe, message: "only a recipe with a name can be put in a box")
        }
        let added = recipes.withLock { recipes -> Bool in
            guard recipes[name] == nil else { return false }
            recipes[name] = recipe
            return true
        }
        guard added else {
            throw ModelError(.invalidRecipe, message: "the box already holds a recipe with this name", recipe: name)
        }
    }

    /// The recipe filed under `name`, for `Model`.
    /// - Throws: ``ModelError`` (unknown recipe) if there is none, or it is for another model type.
    public func recipe<Model>(named name: String, for model: Model.Type = Model.self) throws(ModelError) -> Recipe<Model> {
        guard let entry = recipes.withLock({ $0[name] }) else {
            throw ModelError(.unknownRecipe, message: "the box has no recipe with this name", recipe: name)
        }
        guard let recipe = entry as? Recipe<Model> else {
            throw ModelError(.unknownRecipe, message: "the recipe is not for \(Model.self)", recipe: name)
        }
        return recipe
    }

    /// Removes the recipe filed under `name`; returns whether there was one.
    @discardableResult
    public func removeRecipe(named name: String) -> Bool {
        recipes.withLock { $0.removeValue(forKey: name) != nil }
    }

    /// The names of the recipes in the box, sorted.
    public var names: [String] { recipes.withLock { $0.keys.sorted() } }
}
