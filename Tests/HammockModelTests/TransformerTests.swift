import Foundation
import HammockModel
import Testing

@Suite("Transformers and boxes")
struct TransformerTests {
    func listingRecipe() throws(ModelError) -> Recipe<Listing> {
        let owner = try Recipes.owner()
        return try Recipe<Listing>(name: "Listing") {
            Field("id", \.id, at: "id", transformer: .integerFromString)
            Field("released", \.released, at: "released_at", transformer: Transformer.iso8601Date.optional)
            Field("homepage", \.homepage, at: "links.home", transformer: Transformer.url.optional)
            Field("status", \.status, at: "status", transformer: .rawValue(Status.self))
            Field("stock", \.stock, at: "stock", transformer: "int-from-string")
            Field("owner", \.owner, at: "owner", transformer: .recipe(owner, base: Owner()))
            Field("previousOwners", \.previousOwners, at: "history", transformer: .array(of: .recipe(owner, base: Owner())))
        }
    }

    let ingredients: JSON = [
        "id": "42",
        "released_at": "2024-05-01T12:30:00Z",
        "links": ["home": "https://example.com/hammock"],
        "status": "retired",
        "stock": 7,
        "owner": ["name": "ada", "contact": ["email": "ada@example.com"]],
        "history": [["name": "bob"], ["name": "cy", "contact": ["email": nil]]],
    ]

    @Test("Transformers convert both ways, nested recipes and arrays included")
    func bothWays() throws {
        let recipe = try listingRecipe()
        let listing = try Oven.baked(Listing(), from: ingredients, recipe: recipe)
        #expect(listing.id == 42)
        #expect(listing.released == Date(timeIntervalSince1970: 1_714_566_600))
        #expect(listing.homepage?.host == "example.com")
        #expect(listing.status == .retired)
        #expect(listing.stock == 7)
        #expect(listing.owner == Owner(name: "ada", email: "ada@example.com"))
        #expect(listing.previousOwners == [Owner(name: "bob"), Owner(name: "cy")])
        let back = try recipe.decompose(listing)
        #expect(back["id"] == "42")
        #expect(back["released_at"] == "2024-05-01T12:30:00Z")
        #expect(back["status"] == "retired")
        #expect(back["owner"] == ["name": "ada", "contact": ["email": "ada@example.com"]])
        #expect(try Oven.baked(Listing(), from: back, recipe: recipe) == listing)
    }

    @Test(
        "Transformer failures name the field and the value",
        arguments: [
            (["id": "forty-two"] as JSON, "id", "'forty-two' is not an integer"),
            (["released_at": "yesterday"] as JSON, "released", "'yesterday' is not an ISO 8601 date"),
            (["links": ["home": "not a url"]] as JSON, "homepage", "'not a url' is not an absolute URL"),
            (["status": "lost"] as JSON, "status", "\"lost\" is not a valid Status"),
            (["history": [["name": 1]]] as JSON, "previousOwners", "expected a string, found integer"),
        ])
    func failures(json: JSON, field: String, message: String) throws {
        var listing = Listing()
        do {
            let error = try #require(throws: ModelError.self) {
                try Oven.populate(&listing, from: json, recipe: listingRecipe())
            }
            #expect(error.field == field && error.recipe == "Listing")
            #expect(error.message == message, "\(error)")
            if field == "previousOwners" { #expect(error.path == "history[0].name") }
        }
        #expect(listing == Listing())
    }

    @Test("Dates come in several ISO 8601 forms")
    func dates() throws {
        let recipe = try Recipe<Listing> { Field("released", \.released, at: "d", transformer: Transformer.iso8601Date.optional) }
        for text in ["2024-05-01T00:00:00Z", "2024-05-01T00:00:00.000Z", "2024-05-01", "2024-05-01T02:00:00+02:00"] {
            let listing = try Oven.baked(Listing(), from: ["d": .string(text)], recipe: recipe)
            #expect(listing.released == Date(timeIntervalSince1970: 1_714_521_600), "\(text)")
        }
    }

