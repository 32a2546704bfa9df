import Foundation
import HTTPTypes
import HammockJSON
import HammockOpenAPI
import HammockServer
import HammockTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The package's root (tests run from it under `swift test`, but a path from this file holds anywhere).
let packageRoot =
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path + "/"

/// A mock from a configuration file, in memory, with its data loaded and generated with seed 1.
func server(from configuration: ServerConfiguration) async throws -> MockServer {
    try await MockServer.inMemory(configuration)
}

/// openapi-spec-validator (PyPI, installed into .venv by scripts/setup --tests) on `document`, written as `format`:
/// its last line of output, `…: OK` when valid.
func validate(_ document: JSON, as format: String) async throws -> String {
    let path = TemporaryFiles.path("openapi", extension: format)
    let text = format == "yaml" ? YAMLText.text(from: document) : document.serializedString()
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    let (output, status) = try await runToEnd([ProjectPython.executable, "-m", "openapi_spec_validator", path])
    return output.split(separator: "\n").last.map(String.init) ?? "no output (exit \(status))"
}

@Suite("The mock's OpenAPI document", .timeLimit(.minutes(3)))
struct OpenAPIDocumentTests {
    static let examples = ["people.json", "shop.json", "generated.json", "people.yaml"]

    @Test("Every example's document is valid OpenAPI 3.1 to openapi-spec-validator, as JSON and as YAML", arguments: examples)
    func validDocuments(example: String) async throws {
        let configuration = try ConfigurationFile.read(packageRoot + "Examples/" + example)
        let document = await OpenAPIDocument.make(for: try await server(from: configuration), title: example)
        #expect(document["openapi"] == "3.1.0")
        #expect(try await validate(document, as: "json").hasSuffix(": OK"))
        #expect(try await validate(document, as: "yaml").hasSuffix(": OK"))
    }

