import HTTPTypes
import HammockJSON
import HammockServer
import Testing

/// Fields a create must give (`required`) and values a create that leaves them out gets (`default`).
@Suite("Required fields and defaults")
struct RequiredFieldTests {
    static let books: JSON = [
        "resources": [
            [
                "name": "books",
                "fields": [
                    "title": ["type": "string", "required": true],
                    "pages": ["type": "integer", "default": 100],
                    "status": ["type": "string", "required": true, "default": "draft"],
                    "note": "string",
                ],
            ]
        ],
        "data": ["books": [["title": "Loaded"], ["pages": 12], ["title": "Kept", "status": "out"]]],
    ]

    func server() async throws -> MockServer {
        try await MockServer.inMemory(try ServerConfiguration(root: Self.books, file: "books.json"))
    }

    @Test("A create without a required field is refused naming it; a default fills what a create leaves out")
    func creates() async throws {
        let server = try await server()
        let refused = await server.respond(to: MockRequest(.post, "/books", json: ["note": "no title"]))
        #expect(refused.status == .unprocessableContent)
        #expect(try refused.json()["errors"] == [["field": "title", "detail": "required"]])
        let created = try await server.respond(to: MockRequest(.post, "/books", json: ["title": "Dune"])).json()
        #expect(created == ["id": 3, "title": "Dune", "pages": 100, "status": "draft", "note": nil])
        // A value given wins over the default, and a body naming no field is still refused.
        let given = try await server.respond(to: MockRequest(.post, "/books", json: ["title": "Emma", "pages": 7])).json()
        #expect(given["pages"] == 7)
        #expect(await server.respond(to: MockRequest(.post, "/books", json: [:])).status == .unprocessableContent)
    }

    @Test("An update may leave a required field out, but not set it to null; a default is not re-applied")
    func updates() async throws {
        let server = try await server()
        let cleared = await server.respond(to: MockRequest(.patch, "/books/1", json: ["title": nil]))
        #expect(cleared.status == .unprocessableContent)
        #expect(try cleared.json()["errors"] == [["field": "title", "detail": "required: it cannot be null"]])
        #expect(await server.respond(to: MockRequest(.put, "/books/1", json: ["status": nil])).status == .unprocessableContent)
        let patched = try await server.respond(to: MockRequest(.patch, "/books/1", json: ["pages": nil])).json()
        #expect(patched["pages"] == .null)
        #expect(patched["title"] == "Loaded")
    }

    @Test("Loaded data gets the defaults; a record without a required field is skipped, as a create would be refused")
    func data() async throws {
        let server = try await server()
        let books = try await server.respond(to: MockRequest(.get, "/books")).json()
        #expect(
            books == [
                ["id": 1, "title": "Loaded", "pages": 100, "status": "draft", "note": nil],
                ["id": 2, "title": "Kept", "pages": 100, "status": "out", "note": nil],
            ])
        let resources = try await server.respond(to: MockRequest(.get, "/__hammock/resources")).json()
        #expect(resources[0]?["required"] == ["title", "status"])
        #expect(resources[0]?["defaults"] == ["pages": 100, "status": "draft"])
    }

    @Test("A field's rules are checked where they are written: unknown keys, a type, defaults that do not fit")
    func mistakes() async throws {
        func error(_ field: JSON) -> ConfigurationError? {
            let root: JSON = ["resources": [["name": "books", "fields": ["title": "string", "pages": field]]]]
            do {
                _ = try ServerConfiguration(root: root, file: "books.json")
                return nil
            } catch {
                return error
            }
        }
        #expect(
            error(["type": "integer", "min": 1])?.description
                == "books.json: resources[0].fields.pages.min: unknown key; expected type, required, default and writeOnly")
        #expect(error(["required": true])?.keyPath == "resources[0].fields.pages.type")
        #expect(error(["type": "pages"])?.message.hasPrefix("unknown type 'pages'") == true)
        #expect(
            error(["type": "integer", "default": "many"])?.description
                == "books.json: resources[0].fields.pages.default: expected an integer, found string")
        #expect(error(["type": "integer", "default": nil])?.message == "null is no default; leave it out")
        #expect(error(["type": "integer", "required": "yes"])?.keyPath == "resources[0].fields.pages.required")
        #expect(error(7)?.keyPath == "resources[0].fields.pages")
        #expect(error(["type": "date", "default": "2026-11-26"]) == nil)
        // A key with a default would give every create the same key.
        let keyed = MockResource("books", fields: [MockResource.Field("isbn", .string, defaultValue: "0")], primaryKey: "isbn")
        let refused = await #expect(throws: SchemaError.self) { try await MockServer(resources: [keyed]) }
        #expect(refused?.message == "the primary key 'isbn' cannot have a default")
    }
}
