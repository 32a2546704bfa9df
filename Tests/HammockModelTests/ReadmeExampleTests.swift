import HammockJSON
import HammockModel
import Testing

/// The README's model-mapping example, kept compiling and true.
@Suite("README example: model mapping")
struct ReadmeModelExampleTests {
    // From the README:
    // swift-format-ignore: DoNotUseSemicolons
    struct Product: Equatable, Sendable { var sku = ""; var name = ""; var price: Double? = nil }

    @Test("A recipe populates a model from JSON paths, leaves absent ones alone, and decomposes it back")
    func modelMapping() throws {
        let json: JSON = ["attributes": ["name": "Lamp"], "offers": [["price": 12.5]]]
        // From the README:
        let productJSON = try Recipe<Product>(name: "ProductJSON") {
            Field("name", \.name, at: "attributes.name")
            Field("price", \.price, at: "offers[0].price")
        }
        var product = Product()
        try Oven.populate(&product, from: json, recipe: productJSON)  // absent paths leave properties alone
        let ingredients = try productJSON.decompose(product)  // and back to JSON
        // Checks:
        #expect(product == Product(sku: "", name: "Lamp", price: 12.5))
        #expect(ingredients == json)
    }
}
