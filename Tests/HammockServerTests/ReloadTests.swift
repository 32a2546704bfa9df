import HTTPTypes
import HammockJSON
import HammockSQLite
import HammockServer
import Testing

/// A configuration put in force while the server runs, and resources added and removed at runtime.
@Suite("Live reload and runtime resources")
struct ReloadTests {
    static let first = #"""
        {"resources": [{"name": "people", "fields": {"name": "string"}},
                       {"name": "cars", "fields": {"model": "string"}, "parents": ["people"]},
                       {"name": "pets", "fields": {"name": "string"}}],
         "data": {"people": [{"name": "ada"}], "cars": [{"model": "mini", "person_id": 1}], "pets": [{"name": "rex"}]},
         "routes": [{"method": "GET", "path": "/health", "body": {"v": 1}}]}
        """#

    static let second = #"""
        {"port": 9999,
         "latency": {"min": 0, "max": 0},
         "resources": [{"name": "people", "fields": {"name": "string", "age": "integer"}},
                       {"name": "cars", "fields": {"model": "string"}, "parents": ["people"]},
                       {"name": "shops", "fields": {"title": "string"}}],
         "data": {"shops": [{"title": "corner"}], "people": [{"name": "not loaded again"}]},
         "routes": [{"method": "GET", "path": "/health", "body": {"v": 2}}, {"method": "GET", "path": "/ping", "text": "pong"}]}
        """#

    func configuration(_ text: String) throws -> ServerConfiguration {
        try ServerConfiguration(parsing: Array(text.utf8), file: "mock.json")
    }

    /// Two configurations whose routes and faults differ together: under `a` the route answers
    /// `{"config": "a"}`; under `b` a fault answers 503 `{"config": "b"}` in its place.
    static let routesA = #"""
        {"routes": [{"method": "GET", "path": "/which", "body": {"config": "a"}}]}
        """#
    static let routesB = #"""
        {"routes": [{"method": "GET", "path": "/which", "body": {"config": "b"}}],
         "faults": [{"route": "GET /which", "status": 503, "body": {"config": "b"}}]}
        """#

    @Test("Requests during 200 reloads between two configurations see one or the other, never a mix or neither")
    func reloadIsAtomic() async throws {
        let a = try configuration(Self.routesA)
        let b = try configuration(Self.routesB)
        let server = try await MockServer(configuration: a, store: MemoryStore())
        _ = try await server.reload(a)
        let answers = try await withThrowingTaskGroup(of: [String].self) { group in
            group.addTask {
                for round in 0..<200 { _ = try await server.reload(round.isMultiple(of: 2) ? b : a) }
                return []
            }
            for _ in 0..<4 {
                group.addTask {
                    var seen: [String] = []
                    for _ in 0..<300 {
                        let response = await server.respond(to: MockRequest(.get, "/which"))
                        let config = (try? JSON(parsing: response.body))?["config"]?.stringValue ?? "none"
                        seen.append("\(response.status.code) \(config)")
                    }
                    return seen
                }
            }
            var all: [String] = []
            for try await seen in group { all += seen }
            return all
        }
        let kinds = Set(answers)
        // The old routes gone and the new not yet there would be a 404; b's routes with a's faults, 200 b.
        #expect(kinds.isSubset(of: ["200 a", "503 b"]), "\(kinds.sorted())")
        #expect(answers.count == 1_200)
    }

    @Test(
        "Added resources appear with their data, removed ones go, changed ones keep their records reshaped; unchanged keep theirs",
        arguments: StoreKind.allCases)
    func reload(kind: StoreKind) async throws {
        let server = try await MockServer(configuration: configuration(Self.first), store: await kind.makeStore())
        _ = try await server.loadData(from: configuration(Self.first))
        server.addStubs([try StubRoute(.get, "/mine", body: ["mine": true])])
        _ = await server.send(.post, "/cars", json: ["model": "van", "person_id": 1])
        let report = try await server.reload(configuration(Self.second))
        #expect(report.added == ["shops"])
        #expect(report.changed == ["people"])
        #expect(report.removed == ["pets"])
        #expect(report.routes == 2)
        #expect(report.latencyChanged)
        #expect(report.needsRestart == ["port"])
        #expect(
            report.description
                == "added shops; changed people; removed pets; latency changed; 2 routes of the file (restart to change port)")
        #expect(await server.send(.get, "/shops").1 == [["id": 1, "title": "corner"]])
        #expect(await server.send(.get, "/pets").0.status == .notFound)
        #expect(await server.send(.get, "/people").1 == [["id": 1, "name": "ada", "age": nil]])
        #expect(await server.send(.get, "/people/1/cars").1?.arrayValue?.count == 2)
        #expect(await server.send(.get, "/health").1 == ["v": 2])
        #expect(String(decoding: await server.respond(to: MockRequest(.get, "/ping")).body, as: UTF8.self) == "pong")
        #expect(await server.send(.get, "/mine").1 == ["mine": true])  // not the file's: it stays
        // A reset returns the added resource to the data the file gave it.
        _ = await server.send(.post, "/shops", json: ["title": "kiosk"])
        try await server.reset()
        #expect(await server.send(.get, "/shops").1 == [["id": 1, "title": "corner"]])
        #expect(await server.send(.get, "/people/1/cars").1?.arrayValue?.count == 1)
        // Reloading the same file changes nothing.
        let again = try await server.reload(configuration(Self.second))
        #expect(!again.changedAnything && again.routes == 2)
        #expect(await server.send(.get, "/people/1/cars").1?.arrayValue?.count == 1)
    }

    @Test(
        "A request caught by the removal of its resource answers 404, as a later one does, not a 500 of the dropped table",
        arguments: StoreKind.allCases)
    func removedUnderARequest(kind: StoreKind) async throws {
        let gate = StoreGate()
        let store = InstrumentedStore(try await kind.makeStore()) { operation in
            if !["addResource", "dropResource", "snapshot", "restore"].contains(operation) { await gate.pass() }
        }
        let server = try await MockServer(resources: [Fixtures.people], store: store)
        _ = await server.send(.post, "/people", json: ["name": "ada"])
        for request in [
            MockRequest(.get, "/people"), MockRequest(.get, "/people/1"), MockRequest(.post, "/people", json: ["name": "bob"]),
        ] {
            if server.schema(named: "people") == nil { try await server.addResource(Fixtures.people) }
            gate.close()
            let answer = Task { await server.respond(to: request) }
            await gate.arrived()
            try await server.removeResource(named: "people")
            gate.open()
            let response = await answer.value
            #expect(
                response.status == .notFound,
                "\(request.method) \(request.path): \(String(decoding: response.body, as: UTF8.self))")
            #expect(response.headerFields[.contentType] == "application/problem+json")
            #expect(await server.respond(to: request).status == .notFound)
        }
    }

    @Test(
        "Removing a parent keeps its children, their foreign keys null and no nested route; the admin API adds and removes resources"
    )
    func removeParent() async throws {
        let server = try await MockServer(configuration: configuration(Self.first), store: MemoryStore())
        _ = try await server.loadData(from: configuration(Self.first))
        #expect(await server.send(.delete, "/__hammock/resources/people").0.status == .noContent)
        #expect(await server.send(.get, "/people").0.status == .notFound)
        #expect(await server.send(.get, "/cars").1 == [["id": 1, "model": "mini"]])
        #expect(await server.send(.delete, "/__hammock/resources/people").0.status == .notFound)
        let added = await server.send(
            .post, "/__hammock/resources", json: ["name": "people", "fields": ["name": "string"]])
        #expect(added.0.status == .created)
        #expect(await server.send(.post, "/people", json: ["name": "bob"]).0.status == .created)
        #expect(
            await server.send(.post, "/__hammock/resources", json: ["name": "people", "fields": ["name": "string"]]).0.status
                == .conflict)
        #expect(await server.send(.post, "/__hammock/resources", json: ["name": "x"]).0.status == .badRequest)
        #expect(
            await server.send(.post, "/__hammock/resources", json: ["name": "__hammock", "fields": ["a": "string"]]).0.status
                == .badRequest)
    }

    @Test("On SQLite a reload keeps the same store and file: records of unchanged resources survive a restart")
    func sqliteReload() async throws {
        let path = TemporaryDirectory.make() + "reload.sqlite"
        let store = try SQLiteStore(path: path)
        let server = try await MockServer(configuration: configuration(Self.first), store: store)
        _ = try await server.loadData(from: configuration(Self.first))
        try await server.reload(configuration(Self.second))
        _ = await server.send(.post, "/people", json: ["name": "cy", "age": 30])
        try store.close()
        let reopened = try await MockServer(configuration: configuration(Self.second), store: SQLiteStore(path: path))
        #expect(await reopened.send(.get, "/people").1?.arrayValue?.map { $0["name"] } == ["ada", "cy"])
        #expect(await reopened.send(.get, "/people/2").1?["age"] == 30)
    }
}
