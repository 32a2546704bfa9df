import Foundation
import HammockJSON
import HammockPostgres
import HammockSQLite
import HammockServer
import Testing

/// A store written under one schema and started under another: records whose field changed type are
/// refused, never served as the new type (`"name": "Amy"` under an integer schema).
@Suite("Schema changes")
struct SchemaChangeTests {
    static func people(name: FieldType) -> MockResource {
        MockResource("people", fields: ["name": name, "numberOfKids": .integer])
    }

    /// The stores whose records outlive them, each opened again on the same data.
    enum Persistent: String, CaseIterable, CustomStringConvertible {
        case sqlite, postgres
        var description: String { rawValue }

        /// Opens the same storage each time it is called.
        func storage() async throws -> @Sendable () async throws -> any MockStore {
            switch self {
            case .sqlite:
                let path = TemporaryDirectory.make().appending("people.sqlite")
                return { try SQLiteStore(path: path) }
            case .postgres:
                let configuration = try await StoreKind.postgresConfiguration()
                return { try await PostgresStore.open(configuration) }
            }
        }
    }

    @Test(
        "A store refuses to start when a field with records changed type, naming resource, field and both types",
        arguments: Persistent.allCases)
    func refused(kind: Persistent) async throws {
        let open = try await kind.storage()
        let first = try await open()
        let server = try await MockServer(resources: [Self.people(name: .string)], store: first)
        _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": "Amy", "numberOfKids": 2]))
        try await first.close()

        let second = try await open()
        let error = await #expect(throws: StoreError.self) {
            _ = try await MockServer(resources: [Self.people(name: .integer)], store: second)
        }
        #expect(error == .schemaChanged(resource: "people", field: "name", stored: "string", declared: "integer"))
        #expect(
            error?.description.hasPrefix("people.name is integer now, but the store holds people written when it was string")
                == true)
        try await second.close()

        // Nothing was lost: under its own schema the record is as it was.
        let third = try await open()
        let again = try await MockServer(resources: [Self.people(name: .string)], store: third)
        #expect(try await again.respond(to: MockRequest(.get, "/people/1")).json()["name"] == "Amy")
        try await third.close()
    }

    @Test(
        "An empty table takes the new type and keeps its key counter; a new field is added empty", arguments: Persistent.allCases)
    func emptyAndNew(kind: Persistent) async throws {
        let open = try await kind.storage()
        let first = try await open()
        let server = try await MockServer(resources: [Self.people(name: .string)], store: first)
        _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": "Amy"]))
        _ = await server.respond(to: MockRequest(.delete, "/people/1"))
        try await first.close()

        let second = try await open()
        let retyped = try await MockServer(
            resources: [MockResource("people", fields: ["name": .integer, "numberOfKids": .integer, "born": .date])],
            store: second)
        let created = await retyped.respond(to: MockRequest(.post, "/people", json: ["name": 7, "born": "1990-01-02"]))
        #expect(created.status == .created)
        // The key counter survived the new table: id 1 was used once and is not given again.
        #expect(try created.json()["name"] == 7 && created.json()["id"] == 2)
        // A string is now the wrong type for name: the answer says so, and the store keeps integers.
        #expect(await retyped.respond(to: MockRequest(.post, "/people", json: ["name": "Amy"])).status == .unprocessableContent)
        try await second.close()
    }
}