    @Test("A resource: read, create and update shapes, every route, the query language, problems and headers")
    func resourceDocument() async throws {
        let configuration = try ConfigurationFile.read(packageRoot + "Examples/people.json")
        let document = await OpenAPIDocument.make(for: try await server(from: configuration))
        let person = try #require(document["components"]?["schemas"]?["Person"])
        #expect(person["required"] == ["id", "name", "numberOfKids", "kilometersWalked", "avatar"])
        let int64: JSON = ["type": "integer", "format": "int64", "minimum": .integer(Int.min), "maximum": .integer(Int.max)]
        #expect(person["properties"]?["id"] == int64)
        #expect(person["properties"]?["numberOfKids"]?["type"] == ["integer", "null"])
        #expect(person["properties"]?["avatar"]?["type"] == ["string", "null"])
        #expect(person["properties"]?["avatar"]?["contentEncoding"] == "base64")
        #expect(person["examples"]?[0]?["name"] == "Amy Lee")
        // A create's answer links to the new record's own operations by its key, for clients and for
        // schemathesis's stateful phase.
        let links = try #require(document["paths"]?["/people"]?["post"]?["responses"]?["201"]?["links"]?.objectValue)
        #expect(links.keys == ["GetPerson", "UpdatePerson", "ReplacePerson", "DeletePerson"])
        #expect(links["GetPerson"]?["operationId"] == "getPeople")
        #expect(links["DeletePerson"]?["parameters"] == ["id": "$response.body#/id"])
        #expect(document["paths"]?["/people/{id}"]?["delete"]?["operationId"] == "deletePeople")
        // Generated keys: a create requires no member but one it knows, and has no key; nor has an update.
        #expect(document["components"]?["schemas"]?["PersonCreate"]?["required"] == [])
        #expect(document["components"]?["schemas"]?["PersonCreate"]?["anyOf"]?.arrayValue?.count == 4)
        #expect(document["components"]?["schemas"]?["PersonCreate"]?["properties"]?["id"] == nil)
        #expect(document["components"]?["schemas"]?["PersonUpdate"]?["properties"]?["name"] != nil)
        let car = try #require(document["components"]?["schemas"]?["Car"])
        #expect(car["properties"]?["person_id"]?["type"] == ["integer", "null"])

        let paths = try #require(document["paths"]?.objectValue)
        #expect(paths.keys == ["/people", "/people/{id}", "/cars", "/cars/{id}", "/people/{id}/cars"])
        #expect(paths["/people"]?.objectValue?.keys == ["get", "post"])
        #expect(paths["/people/{id}"]?.objectValue?.keys == ["get", "put", "patch", "delete"])
        let list = try #require(paths["/people"]?["get"])
        let names = list["parameters"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
        for name in [
            "name", "name_ne", "name_gt", "name_gte", "name_lt", "name_lte", "name_like", "name_null", "q", "_sort", "_order",
            "_page", "_per_page", "_start", "_end", "_limit", "_embed",
        ] {
            #expect(names.contains(name), "\(name)")
        }
        #expect(!names.contains("_expand"))  // people have no parent
        #expect(list["responses"]?["200"]?["headers"]?["X-Total-Count"] != nil)
        #expect(list["responses"]?["200"]?["headers"]?["Link"] != nil)
        let create = try #require(paths["/people"]?["post"])
        #expect(create["requestBody"]?["content"]?["application/json"]?["schema"]?["$ref"] == "#/components/schemas/PersonCreate")
        #expect(create["responses"]?["201"]?["headers"]?["Location"] != nil)
        let codes = create["responses"]?.objectValue?.keys ?? []
        #expect(codes == ["201", "400", "404", "409", "413", "415", "422", "431"])
        #expect(paths["/people/{id}"]?["patch"]?["responses"]?.objectValue?.keys.contains("412") == true)
        #expect(
            paths["/people/{id}"]?["delete"]?["parameters"]?.arrayValue?.contains { $0["name"] == "_dependent" } == true)
        #expect(
            paths["/cars"]?["get"]?["parameters"]?.arrayValue?.contains { $0["name"] == "_expand" } == true)
        let problem = document["components"]?["responses"]?["UnprocessableContent"]?["content"]?["application/problem+json"]
        #expect(problem?["schema"]?["$ref"] == "#/components/schemas/Problem")
    }

    @Test("A nested list's variable has its parent's key type: a slug is a string, an id an integer")
    func nestedVariables() async throws {
        let configuration = try ConfigurationFile.read(packageRoot + "Examples/shop.json")
        let document = await OpenAPIDocument.make(for: try await server(from: configuration))
        let bySlug = document["paths"]?["/categories/{slug}/products"]?["get"]?["parameters"]?[0]
        #expect(bySlug?["name"] == "slug")
        #expect(bySlug?["schema"]?["type"] == "string")
        let byID = document["paths"]?["/products/{id}/reviews"]?["get"]?["parameters"]?[0]
        #expect(byID?["schema"]?["type"] == "integer")
    }

    @Test(
        "A resource that omits nulls describes its optional members as absent, not null: only the key and required ones are always answered"
    )
    func omittedNulls() async throws {
        var password = MockResource.Field("password", .string)
        password.isWriteOnly = true
        var pets = MockResource("pets", fields: [.init("name", .string, isRequired: true), .init("tag", .string), password])
        pets.omitsNulls = true
        let document = await OpenAPIDocument.make(for: try await MockServer(resources: [pets]))
        let record = document["components"]?["schemas"]?["Pet"]
        #expect(record?["required"] == ["id", "name"])
        #expect(record?["properties"]?["tag"] == ["type": "string"])
        #expect(record?["properties"]?["password"] == ["type": "string", "writeOnly": true])
    }

    @Test("A client-chosen key is required in a create; stubs, Swift routes and wildcard paths appear as they can")
    func stubsAndKeys() async throws {
        let categories = MockResource("categories", fields: ["slug": .string, "title": .string], primaryKey: "slug")
        let server = try await MockServer(resources: [categories])
        server.addStubs([
            try StubRoute(
                .post, "/login", match: StubRoute.Match(body: ["user": "ada"]),
                answers: [
                    try StubAnswer(status: 200, body: .json(["token": "t-1"])),
                    try StubAnswer(status: 401, headers: [(.wwwAuthenticate, "Bearer")], body: .json(["error": "no"])),
                ]),
            try StubRoute(.get, "/assets/**", answers: [try StubAnswer(status: 200, body: .text("css"))]),
        ])
        try server.route(.get, "/health/:part", description: "Health of one part") { _ in MockResponse(json: ["ok": true]) }
        let document = await OpenAPIDocument.make(for: server)
        #expect(document["components"]?["schemas"]?["CategoryCreate"]?["required"] == ["slug"])
        let login = try #require(document["paths"]?["/login"]?["post"])
        #expect(login["responses"]?["200"]?["content"]?["application/json"]?["example"] == ["token": "t-1"])
        #expect(login["responses"]?["401"]?["headers"]?["WWW-Authenticate"] != nil)
        #expect(login["requestBody"]?["content"]?["application/json"]?["example"] == ["user": "ada"])
        let health = try #require(document["paths"]?["/health/{part}"]?["get"])
        #expect(health["summary"] == "Health of one part")
        #expect(health["parameters"]?[0]?["in"] == "path")
        #expect(document["x-hammock-omitted"] == ["GET, HEAD /assets/**"])
        #expect(try await validate(document, as: "json").hasSuffix(": OK"))
    }

    @Test(
        "A stub made from an API document's operation lists the document's parameters and body, its schemas among the components")
    func documentedStubs() async throws {
        let (server, _) = try await mock(fromDocument: "tasks.yaml")
        let document = await OpenAPIDocument.make(for: server, title: "Tasks")
        // Paths are inside the base path `servers` names: `/v3` and `/search`, not `/v3/search` under `/v3`.
        #expect(document["servers"]?[0]?["url"] == "/v3")
        #expect(document["paths"]?.objectValue?.keys.allSatisfy { !$0.hasPrefix("/v3") } == true)
        #expect(document["paths"]?["/search"]?["get"]?["operationId"] == "getSearch")
        let search = try #require(
            document["paths"]?["/search"]?["get"]?["parameters"]?.arrayValue,
            "\(document["paths"]?.objectValue?.keys.sorted() ?? [])")
        let q = try #require(search.first { $0["name"] == "q" })
        #expect(q["in"] == "query" && q["required"] == true && q["schema"]?["minLength"] == 2)
        // A path variable takes the document's type; a schema it refers to is among the components.
        let complete = try #require(document["paths"]?["/tasks/{taskId}/complete"]?["post"]?["parameters"]?.arrayValue)
        #expect(complete.first { $0["name"] == "taskId" }?["schema"]?["type"] == "integer")
        let text = document.serializedString()
        for reference in text.matches(of: /"#\/components\/schemas\/([^"]+)"/) {
            #expect(document["components"]?["schemas"]?[String(reference.1)] != nil, "\(reference.1) is referred to")
        }
        #expect(try await validate(document, as: "json").hasSuffix(": OK"))

        // A documented body's schema that has a resource's name is renamed, with the references to it.
        let pet: JSON = ["type": "object", "properties": ["id": ["type": "integer"], "name": ["type": "string"]]]
        func answer(_ schema: JSON) -> JSON {
            ["responses": ["200": ["description": "ok", "content": ["application/json": ["schema": schema]]]]]
        }
        let petId: JSON = [["name": "petId", "in": "path", "required": true, "schema": ["type": "integer"]]]
        var byKey = answer(["$ref": "#/components/schemas/Pet"])
        byKey["parameters"] = petId
        var find = answer(["type": "object", "properties": ["total": ["type": "integer"]]])
        find["requestBody"] = [
            "required": true, "content": ["application/json": ["schema": ["$ref": "#/components/schemas/Query"]]],
        ]
        let source: JSON = [
            "openapi": "3.0.3", "info": ["title": "Pets", "version": "1"],
            "paths": [
                "/pets": ["get": answer(["type": "array", "items": ["$ref": "#/components/schemas/Pet"]])],
                "/pets/{petId}": ["get": byKey],
                "/find": ["post": find],
            ],
            "components": [
                "schemas": [
                    "Pet": pet,
                    "Query": ["type": "object", "properties": ["like": ["$ref": "#/components/schemas/Pet"]]],
                ]
            ],
        ]
        let imported = try OpenAPIImport.make(from: source, file: "pets.json")
        let pets = try await MockServer.inMemory(try ServerConfiguration(root: imported.configuration, file: "pets.json"))
        let own = await OpenAPIDocument.make(for: pets, title: "Pets")
        #expect(
            own["paths"]?["/find"]?["post"]?["requestBody"]?["content"]?["application/json"]?["schema"] == [
                "$ref": "#/components/schemas/Query"
            ])
        #expect(own["components"]?["schemas"]?["Query"]?["properties"]?["like"] == ["$ref": "#/components/schemas/Pet_"])
        #expect(own["components"]?["schemas"]?["Pet_"] == pet)
        #expect(try await validate(own, as: "json").hasSuffix(": OK"))
    }

    @Test("A running server serves its document in the admin API, as JSON and as YAML, made afresh")
    func served() async throws {
        let people = MockResource("people", fields: ["name": .string])
        let server = try await MockServer(resources: [people])
        #expect(server.serveOpenAPIDocument(title: "People"))
        let json = await server.respond(to: MockRequest(.get, "/__hammock/openapi.json"))
        #expect(json.status == .ok)
        #expect(try json.json()["info"]?["title"] == "People")
        try await server.addResource(MockResource("pets", fields: ["name": .string]))
        let yaml = await server.respond(to: MockRequest(.get, "/__hammock/openapi.yaml"))
        #expect(yaml.headerFields[.contentType] == "application/yaml; charset=utf-8")
        let parsed = try YAMLText.json(from: String(decoding: yaml.body, as: UTF8.self))
        #expect(parsed["paths"]?["/pets"] != nil)
        #expect(parsed == (await OpenAPIDocument.make(for: server, title: "People")))
        // The admin API lists them, and its own names stay its own.
        let index = try await server.respond(to: MockRequest(.get, "/__hammock")).json()
        #expect(index["endpoints"]?.arrayValue?.contains { $0["path"] == "/__hammock/openapi.yaml" } == true)
        #expect(!server.addAdminEndpoint("reset") { _ in MockResponse(status: .ok) })
        #expect(!server.addAdminEndpoint("") { _ in MockResponse(status: .ok) })
        #expect(!server.addAdminEndpoint("a/b") { _ in MockResponse(status: .ok) })
        let noAdmin = try await MockServer(resources: [people], options: MockServer.Options(adminPath: nil))
        #expect(!noAdmin.serveOpenAPIDocument())
    }
}

