import Foundation
import HammockClient
import HammockTesting
import Testing

struct ServedPerson: Codable, Equatable, Sendable {
    var id: Int?
    var name: String?
    var numberOfKids: Int?
    var kilometersWalked: Double?
    var avatar: String?
}

struct ServedCar: Codable, Equatable, Sendable {
    var id: Int?
    var name: String?
    var color: String?
    var person_id: Int?
}

/// The people example of Examples/people.json, as an API.
@API
protocol PeopleExample: Sendable {
    @GET("/people")
    func people() async throws -> [ServedPerson]

    @POST("/people")
    @Body("person")
    func create(person: ServedPerson) async throws -> Response<ServedPerson>

    @PUT("/people/{id}")
    @Body("changes")
    func update(id: Int, changes: JSON) async throws -> ServedPerson

    @DELETE("/people/{id}")
    func delete(id: Int) async throws

    @GET("/people/{id}")
    func person(id: Int) async throws -> ServedPerson

    @POST("/people/{id}/cars")
    @Body("car")
    func addCar(id: Int, car: ServedCar) async throws -> ServedCar

    @GET("/people/{id}/cars")
    func cars(id: Int) async throws -> [ServedCar]
}

@Suite("A generated client against hammock serve", .serialized, .timeLimit(.minutes(2)))
struct GeneratedClientServeTests {
    @Test("CRUD on the people example over loopback")
    func crud() async throws {
        let store = TemporaryFiles.path("client", extension: "sqlite")
        let process = try HammockProcess([
            "serve", try HammockProcess.emptyExample("people"), "--store", "sqlite:\(store)", "--port", "0", "--quiet",
        ])
        let banner = await process.firstLine { $0.hasPrefix("Hammock is serving") }
        let url = try #require(banner?.split(separator: " ").last.map(String.init))
        let api = PeopleExampleClient(client: RestClient(baseURL: try #require(URL(string: url))))

        #expect(try await api.people() == [])
        let created = try await api.create(person: ServedPerson(name: "john", numberOfKids: 1))
        #expect(created.status == .created && created.headerFields[.location] == "/people/1")
        #expect(created.value == ServedPerson(id: 1, name: "john", numberOfKids: 1))
        #expect(try await api.update(id: 1, changes: ["name": "jeff"]) == ServedPerson(id: 1, name: "jeff", numberOfKids: 1))
        let car = try await api.addCar(id: 1, car: ServedCar(name: "beetle", color: "yellow"))
        #expect(car == ServedCar(id: 1, name: "beetle", color: "yellow", person_id: 1))
        #expect(try await api.cars(id: 1) == [car])
        try await api.delete(id: 1)
        do {
            _ = try await api.person(id: 1)
            Issue.record("expected a 404")
        } catch let error as RestError {
            #expect(error.status == .notFound)
        }
        process.interrupt()
        #expect(await process.exitStatus() == 0)
    }
}
