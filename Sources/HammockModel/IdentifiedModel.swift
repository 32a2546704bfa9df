public import HammockJSON

/// An immutable model with an identity: a value wrapped with an identifier.
///
/// Two instances are equal when they have the same identifier *and* equal values, so SwiftUI's
/// `onChange`, `removeDuplicates` and `Set` see an update as a change; ``isSameIdentity(as:)`` asks only
/// whether two versions are of the same thing (the reference's "dough"). Hashing uses the identifier.
///
/// Updating never mutates: ``updated(with:recipe:updates:)`` returns the very same instance when the
/// ingredients change nothing, and otherwise a new instance with the same identifier, announcing the
/// change to ``ModelUpdates`` subscribers.
///
/// ```swift
/// let product = try IdentifiedModel(identifiedBy: "base_sku", ingredients: json, recipe: productJSON, base: Product())
/// product.name                                      // reads through to the value
/// let renamed = try product.updated(with: ["attributes": ["name": "New"]], recipe: productJSON)
/// renamed.isSameIdentity(as: product)               // true: the same product
/// renamed == product                                // false: another version of it
/// renamed === product                               // false: a new instance, and an update was published
/// ```
@dynamicMemberLookup
public final class IdentifiedModel<ID: Hashable & Sendable, Model: Equatable & Sendable>: Sendable, Identifiable, Hashable {
    /// The identifier, shared by every version of this model.
    public let id: ID
    /// The model's data.
    public let value: Model

    /// Wraps `value` with `id`.
    public init(id: ID, value: Model) {
        self.id = id
        self.value = value
    }

    /// Bakes a model from ingredients, taking its identifier from `identifierPath`.
    /// - Throws: ``ModelError`` (identifier) if the identifier is absent, `null` or of the wrong type,
    ///   or the recipe's errors.
    public convenience init(
        identifiedBy identifierPath: String, ingredients: JSON, recipe: Recipe<Model>, base: Model
    ) throws(ModelError) where ID: JSONConvertible {
        let path: JSONPath
        do {
            path = try JSONPath(parsing: identifierPath)
        } catch {
            throw ModelError(.invalidPath, message: error.description, recipe: recipe.name, path: identifierPath)
        }
        guard let raw = ingredients[path], !raw.isNull else {
            throw ModelError(
                .identifier, message: "the ingredients have no identifier", recipe: recipe.name, path: identifierPath)
        }
        let id: ID
        do {
            id = try ID(json: raw)
        } catch {
            throw ModelError(
                .identifier, message: "the identifier is not \(ID.self): \(error.message)", recipe: recipe.name,
                path: identifierPath, expected: error.expected, found: error.found)
        }
        self.init(id: id, value: try Oven.baked(base, from: ingredients, recipe: recipe))
    }

    /// Reads a property of the value.
    public subscript<Property>(dynamicMember keyPath: KeyPath<Model, Property>) -> Property { value[keyPath: keyPath] }

    /// This model with `ingredients` applied: the same instance if nothing changes, otherwise a new one
    /// with the same identifier, after publishing the update to `updates`.
    public func updated(
        with ingredients: JSON, recipe: Recipe<Model>, updates: ModelUpdates = .shared
    ) throws(ModelError)
        -> IdentifiedModel
    {
        let newValue = try Oven.baked(value, from: ingredients, recipe: recipe)
        return replacingValue(with: newValue, updates: updates)
    }

    /// This model with a new value: the same instance if it is equal, otherwise a new one, published.
    public func replacingValue(with newValue: Model, updates: ModelUpdates = .shared) -> IdentifiedModel {
        guard newValue != value else { return self }
        let next = IdentifiedModel(id: id, value: newValue)
        updates.publish(ModelUpdate(previous: self, current: next))
        return next
    }

    /// Equal when both the identifiers and the values are equal: two versions of one thing differ.
    public static func == (lhs: IdentifiedModel, rhs: IdentifiedModel) -> Bool {
        lhs === rhs || (lhs.id == rhs.id && lhs.value == rhs.value)
    }

    /// Whether `other` is a version of the same thing (the same identifier), whatever the values.
    public func isSameIdentity(as other: IdentifiedModel) -> Bool { id == other.id }

    /// Hashes the identifier (equal instances have equal identifiers).
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// One model replaced by a newer version with the same identifier.
///
/// ```swift
/// for await update in ModelUpdates.shared.updates(of: Product.self, identifiedBy: String.self) {
///     print(update.id, update.previous.name, "→", update.current.name)
/// }
/// ```
public struct ModelUpdate<ID: Hashable & Sendable, Model: Equatable & Sendable>: Sendable {
    /// The version that was replaced.
    public let previous: IdentifiedModel<ID, Model>
    /// The new version.
    public let current: IdentifiedModel<ID, Model>
    /// The shared identifier.
    public var id: ID { current.id }
}

/// An update of any model type, for subscribers to all of them.
public struct AnyModelUpdate: Sendable {
    /// The identifier.
    public let id: any Hashable & Sendable
    /// The model type (`Product.self`).
    public let modelType: any Any.Type
    /// The version that was replaced (an `IdentifiedModel`).
    public let previous: any Sendable
    /// The new version (an `IdentifiedModel`).
    public let current: any Sendable

    /// The typed update, if it is one of `Model` identified by `ID`.
    public func `as`<ID, Model>(_ model: Model.Type, identifiedBy id: ID.Type = ID.self) -> ModelUpdate<ID, Model>? {
        guard let previous = previous as? IdentifiedModel<ID, Model>, let current = current as? IdentifiedModel<ID, Model>
        else { return nil }
        return ModelUpdate(previous: previous, current: current)
    }
}
