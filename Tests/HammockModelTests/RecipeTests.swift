import HammockModel
import Testing

@Suite("Recipes")
struct RecipeTests {
    let json: JSON = [
        "base_sku": "1209-3r47",
        "attributes": ["name": "Hammock", "tags": ["garden", "summer"]],
        "offers": [["price": 89.5, "currency": "EUR"]],
        "unmapped": true,
    ]

    @Test("Populating maps every path onto its property")
    func populate() throws {
        var product = Product()
        try Oven.populate(&product, from: json, recipe: Recipes.restAPI())
        #expect(product == Product(sku: "1209-3r47", name: "Hammock", price: 89.5, tags: ["garden", "summer"]))
    }

    @Test("Absent leaves the property, null clears an optional, present sets it")
    func absentNullPresent() throws {
        let recipe = try Recipes.restAPI()
        var product = Product(sku: "keep", name: "keep", price: 10, tags: ["keep"])
        try Oven.populate(&product, from: ["attributes": ["name": "new"]], recipe: recipe)
        #expect(product == Product(sku: "keep", name: "new", price: 10, tags: ["keep"]))
        try Oven.populate(&product, from: ["offers": [["price": nil]]], recipe: recipe)
        #expect(product.price == nil && product.name == "new")
    }

    @Test("null for a non-optional property is a mapping error, and changes nothing")
    func nullForNonOptional() throws {
        var product = Product(sku: "keep")
        do {
            let error = try #require(throws: ModelError.self) {
                try Oven.populate(
                    &product, from: ["attributes": ["name": "changed"], "base_sku": nil], recipe: Recipes.restAPI())
            }
            #expect(error.kind == .mapping && error.field == "sku" && error.path == "base_sku")
            #expect(error.found == "null")
            #expect(error.description == "ProductJSON: field 'sku' at base_sku: null for a property that is not optional")
        }
        #expect(product == Product(sku: "keep"))
    }

    final class ProductObject {
        var name = "before"
        var price: Double? = 1
        var sku = "keep"
    }

    @Test("A class model is unchanged when a later field fails, as a struct is")
    func classModelAtomic() throws {
        let recipe = try Recipe<ProductObject> {
            Field("name", \.name, at: "name")
            Field("sku", \.sku, at: "sku")
            Field("price", \.price, at: "price")
        }
        let object = ProductObject()
        var reference = object
        #expect(throws: ModelError.self) {
            try Oven.populate(&reference, from: ["name": "after", "sku": "changed", "price": "cheap"], recipe: recipe)
        }
        #expect(object.name == "before" && object.sku == "keep" && object.price == 1)
        try Oven.populate(&reference, from: ["name": "after", "price": 2], recipe: recipe)
        #expect(object.name == "after" && object.price == 2 && object.sku == "keep")
    }

    @Test("A required field, or any field of a strict recipe, whose path is absent is an error naming the path")
    func requiredFields() throws {
        let recipe = try Recipe<Product>(name: "Required") {
            Field("sku", \.sku, at: "base_sku").required()
            Field("name", \.name, at: "attributes.nmae")  // misspelt, optional: left alone
        }
        var product = Product(sku: "keep")
        let missing = try #require(throws: ModelError.self) {
            try Oven.populate(&product, from: ["attributes": ["name": "x"]], recipe: recipe)
        }
        #expect(missing.kind == .missing && missing.path == "base_sku" && missing.field == "sku")
        #expect(product == Product(sku: "keep"))
        try Oven.populate(&product, from: ["base_sku": "new"], recipe: recipe)
        #expect(product.sku == "new")

        let strict = try Recipe<Product>(name: "Strict", strict: true) {
            Field("sku", \.sku, at: "base_sku")
            Field("name", \.name, at: "attributes.nmae")
        }
        let typo = try #require(throws: ModelError.self) {
            try Oven.populate(&product, from: ["base_sku": "a", "attributes": ["name": "b"]], recipe: strict)
        }
        #expect(typo.kind == .missing && typo.path == "attributes.nmae")
        #expect(typo.description.contains("attributes.nmae"))
        #expect(product.sku == "new")  // unchanged: the error came before any write
    }

    @Test("A wrong type names the path, the expected and the found type")
    func wrongType() throws {
        var product = Product()
        do {
            let error = try #require(throws: ModelError.self) {
                try Oven.populate(&product, from: ["offers": [["price": "cheap"]]], recipe: Recipes.restAPI())
            }
            #expect(error.kind == .mapping)
            #expect(error.path == "offers[0].price")
            #expect(error.expected == "a number" && error.found == "string")
            #expect(error.description == "ProductJSON: field 'price' at offers[0].price: expected a number, found string")
        }
        do {
            let error = try #require(throws: ModelError.self) {
                try Oven.populate(&product, from: ["attributes": ["tags": ["ok", 3]]], recipe: Recipes.restAPI())
            }
            #expect(error.path == "attributes.tags[1]" && error.message == "expected a string, found integer")
        }
    }

    @Test("Ingredients must be an object or an array")
    func ingredientShape() throws {
        var product = Product()
        #expect(throws: ModelError.self) { try Oven.populate(&product, from: "text", recipe: Recipes.restAPI()) }
        let error = try #require(throws: ModelError.self) { try Oven.populate(&product, from: 5, recipe: Recipes.restAPI()) }
        #expect(error.kind == .ingredients)
    }

    @Test("Decomposing writes the mapped properties back in the recipe's shape")
    func decompose() throws {
        let recipe = try Recipes.restAPI()
        let product = try Oven.baked(Product(), from: json, recipe: recipe)
        let ingredients = try recipe.decompose(product)
        #expect(
            ingredients == [
                "base_sku": "1209-3r47",
                "attributes": ["name": "Hammock", "tags": ["garden", "summer"]],
                "offers": [["price": 89.5]],
            ])
        #expect(try Oven.baked(Product(), from: ingredients, recipe: recipe) == product)
        let unpriced = try recipe.decompose(Product(sku: "x"))
        #expect(unpriced[try JSONPath(parsing: "offers[0].price")] == .null)  // nil is written as null, not dropped
    }

    struct InvalidRecipe: Sendable, CustomTestStringConvertible {
        let paths: [String]
        let message: String
        var testDescription: String { paths.joined(separator: " + ") }
    }

    @Test(
        "Recipes that could not work are refused when made",
        arguments: [
            InvalidRecipe(paths: ["key", "[0]"], message: "the root would have to be both an object and an array"),
            InvalidRecipe(paths: ["a.b", "a[0]"], message: "'a' would have to be both an object and an array"),
            InvalidRecipe(paths: ["x[0].y", "x[0][1]"], message: "'x[0]' would have to be both an object and an array"),
            InvalidRecipe(paths: ["a", "a.b"], message: "'a' is the value of field 'f0' and a container for field 'f1'"),
            InvalidRecipe(paths: ["a.b", "a"], message: "'a' is the value of field 'f1' and a container for other fields"),
            InvalidRecipe(paths: ["a.b", "a.b"], message: "fields 'f0' and 'f1' share the path 'a.b'"),
        ])
    func invalidRecipes(recipe: InvalidRecipe) {
        do {
            _ = try Recipe<JSON>(name: "Bad") {
                for (index, path) in recipe.paths.enumerated() {
                    Field("f\(index)", \JSON.self, at: path)
                }
            }
            Issue.record("expected \(recipe.paths) to be refused")
        } catch {
            #expect(error.kind == .invalidRecipe)
            #expect(error.message.hasPrefix(recipe.message), "\(error)")
        }
    }

    @Test("Empty recipes, duplicate names and bad paths are refused")
    func otherInvalidRecipes() throws {
        #expect(throws: ModelError.self) { try Recipe<Product> {} }
        let twice = try #require(throws: ModelError.self) {
            try Recipe<Product>(name: "Twice") {
                Field("name", \.name, at: "a")
                Field("name", \.sku, at: "b")
            }
        }
        #expect(twice.message == "the field name 'name' is used twice" && twice.recipe == "Twice")
        let badPath = try #require(throws: ModelError.self) { try Recipe<Product> { Field("name", \.name, at: "items[-1]") } }
        #expect(badPath.kind == .invalidPath && badPath.field == "name" && badPath.path == "items[-1]")
        #expect(badPath.message.contains("negative index"))
    }

    @Test("Keys holding dots or brackets map through components")
    func programmaticPaths() throws {
        let recipe = try Recipe<Product> {
            Field("name", \.name, at: JSONPath([.key("product.name")]))
            Field("sku", \.sku, at: JSONPath([.key("ids[]"), .index(1)]))
        }
        let product = try Oven.baked(Product(), from: ["product.name": "dotted", "ids[]": ["a", "b"]], recipe: recipe)
        #expect(product.name == "dotted" && product.sku == "b")
        #expect(try recipe.decompose(product) == ["product.name": "dotted", "ids[]": [nil, "b"]])
    }

    @Test("Several recipes for one model give identical models")
    func manySources() throws {
        let rest = try Recipes.restAPI()
        let cacheRow = try Recipe<Product>(name: "CacheRow") {
            Field("sku", \.sku, at: "sku")
            Field("name", \.name, at: "name")
            Field("price", \.price, at: "price_eur")
            Field("tags", \.tags, at: "tags")
        }
        let legacy = try Recipe<Product>(name: "LegacyAPI") {
            Field("sku", \.sku, at: "[0]")
            Field("name", \.name, at: "[1].title")
            Field("price", \.price, at: "[2]", transformer: Transformer<Double>.doubleFromString.optional)
            Field("tags", \.tags, at: "[3]")
        }
        let fromREST = try Oven.baked(Product(), from: json, recipe: rest)
        let fromCache = try Oven.baked(
            Product(), from: ["sku": "1209-3r47", "name": "Hammock", "price_eur": 89.5, "tags": ["garden", "summer"]],
            recipe: cacheRow)
        let fromLegacy = try Oven.baked(
            Product(), from: ["1209-3r47", ["title": "Hammock"], "89.50", ["garden", "summer"]], recipe: legacy)
        #expect(fromREST == fromCache)
        #expect(fromREST == fromLegacy)
        #expect(try legacy.decompose(fromLegacy) == ["1209-3r47", ["title": "Hammock"], "89.5", ["garden", "summer"]])
    }
}
