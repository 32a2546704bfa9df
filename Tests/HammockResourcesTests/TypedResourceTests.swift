import Foundation
import HTTPTypes
import HammockClient
import HammockHTTPServer
import HammockJSON
import HammockResources
import HammockServer
import HammockTesting
import Synchronization
import Testing

/// The two roads meet: an `@API` method's endpoint backs a typed resource, and a write sent through the
/// `@API` client invalidates the resources it touched, in process and over loopback.
@MainActor
@Suite("Typed resources from @API endpoints", .timeLimit(.minutes(1)))
struct TypedResourceTests {
    struct Person: Codable, Equatable, Sendable {
        var id: Int? = nil
        var name: String
        var teamId: Int? = nil
    }

    @API
    protocol People: Sendable {
        @GET("/people/{id}")
        func person(id: Int) async throws -> Person

        @GET("/people")
        func people(name: String?) async throws -> [Person]

        @POST("/people")
        @Body("person")
        func create(person: Person) async throws -> Person

        @PATCH("/people/{id}")
        @Body("changes")
        @Invalidates("/teams/{team}/people")
        func rename(id: Int, team: Int, changes: JSON) async throws -> Person
    }

    enum Reach: String, CaseIterable, CustomStringConvertible, Sendable {
        case inProcess = "in process"
        case loopback
        var description: String { rawValue }
    }

    /// A mock with people (Ada, Grace), a service and an `@API` client reporting its writes to it.
    struct Setup {
        let server: MockServer
        let service: Service
        let people: PeopleClient
        let clock: ManualClock

        func stop() async { await server.stop() }
    }

