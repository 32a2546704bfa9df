import HammockServer
import HammockTestSupport
import Synchronization
import Testing

/// Wraps records in an envelope and reads bodies from a `data` member.
struct EnvelopeSerializer: MockSerializer {
    func serialize(record: JSONObject, of resource: MockResource) -> JSON { ["data": .object(record)] }
    func serialize(collection records: [JSONObject], of resource: MockResource) -> JSON {
        ["data": .array(records.map { .object($0) }), "count": .integer(records.count)]
    }
    func parameters(fromBody body: JSONObject, for resource: MockResource) throws -> JSONObject {
        guard case .object(let inner)? = body["data"] else {
            throw HTTPProblem.badRequest("wrap the fields in a data member")
        }
        return inner
    }
}

/// Renames one field on the way out only.
struct RenamingSerializer: MockSerializer {
    func serialize(record: JSONObject, of resource: MockResource) -> JSON {
        var renamed = record
        renamed["fullName"] = renamed.removeValue(forKey: "name")
        return .object(renamed)
    }
}

/// Counts calls and stamps every created record; delegates the rest to the default.
final class AuditingController: MockController {
    let calls = Mutex<[String]>([])

    func index(_ request: ActionRequest) async throws -> MockResponse {
        calls.withLock { $0.append("index") }
        return try await CRUDController().index(request)
    }

    func create(_ request: ActionRequest) async throws -> MockResponse {
        calls.withLock { $0.append("create") }
        var request = request
        request.parameters?["name"] = "stamped"
        return try await CRUDController().create(request)
    }

    func destroy(_ request: ActionRequest) async throws -> MockResponse {
        throw HTTPProblem(.forbidden, detail: "nothing is ever deleted here")
    }
}

@Suite("Serializers, controllers, latency")
struct ExtensibilityTests {
    @Test("A default serializer set at start applies to every route, nested ones included")
    func defaultSerializer() async throws {
        let server = try await MockServer(resources: [Fixtures.people, Fixtures.cars], serializer: EnvelopeSerializer())
        let (created, body) = await server.send(.post, "/people", json: ["data": ["name": "ada"]])
        #expect(created.status == .created)
        #expect(body?["data"]?["name"] == "ada")
        let (_, car) = await server.send(.post, "/people/1/cars", json: ["data": ["name": "mini"]])
        #expect(car?["data"]?["person_id"] == 1)
        #expect(await server.send(.get, "/people/1/cars").1?["count"] == 1)
        #expect(await server.send(.get, "/people").1?["data"]?[0]?["name"] == "ada")
        let (rejected, problem) = await server.send(.post, "/people", json: ["name": "flat"])
        #expect(rejected.status == .badRequest)
        #expect(problem?["detail"] == "wrap the fields in a data member")
    }

    @Test("Per-resource serializers can be set and removed while the server runs")
    func perResourceSerializer() async throws {
        let server = try await Fixtures.server()
        _ = await server.send(.post, "/people", json: ["name": "ada"])
        _ = await server.send(.post, "/people/1/cars", json: ["name": "mini"])
        server.setSerializer(RenamingSerializer(), for: "people")
        #expect(
            await server.send(.get, "/people/1").1?.objectValue?.keys == [
                "id", "numberOfKids", "kilometersWalked", "avatar", "fullName",
            ])
        #expect(await server.send(.get, "/people").1?[0]?["name"] == "ada")  // collections keep the default hook
        #expect(await server.send(.get, "/cars/1").1?["name"] == "mini")  // other resources unaffected
        server.removeSerializer(for: "people")
        #expect(await server.send(.get, "/people/1").1?["name"] == "ada")
    }

    @Test("A custom controller is used, and reuses the default CRUD for the rest")
    func customController() async throws {
        let controller = AuditingController()
        let server = try await MockServer(resources: [Fixtures.people, Fixtures.cars], controller: controller)
        let (_, person) = await server.send(.post, "/people", json: ["name": "ada"])
        #expect(person?["name"] == "stamped")
        #expect(await server.send(.get, "/people").1?.arrayValue?.count == 1)
        #expect(await server.send(.get, "/people/1").1?["name"] == "stamped")  // default show
        #expect(await server.send(.delete, "/people/1").0.status == .forbidden)
        #expect(await server.send(.get, "/people/1/cars").0.status == .ok)  // nested index goes through index too
        #expect(controller.calls.withLock { $0 } == ["create", "index", "index"])
    }

    @Test("A response is held until the latency has passed since the request arrived")
    func latency() async throws {
        let clock = ManualClock()
        let server = try await MockServer(
            resources: [Fixtures.people], options: MockServer.Options(latency: Latency(.seconds(1)...(.seconds(3)))),
            clock: clock, random: { 0.5 })
        #expect(await clock.expectAnswerHeld(MockRequest(.get, "/people"), by: server, for: .seconds(2)) == .ok)
    }

    @Test("Time the server spends counts towards the latency instead of adding to it")
    func latencyIsNotAdded() async throws {
        let clock = ManualClock()
        struct SlowController: MockController {
            let clock: ManualClock
            func index(_ request: ActionRequest) async throws -> MockResponse {
                clock.advance(by: .milliseconds(1500))  // the work takes 1.5 s of the 2 s
                return try await CRUDController().index(request)
            }
        }
        let server = try await MockServer(
            resources: [Fixtures.people], controller: SlowController(clock: clock),
            options: MockServer.Options(latency: Latency(.seconds(2)...(.seconds(2)))), clock: clock)
        let task = Task { await server.respond(to: MockRequest(.get, "/people")).status }
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .milliseconds(500))
        #expect(await task.value == .ok)
        #expect(clock.now.offset == .seconds(2))
    }

    @Test("Latency is drawn uniformly from the range")
    func latencyRange() {
        let latency = Latency(minimumSeconds: 0.2, maximumSeconds: 0.5)
        #expect(latency.minimum == .milliseconds(200) && latency.maximum == .milliseconds(500))
        #expect(Latency(minimumSeconds: 2, maximumSeconds: 1).minimum == .seconds(1))
    }
}
