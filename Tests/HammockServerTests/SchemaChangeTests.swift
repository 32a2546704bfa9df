import Foundation
import HammockJSON
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

    @Test("SQLite refuses to start when a field with records changed type, naming resource, field and both types")
    func refused() async throws {
        let path = TemporaryDirectory.make().appending("people.sqlite")
        let first = try SQLiteStore(path: path)
        let server = try await MockServer(resources: [Self.people(name: .string)], store: first)
        _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": "Amy", "numberOfKids": 2]))
        try first.close()

        let second = try SQLiteStore(path: path)
        let error = await #expect(throws: StoreError.self) {
            _ = try await MockServer(resources: [Self.people(name: .integer)], store: second)
        }
        #expect(error == .schemaChanged(resource: "people", field: "name", stored: "string", declared: "integer"))
        #expect(
            error?.description.hasPrefix("people.name is integer now, but the store holds people written when it was string")
                == true)
        try second.close()

        // Nothing was lost: under its own schema the record is as it was.
        let third = try SQLiteStore(path: path)
        let again = try await MockServer(resources: [Self.people(name: .string)], store: third)
        #expect(try await again.respond(to: MockRequest(.get, "/people/1")).json()["name"] == "Amy")
        try third.close()
    }

    @Test("An empty SQLite table takes the new type; a new field is added empty; the memory store starts empty")
    func emptyAndNew() async throws {
        let path = TemporaryDirectory.make().appending("people.sqlite")
        let first = try SQLiteStore(path: path)
        let server = try await MockServer(resources: [Self.people(name: .string)], store: first)
        _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": "Amy"]))
        _ = await server.respond(to: MockRequest(.delete, "/people/1"))
        try first.close()

        let second = try SQLiteStore(path: path)
        let retyped = try await MockServer(
            resources: [MockResource("people", fields: ["name": .integer, "numberOfKids": .integer, "born": .date])],
            store: second)
        let created = await retyped.respond(to: MockRequest(.post, "/people", json: ["name": 7, "born": "1990-01-02"]))
        #expect(created.status == .created)
        // The key counter survived the new table: id 1 was used once and is not given again.
        #expect(try created.json()["name"] == 7 && created.json()["id"] == 2)
        // A string is now the wrong type for name: the answer says so, and the store keeps integers.
        #expect(await retyped.respond(to: MockRequest(.post, "/people", json: ["name": "Amy"])).status == .unprocessableContent)
        try second.close()
    }
}
