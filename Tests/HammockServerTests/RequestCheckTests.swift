import HTTPTypes
import HammockHTTPServer
import HammockJSON
import HammockServer
import Testing

/// Requests checked against the API document the mock was made from (a configuration's `validation`):
/// parameters 400, media type 415, body 422, each problem naming what broke which keyword.
@Suite("Request checks")
struct RequestCheckTests {
    /// A pets API: a list with a bounded `limit` and repeated `tag`s, a create whose body has a schema, an
    /// item whose key is an integer, a required header and a cookie on a stub.
    static let configuration = """
        {
          "resources": [{"name": "pets", "fields": {"name": "string", "tag": "string", "age": "integer"}}],
          "routes": [{"method": "GET", "path": "/pets/:id/owner", "body": {"name": "Ada"}}],
          "validation": {
            "schemas": {
              "NewPet": {"type": "object", "required": ["name"], "additionalProperties": false,
                         "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 20},
                                        "tag": {"type": "string", "pattern": "^[a-z]+$"},
                                        "age": {"type": "integer", "minimum": 0},
                                        "id": {"type": "integer", "readOnly": true}}}
            },
            "operations": [
              {"method": "GET", "path": "/pets", "parameters": [
                 {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 100}},
                 {"name": "tag", "in": "query", "schema": {"type": "array", "items": {"type": "string", "enum": ["dog", "cat"]}}}]},
              {"method": "POST", "path": "/pets",
               "body": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NewPet"}}}}},
              {"method": "GET", "path": "/pets/:id", "parameters": [{"name": "id", "in": "path", "schema": {"type": "integer"}}]},
              {"method": "GET", "path": "/pets/:id/owner", "parameters": [
                 {"name": "id", "in": "path", "schema": {"type": "integer"}},
                 {"name": "X-Request-Id", "in": "header", "required": true, "schema": {"type": "string", "format": "uuid"}},
                 {"name": "session", "in": "cookie", "schema": {"type": "string", "minLength": 4}}]}
            ]
          }
        }
        """

    static func server() async throws -> MockServer {
        let configuration = try ServerConfiguration(parsing: Array(Self.configuration.utf8), file: "pets.json")
        return try await MockServer(configuration: configuration, store: MemoryStore())
    }

    static func errors(_ response: MockResponse) throws -> [JSON] {
        try response.json()["errors"]?.arrayValue ?? []
    }

    @Test("A query parameter out of its range, of the wrong type or not among its choices is a 400 naming it and the keyword")
    func queryParameters() async throws {
        let server = try await Self.server()
        let cases: [(String, String, String)] = [
            ("/pets?limit=500", "limit", "maximum"), ("/pets?limit=0", "limit", "minimum"),
            ("/pets?limit=ten", "limit", "type"), ("/pets?tag=dog&tag=fish", "tag", "enum"),
        ]
        for (target, name, keyword) in cases {
            let response = await server.respond(to: MockRequest(.get, target))
            #expect(response.status == .badRequest, "\(target)")
            #expect(response.headerFields[.contentType] == "application/problem+json")
            let error = try #require(try Self.errors(response).first)
            #expect(error["in"] == "query" && error["name"] == .string(name) && error["keyword"] == .string(keyword), "\(target)")
            #expect(try response.json()["detail"]?.stringValue?.contains("query parameter '\(name)'") == true)
        }
        // What the document allows is answered by the resource as before.
        #expect(await server.respond(to: MockRequest(.get, "/pets?limit=5&tag=dog&tag=cat")).status == .ok)
        // A parameter the document does not name (the query language's own) is not checked.
        #expect(await server.respond(to: MockRequest(.get, "/pets?_sort=name")).status == .ok)
    }

