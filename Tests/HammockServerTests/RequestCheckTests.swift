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

    @Test("A form or multipart body is checked field by field as its schema wants: text read as numbers and lists, files as text")
    func formBodies() async throws {
        let configuration = """
            {"resources": [{"name": "pets", "fields": {"name": "string", "age": "integer", "photo": "blob", "tags": "json"}}],
             "validation": {"operations": [{"method": "POST", "path": "/pets", "body": {"required": true, "content": {
               "multipart/form-data": {"schema": {"type": "object", "required": ["name", "photo"], "properties": {
                 "name": {"type": "string", "minLength": 1}, "age": {"type": "integer", "minimum": 0},
                 "photo": {"type": "string", "format": "binary"},
                 "tags": {"type": "array", "items": {"type": "string", "enum": ["dog", "cat"]}}}}},
               "application/x-www-form-urlencoded": {"schema": {"type": "object", "required": ["name"],
                 "additionalProperties": false, "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}}}}}}]}}
            """
        let server = try await MockServer(
            configuration: try ServerConfiguration(parsing: Array(configuration.utf8), file: "pets.json"), store: MemoryStore())
        func multipart(_ fields: [(String, String, String?)]) -> MockRequest {
            var body = ""
            for (name, value, filename) in fields {
                body +=
                    "--B\r\nContent-Disposition: form-data; name=\"\(name)\"" + (filename.map { "; filename=\"\($0)\"" } ?? "")
                body += "\r\n\r\n\(value)\r\n"
            }
            var headers = HTTPFields()
            headers[.contentType] = "multipart/form-data; boundary=B"
            return MockRequest(.post, "/pets", headerFields: headers, body: Array((body + "--B--\r\n").utf8))
        }
        func form(_ text: String) -> MockRequest {
            var headers = HTTPFields()
            headers[.contentType] = "application/x-www-form-urlencoded"
            return MockRequest(.post, "/pets", headerFields: headers, body: Array(text.utf8))
        }
        func keywords(_ response: MockResponse) throws -> [String] {
            try Self.errors(response).compactMap { error in
                error["pointer"]?.stringValue.flatMap { pointer in error["keyword"]?.stringValue.map { "\(pointer) \($0)" } }
            }.sorted()
        }
        let good = await server.respond(
            to: multipart([
                ("name", "Rex", nil), ("age", "3", nil), ("photo", "PNG", "rex.png"), ("tags", "dog", nil), ("tags", "cat", nil),
            ]))
        #expect(good.status == .created)
        #expect(try good.json()["photo"] == "UE5H")
        #expect(try good.json()["tags"] == ["dog", "cat"])
        let bad = await server.respond(to: multipart([("name", "", nil), ("age", "old", nil), ("tags", "cow", nil)]))
        #expect(bad.status == .unprocessableContent)
        #expect(try keywords(bad) == [" required", "/age type", "/name minLength", "/tags/0 enum"])
        #expect(await server.respond(to: form("name=Tom&age=4")).status == .created)
        let extra = await server.respond(to: form("age=-&colour=red"))
        #expect(try keywords(extra) == [" required", "/age type", "/colour additionalProperties"])
        #expect(try await server.respond(to: MockRequest(.get, "/pets")).json().arrayValue?.count == 2)
    }

    @Test("On a documented operation an unknown `_` parameter is ignored and listed; without the document it is a 400")
    func unknownOptions() async throws {
        let server = try await Self.server()
        let list = await server.respond(to: MockRequest(.get, "/pets?_cachebust=7&limit=5"))
        #expect(list.status == .ok)
        #expect(list.headerFields[.ignoredQuery]?.contains("_cachebust") == true)
        _ = await server.respond(to: MockRequest(.post, "/pets", json: ["name": "Rex"]))
        #expect(await server.respond(to: MockRequest(.get, "/pets/1?__main__=1")).status == .ok)
        server.setRequestChecks(nil)
        #expect(await server.respond(to: MockRequest(.get, "/pets?_cachebust=7")).status == .badRequest)
        #expect(await server.respond(to: MockRequest(.get, "/pets/1?__main__=1")).status == .badRequest)
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
        #expect(notes.count == 2, "\(notes)")
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

    /// Four ways in, as real documents mix them: a bearer token, Basic, an API key in a header, or a key in
    /// the query together with a cookie; a health check open to anyone.
    static let secured = """
        {
          "routes": [{"method": "GET", "path": "/reports", "body": []}, {"method": "GET", "path": "/health", "text": "ok"},
                     {"method": "GET", "path": "/admin", "body": {}}],
          "validation": {
            "securitySchemes": {
              "token": {"type": "http", "scheme": "bearer"}, "password": {"type": "http", "scheme": "basic"},
              "key": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
              "queryKey": {"type": "apiKey", "in": "query", "name": "api_key"},
              "session": {"type": "apiKey", "in": "cookie", "name": "sid"},
              "certificate": {"type": "mutualTLS"}
            },
            "operations": [
              {"method": "GET", "path": "/reports", "security": [{"token": []}, {"password": []}, {"key": []}, {"queryKey": [], "session": []}]},
              {"method": "GET", "path": "/health", "security": [{"token": []}, {}]},
              {"method": "GET", "path": "/admin", "security": [{"certificate": []}]}
            ]
          }
        }
        """

    @Test(
        "A documented security requirement is met by any well-formed credential of one of its ways; without one, a 401 naming them all"
    )
    func credentials() async throws {
        let configuration = try ServerConfiguration(parsing: Array(Self.secured.utf8), file: "secured.json")
        #expect(
            configuration.requestChecks?.notes == [
                "security scheme certificate: mutual TLS is not asked for over plain HTTP; every request is let in"
            ])
        let server = try await MockServer(configuration: configuration, store: MemoryStore())
        func status(_ target: String, _ fields: HTTPFields = [:]) async -> Int {
            await server.respond(to: MockRequest(.get, target, headerFields: fields)).status.code
        }
        let anonymous = await server.respond(to: MockRequest(.get, "/reports"))
        #expect(anonymous.status == .unauthorized)
        #expect(
            anonymous.headerFields[values: .wwwAuthenticate] == [
                #"Bearer realm="hammock""#, #"Basic realm="hammock""#, #"ApiKey realm="hammock", in="header", name="X-API-Key""#,
                #"ApiKey realm="hammock", in="query", name="api_key""#, #"ApiKey realm="hammock", in="cookie", name="sid""#,
            ])
        #expect(
            try anonymous.json()["detail"]
                == "GET /reports needs a bearer token (Authorization: Bearer …), or a user and password (Authorization: Basic …), or an API key in the header X-API-Key, or an API key in the query api_key and an API key in the cookie sid"
        )
        #expect(await status("/reports", [.authorization: "Bearer abc.DEF-123_~+/=="]) == 200)
        #expect(await status("/reports", [.authorization: "bearer abc"]) == 200)
        #expect(await status("/reports", [.authorization: "Basic YWRhOnNlY3JldA=="]) == 200)
        #expect(await status("/reports", [HTTPField.Name("X-API-Key")!: "k1"]) == 200)
        // Two schemes in one requirement are needed together.
        #expect(await status("/reports?api_key=k2") == 401)
        #expect(await status("/reports?api_key=k2", [.cookie: "theme=dark; sid=s1"]) == 200)
        // A malformed token is no credential; an empty key neither; the challenge says so for a token.
        let malformed = await server.respond(to: MockRequest(.get, "/reports", headerFields: [.authorization: "Bearer a b"]))
        #expect(malformed.status == .unauthorized)
        #expect(malformed.headerFields[values: .wwwAuthenticate].first == #"Bearer realm="hammock", error="invalid_token""#)
        #expect(await status("/reports", [HTTPField.Name("X-API-Key")!: ""]) == 401)
        #expect(await status("/reports", [.authorization: "Digest abc"]) == 401)
        // `{}` among the requirements lets anyone in; mutual TLS cannot be asked for and lets everyone in.
        #expect(await status("/health") == 200)
        #expect(await status("/admin") == 200)
        // The credential is checked before the parameters: a stranger learns nothing of the API's shape.
        #expect(await status("/reports?limit=oops") == 401)
    }

    @Test("A requirement naming an undefined scheme, or a scheme of an unknown type, is refused naming its key")
    func securityMistakes() {
        let undefined =
            #"{"routes": [{"method": "GET", "path": "/x"}], "validation": {"operations": [{"method": "GET", "path": "/x", "security": [{"nobody": []}]}]}}"#
        let first = #expect(throws: ConfigurationError.self) {
            try ServerConfiguration(parsing: Array(undefined.utf8), file: "bad.json")
        }
        #expect(first?.keyPath == "validation.operations[0].security[0].nobody")
        let unknown =
            #"{"routes": [{"method": "GET", "path": "/x"}], "validation": {"securitySchemes": {"s": {"type": "magic"}}}}"#
        let second = #expect(throws: ConfigurationError.self) {
            try ServerConfiguration(parsing: Array(unknown.utf8), file: "bad.json")
        }
        #expect(second?.keyPath == "validation.securitySchemes.s.type")
    }
}

