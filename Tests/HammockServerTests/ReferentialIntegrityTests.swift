import HTTPTypes
import HammockJSON
import HammockServer
import HammockTestSupport
import Testing

/// A child's foreign key names an existing parent or is null, whatever order requests land in. The
/// check that the parent exists and the write that relies on it are one step of the store: a hostile
/// client found children pointing at a deleted parent in 22 of 60 races on SQLite, because the check
/// and the write were separate calls with the parent's DELETE landing between them.
@Suite("Children never point at a deleted parent")
struct ReferentialIntegrityTests {
    /// The id of a record just created at `path`.
    func create(_ server: MockServer, _ path: String, _ body: JSON) async throws -> Int {
        let (response, record) = await server.send(.post, path, json: body)
        #expect(response.status == .created)
        return try #require(record?["id"]?.intValue)
    }

    @Test(
        "A nested create or a foreign-key PATCH racing the parent's DELETE never leaves a car pointing at it",
        arguments: StoreKind.allCases)
    func racesWithDelete(kind: StoreKind) async throws {
        let server = try await Fixtures.server(kind)
        try await withBusyMachine {
            for round in 0..<60 {
                let parent = try await create(server, "/people", ["name": .string("parent \(round)")])
                let other = try await create(server, "/people", ["name": .string("other \(round)")])
                let moved = try await create(server, "/cars", ["name": "moved", "person_id": .integer(other)])
                let statuses = await withTaskGroup(of: (String, Int).self) { group in
                    group.addTask { ("delete", Int(await server.send(.delete, "/people/\(parent)").0.status.code)) }
                    group.addTask {
                        ("create", Int(await server.send(.post, "/people/\(parent)/cars", json: ["name": "new"]).0.status.code))
                    }
                    group.addTask {
                        let change: JSON = ["person_id": .integer(parent)]
                        return ("move", Int(await server.send(.patch, "/cars/\(moved)", json: change).0.status.code))
                    }
                    var statuses: [String: Int] = [:]
                    for await (name, status) in group { statuses[name] = status }
                    return statuses
                }
                #expect(statuses["delete"] == 204)
                #expect([201, 404].contains(statuses["create"]), "\(statuses)")
                #expect([200, 422].contains(statuses["move"]), "\(statuses)")
                let people = Set(await server.send(.get, "/people").1?.arrayValue?.compactMap { $0["id"]?.intValue } ?? [])
                for car in await server.send(.get, "/cars").1?.arrayValue ?? [] {
                    let owner = car["person_id"] ?? .null
                    #expect(owner.isNull || owner.intValue.map(people.contains) == true, "round \(round): \(car) \(statuses)")
                }
            }
        }
    }

    @Test("A store refuses a record whose parent does not exist, in one step with the write", arguments: StoreKind.allCases)
    func storeRefusesMissingParent(kind: StoreKind) async throws {
        let server = try await Fixtures.server(kind)
        let store = server.store
        let cars = try #require(server.schema(named: "cars"))
        let people = try #require(server.schema(named: "people"))
        let error = await #expect(throws: StoreError.self) {
            _ = try await store.createRecord(of: cars, with: ["name": "mini", "person_id": 7])
        }
        #expect(error == .missingParent(field: "person_id", parent: "people", key: 7))
        _ = try await store.createRecord(of: people, with: ["name": "ada"])
        let car = try await store.createRecord(of: cars, with: ["name": "mini", "person_id": 1])
        await #expect(throws: StoreError.missingParent(field: "person_id", parent: "people", key: 9)) {
            _ = try await store.updateRecord(of: cars, withKey: car["id"] ?? .null, with: ["person_id": 9])
        }
        await #expect(throws: StoreError.missingParent(field: "person_id", parent: "people", key: 9)) {
            _ = try await store.createRecords(of: cars, with: [["name": "a", "person_id": 1], ["name": "b", "person_id": 9]])
        }
        #expect(try await store.count(of: cars) == 1)  // all or nothing
        // A null key is no reference.
        _ = try await store.createRecord(of: cars, with: ["name": "loose", "person_id": nil])
        _ = try await store.updateRecord(of: cars, withKey: car["id"] ?? .null, with: ["person_id": nil])
    }

    @Test("Data loaded from a file keeps a dangling foreign key out, and says so in its report")
    func loadingDanglingKeys() async throws {
        let server = try await Fixtures.server()
        _ = try await server.addData([["name": "ada"]], for: "people")
        let report = try await server.addData(
            [["name": "mini", "person_id": 1], ["name": "ghost", "person_id": 5]], for: "cars")
        #expect(report.loaded == 2 && report.droppedValues == 1)
        let (_, cars) = await server.send(.get, "/cars")
        #expect(cars?[1]?["person_id"] == .null)
        #expect(cars?[0]?["person_id"] == 1)
    }
}
