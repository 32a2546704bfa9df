import Foundation
import HammockClient
import HammockHTTPServer
import HammockServer
import HammockTesting
import Synchronization
import Testing

struct Person: Codable, Equatable, Sendable {
    var id: Int?
    var name: String
    var numberOfKids: Int?
}

struct Car: Codable, Equatable, Sendable {
    var id: Int?
    var name: String
    var person_id: Int?
}

struct Problem: Decodable, Sendable, Equatable {
    var title: String
    var status: Int
    var detail: String?
}

enum Sort: String, ParameterValue { case created, updated }

/// An enum that does not declare ParameterValue: sent by raw value all the same.
enum Direction: String, Sendable {
    case ascending = "asc"
    case descending = "desc"
}

/// The mock server's people example, declared once and implemented by the macro.
@API
@Headers(["Accept": "application/json", "X-Trace": "{trace}"])
@ErrorBody(Problem.self)
protocol PeopleAPI: Sendable {
    @GET("/people")
    func people() async throws -> [Person]

    @GET("/people/{id}")
    func person(id: Int) async throws -> Person

    @GET("/people/{id}")
    func personWithHeaders(id: Int, trace: String?) async throws -> Response<Person>

    @POST("/people")
    @Body("person")
    func create(person: Person) async throws -> Person

    @FormURLEncoded
    @POST("/people")
    func createFromForm(name: String, numberOfKids: Int?) async throws -> Person

    @PATCH("/people/{id}")
    @Body("changes")
    func update(id: Int, changes: JSON) async throws -> Person

    @DELETE("/people/{id}")
    func delete(id: Int) async throws

    @GET("/people/{person}/cars")
    func cars(of person: Int) async throws -> [Car]

    @POST("/people/{person}/cars")
    @Body("car")
    func addCar(person: Int, car: Car) async throws -> Car

    @GET("/people/{id}")
    func raw(id: Int) async throws -> Data

    @GET("/people/{id}")
    func sorted(id: Int, direction: Direction?, also: [Direction], sort: Sort) async throws -> Person
}

@Suite("Generated clients against the mock server")
struct GeneratedClientTests {
    static func makeServer() async throws -> MockServer {
        let people = MockResource("people", fields: ["name": .string, "numberOfKids": .integer])
        let cars = MockResource("cars", fields: ["name": .string], parents: ["people"])
        return try await MockServer(resources: [people, cars])
    }

    static func exercise(_ api: some PeopleAPI) async throws {
        #expect(try await api.people() == [])
        let john = try await api.create(person: Person(name: "john", numberOfKids: 1))
        #expect(john == Person(id: 1, name: "john", numberOfKids: 1))
        #expect(try await api.person(id: 1) == john)
        let withHeaders = try await api.personWithHeaders(id: 1, trace: "abc")
        #expect(withHeaders.status == .ok && withHeaders.value == john)
        #expect(withHeaders.headerFields[.contentType]?.hasPrefix("application/json") == true)
        let jeff = try await api.update(id: 1, changes: ["name": "jeff"])
        #expect(jeff == Person(id: 1, name: "jeff", numberOfKids: 1))
        let ada = try await api.createFromForm(name: "ada lovelace", numberOfKids: nil)
        #expect(ada == Person(id: 2, name: "ada lovelace", numberOfKids: nil))
        let car = try await api.addCar(person: 2, car: Car(name: "mini"))
        #expect(car == Car(id: 1, name: "mini", person_id: 2))
        #expect(try await api.cars(of: 2) == [car])
        #expect(try JSON(parsing: [UInt8](try await api.raw(id: 2)))["name"] == "ada lovelace")
        try await api.delete(id: 1)
        let missing = try await #require(throws: RestError.self) { try await api.person(id: 1) }
        #expect(missing.status == .notFound)
        #expect(missing.errorBody(as: Problem.self) == Problem(title: "Not Found", status: 404, detail: "No people with id 1"))
        #expect(missing.description.hasPrefix("GET "))
        #expect(missing.description.contains("/people/1: 404 Not Found"))
        let invalid = try await #require(throws: RestError.self) { try await api.update(id: 2, changes: ["numberOfKids": "two"]) }
        #expect(invalid.errorBody(as: Problem.self)?.status == 422)
    }

    @Test("CRUD, nested routes, forms, headers and error bodies in process")
    func inProcess() async throws {
        let server = try await Self.makeServer()
        let api = PeopleAPIClient(
            client: RestClient(baseURL: URL(string: "http://mock")!, transport: MockServerTransport(server: server)))
        try await Self.exercise(api)
    }

    @Test("The same over loopback with URLSession")
    func overLoopback() async throws {
        let server = try await Self.makeServer()
        try await server.whileServing { port in
            let base = try #require(URL(string: "http://127.0.0.1:\(port)"))
            try await Self.exercise(PeopleAPIClient(client: RestClient(baseURL: base)))
        }
    }

    @Test("The generated client sends exactly what the protocol declares")
    func wire() async throws {
        let sent = Mutex<[(HTTPRequest, [UInt8]?)]>([])
        let transport = MockTransport { request, body in
            sent.withLock { $0.append((request, body)) }
            return (HTTPResponse(status: .ok), Array(#"{"id":3,"name":"x"}"#.utf8))
        }
        let api = PeopleAPIClient(
            client: RestClient(baseURL: try #require(URL(string: "http://api.test/v2")), transport: transport))
        var last: HTTPRequest? { sent.withLock { $0.last?.0 } }
        _ = try await api.personWithHeaders(id: 3, trace: "t-1")
        let first = try #require(last)
        #expect(first.method == .get && first.path == "/v2/people/3")
        #expect(first.headerFields[.accept] == "application/json")
        #expect(first.headerFields[HTTPField.Name("X-Trace")!] == "t-1")
        _ = try await api.personWithHeaders(id: 3, trace: nil)
        #expect(last?.headerFields[HTTPField.Name("X-Trace")!] == nil)
        _ = try await api.sorted(id: 3, direction: .descending, also: [.ascending], sort: .created)
        #expect(last?.path == "/v2/people/3?direction=desc&also=asc&sort=created")
        _ = try await api.createFromForm(name: "a+b c", numberOfKids: 2)
        #expect(sent.withLock { $0.last?.1 }.map { String(decoding: $0, as: UTF8.self) } == "name=a%2Bb+c&numberOfKids=2")
        #expect(last?.headerFields[.contentType] == "application/x-www-form-urlencoded")
    }

    @Test("A 304 to a conditional request is .notModified, not an error (against the mock server's ETags)")
    func conditional() async throws {
        let server = try await MockServer(resources: [MockResource("people", fields: ["name": .string])])
        _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": "ada"]))
        let api = ConditionalAPIClient(
            client: RestClient(baseURL: try #require(URL(string: "http://mock")), transport: MockServerTransport(server: server)))
        let first = try await api.person(id: 1, etag: nil)
        #expect(first.value?.name == "ada" && !first.isNotModified)
        let tag = try #require(first.headerFields[.eTag])
        let second = try await api.person(id: 1, etag: tag)
        #expect(second.isNotModified && second.value == nil)
        #expect(second.headerFields[.eTag] == tag)
        _ = await server.respond(to: MockRequest(.patch, "/people/1", json: ["name": "ada l."]))
        #expect(try await api.person(id: 1, etag: tag).value?.name == "ada l.")
    }
}

/// A conditional GET, as a generated method.
@API
protocol ConditionalAPI: Sendable {
    @Headers(["If-None-Match": "{etag}"])
    @GET("/people/{id}")
    func person(id: Int, etag: String?) async throws -> ConditionalResponse<Person>
}