extension RequestCheckTests {
    @Test(
        "A PATCH of nothing (`{}` or no body) answers the record unchanged, 404 for none, 412 for a stale tag; a PUT of nothing is still a 422, a POST of `{}` a record",
        arguments: StoreKind.allCases)
    func emptyPatch(kind: StoreKind) async throws {
        do {
            let store = try await kind.makeStore()
            let people = MockResource("people", fields: ["name": .string, "age": .integer])
            let server = try await MockServer(resources: [people], store: store)
            let created = try await server.respond(to: MockRequest(.post, "/people", json: ["name": "Ada", "age": 36])).json()
            let empty = await server.respond(to: MockRequest(.patch, "/people/1", json: [:]))
            #expect(empty.status == .ok)
            #expect(try empty.json() == created)
            let bodiless = await server.respond(to: MockRequest(.patch, "/people/1"))
            #expect(bodiless.status == .ok)
            #expect(try bodiless.json() == created)
            #expect(await server.respond(to: MockRequest(.patch, "/people/9", json: [:])).status == .notFound)
            let stale = await server.respond(
                to: MockRequest(.patch, "/people/1", headerFields: [.ifMatch: "\"nope\""], json: [:]))
            #expect(stale.status == .preconditionFailed)
            #expect(await server.respond(to: MockRequest(.put, "/people/1", json: [:])).status == .unprocessableContent)
            #expect(
                await server.respond(to: MockRequest(.patch, "/people/1", json: ["nmae": "x"])).status == .unprocessableContent)
            // A create of nothing makes a record of nulls where nothing is required; of unknown members only, a 422.
            let emptyCreate = await server.respond(to: MockRequest(.post, "/people", json: [:]))
            #expect(emptyCreate.status == .created)
            #expect(try emptyCreate.json() == ["id": 2, "name": nil, "age": nil])
            #expect(
                await server.respond(to: MockRequest(.post, "/people", json: ["nmae": "x"])).status == .unprocessableContent)
            try await store.close()
        }
    }
}