    @Test("One-way transformers read but refuse to write back")
    func oneWay() throws {
        let shouting = Transformer<String>(decode: { json throws(ModelError) in try String(json: json).uppercased() })
        #expect(!shouting.isReversible)
        let recipe = try Recipe<Product>(name: "Loud") { Field("name", \.name, at: "name", transformer: shouting) }
        #expect(try Oven.baked(Product(), from: ["name": "quiet"], recipe: recipe).name == "QUIET")
        do {
            let error = try #require(throws: ModelError.self) {
                _ = try recipe.decompose(Product(name: "X"))
            }
            #expect(error.kind == .transformer && error.field == "name" && error.recipe == "Loud")
        }
    }

    @Test("Named transformers: registered once, looked up by type, unknown names refused")
    func registry() throws {
        let registry = TransformerRegistry.default
        let name = "cents-\(UInt64.random(in: 0...UInt64.max))"
        let cents = Transformer<Int>(
            decode: { json throws(ModelError) in Int(((try Double(json: json)) * 100).rounded()) },
            encode: { .double(Double($0) / 100) })
        try registry.register(cents, named: name)
        #expect(throws: ModelError.self) { try registry.register(cents, named: name) }
        let recipe = try Recipe<Listing> { Field("stock", \.stock, at: "price", transformer: name) }
        #expect(try Oven.baked(Listing(), from: ["price": 1.25], recipe: recipe).stock == 125)
        do {
            let error = try #require(throws: ModelError.self) {
                _ = try Recipe<Product> { Field("name", \.name, at: "n", transformer: name) }
            }
            #expect(error.kind == .transformer && error.message.contains("does not produce String"))
        }
        do {
            let error = try #require(throws: ModelError.self) {
                _ = try Recipe<Product> { Field("name", \.name, at: "n", transformer: "no-such-thing") }
            }
            #expect(error.message == "no transformer named 'no-such-thing' is registered" && error.field == "name")
        }
        registry.unregister(name)
        #expect(throws: ModelError.self) { try Recipe<Listing> { Field("stock", \.stock, at: "p", transformer: name) } }
    }

    @Test("Registration is safe from many tasks at once: each name is taken exactly once")
    func concurrentRegistration() async {
        let registry = TransformerRegistry()
        let successes = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    var count = 0
                    for name in 0..<20
                    where (try? registry.register(Transformer<Int>.integerFromString, named: "t\(name)")) != nil {
                        count += 1
                    }
                    return count
                }
            }
            return await group.reduce(0, +)
        }
        #expect(successes == 20)
    }

    @Test("Boxes hold one recipe per name and hand it back for its model type")
    func boxes() throws {
        let box = RecipeBox()
        let recipe = try Recipes.restAPI()
        try box.add(recipe)
        #expect(box.names == ["ProductJSON"])
        #expect(try box.recipe(named: "ProductJSON", for: Product.self).fieldNames == ["sku", "name", "price", "tags"])
        do {
            let error = try #require(throws: ModelError.self) {
                try box.add(recipe)
            }
            #expect(error.kind == .invalidRecipe && error.recipe == "ProductJSON")
        }
        #expect(throws: ModelError.self) { try box.add(Recipe<Product> { Field("name", \.name, at: "n") }) }  // unnamed
        do {
            let error = try #require(throws: ModelError.self) {
                _ = try box.recipe(named: "ProductJSON", for: Owner.self)
            }
            #expect(error.kind == .unknownRecipe && error.message == "the recipe is not for Owner")
        }
        #expect(throws: ModelError.self) { try box.recipe(named: "Nope", for: Product.self) }
        #expect(box.removeRecipe(named: "ProductJSON"))
        #expect(box.names.isEmpty)
    }

    @Test("Boxes are safe from many tasks at once")
    func concurrentBoxes() async throws {
        let box = RecipeBox()
        let recipes = try (0..<10).map { index in try Recipe<Product>(name: "R\(index)") { Field("name", \.name, at: "n") } }
        let added = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<50 {
                group.addTask { recipes.reduce(0) { $0 + ((try? box.add($1)) != nil ? 1 : 0) } }
            }
            return await group.reduce(0, +)
        }
        #expect(added == 10)
        #expect(box.names.count == 10)
    }
}
