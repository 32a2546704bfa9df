public import HammockJSON

/// How ingredients (JSON from some source) map onto a model's properties, kept apart from the model.
///
/// ```swift
/// struct Product: Equatable, Sendable { var sku = ""; var name = ""; var price: Double? = nil }
///
/// let productJSON = try Recipe<Product>(name: "ProductJSON") {
///     Field("sku", \.sku, at: "base_sku")
///     Field("name", \.name, at: "attributes.name")
///     Field("price", \.price, at: "offers[0].price")
/// }
/// var product = Product()
/// try Oven.populate(&product, from: json, recipe: productJSON)
/// let ingredients = try productJSON.decompose(product)   // back to JSON, same shape
/// ```
///
/// A recipe is checked when it is made: it needs at least one field, unique field names, valid paths,
/// and paths that agree on the shape of the ingredients (no node that is both an object and an array,
/// no path that is both a value and a container of others), so that values can always be written back.
public struct Recipe<Model>: Sendable {
    /// The name a ``RecipeBox`` files it under.
    public let name: String?
    /// The fields, in the order given.
    public let fields: [ResolvedField<Model>]
    /// Whether every field is required: ingredients lacking any field's path are an error.
    public let isStrict: Bool

    /// Makes and checks a recipe.
    /// - Parameter strict: Require every field's path in the ingredients (see ``Field/required()`` for
    ///   one field); by default an absent path leaves its property alone.
    /// - Throws: ``ModelError`` (invalid recipe, invalid path, unknown transformer).
    public init(
        name: String? = nil, strict: Bool = false, @RecipeBuilder<Model> fields: () -> [any RecipeComponent<Model>]
    ) throws(ModelError) {
        var resolved: [ResolvedField<Model>] = []
        for component in fields() {
            do {
                resolved.append(try component.resolve())
            } catch {
                throw error.with(recipe: name, field: nil, path: nil)
            }
        }
        try Self.validate(resolved, name: name)
        self.name = name
        self.fields = resolved
        self.isStrict = strict
    }

    /// The field names, in order.
    public var fieldNames: [String] { fields.map(\.name) }

    /// The model's mapped properties as ingredients, shaped as the recipe's paths describe.
    /// - Throws: ``ModelError`` (transformer) if a field's transformer is one-way or fails.
    public func decompose(_ model: Model) throws(ModelError) -> JSON {
        var ingredients: JSON =
            fields.first.map { field in
                if case .index = field.path.components.first { return .array([]) }
                return .object([:])
            } ?? .object([:])
        for field in fields {
            do {
                try ingredients.set(try field.extract(model), at: field.path)
            } catch let error as ModelError {
                throw error.with(recipe: name, field: field.name, path: field.path.description)
            } catch {
                throw ModelError(.ingredients, message: "\(error)", recipe: name, field: field.name, path: field.path.description)
            }
        }
        return ingredients
    }

    static func validate(_ fields: [ResolvedField<Model>], name: String?) throws(ModelError) {
        func invalid(_ message: String) -> ModelError { ModelError(.invalidRecipe, message: message, recipe: name) }
        guard !fields.isEmpty else { throw invalid("a recipe needs at least one field") }
        var names = Set<String>()
        for field in fields where !names.insert(field.name).inserted {
            throw invalid("the field name '\(field.name)' is used twice")
        }
        // The kind of container each node must be ("object" or "array"), by its path prefix.
        var containers: [JSONPath: String] = [:]
        var leaves: [JSONPath: String] = [:]
        for field in fields {
            let components = field.path.components
            for depth in 0..<components.count {
                let prefix = JSONPath(Array(components[..<depth]))
                let kind = if case .index = components[depth] { "array" } else { "object" }
                if let existing = containers[prefix], existing != kind {
                    let place = prefix.components.isEmpty ? "the root" : "'\(prefix)'"
                    throw invalid("\(place) would have to be both an object and an array (field '\(field.name)')")
                }
                containers[prefix] = kind
                if let owner = leaves[prefix] {
                    throw invalid("'\(prefix)' is the value of field '\(owner)' and a container for field '\(field.name)'")
                }
            }
            if let owner = leaves[field.path] {
                throw invalid("fields '\(owner)' and '\(field.name)' share the path '\(field.path)'")
            }
            if containers[field.path] != nil {
                throw invalid("'\(field.path)' is the value of field '\(field.name)' and a container for other fields")
            }
            leaves[field.path] = field.name
        }
    }
}

/// Moves ingredients into models.
public enum Oven {
    /// Sets every mapped property of `model` whose path is present in `ingredients`.
    ///
    /// An absent path leaves the property as it was (or, for a required field or a strict recipe, is a
    /// ``ModelError/Kind/missing`` error naming the path); `null` sets an optional to `nil` (and is an
    /// error for a non-optional); a value of the wrong type is an error naming the path. On any error the
    /// model is left unchanged, for structs and classes alike.
    ///
    /// ```swift
    /// var product = Product()
    /// try Oven.populate(&product, from: ["attributes": ["name": "Hammock"]], recipe: productJSON)
    /// ```
    public static func populate<Model>(
        _ model: inout Model, from ingredients: JSON, recipe: Recipe<Model>
    )
        throws(ModelError)
    {
        switch ingredients {
        case .object, .array: break
        default:
            throw ModelError(
                .ingredients, message: "ingredients must be an object or an array, not \(ingredients.kindName)",
                recipe: recipe.name)
        }
        func missing(_ field: ResolvedField<Model>) -> ModelError {
            ModelError(
                .missing, message: "the ingredients have nothing at \(field.path)", recipe: recipe.name, field: field.name,
                path: field.path.description)
        }
        func failure(_ error: ModelError, _ field: ResolvedField<Model>, _ value: JSON) -> ModelError {
            var context = error.inField(field.name, at: field.path, recipe: recipe.name)
            if case .null = value, error.kind == .mapping {
                context.message = "null for a property that is not optional"
            }
            return context
        }
        if Model.self is AnyObject.Type {
            // A copy of a class reference is the same object: convert every value before writing any,
            // so that a failure leaves the object as it was.
            var writes: [(inout Model) -> Void] = []
            writes.reserveCapacity(recipe.fields.count)
            for field in recipe.fields {
                guard let value = ingredients[field.path] else {
                    if field.isRequired || recipe.isStrict { throw missing(field) }
                    continue
                }
                do {
                    writes.append(try field.stage(value))
                } catch {
                    throw failure(error, field, value)
                }
            }
            for write in writes { write(&model) }
            return
        }
        var copy = model
        for field in recipe.fields {
            guard let value = ingredients[field.path] else {
                if field.isRequired || recipe.isStrict { throw missing(field) }
                continue
            }
            do {
                try field.populate(&copy, value)
            } catch {
                throw failure(error, field, value)
            }
        }
        model = copy
    }

    /// A copy of `base` populated from `ingredients`.
    public static func baked<Model>(_ base: Model, from ingredients: JSON, recipe: Recipe<Model>) throws(ModelError) -> Model {
        var model = base
        try populate(&model, from: ingredients, recipe: recipe)
        return model
    }
}