    static func setup(_ reach: Reach) async throws -> Setup {
        let server = try await MockServer(
            resources: [
                MockResource("teams", fields: ["name": .string]),
                MockResource(
                    "people", fields: ["name": .string], parents: [MockResource.Parent("teams", foreignKey: "teamId")]),
            ])
        _ = await server.respond(to: MockRequest(.post, "/teams", json: ["name": "Analytical"]))
        _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": "Ada", "teamId": 1]))
        _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": "Grace", "teamId": 1]))
        let clock = ManualClock()
        let service: Service
        switch reach {
        case .inProcess:
            service = try Service(
                baseURL: try #require(URL(string: "http://people.hammock.invalid")),
                transport: MockServerTransport(server: server), clock: clock)
        case .loopback:
            try await server.start(host: "127.0.0.1", port: 0)
            service = try Service(baseURL: try #require(await server.baseURL), clock: clock)
        }
        return Setup(server: server, service: service, people: PeopleClient(client: try service.restClient()), clock: clock)
    }

    @Test(
        "An endpoint's typed resource loads a Person, answers a fresh loadIfNeeded with no request, and is the URL's one resource",
        arguments: Reach.allCases)
    func endpointBacksAResource(reach: Reach) async throws {
        let setup = try await Self.setup(reach)
        defer { Task { await setup.stop() } }  // also when the test fails part way
        let person = setup.service.resource(setup.people.endpoints.person(id: 1))
        #expect(person.resource === setup.service.resource("/people/1"))
        #expect(person.value == nil)
        let ada = try await person.loadIfNeeded()
        #expect(ada == Person(id: 1, name: "Ada", teamId: 1))
        #expect(person.value == ada)
        setup.server.journal.clear()
        for _ in 0..<5 { #expect(try await person.loadIfNeeded() == ada) }
        #expect(setup.server.journal.entries.isEmpty)
        // Another typed view of the URL is the same resource, with the same value.
        #expect(setup.service.resource("/people/1", as: Person.self).value == ada)
        // A list with a query, from the endpoint's query items.
        let named = setup.service.resource(setup.people.endpoints.people(name: "Grace"))
        #expect(named.url.query == "name=Grace")
        #expect(try await named.loadIfNeeded().map(\.name) == ["Grace"])
    }

    @Test(
        "A create and an update through the @API client invalidate the lists and records they touched, and an observed list reloads",
        arguments: Reach.allCases)
    func writesInvalidate(reach: Reach) async throws {
        let setup = try await Self.setup(reach)
        defer { Task { await setup.stop() } }  // also when the test fails part way
        let list = setup.service.resource(setup.people.endpoints.people(name: nil))
        let team = setup.service.resource("/teams/1/people", as: [Person].self)
        let ada = setup.service.resource(setup.people.endpoints.person(id: 1))
        #expect(try await list.loadIfNeeded().count == 2)
        _ = try await team.loadIfNeeded()
        _ = try await ada.loadIfNeeded()
        let events = list.resource.events()
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == .observerAdded)

        _ = try await setup.people.create(person: Person(name: "Edsger"))
        // The list was invalidated (its URL's ancestor chain holds /people) and, observed, reloads.
        #expect(await iterator.next() == .requested)
        #expect(await iterator.next() == .newData(.network))
        #expect(list.value?.map(\.name) == ["Ada", "Grace", "Edsger"])
        #expect(team.isUpToDate)  // not touched by a create of /people

        _ = try await setup.people.rename(id: 1, team: 1, changes: ["name": "Ada Lovelace"])
        #expect(!ada.isUpToDate)
        #expect(!team.isUpToDate)  // named by @Invalidates
        #expect(try await ada.loadIfNeeded().name == "Ada Lovelace")
        #expect(try await team.loadIfNeeded().map(\.name) == ["Ada Lovelace", "Grace"])
    }

    @Test("The value is decoded once per change of the data: reads, a 304 and a 200 with the same body decode nothing again")
    func decodedOncePerChange() async throws {
        let setup = try await Self.setup(.inProcess)
        defer { Task { await setup.stop() } }  // also when the test fails part way
        let decodes = Atomic(0)
        let person = TypedResource(setup.service.resource("/people/1")) { entity -> Person in
            decodes.add(1, ordering: .relaxed)
            return try JSONDecoder().decode(Person.self, from: Data(entity.bytes))
        }
        _ = try await person.load()
        for _ in 0..<100 { _ = person.value }
        #expect(decodes.load(ordering: .relaxed) == 1)
        // A revalidation (304) and a load whose 200 carries the same body: observers hear notModified.
        let events = person.resource.events()
        var iterator = events.makeAsyncIterator()
        _ = await iterator.next()
        _ = try await person.load()
        _ = await iterator.next()
        #expect(await iterator.next() == .notModified)
        _ = try await person.resource.request(.get).value()  // not a load: nothing changes
        _ = person.value
        #expect(decodes.load(ordering: .relaxed) == 1)
        // A change decodes once more.
        _ = await setup.server.respond(to: MockRequest(.patch, "/people/1", json: ["name": "Ada L."]))
        #expect(try await person.load().name == "Ada L.")
        _ = person.value
        #expect(decodes.load(ordering: .relaxed) == 2)
    }

    @Test("A 200 whose body equals the data shown is told as notModified, and a different one as new data")
    func structuralSharing() async throws {
        let body = Mutex("{\"name\":\"Ada\"}")
        let transport = MockTransport { _, _ in
            (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), Array(body.withLock { $0 }.utf8))
        }
        let service = try Service(baseURL: try #require(URL(string: "https://api.example.com")), transport: transport)
        let person = service.resource("/me", as: Person.self)
        _ = try await person.load()
        let events = person.resource.events()
        var iterator = events.makeAsyncIterator()
        _ = await iterator.next()
        _ = try await person.load()
        #expect(await iterator.next() == .requested)
        #expect(await iterator.next() == .notModified)
        body.withLock { $0 = "{\"name\":\"Grace\"}" }
        _ = try await person.load()
        #expect(await iterator.next() == .requested)
        #expect(await iterator.next() == .newData(.network))
        #expect(person.value?.name == "Grace")
    }

    @Test("Data that does not decode gives a decoding error naming the type, and loadIfNeeded throws it")
    func decodingErrors() async throws {
        let setup = try await Self.setup(.inProcess)
        defer { Task { await setup.stop() } }  // also when the test fails part way
        let wrong = setup.service.resource("/people/1", as: [Person].self)
        await #expect(throws: ResourceError.self) { try await wrong.loadIfNeeded() }
        #expect(wrong.value == nil)
        #expect(wrong.decodingError?.userMessage.contains("is not a Array<Person>") == true)
        // The untyped resource underneath has its data all the same.
        #expect(wrong.resource.latestData != nil)
        #expect(try await wrong.resource.ensureData().contentType == "application/json")
    }

    @Test("A typed override shows the value itself at once, and rolls back to the server's")
    func typedOverride() async throws {
        let setup = try await Self.setup(.inProcess)
        defer { Task { await setup.stop() } }  // also when the test fails part way
        let person = setup.service.resource(setup.people.endpoints.person(id: 1))
        _ = try await person.loadIfNeeded()
        let local = person.override(with: Person(id: 1, name: "Countess", teamId: 1))
        #expect(person.value?.name == "Countess")
        #expect(person.resource.latestData?.jsonContent?["name"] == "Countess")
        local.rollBack()
        #expect(person.value?.name == "Ada")
    }

    @Test(
        "An endpoint whose path value cannot be a segment gives a resource that fails saying why; a service without a base URL has no client"
    )
    func badEndpoints() async throws {
        let setup = try await Self.setup(.inProcess)
        defer { Task { await setup.stop() } }  // also when the test fails part way
        let dotted = setup.service.resource(
            Endpoint<Person>(
                {
                    var request = RequestBuilder(.get, "/people/{id}")
                    request.setPathValue("..", for: "id")
                    return request
                }()))
        let error = await #expect(throws: ResourceError.self) { try await dotted.loadIfNeeded() }
        #expect(error?.userMessage.contains("'..'") == true)
        #expect(throws: InvalidBaseURL.self) { try Service(baseURL: "not a url") }
    }

    @Test("signOut signs the authenticator out, then wipes every resource and waits for the cache")
    func oneSignOut() async throws {
        let setup = try await Self.setup(.inProcess)
        defer { Task { await setup.stop() } }  // also when the test fails part way
        let person = setup.service.resource(setup.people.endpoints.person(id: 1))
        _ = try await person.loadIfNeeded()
        let store = MemoryCredentialStore()
        let endpoint = OAuthTokenEndpoint(
            url: try #require(URL(string: "http://people.hammock.invalid/auth/token")), clientID: "app",
            transport: MockServerTransport(server: setup.server))
        let authenticator = Authenticator(tokenEndpoint: endpoint, store: store)
        await authenticator.signIn(AuthTokens(accessToken: "a", refreshToken: "r"))
        await setup.service.signOut(authenticator)
        #expect(await authenticator.isSignedIn == false)
        #expect(try await store.load() == nil)
        #expect(person.value == nil)
        #expect(person.resource.latestData == nil)
    }

    @Test(
        "mutate shows the change while the request runs, keeps the server's answer after it, and rolls back a failure with its error"
    )
    func mutationHelper() async throws {
        let setup = try await Self.setup(.inProcess)
        defer { Task { await setup.stop() } }  // also when the test fails part way
        let person = setup.service.resource(setup.people.endpoints.person(id: 1))
        _ = try await person.loadIfNeeded()
        let renamed = try await person.mutate {
            $0.name = "Ada Lovelace"
        } send: {
            #expect(person.value?.name == "Ada Lovelace")  // shown before the server answered
            return try await setup.people.rename(id: 1, team: 1, changes: ["name": "Ada Lovelace"])
        }
        #expect(renamed.name == "Ada Lovelace")
        #expect(!person.isUpToDate)  // settled: the server has the last word on the next read
        #expect(try await person.loadIfNeeded().name == "Ada Lovelace")

        // A refused request: the value goes back, and the caller gets the client's error.
        let error = await #expect(throws: RestError.self) {
            try await person.mutate {
                $0.name = ""
            } send: {
                try await setup.people.rename(id: 1, team: 1, changes: ["name": 42])
            }
        }
        #expect(error?.status == .unprocessableContent)
        #expect(person.value?.name == "Ada Lovelace")

        // Something newer replaced the optimistic value meanwhile: a failure leaves it in place.
        _ = await #expect(throws: RestError.self) {
            try await person.mutate {
                $0.name = "optimistic"
            } send: {
                _ = await setup.server.respond(to: MockRequest(.patch, "/people/1", json: ["name": "Countess"]))
                _ = try await person.load()
                return try await setup.people.rename(id: 999, team: 1, changes: ["name": "x"])
            }
        }
        #expect(person.value?.name == "Countess")
    }
}
