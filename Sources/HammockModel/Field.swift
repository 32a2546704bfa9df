public import HammockJSON

/// Maps one ingredient path to one property of a model.
///
/// ```swift
/// Field("name", \.name, at: "attributes.name")                            // JSONConvertible types
/// Field("released", \.released, at: "release_date", transformer: .iso8601Date)
/// Field("count", \.count, at: "count", transformer: "int-from-string")     // a registered transformer
/// Field("odd", \.odd, at: JSONPath([.key("a.b"), .index(0)]))              // keys holding "." or "["
/// ```
/// The name identifies the field in errors and must be unique within a recipe; using the property's
/// name keeps messages readable.
public struct Field<Model, Value>: RecipeComponent {
    @usableFromInline
    enum Source: Sendable {
        case path(String)
        case components(JSONPath)
    }

    @usableFromInline
    enum Conversion: Sendable {
        case transformer(Transformer<Value>)
        case named(String)
    }

    /// The field's name.
    public let name: String
    let keyPath: any WritableKeyPath<Model, Value> & Sendable
    let source: Source
    let conversion: Conversion
    /// Whether ingredients without this field's path are an error rather than left alone.
    public private(set) var isRequired = false

    /// This field, required: ingredients that lack its path fail with ``ModelError/Kind/missing``
    /// instead of leaving the property as it was, so a misspelt or renamed path shows at once.
    ///
    /// ```swift
    /// Field("sku", \.sku, at: "base_sku").required()
    /// ```
    public func required() -> Field {
        var field = self
        field.isRequired = true
        return field
    }

    /// A field whose value converts by itself (`String`, `Int`, `Double`, `Bool`, `JSON`, optionals,
    /// arrays and dictionaries of those, or your own ``JSONConvertible`` types).
    @inlinable
    public init(_ name: String, _ keyPath: any WritableKeyPath<Model, Value> & Sendable, at path: String)
    where Value: JSONConvertible {
        self.init(name, keyPath, source: .path(path), conversion: .transformer(Self.convertible()))
    }

    /// A field at a path given as components.
    @inlinable
    public init(_ name: String, _ keyPath: any WritableKeyPath<Model, Value> & Sendable, at path: JSONPath)
    where Value: JSONConvertible {
        self.init(name, keyPath, source: .components(path), conversion: .transformer(Self.convertible()))
    }

    /// A field converted by `transformer`.
    public init(
        _ name: String, _ keyPath: any WritableKeyPath<Model, Value> & Sendable, at path: String, transformer: Transformer<Value>
    ) {
        self.init(name, keyPath, source: .path(path), conversion: .transformer(transformer))
    }

    /// A field at a path given as components, converted by `transformer`.
    public init(
        _ name: String, _ keyPath: any WritableKeyPath<Model, Value> & Sendable, at path: JSONPath,
        transformer: Transformer<Value>
    ) {
        self.init(name, keyPath, source: .components(path), conversion: .transformer(transformer))
    }

    /// A field converted by the transformer registered in ``TransformerRegistry/default`` under
    /// `transformerName`, looked up when the recipe is made.
    public init(
        _ name: String, _ keyPath: any WritableKeyPath<Model, Value> & Sendable, at path: String,
        transformer transformerName: String
    ) {
        self.init(name, keyPath, source: .path(path), conversion: .named(transformerName))
    }

    @usableFromInline
    init(_ name: String, _ keyPath: any WritableKeyPath<Model, Value> & Sendable, source: Source, conversion: Conversion) {
        self.name = name
        self.keyPath = keyPath
        self.source = source
        self.conversion = conversion
    }

    /// Inlinable, so that the conversion is specialized for `Value` where the recipe is written: an
    /// unspecialized `[String](json:)` looked up its array type's metadata on every call.
    @inlinable
    static func convertible() -> Transformer<Value> where Value: JSONConvertible {
        Transformer(decode: { json throws(ModelError) in try Value(json: json) }, encode: { $0.json })
    }

    public func resolve() throws(ModelError) -> ResolvedField<Model> {
        let path: JSONPath
        switch source {
        case .components(let components):
            guard !components.components.isEmpty else {
                throw ModelError(.invalidPath, message: "the path is empty", field: name)
            }
            path = components
        case .path(let text):
            do {
                path = try JSONPath(parsing: text)
            } catch {
                throw ModelError(.invalidPath, message: error.description, field: name, path: text)
            }
        }
        let transformer: Transformer<Value>
        switch conversion {
        case .transformer(let given): transformer = given
        case .named(let transformerName):
            do {
                transformer = try TransformerRegistry.default.transformer(named: transformerName, for: Value.self)
            } catch {
                throw error.with(recipe: nil, field: name, path: path.description)
            }
        }
        let keyPath = self.keyPath
        let decode = transformer.decode
        let encode = transformer.encode
        return ResolvedField(
            name: name, path: path, isReversible: encode != nil, isRequired: isRequired,
            populate: { model, json throws(ModelError) in model[keyPath: keyPath] = try decode(json) },
            stage: { json throws(ModelError) in
                let value = try decode(json)
                return { model in model[keyPath: keyPath] = value }
            },
            extract: { model throws(ModelError) in
                guard let encode else {
                    throw ModelError(.transformer, message: "the transformer is one-way and cannot write values back")
                }
                return try encode(model[keyPath: keyPath])
            })
    }
}

/// Anything a recipe's builder accepts: a ``Field``, or your own component.
public protocol RecipeComponent<Model>: Sendable {
    /// The model the component writes into.
    associatedtype Model
    /// Checks the component and turns it into the form a recipe runs.
    func resolve() throws(ModelError) -> ResolvedField<Model>
}

/// A field ready to run: its parsed path and its conversions.
public struct ResolvedField<Model>: Sendable {
    /// The field's name.
    public let name: String
    /// Where the ingredient lives.
    public let path: JSONPath
    /// Whether the value can be written back to ingredients.
    public let isReversible: Bool
    /// Whether ingredients must have the path.
    public let isRequired: Bool
    let populate: @Sendable (inout Model, JSON) throws(ModelError) -> Void
    /// Converts the value now and writes it later: for class models, which must see every value
    /// converted before the first one is written.
    let stage: @Sendable (JSON) throws(ModelError) -> (inout Model) -> Void
    let extract: @Sendable (Model) throws(ModelError) -> JSON
}

/// Collects a recipe's fields.
@resultBuilder
public enum RecipeBuilder<Model> {
    /// A single field.
    public static func buildExpression(_ component: some RecipeComponent<Model>) -> [any RecipeComponent<Model>] {
        [component]
    }

    /// No fields (a recipe refuses this when made).
    public static func buildBlock() -> [any RecipeComponent<Model>] { [] }

    /// Several fields.
    public static func buildBlock(_ parts: [any RecipeComponent<Model>]...) -> [any RecipeComponent<Model>] {
        parts.flatMap { $0 }
    }

    /// `if` without `else`.
    public static func buildOptional(_ part: [any RecipeComponent<Model>]?) -> [any RecipeComponent<Model>] { part ?? [] }

    /// `if`/`else`, first branch.
    public static func buildEither(first part: [any RecipeComponent<Model>]) -> [any RecipeComponent<Model>] { part }

    /// `if`/`else`, second branch.
    public static func buildEither(second part: [any RecipeComponent<Model>]) -> [any RecipeComponent<Model>] { part }

    /// `for` loops.
    public static func buildArray(_ parts: [[any RecipeComponent<Model>]]) -> [any RecipeComponent<Model>] {
        parts.flatMap { $0 }
    }
}