@Suite("YAML configuration files")
struct YAMLConfigurationTests {
    @Test("Each example read from YAML makes the same mock as from JSON", arguments: ["people", "shop", "generated"])
    func sameMock(example: String) async throws {
        let fromJSON = try ConfigurationFile.read(packageRoot + "Examples/\(example).json")
        let json = try JSON(parsing: [UInt8](Data(contentsOf: URL(fileURLWithPath: packageRoot + "Examples/\(example).json"))))
        let fromYAML = try ConfigurationFile.parse(YAMLText.text(from: json), file: "\(example).yaml")
        let one = await OpenAPIDocument.make(for: try await server(from: fromJSON))
        let other = await OpenAPIDocument.make(for: try await server(from: fromYAML))
        #expect(one == other)
    }

    @Test("Examples/people.yaml is Examples/people.json")
    func handWritten() async throws {
        let fromJSON = try ConfigurationFile.read(packageRoot + "Examples/people.json")
        let fromYAML = try ConfigurationFile.read(packageRoot + "Examples/people.yaml")
        #expect(
            await OpenAPIDocument.make(for: try await server(from: fromJSON))
                == OpenAPIDocument.make(for: try await server(from: fromYAML)))
    }

    @Test("A mistake names the file and the key, as for JSON; YAML's own mistakes name the line")
    func errors() throws {
        let wrongType = #expect(throws: ConfigurationError.self) {
            try ConfigurationFile.parse("resources:\n  - name: people\n    fields: {age: decimal}\n", file: "api.yaml")
        }
        #expect(wrongType?.file == "api.yaml")
        #expect(wrongType?.keyPath == "resources[0].fields.age")
        #expect(wrongType?.description.hasPrefix("api.yaml: resources[0].fields.age: unknown type 'decimal'") == true)

        let broken = #expect(throws: ConfigurationError.self) {
            try ConfigurationFile.parse("resources:\n  - name: [people\n", file: "api.yaml")
        }
        #expect(broken?.description.hasPrefix("api.yaml: line ") == true)
        #expect(broken?.description.contains("not valid YAML") == true)

        let openAPI = #expect(throws: ConfigurationError.self) {
            try ConfigurationFile.parse("openapi: 3.1.0\ninfo: {title: x, version: '1'}\npaths: {}\n", file: "api.yaml")
        }
        // An OpenAPI document is mocked (OpenAPIImportTests); one with nothing to mock says so.
        #expect(openAPI?.description == "api.yaml: paths: no operation to mock")

        let latin1 = TemporaryFiles.directory("yaml-bytes") + "latin1.yaml"
        try Data([0x6E, 0x61, 0x6D, 0x65, 0x3A, 0x20, 0xE9, 0x0A]).write(to: URL(fileURLWithPath: latin1))
        let notUTF8 = #expect(throws: ConfigurationError.self) { try ConfigurationFile.read(latin1) }
        #expect(notUTF8?.description == "\(latin1): not UTF-8 text")

        let missing = #expect(throws: ConfigurationError.self) { try ConfigurationFile.read("/nonexistent/api.yaml") }
        #expect(missing?.description == "/nonexistent/api.yaml: cannot read the file: No such file or directory")
    }

    @Test("A relative SQLite path in a YAML file is resolved against the file's directory")
    func relativePaths() throws {
        let directory = TemporaryFiles.directory("yaml-config")
        let path = directory + "api.yml"
        try Data("store: sqlite:data/mock.sqlite\nresources: [{name: people, fields: {name: string}}]\n".utf8).write(
            to: URL(fileURLWithPath: path))
        let configuration = try ConfigurationFile.read(path)
        #expect(configuration.store?.address == directory + "data/mock.sqlite")
    }
}
