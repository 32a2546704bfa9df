import HammockModel
import HammockServer
import Testing

/// One recipe describes one API end to end: records from the mock server become models, and models
/// become request bodies again.
@Suite("Recipes against the mock server")
struct RecipeIntegrationTests {
    struct Person: Equatable, Sendable {
        var name = ""
        var kids = 0
        var walked: Double? = nil
    }

    let recipe: Recipe<Person>

    init() throws {
        recipe = try Recipe<Person>(name: "PersonRecord") {
            Field("name", \.name, at: "name")
            Field("kids", \.kids, at: "numberOfKids")
            Field("walked", \.walked, at: "kilometersWalked")
        }
    }

    @Test("Server records map to models, and models post back as records", arguments: StoreKind.allCases)
    func roundTrip(kind: StoreKind) async throws {
        let server = try await Fixtures.server(kind)
        let ada = Person(name: "ada", kids: 2, walked: 12.5)
        let (created, record) = await server.send(.post, "/people", json: try recipe.decompose(ada))
        #expect(created.status == .created)
        let model = try IdentifiedModel<Int, Person>(
            identifiedBy: "id", ingredients: try #require(record), recipe: recipe, base: Person())
        #expect(model.id == 1 && model.value == ada)

        let (_, updatedRecord) = await server.send(.patch, "/people/1", json: ["numberOfKids": 3])
        let updates = ModelUpdates()
        let newer = try model.updated(with: try #require(updatedRecord), recipe: recipe, updates: updates)
        #expect(newer !== model && newer.kids == 3)
        let same = try newer.updated(with: try #require(await server.send(.get, "/people/1").1), recipe: recipe, updates: updates)
        #expect(same === newer)  // the server's answer changed nothing

        let list = try #require(await server.send(.get, "/people").1?.arrayValue)
        let people = try list.map { try Oven.baked(Person(), from: $0, recipe: recipe) }
        #expect(people == [Person(name: "ada", kids: 3, walked: 12.5)])
    }
}
