import Foundation
import HammockClient
import HammockHTTPServer
import HammockJSON
import HammockModel
import HammockResources
import HammockServer

/// A resident as the app sees it, mapped from the server's JSON by a recipe.
struct Resident: Equatable, Sendable {
    var name = ""
    var city = ""
}

/// The same API, declared for the generated client.
struct Person: Codable, Sendable {
    var id: Int?
    var name: String
    var city: String
}

@API
protocol People: Sendable {
    @GET("/people")
    func people() async throws -> [Person]

    @POST("/people")
    @Body("person")
    func create(person: Person) async throws -> Person
}

/// `swift run hammock-tour`: the four parts of Hammock talking to each other over loopback.
/// CI builds it and runs it (`TourTests`), so this example cannot rot.
@main
struct Tour {
    @MainActor
    static func main() async throws {
        // 1. A mock server, defined in two lines, on a free port.
        let people = MockResource("people", fields: ["name": .string, "city": .string])
        let server = try await MockServer(resources: [people])
        let port = try await server.start(port: 0)
        let base = "http://127.0.0.1:\(port)"
        guard let baseURL = URL(string: base) else { throw URLError(.badURL) }

        // 2. The declarative client creates someone.
        let client = PeopleClient(client: RestClient(baseURL: baseURL))
        let ada = try await client.create(person: Person(name: "Ada", city: "London"))
        print("client: created \(ada.name) with id \(ada.id ?? 0)")

        // 3. Observable resources, with 4. a model recipe in their pipeline.
        let recipe = try Recipe<Resident> {
            Field("name", \.name, at: "name")
            Field("city", \.city, at: "city")
        }
        let api = try Service(baseURL: base)
        api.configure("/people") { $0.pipeline[.model] = [.recipe(recipe, base: Resident())] }
        let list = api.resource("/people")
        let screen = NSObject()
        list.addObserver(owner: screen) { resource, event in
            let names = resource.latestData.typedContent(ifNone: [Resident]()).map(\.name)
            print("resource: \(event), loading: \(resource.isLoading), residents: \(names)")
        }
        var events = list.events().makeAsyncIterator()
        _ = try await list.loadIfNeeded()?.value()
        _ = try await list.request(.post, json: ["name": "Grace", "city": "New York"]).value()
        // The list was invalidated by the POST and reloads by itself, because it is observed.
        while let event = await events.next() {
            if event == .newData(.network), list.latestData.typedContent(ifNone: [Resident]()).count == 2 { break }
        }
        list.invalidate()
        _ = try await list.loadIfNeeded()?.value()  // revalidates with If-None-Match: a 304
        print("cached validators: ETag \(list.latestData?.etag ?? "-"), Last-Modified \(list.latestData?.lastModified ?? "-")")
        withExtendedLifetime(screen) {}
        await server.stop()
    }
}