    @Test("A path parameter of the wrong type, a missing required header and a short cookie are 400s; HEAD is checked as GET")
    func otherParameters() async throws {
        let server = try await Self.server()
        let wrongKey = await server.respond(to: MockRequest(.get, "/pets/abc"))
        #expect(wrongKey.status == .badRequest)
        #expect(try Self.errors(wrongKey).first?["in"] == "path")
        #expect(await server.respond(to: MockRequest(.head, "/pets/abc")).status == .badRequest)
        let noHeader = await server.respond(to: MockRequest(.get, "/pets/1/owner"))
        #expect(noHeader.status == .badRequest)
        #expect(
            try Self.errors(noHeader).first == [
                "in": "header", "name": "X-Request-Id", "pointer": "", "keyword": "required", "detail": "is required",
            ])
        var fields = HTTPFields()
        fields[HTTPField.Name("X-Request-Id")!] = "not-a-uuid"
        let badHeader = await server.respond(to: MockRequest(.get, "/pets/1/owner", headerFields: fields))
        #expect(try Self.errors(badHeader).first?["keyword"] == "format")
        fields[HTTPField.Name("X-Request-Id")!] = "6f1d2c3b-8a7e-4d5c-9b0a-112233445566"
        fields[.cookie] = "theme=dark; session=abc"
        let shortCookie = await server.respond(to: MockRequest(.get, "/pets/1/owner", headerFields: fields))
        #expect(shortCookie.status == .badRequest)
        #expect(try Self.errors(shortCookie).first?["name"] == "session")
        fields[.cookie] = "theme=dark; session=abcdef"
        let fine = await server.respond(to: MockRequest(.get, "/pets/1/owner", headerFields: fields))
        #expect(fine.status == .ok)
        #expect(try fine.json() == ["name": "Ada"])
        // OPTIONS is the router's, never checked.
        #expect(await server.respond(to: MockRequest(.options, "/pets/abc/owner")).status == .noContent)
    }

    @Test("A body that breaks its schema is a 422 listing each member and keyword; nothing is stored")
    func bodies() async throws {
        let server = try await Self.server()
        let broken = await server.respond(
            to: MockRequest(.post, "/pets", json: ["name": "", "tag": "Dog", "age": -1, "colour": "red"]))
        #expect(broken.status == .unprocessableContent)
        let found = Set(
            try Self.errors(broken).compactMap { error in
                error["pointer"]?.stringValue.flatMap { pointer in error["keyword"]?.stringValue.map { "\(pointer) \($0)" } }
            })
        #expect(found == ["/name minLength", "/tag pattern", "/age minimum", "/colour additionalProperties"])
        let missing = await server.respond(to: MockRequest(.post, "/pets", json: ["tag": "dog"]))
        #expect(
            try Self.errors(missing).first == [
                "in": "body", "pointer": "", "keyword": "required", "detail": "the member 'name' is required",
            ])
        let empty = await server.respond(to: MockRequest(.post, "/pets"))
        #expect(empty.status == .unprocessableContent)
        #expect(try await server.respond(to: MockRequest(.get, "/pets")).json() == [])
        // A read-only member is the server's to fill: a request may leave it out, and the create succeeds.
        let created = await server.respond(to: MockRequest(.post, "/pets", json: ["name": "Rex", "tag": "dog", "age": 3]))
        #expect(created.status == .created)
    }

    @Test("A body in a media type the document does not take is a 415; a body that is not JSON is a 400")
    func mediaTypes() async throws {
        let server = try await Self.server()
        var fields = HTTPFields()
        fields[.contentType] = "text/plain"
        let text = await server.respond(to: MockRequest(.post, "/pets", headerFields: fields, body: Array("Rex".utf8)))
        #expect(text.status == .unsupportedMediaType)
        #expect(try text.json()["detail"]?.stringValue?.contains("application/json") == true)
        fields[.contentType] = "application/json; charset=utf-8"
        let malformed = await server.respond(
            to: MockRequest(.post, "/pets", headerFields: fields, body: Array("{\"name\":".utf8)))
        #expect(malformed.status == .badRequest)
    }

    @Test("Checks change with a reload and can be turned off; a malformed section is refused naming its key")
    func switching() async throws {
        let server = try await Self.server()
        #expect(server.requestChecks?.count == 4)
        server.setRequestChecks(nil)
        #expect(await server.respond(to: MockRequest(.get, "/pets?limit=500")).status == .ok)
        var reloaded = try ServerConfiguration(parsing: Array(Self.configuration.utf8), file: "pets.json")
        _ = try await server.reload(reloaded)
        #expect(await server.respond(to: MockRequest(.get, "/pets?limit=500")).status == .badRequest)
        reloaded.requestChecks = nil
        _ = try await server.reload(reloaded)
        #expect(await server.respond(to: MockRequest(.get, "/pets?limit=500")).status == .ok)

        let malformed =
            #"{"routes": [{"method": "GET", "path": "/x"}], "validation": {"operations": [{"method": "GET", "path": "x"}]}}"#
        let error = #expect(throws: ConfigurationError.self) {
            try ServerConfiguration(parsing: Array(malformed.utf8), file: "bad.json")
        }
        #expect(error?.keyPath == "validation.operations[0].path")
        let unknown = #"{"routes": [{"method": "GET", "path": "/x"}], "validation": {"operation": []}}"#
        #expect(throws: ConfigurationError.self) { try ServerConfiguration(parsing: Array(unknown.utf8), file: "bad.json") }
    }

    @Test("What the checks cannot read accepts every value and is noted: a lookahead pattern, a reference to nowhere")
    func unreadable() async throws {
        let text = """
            {"routes": [{"method": "POST", "path": "/codes", "status": 201}],
             "validation": {"operations": [{"method": "POST", "path": "/codes", "body": {"content": {"application/json": {"schema":
               {"type": "object", "properties": {"code": {"type": "string", "pattern": "^(?=a)a+$"},
                                                 "owner": {"$ref": "#/components/schemas/Nowhere"}}}}}}}]}}
            """
        let configuration = try ServerConfiguration(parsing: Array(text.utf8), file: "codes.json")
        let notes = try #require(configuration.requestChecks?.notes)
        #expect(notes.count == 2)
        #expect(notes.contains { $0.contains("lookaround") })
        #expect(notes.contains { $0.contains("Nowhere") })
        let server = try await MockServer(configuration: configuration, store: MemoryStore())
        let answer = await server.respond(to: MockRequest(.post, "/codes", json: ["code": "zzz", "owner": 5]))
        #expect(answer.status == .created)
        #expect(await server.respond(to: MockRequest(.post, "/codes", json: ["code": 1])).status == .unprocessableContent)
    }

    @Test("Over HTTP the same problems come back, under the base path, for a query a browser encodes")
    func overHTTP() async throws {
        var configuration = try ServerConfiguration(parsing: Array(Self.configuration.utf8), file: "pets.json")
        configuration.basePath = "/api"
        let server = try await MockServer(configuration: configuration, store: MemoryStore())
        let port = try await server.start(host: "127.0.0.1", port: 0)
        let client = LoopbackClient(port: port)
        let replies: [LoopbackClient.Reply]
        do {
            replies = [
                try await client.send("GET", "/api/pets?limit=%31%30%31"),
                try await client.send("POST", "/api/pets", json: ["name": 7]),
                try await client.send("POST", "/api/pets", json: ["name": "Rex"]),
                try await client.send("GET", "/api/pets/x/owner"),
            ]
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        #expect(replies.map(\.status) == [400, 422, 201, 400])
        #expect(replies[0].json?["errors"]?[0]?["keyword"] == "maximum")
        #expect(replies[1].json?["errors"]?[0]?["pointer"] == "/name")
        #expect(replies[3].header("Content-Type") == "application/problem+json")
        // Both path and header are named: every parameter is checked before answering.
        #expect(replies[3].json?["errors"]?.arrayValue?.count == 2)
    }
}
