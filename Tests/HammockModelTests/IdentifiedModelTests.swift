import HammockModel
import Synchronization
import Testing

@Suite("Identified models and updates")
struct IdentifiedModelTests {
    let json: JSON = ["base_sku": "sku-1", "attributes": ["name": "Hammock", "tags": []], "offers": [["price": 10]]]

    final class Recorder: Sendable {
        let updates = Mutex<[AnyModelUpdate]>([])
        var count: Int { updates.withLock { $0.count } }
    }

    func make(_ updates: ModelUpdates) throws -> (IdentifiedModel<String, Product>, Recipe<Product>, Recorder, ObservationToken) {
        let recipe = try Recipes.restAPI()
        let product = try IdentifiedModel<String, Product>(
            identifiedBy: "base_sku", ingredients: json, recipe: recipe, base: Product())
        let recorder = Recorder()
        let token = updates.observe { update in recorder.updates.withLock { $0.append(update) } }
        return (product, recipe, recorder, token)
    }

    @Test("Baking reads the identifier and the value; properties read through")
    func baking() throws {
        let (product, _, _, token) = try make(ModelUpdates())
        defer { token.cancel() }
        #expect(product.id == "sku-1")
        #expect(product.name == "Hammock" && product.price == 10)
        #expect(product.value == Product(sku: "sku-1", name: "Hammock", price: 10, tags: []))
    }

    @Test("A missing or mistyped identifier is an identifier error")
    func identifierErrors() throws {
        let recipe = try Recipes.restAPI()
        do {
            let error = try #require(throws: ModelError.self) {
                _ = try IdentifiedModel<String, Product>(
                    identifiedBy: "missing", ingredients: json, recipe: recipe, base: Product())
            }
            #expect(error.kind == .identifier && error.path == "missing")
        }
        do {
            let error = try #require(throws: ModelError.self) {
                _ = try IdentifiedModel<Int, Product>(
                    identifiedBy: "base_sku", ingredients: json, recipe: recipe, base: Product())
            }
            #expect(error.kind == .identifier && error.expected == "an integer" && error.found == "string")
        }
    }

    @Test("Updates that change nothing return the same instance and publish nothing")
    func noOpUpdates() throws {
        let updates = ModelUpdates()
        let (product, recipe, recorder, token) = try make(updates)
        defer { token.cancel() }
        #expect(try product.updated(with: json, recipe: recipe, updates: updates) === product)
        #expect(try product.updated(with: ["attributes": ["name": "Hammock"]], recipe: recipe, updates: updates) === product)
        #expect(try product.updated(with: ["unrelated": 1], recipe: recipe, updates: updates) === product)
        #expect(recorder.count == 0)
    }

    @Test("A real update returns a new instance with the same identifier and publishes it")
    func realUpdate() throws {
        let updates = ModelUpdates()
        let (product, recipe, recorder, token) = try make(updates)
        defer { token.cancel() }
        let renamed = try product.updated(with: ["attributes": ["name": "Deluxe"]], recipe: recipe, updates: updates)
        #expect(renamed !== product)
        #expect(renamed.isSameIdentity(as: product))
        #expect(renamed != product)  // another version: onChange and removeDuplicates see the change
        #expect([renamed] != [product])
        #expect(renamed.id == "sku-1" && renamed.name == "Deluxe" && product.name == "Hammock")
        #expect(Set([product, renamed]).count == 2)
        #expect(IdentifiedModel(id: "sku-1", value: renamed.value) == renamed)  // equal id and value
        let published = try #require(recorder.updates.withLock { $0.first })
        #expect(recorder.count == 1)
        #expect(published.id as? String == "sku-1")
        #expect(ObjectIdentifier(published.modelType) == ObjectIdentifier(Product.self))
        let typed = try #require(published.as(Product.self, identifiedBy: String.self))
        #expect(typed.previous === product && typed.current === renamed)
        #expect(published.as(Owner.self, identifiedBy: String.self) == nil)
    }

    @Test("A failed update changes nothing and publishes nothing")
    func failedUpdate() throws {
        let updates = ModelUpdates()
        let (product, recipe, recorder, token) = try make(updates)
        defer { token.cancel() }
        #expect(throws: ModelError.self) {
            try product.updated(with: ["offers": [["price": "free"]]], recipe: recipe, updates: updates)
        }
        #expect(recorder.count == 0 && product.price == 10)
    }

    @Test("Streams deliver updates per model type and for all types, in order")
    func streams() async throws {
        let updates = ModelUpdates()
        let (product, recipe, _, token) = try make(updates)
        defer { token.cancel() }
        let productStream = updates.updates(of: Product.self, identifiedBy: String.self)
        let allStream = updates.allUpdates()

        let owner = IdentifiedModel<Int, Owner>(id: 7, value: Owner(name: "ada"))
        let second = try product.updated(with: ["attributes": ["name": "v2"]], recipe: recipe, updates: updates)
        _ = owner.replacingValue(with: Owner(name: "bob"), updates: updates)
        _ = try second.updated(with: ["offers": [["price": 12]]], recipe: recipe, updates: updates)

        var typed: [ModelUpdate<String, Product>] = []
        for await update in productStream {
            typed.append(update)
            if typed.count == 2 { break }
        }
        #expect(typed.map(\.current.name) == ["v2", "v2"])
        #expect(typed.map(\.current.price) == [10, 12])
        #expect(typed.allSatisfy { $0.id == "sku-1" })

        var all: [AnyModelUpdate] = []
        for await update in allStream {
            all.append(update)
            if all.count == 3 { break }
        }
        #expect(all.map { $0.id as? String } == ["sku-1", nil, "sku-1"])
        #expect(all[1].id as? Int == 7)
    }

    @Test("Cancelled observers and finished streams stop receiving")
    func unsubscribe() throws {
        let updates = ModelUpdates()
        let (product, recipe, recorder, token) = try make(updates)
        #expect(updates.subscriberCount == 1)
        token.cancel()
        token.cancel()
        #expect(updates.subscriberCount == 0)
        _ = try product.updated(with: ["attributes": ["name": "after"]], recipe: recipe, updates: updates)
        #expect(recorder.count == 0)
        do {
            let stream = updates.allUpdates()
            #expect(updates.subscriberCount == 1)
            _ = stream
        }
    }
}
