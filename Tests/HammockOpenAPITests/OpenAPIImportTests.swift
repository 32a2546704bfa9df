import Foundation
import HTTPTypes
import HammockJSON
import HammockServer
import HammockTestSupport
import Synchronization
import Testing

@testable import HammockOpenAPI

/// A mock from an OpenAPI document, loaded as `hammock serve` loads it, in memory.
func mock(fromDocument name: String) async throws -> (server: MockServer, openAPI: OpenAPIImport) {
    let loaded = try ConfigurationFile.load(packageRoot + "Tests/OpenAPI/documents/" + name)
    let openAPI = try #require(loaded.openAPI)
    return (try await MockServer.inMemory(loaded.configuration), openAPI)
}

extension MockServer {
    /// A GET with a bearer token, as a signed-in client sends it (a document's security asks for one).
    func get(_ target: String) async -> MockResponse { await send(MockRequest(.get, target)) }

    /// `request` with a bearer token.
    func send(_ request: MockRequest) async -> MockResponse {
        var signedIn = request
        signedIn.headerFields[.authorization] = "Bearer test-token"
        return await respond(to: signedIn)
    }
}

@Suite("A mock from an OpenAPI document")
struct OpenAPIImportTests {
    @Test("The Petstore (OpenAPI 3.0, YAML): a pets resource with the documented operations only, its examples as records")
    func petstore() async throws {
        let (server, openAPI) = try await mock(fromDocument: "petstore.yaml")
        #expect(openAPI.version == "3.0.3")
        #expect(openAPI.title == "Pet Shop")
        #expect(openAPI.resources == ["pets"])
        #expect(openAPI.stubs.isEmpty)
        // Its required name is required, and its tag may be null: the mock does what the document says.
        #expect(openAPI.notes.isEmpty)
        // Served under the server's path, with the list's example as records.
        let list = await server.get("/v1/pets")
        #expect(list.status == .ok)
        #expect(try list.json().arrayValue?.map { $0["name"] } == ["Biscuit", "Mochi", "Pickle"])
        #expect(try await server.get("/v1/pets/2").json()["tag"] == "cat")
        // The document's create requires an id; the mock keeps its own integer keys and makes the next one.
        let created = await server.respond(to: MockRequest(.post, "/v1/pets", json: ["id": 99, "name": "Fig", "tag": "dog"]))
        #expect(created.status == .created)
        #expect(try created.json()["id"] == 4)
        #expect(try await server.get("/v1/pets?tag=dog").json().arrayValue?.count == 2)
        // The document lists no update and no delete: they are refused, not served.
        #expect(await server.respond(to: MockRequest(.delete, "/v1/pets/1")).status == .methodNotAllowed)
        #expect(await server.respond(to: MockRequest(.put, "/v1/pets/1", json: ["name": "Rex"])).status == .methodNotAllowed)
        #expect(await server.get("/pets").status == .notFound)
        // `required: [id, name]`: the document's check refuses a create that leaves them out, answered in
        // the document's `default` error shape (`Error`: an integer code and a message), not problem+json.
        let nameless = await server.respond(to: MockRequest(.post, "/v1/pets", json: ["tag": "fish"]))
        #expect(nameless.status == .unprocessableContent)
        #expect(nameless.headerFields[.contentType] == "application/json")
        #expect(try nameless.json()["code"] == 422)
        #expect(try nameless.json()["message"]?.stringValue?.contains("the member 'id' is required") == true)
        // Without the document's checks, the resource's own rules still hold: the name is required.
        server.setRequestChecks(nil)
        let unchecked = await server.respond(to: MockRequest(.post, "/v1/pets", json: ["tag": "fish"]))
        #expect(try unchecked.json()["errors"]?[0] == ["field": "name", "detail": "required"])
    }

    @Test("The expanded Petstore (OpenAPI 3.1, JSON): allOf merged, server variables, a 204 delete, stubs in a routable order")
    func expanded() async throws {
        let (server, openAPI) = try await mock(fromDocument: "petstore-expanded.json")
        #expect(openAPI.resources == ["pets", "users"])
        #expect(openAPI.stubs == ["GET /pets/{id}/photo", "GET /store/inventory", "GET /users/login"])
        #expect(
            openAPI.notes.map(\.description) == [
                "GET /pets: the query parameter tags is not used: the list answers as if it were not sent",
                "GET /pets/{id}/photo: answers no body: no text example for image/png",
            ])
        // The documented `limit` is the query language's `_limit`, its Link in the document's words.
        let limited = await server.get("/api/v2/pets?limit=1")
        #expect(try limited.json().arrayValue?.count == 1)
        #expect(limited.headerFields[.link]?.contains("</api/v2/pets?_start=1&limit=1>; rel=\"next\"") == true)
        // `adopted` and `born` are optional and not nullable: a pet made without them answers without them
        // (and without its null `tag`, which is optional too).
        let bare = await server.respond(to: MockRequest(.post, "/api/v2/pets", json: ["name": "Fig"]))
        #expect(try bare.json() == ["id": 3, "name": "Fig"])
        #expect(try await server.get("/api/v2/pets/3").json() == ["id": 3, "name": "Fig"])
        #expect(try await server.get("/api/v2/pets").json().arrayValue?.last == ["id": 3, "name": "Fig"])
        let schema = try #require(server.schema(named: "pets"))
        #expect(schema.columns.map(\.name) == ["id", "name", "tag", "adopted", "born"])
        #expect(schema.columns.map(\.type) == [.integer, .string, .string, .boolean, .date])
        // `{region}` and `{basePath}` at their defaults: https://eu.pets.example.com/api/v2.
        #expect(try await server.get("/api/v2/pets?adopted=true").json().arrayValue?.map { $0["name"] } == ["Mochi"])
        #expect(await server.respond(to: MockRequest(.delete, "/api/v2/pets/1")).status == .noContent)
        let gone = await server.get("/api/v2/pets/1")
        #expect(gone.status == .notFound)
        #expect(gone.headerFields[.contentType] == "application/problem+json")
        // A literal path before the resource's item path, though the document names it after.
        let login = await server.get("/api/v2/users/login?username=ada")
        #expect(login.status == .ok)
        #expect(String(decoding: login.body, as: UTF8.self) == "session-4f1c9a")
        #expect(login.headerFields[.contentType] == "text/plain")
        #expect(login.headerFields[HTTPField.Name("X-Rate-Limit")!] == "5000")
        #expect(login.headerFields[HTTPField.Name("X-Expires-After")!] == "2026-12-01T00:00:00Z")
        // No example: a body made from the schema, within its bounds.
        #expect(try await server.get("/api/v2/store/inventory").json() == ["available": 1, "sold": 1])
        // Users can only be shown, as documented.
        #expect(await server.get("/api/v2/users").status == .methodNotAllowed)
        let photo = await server.get("/api/v2/pets/2/photo")
        #expect(photo.status == .ok)
        #expect(photo.body.isEmpty)
    }

    /// Keeps what it is asked to send; answers 200.
    final class KeptWebhooks: WebhookTransport {
        let sent = Mutex<[WebhookRequest]>([])

        func send(_ request: WebhookRequest) async throws -> WebhookAnswer {
            sent.withLock { $0.append(request) }
            return WebhookAnswer(status: .ok)
        }
    }

    @Test("A documented callback is sent after its operation's 2xx, to the URL the request names, with its body's example")
    func callbacks() async throws {
        let (server, openAPI) = try await mock(fromDocument: "tasks.yaml")
        let webhook = try #require(openAPI.configuration["webhooks"]?[0])
        #expect(webhook["name"] == "createTask-taskDue" && webhook["on"] == "POST /projects/:projectId/tasks")
        #expect(webhook["url"] == "{{request.body./callbackUrl}}" && webhook["method"] == "POST")
        #expect(server.webhooks.map(\.name) == ["createTask-taskDue"])
        let kept = KeptWebhooks()
        server.setWebhookTransport(kept)
        let launch = "6f1d2c3b-8a7e-4d5c-9b0a-112233445566"
        let created = await server.send(
            MockRequest(
                .post, "/v3/projects/\(launch)/tasks", json: ["title": "Ship", "callbackUrl": "http://127.0.0.1:9/due"]))
        #expect(created.status == .created)
        while server.journal.entries.filter({ $0.webhook != nil }).isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        let sent = try #require(kept.sent.withLock { $0.first })
        #expect(sent.url.absoluteString == "http://127.0.0.1:9/due")
        // The body is the example of the callback's schema (a Task), not the record.
        let body = try JSON(parsing: sent.body)
        #expect(body["title"]?.stringValue != nil)
        // A 422 (no title) is no 2xx: nothing more is sent.
        _ = await server.send(MockRequest(.post, "/v3/projects/\(launch)/tasks", json: ["callbackUrl": "http://127.0.0.1:9/x"]))
        #expect(server.pendingWebhookDeliveries == 0)
        #expect(kept.sent.withLock { $0.count } == 1)
        // Runtime expressions the mock reads, and one it cannot.
        #expect(
            OpenAPIMapper.template(
                ofRuntimeExpression: "http://hooks.test/{$request.path.id}?s={$statusCode}&e={$response.body#/email}")
                == "http://hooks.test/{{path.id}}?s={{response.status}}&e={{response.body./email}}")
        #expect(OpenAPIMapper.template(ofRuntimeExpression: "{$url}/done") == nil)
    }

    @Test("A real API's document (3.1, YAML): UUID keys, a nested collection, actions, an envelope, text and CSV")
    func realAPI() async throws {
        let (server, openAPI) = try await mock(fromDocument: "tasks.yaml")
        #expect(openAPI.resources == ["projects", "tasks", "teams"])
        #expect(
            openAPI.stubs == [
                "POST /tasks/{taskId}/complete", "GET /tasks/{taskId}/comments", "GET /me", "GET /health", "GET /search",
                "GET /reports/{year}/{month}.csv", "POST /exports",
            ])
        // Everything it does not do as documented is listed, each once, where it is.
        #expect(
            openAPI.notes.map(\.place) == [
                "servers", "webhooks.taskCompleted", "GET /tasks/{taskId}/comments", "POST /tasks/{taskId}/complete",
                "GET /reports/{year}/{month}.csv",
            ])
        // The teams' list answers its envelope, its records in `data`, the example's `nextCursor` beside them.
        let teams = try await server.get("/v3/teams").json()
        #expect(teams["data"]?.arrayValue?.map { $0["name"] } == ["Platform", "Growth"])
        #expect(teams["nextCursor"] == .null)
        let launch = "6f1d2c3b-8a7e-4d5c-9b0a-112233445566"
        #expect(try await server.get("/v3/projects/\(launch)").json()["name"] == "Launch")
        // Tasks had no example: ten made up, each in a project that exists, with a documented status. The
        // document lists them under their project only: there is no `/tasks` list.
        #expect(await server.get("/v3/tasks").status == .notFound)
        let projects = ["6f1d2c3b-8a7e-4d5c-9b0a-112233445566", "0a9b8c7d-6e5f-4a3b-8c2d-998877665544"]
        var tasks: [JSON] = []
        for project in projects {
            tasks += try #require(try await server.get("/v3/projects/\(project)/tasks?_limit=100").json().arrayValue)
        }
        #expect(tasks.count == 10)
        #expect(tasks.allSatisfy { projects.contains($0["projectId"]?.stringValue ?? "") })
        #expect(tasks.allSatisfy { ["todo", "doing", "done"].contains($0["status"]?.stringValue ?? "") })
        #expect(tasks.allSatisfy { ($0["estimate"]?.doubleValue).map { (0...100).contains($0) } == true })
        // `callbackUrl` is write-only: stored, never answered.
        #expect(tasks.allSatisfy { $0["callbackUrl"] == nil })
        // The nested collection lists and creates the project's tasks.
        let nested = try #require(try await server.get("/v3/projects/\(launch)/tasks").json().arrayValue)
        #expect(nested.count == tasks.filter { $0["projectId"]?.stringValue == launch }.count)
        let created = await server.send(
            MockRequest(.post, "/v3/projects/\(launch)/tasks", json: ["title": "Write the notes", "status": "todo"]))
        #expect(created.status == .created)
        #expect(try created.json()["projectId"] == .string(launch))
        // A UUID key (`format: uuid`) a create leaves out is made, as the API would.
        let unkeyed = await server.send(MockRequest(.post, "/v3/projects", json: ["name": "Audit"]))
        #expect(unkeyed.status == .created)
        let madeKey = try #require(try unkeyed.json()["id"]?.stringValue)
        #expect(UUID(uuidString: madeKey) != nil && madeKey == madeKey.lowercased())
        #expect(unkeyed.headerFields[.location] == "/v3/projects/\(madeKey)")
        #expect(try await server.get("/v3/projects/\(madeKey)").json()["name"] == "Audit")
        // The key is `readOnly`: one a create sends is not the client's to choose, and a new one is made.
        let keyed = await server.send(
            MockRequest(.post, "/v3/projects", json: ["id": "00000000-0000-4000-8000-000000000001", "name": "Audit"]))
        #expect(keyed.status == .created)
        #expect(try keyed.json()["id"] != "00000000-0000-4000-8000-000000000001")
        #expect(openAPI.configuration["resources"]?[0]?["keyReadOnly"] == true)
        // `archived` has `default: false`; `createdAt` is `readOnly`, so not required of a create.
        #expect(try keyed.json()["archived"] == false)
        // `createdAt` is optional and not nullable: left out of the answer rather than null.
        #expect(try keyed.json()["createdAt"] == nil)
        let untitled = await server.send(MockRequest(.post, "/v3/projects/\(launch)/tasks", json: ["status": "todo"]))
        #expect(untitled.status == .unprocessableContent)
        // PATCH as merge-patch, as documented.
        let patched = await server.send(
            MockRequest(
                .patch, "/v3/projects/\(launch)", headerFields: [.contentType: "application/merge-patch+json"],
                body: Array(#"{"archived": true}"#.utf8)))
        #expect(patched.status == .ok)
        #expect(try patched.json()["archived"] == true)
        // The envelope list and the item beside it are the resource's, from their examples.
        #expect(try await server.get("/v3/teams").json()["data"]?.arrayValue?.count == 2)
        #expect(try await server.get("/v3/teams/1").json()["name"] == "Platform")
        // Text, CSV under a loosely matched segment, a Location already under the base path.
        #expect(String(decoding: await server.get("/v3/health").body, as: UTF8.self) == "ok")
        let report = await server.get("/v3/reports/2026/03.csv")
        #expect(report.headerFields[.contentType] == "text/csv")
        #expect(String(decoding: report.body, as: UTF8.self) == "task,hours\nShip the beta,12\n")
        let export = await server.send(MockRequest(.post, "/v3/exports"))
        #expect(export.status.code == 202)
        #expect(export.headerFields[.location] == "/v3/exports/41")
        // A recursive schema's made-up body stops at a depth.
        let comments = try await server.get("/v3/tasks/3/comments").json()
        var depth = 0
        var reply: JSON? = comments[0]
        while let current = reply {
            depth += 1
            reply = current["replies"]?[0]
        }
        #expect((2...8).contains(depth))
        #expect(try await server.get("/v3/search?q=be").json()["hits"]?[0]?["kind"] == "project")
        // A stub on a task's path answers only for a task there is.
        #expect(await server.get("/v3/tasks/999/comments").status == .notFound)
        // A task's `projectId` is never null in the document: deleting a project deletes its tasks.
        #expect(openAPI.configuration["resources"]?[1]?["parents"]?[0]?["onDelete"] == "cascade")
        let second = projects[1]
        #expect(await server.send(MockRequest(.delete, "/v3/projects/\(second)")).status == .noContent)
        #expect(await server.get("/v3/projects/\(second)/tasks").status == .notFound)
        let left = try await server.get("/v3/projects/\(launch)/tasks?_limit=100").json().arrayValue ?? []
        #expect(left.count == nested.count + 1)
    }

    @Test(
        "Documented operations answer as documented: a stub beside a resource on one path, request-response operations, made string keys"
    )
    func documentedOperations() async throws {
        // In the shapes of a public AI API and a chat platform's: an envelope list beside a create, an
        // operation that answers another shape than it is sent, a nested list with a bulk PUT.
        let assistant: JSON = [
            "type": "object", "required": ["id", "object", "model"],
            "properties": [
                "id": ["type": "string", "readOnly": true], "object": ["type": "string", "enum": ["assistant"]],
                "model": ["type": "string"], "name": ["type": ["string", "null"]],
            ],
        ]
        let command: JSON = [
            "type": "object",
            "properties": ["id": ["type": "integer"], "name": ["type": "string"], "appId": ["type": "integer"]],
        ]
        func json(_ schema: JSON, _ example: JSON? = nil) -> JSON {
            var media: JSONObject = ["schema": schema]
            if let example { media["example"] = example }
            return ["content": ["application/json": .object(media)]]
        }
        func answer(_ status: String, _ schema: JSON, _ example: JSON? = nil) -> JSON {
            var response = json(schema, example).objectValue ?? [:]
            response["description"] = "ok"
            return ["responses": .object([status: .object(response)])]
        }
        func with(_ operation: JSON, body: JSON) -> JSON {
            var object = operation.objectValue ?? [:]
            object["requestBody"] = json(body)
            return .object(object)
        }
        let envelope: JSON = [
            "type": "object", "properties": ["object": ["type": "string"], "data": ["type": "array", "items": assistant]],
        ]
        let embeddingRequest: JSON = [
            "type": "object", "required": ["input", "model"],
            "properties": ["input": ["type": "string"], "model": ["type": "string"]],
        ]
        let embeddingAnswer: JSON = [
            "type": "object", "required": ["object", "data", "model", "usage"],
            "properties": [
                "object": ["type": "string"], "data": ["type": "array", "items": ["type": "object"]], "model": ["type": "string"],
                "usage": ["type": "object", "properties": ["total_tokens": ["type": "integer"]]],
            ],
        ]
        let document: JSON = [
            "openapi": "3.1.0", "info": ["title": "Shapes", "version": "1"],
            "paths": [
                "/assistants": [
                    "get": answer("200", envelope, ["object": "list", "data": []]),
                    "post": with(
                        answer("200", assistant),
                        body: [
                            "type": "object", "required": ["model"],
                            "properties": ["model": ["type": "string"], "name": ["type": "string"]],
                        ]),
                ],
                "/assistants/{assistant_id}": ["get": answer("200", assistant), "delete": answer("200", ["type": "object"])],
                "/embeddings": [
                    "post": with(
                        answer(
                            "200", embeddingAnswer, ["object": "list", "data": [], "model": "m", "usage": ["total_tokens": 3]]),
                        body: embeddingRequest)
                ],
                "/jobs": [
                    "get": answer(
                        "200",
                        [
                            "type": "array",
                            "items": ["type": "object", "properties": ["id": ["type": "integer"], "state": ["type": "string"]]],
                        ]),
                    "post": [
                        "parameters": [["name": "force", "in": "query", "schema": ["type": "boolean"]]],
                        "responses": ["202": ["description": "queued"]],
                    ],
                ],
                "/apps/{app_id}": [
                    "get": answer(
                        "200", ["type": "object", "properties": ["id": ["type": "integer"], "name": ["type": "string"]]],
                        ["id": 1, "name": "bot"])
                ],
                "/apps/{app_id}/commands": [
                    "get": answer("200", ["type": "array", "items": command]),
                    "put": with(
                        answer("200", ["type": "array", "items": command], []), body: ["type": "array", "items": command]),
                ],
            ],
        ]
        let mock = try OpenAPIImport.make(from: document, file: "shapes.json")
        #expect(mock.resources.contains("assistants") && !mock.resources.contains("embeddings"))
        #expect(mock.stubs.contains("POST /embeddings") && mock.stubs.contains("PUT /apps/{app_id}/commands"))
        let server = try await MockServer.inMemory(try ServerConfiguration(root: mock.configuration, file: "shapes.json"))

        // The create beside the envelope list's stub: the documented 200 (not Hammock's 201), with its
        // Location, and a key made (the document's id is a readOnly string), readable at its item path;
        // the list answers its envelope.
        let created = await server.respond(to: MockRequest(.post, "/assistants", json: ["model": "m-1", "name": "helper"]))
        #expect(created.status == .ok)
        #expect(created.headerFields[.location] != nil)
        let key = try #require(try created.json()["id"]?.stringValue)
        #expect(UUID(uuidString: key) != nil)
        #expect(try await server.get("/assistants/\(key)").json()["model"] == "m-1")
        #expect(try await server.get("/assistants").json()["object"] == "list")
        // The delete answers its documented 200 too, and the record is gone.
        #expect(await server.respond(to: MockRequest(.delete, "/assistants/\(key)")).status == .ok)
        #expect(await server.get("/assistants/\(key)").status == .notFound)
        #expect(!mock.notes.contains { $0.message.contains("the document says") })
        // A request answered, not a record stored: the documented status and example, no id invented.
        let embedding = await server.respond(to: MockRequest(.post, "/embeddings", json: ["input": "hi", "model": "m"]))
        #expect(embedding.status == .ok)
        #expect(try embedding.json() == ["object": "list", "data": [], "model": "m", "usage": ["total_tokens": 3]])
        #expect(await server.get("/embeddings").status == .methodNotAllowed)
        // A POST without a body (only a query parameter) queues, as documented; it stores nothing.
        let queued = await server.respond(to: MockRequest(.post, "/jobs?force=true"))
        #expect(queued.status.code == 202)
        #expect(mock.stubs.contains("POST /jobs"))
        // The nested list answers GET; the documented PUT beside it is its stub; PATCH is neither's.
        #expect(await server.get("/apps/1/commands").status == .ok)
        #expect(await server.respond(to: MockRequest(.put, "/apps/1/commands", json: [])).status == .ok)
        let refused = await server.respond(to: MockRequest(.patch, "/apps/1/commands", json: [:]))
        #expect(refused.status == .methodNotAllowed)
        #expect(refused.headerFields[.allow]?.contains("PUT") == true && refused.headerFields[.allow]?.contains("GET") == true)
    }

    @Test("Requests are checked as the document says: a path key's format, a query enum, a merge patch in part, a body's types")
    func documentedChecks() async throws {
        let (server, _) = try await mock(fromDocument: "tasks.yaml")
        let checks = try #require(server.requestChecks)
        #expect(checks.notes.isEmpty)
        let launch = "6f1d2c3b-8a7e-4d5c-9b0a-112233445566"
        // The document asks every operation for a bearer token but the health check (`security: []`):
        // without one, a 401 with the challenge; a malformed one is named; any well-formed one is let in.
        let anonymous = await server.respond(to: MockRequest(.get, "/v3/projects"))
        #expect(anonymous.status == .unauthorized)
        #expect(anonymous.headerFields[.wwwAuthenticate] == #"Bearer realm="hammock""#)
        #expect(try anonymous.json()["detail"] == "GET /projects needs a bearer token (Authorization: Bearer …)")
        let malformed = await server.respond(
            to: MockRequest(.get, "/v3/projects", headerFields: [.authorization: "Bearer two words"]))
        #expect(malformed.headerFields[.wwwAuthenticate] == #"Bearer realm="hammock", error="invalid_token""#)
        #expect(await server.respond(to: MockRequest(.get, "/v3/health")).status == .ok)
        #expect(await server.get("/v3/projects").status == .ok)
        // `projectId` is `format: uuid`; `status` a `$ref` to an enum; `taskId` an integer.
        let badKey = await server.get("/v3/projects/not-a-uuid")
        #expect(badKey.status == .badRequest)
        #expect(try badKey.json()["errors"]?[0]?["keyword"] == "format")
        let badStatus = await server.get("/v3/projects/\(launch)/tasks?status=lost")
        #expect(badStatus.status == .badRequest)
        #expect(
            try badStatus.json()["errors"]?[0] == [
                "in": "query", "name": "status", "pointer": "", "keyword": "enum",
                "detail": #""lost" is not one of "todo", "doing", "done""#,
            ])
        #expect(await server.get("/v3/projects/\(launch)/tasks?status=done").status == .ok)
        #expect(await server.get("/v3/tasks/seven").status == .badRequest)
        // A parameter inside a segment (`{month}.csv`) is read from it.
        #expect(await server.get("/v3/reports/2026/3.csv").status == .ok)
        let month = await server.get("/v3/reports/2026/march.csv")
        #expect(try month.json()["errors"]?[0]?["name"] == "month")
        let shape = await server.get("/v3/reports/2026/3.txt")
        #expect(try shape.json()["detail"] == "path parameter 'month': '3.txt' is not of the form {month}.csv")
        // A merge patch need not carry the members the whole project requires; what it carries is checked.
        let patch: HTTPFields = [.contentType: "application/merge-patch+json"]
        let partial = await server.send(
            MockRequest(.patch, "/v3/projects/\(launch)", headerFields: patch, body: Array(#"{"archived": true}"#.utf8)))
        #expect(partial.status == .ok)
        let wrongType = await server.send(
            MockRequest(.patch, "/v3/projects/\(launch)", headerFields: patch, body: Array(#"{"archived": "yes"}"#.utf8)))
        #expect(wrongType.status == .unprocessableContent)
        #expect(try wrongType.json()["errors"]?[0]?["pointer"] == "/archived")
        // The same document served without its checks (`--no-validation`) answers as the resource decides.
        server.setRequestChecks(nil)
        #expect(await server.get("/v3/projects/\(launch)/tasks?status=lost").status == .ok)
    }

    @Test("A create whose body schema requires nothing requires nothing; what the record requires besides, the server fills")
    func optionalCreate() async throws {
        let thread: JSON = [
            "type": "object", "required": ["id", "object", "created_at", "name"],
            "properties": [
                "id": ["type": "string"], "object": ["type": "string", "enum": ["thread"]],
                "created_at": ["type": "integer"], "metadata": ["type": ["object", "null"]],
                "name": ["type": ["string", "null"]],
            ],
        ]
        func answer(_ schema: JSON) -> JSON {
            ["description": "ok", "content": ["application/json": ["schema": schema]]]
        }
        let document: JSON = [
            "openapi": "3.1.0", "info": ["title": "Threads", "version": "1"],
            "paths": [
                "/threads": [
                    "post": [
                        "requestBody": [
                            "content": [
                                "application/json": [
                                    "schema": ["type": "object", "properties": ["metadata": ["type": "object"]]]
                                ]
                            ]
                        ],
                        "responses": ["200": answer(thread)],
                    ]
                ],
                "/threads/{thread_id}": ["get": ["responses": ["200": answer(thread)]]],
            ],
        ]
        let mock = try OpenAPIImport.make(from: document, file: "threads.json")
        // What the record requires and the create leaves out is the server's to fill: no note says otherwise.
        #expect(!mock.notes.contains { $0.description.contains("which every answer should carry") })
        let server = try await MockServer.inMemory(try ServerConfiguration(root: mock.configuration, file: "threads.json"))
        let before = Int(Date().timeIntervalSince1970)
        let created = await server.respond(to: MockRequest(.post, "/threads", json: [:]))
        #expect(created.status == .ok)
        let key = try #require(try created.json()["id"]?.stringValue)
        let read = try await server.get("/threads/\(key)").json()
        // `object` takes its only value, `created_at` (seconds since 1970, by its name) the create's moment.
        #expect(read["object"] == "thread")
        let stamp = try #require(read["created_at"]?.intValue)
        #expect(stamp >= before && stamp <= Int(Date().timeIntervalSince1970))
        #expect(read["metadata"] == nil)
        // A nullable member every answer carries is answered null, not left out.
        #expect(read["name"] == .null)
    }

    @Test("A made-up body keeps its schema: patterns, item counts, deep members, unions with a discriminator, recursion")
    func madeUpBodies() async throws {
        var deep: JSON = ["type": "string"]
        for level in (1...8).reversed() { deep = ["type": "object", "properties": .object(["a\(level)": deep])] }
        let answer: JSON = [
            "type": "object", "required": ["id", "board", "shape", "tree"],
            "properties": [
                "id": ["type": "string", "pattern": "^[0-9]{17,20}$"],
                "board": [
                    "type": "array", "minItems": 3, "maxItems": 3,
                    "items": [
                        "type": "array", "minItems": 3, "maxItems": 3, "items": ["type": "string", "enum": [".", "X", "O"]],
                    ],
                ],
                "deep": deep,
                "shape": [
                    "oneOf": [["$ref": "#/components/schemas/Circle"], ["$ref": "#/components/schemas/Square"]],
                    "discriminator": ["propertyName": "kind", "mapping": ["sq": "#/components/schemas/Square"]],
                ],
                "maybe": ["oneOf": [["type": "null"], ["type": "integer", "minimum": 5]]],
                "tree": ["$ref": "#/components/schemas/Node"],
                "none": ["type": "array", "maxItems": 0, "items": ["type": "string"]],
            ],
        ]
        let document: JSON = [
            "openapi": "3.1.0", "info": ["title": "Shapes", "version": "1"],
            "paths": [
                "/game": [
                    "get": ["responses": ["200": ["description": "ok", "content": ["application/json": ["schema": answer]]]]]
                ]
            ],
            "components": [
                "schemas": [
                    "Circle": [
                        "type": "object", "required": ["kind", "radius"],
                        "properties": ["kind": ["type": "string"], "radius": ["type": "number", "minimum": 2]],
                    ],
                    "Square": ["type": "object", "properties": ["kind": ["type": "string"], "side": ["type": "number"]]],
                    "Node": [
                        "type": "object", "required": ["children"],
                        "properties": [
                            "name": ["type": "string"],
                            "children": ["type": "array", "items": ["$ref": "#/components/schemas/Node"]],
                        ],
                    ],
                ]
            ],
        ]
        let mock = try OpenAPIImport.make(from: document, file: "shapes.json")
        let server = try await MockServer.inMemory(try ServerConfiguration(root: mock.configuration, file: "shapes.json"))
        let game = try await server.get("/game").json()
        let id = try #require(game["id"]?.stringValue)
        #expect(
            try NSRegularExpression(pattern: "^[0-9]{17,20}$").firstMatch(in: id, range: NSRange(id.startIndex..., in: id)) != nil
        )
        #expect(game["board"] == [[".", ".", "."], [".", ".", "."], [".", ".", "."]])
        #expect(game["deep"]?["a1"]?["a2"]?["a3"]?["a4"]?["a5"]?["a6"]?["a7"]?["a8"] == "string")
        #expect(game["shape"]?["kind"] == "Circle")
        #expect(game["shape"]?["radius"] == 2.0)
        #expect(game["maybe"] == 5)
        #expect(game["none"] == [])
        // The tree recurses twice, then stops with the required member empty, never null.
        var node = game["tree"]
        var depth = 0
        while let current = node, case .object = current {
            depth += 1
            #expect(current["children"]?.arrayValue != nil)
            node = current["children"]?[0]
        }
        #expect((2...3).contains(depth))
        // The same document gives the same body.
        let again = try await MockServer.inMemory(try ServerConfiguration(root: mock.configuration, file: "shapes.json"))
        #expect(try await again.get("/game").json() == game)
    }

    @Test("The same document in YAML and in JSON makes the same mock")
    func yamlAndJSON() throws {
        let yaml = try ConfigurationFile.load(packageRoot + "Tests/OpenAPI/documents/tasks.yaml")
        let text = try String(contentsOfFile: packageRoot + "Tests/OpenAPI/documents/tasks.yaml", encoding: .utf8)
        let json = TemporaryFiles.path("tasks", extension: "json")
        try Data(try YAMLText.json(from: text).serialized()).write(to: URL(fileURLWithPath: json))
        let fromJSON = try ConfigurationFile.load(json)
        #expect(yaml.openAPI?.configuration == fromJSON.openAPI?.configuration)
        #expect(yaml.openAPI?.notes == fromJSON.openAPI?.notes)
    }

    @Test("Swagger 2.0, an unknown version and a document OpenAPIKit cannot read are refused, naming the file and where")
    func refused() throws {
        func error(_ document: JSON) -> ConfigurationError? {
            do {
                _ = try OpenAPIImport.make(from: document, file: "api.json")
                return nil
            } catch {
                return error
            }
        }
        let swagger = error(["swagger": "2.0", "info": ["title": "Old", "version": "1"], "paths": [:]])
        #expect(swagger?.keyPath == "swagger")
        #expect(swagger?.message.contains("convert the document to OpenAPI 3") == true)
        let future = error(["openapi": "4.0.0", "info": ["title": "New", "version": "1"], "paths": [:]])
        #expect(future?.message == "OpenAPI 4.0.0 is not read; 3.0, 3.1 and 3.2 are")
        let unnumbered = error(["openapi": 3.1, "info": ["title": "x", "version": "1"]])
        #expect(unnumbered?.keyPath == "openapi")
        let broken = error([
            "openapi": "3.1.0", "info": ["title": "Broken", "version": "1"],
            "paths": ["/a": ["get": ["responses": ["200": ["description": 5]]]]],
        ])
        #expect(broken?.file == "api.json")
        #expect(broken?.message.hasPrefix("not a valid OpenAPI document: ") == true)
        #expect(broken?.keyPath.contains("/a") == true)
        #expect(throws: ConfigurationError.self) { try OpenAPIImport.make(from: ["openapi", "3.1.0"], file: "list.json") }
    }

    @Test("Hostile documents: a $ref cycle, a reference to another file, an unroutable path, deep schemas: mocked or noted")
    func hostile() async throws {
        var deep: JSON = ["type": "string"]
        // Past what OpenAPIKit is given (48 levels: its decoding time grows with the cube of the depth).
        for _ in 0..<200 { deep = ["type": "object", "properties": ["next": deep]] }
        let document: JSON = [
            "openapi": "3.1.0", "info": ["title": "Hostile", "version": "1"],
            "paths": [
                "/loop": [
                    "get": [
                        "responses": [
                            "200": [
                                "description": "a cycle",
                                "content": ["application/json": ["schema": ["$ref": "#/components/schemas/A"]]],
                            ]
                        ]
                    ]
                ],
                "/elsewhere": [
                    "get": [
                        "responses": [
                            "200": [
                                "description": "another file",
                                "content": ["application/json": ["schema": ["$ref": "other.yaml#/Pet"]]],
                            ]
                        ]
                    ]
                ],
                "/twice/{id}/again/{id}": [
                    "get": [
                        "parameters": [["name": "id", "in": "path", "required": true, "schema": ["type": "string"]]],
                        "responses": ["204": ["description": "never"]],
                    ]
                ],
                "/deep": [
                    "get": ["responses": ["200": ["description": "deep", "content": ["application/json": ["schema": deep]]]]]
                ],
                "/things": ["post": ["responses": ["201": ["description": "no schema at all"]]]],
                "/things/{id}": [
                    "get": [
                        "parameters": [["name": "id", "in": "path", "required": true, "schema": ["type": "integer"]]],
                        "responses": ["200": ["description": "no schema"]],
                    ]
                ],
                "/~odd%20name": [
                    "get": [
                        "responses": ["200": ["description": "ok", "content": ["application/json": ["example": ["fine": true]]]]]
                    ]
                ],
            ],
            "components": ["schemas": ["A": ["$ref": "#/components/schemas/B"], "B": ["$ref": "#/components/schemas/A"]]],
        ]
        let openAPI = try OpenAPIImport.make(from: document, file: "hostile.json")
        #expect(openAPI.resources.isEmpty)
        #expect(openAPI.notes.contains { $0.place == "document" && $0.message.hasPrefix("nested deeper than 48 levels") })
        #expect(!openAPI.notes.contains { $0.place == "GET /deep" })
        #expect(
            openAPI.notes.contains { $0.place == "GET /twice/{id}/again/{id}" && $0.message.hasPrefix("not mocked: its path") })
        #expect(openAPI.notes.contains { $0.place == "GET /loop" && $0.message.contains("#/components/schemas/A") })
        #expect(openAPI.notes.contains { $0.place == "GET /elsewhere" && $0.message.contains("other.yaml#/Pet") })
        let server = try await MockServer.inMemory(try ServerConfiguration(root: openAPI.configuration, file: "hostile.json"))
        #expect(await server.get("/loop").body.isEmpty)
        #expect(await server.get("/elsewhere").body.isEmpty)
        var depth = 0
        var current: JSON? = try await server.get("/deep").json()
        while let value = current, case .object = value {
            depth += 1
            current = value["next"]
        }
        // Nested by hand 200 deep, not recursive: made 32 levels down (the example's bound), not cut at six.
        #expect((32...33).contains(depth))
        #expect(await server.respond(to: MockRequest(.post, "/things")).status == .created)
        #expect(await server.get("/things/1").status == .ok)
        #expect(try await server.get("/~odd%20name").json() == ["fine": true])
    }
}

/// Documents whose schemas include themselves, or share one another without end: each was a crash
/// (stack overflow, exit 139) or a startup of minutes before.
@Suite("A mock from a document whose schemas loop")
struct OpenAPICycleTests {
    /// A document serving `schema` at `GET /things` (a list, so a resource) and `GET /report` (a stub).
    static func document(_ schemas: JSONObject, root: String) -> JSON {
        let reference: JSON = ["$ref": .string("#/components/schemas/\(root)")]
        return [
            "openapi": "3.1.0", "info": ["title": "Loops", "version": "1"],
            "paths": [
                "/things": [
                    "get": [
                        "responses": [
                            "200": [
                                "description": "all",
                                "content": ["application/json": ["schema": ["type": "array", "items": reference]]],
                            ]
                        ]
                    ]
                ],
                "/things/{id}": [
                    "get": [
                        "parameters": [["name": "id", "in": "path", "required": true, "schema": ["type": "integer"]]],
                        "responses": ["200": ["description": "one", "content": ["application/json": ["schema": reference]]]],
                    ]
                ],
                "/report": [
                    "get": ["responses": ["200": ["description": "r", "content": ["application/json": ["schema": reference]]]]]
                ],
            ],
            "components": ["schemas": .object(schemas)],
        ]
    }

    static let named: JSON = ["type": "object", "properties": ["id": ["type": "integer"], "name": ["type": "string"]]]

    static let loops: [(String, JSONObject)] = [
        ("allOf itself", ["A": ["allOf": [["$ref": "#/components/schemas/A"], named]]]),
        (
            "allOf round two schemas",
            [
                "A": ["allOf": [["$ref": "#/components/schemas/B"], named]],
                "B": ["allOf": [["$ref": "#/components/schemas/A"], ["properties": ["more": ["type": "boolean"]]]]],
            ]
        ),
        (
            "a 3.1 oneOf with null, of itself",
            [
                "A": [
                    "type": "object",
                    "properties": [
                        "id": ["type": "integer"], "next": ["oneOf": [["$ref": "#/components/schemas/A"], ["type": "null"]]],
                    ],
                ]
            ]
        ),
        (
            "anyOf itself at the top",
            ["A": ["anyOf": [["$ref": "#/components/schemas/A"], ["type": "null"], named]]]
        ),
        ("every member referring back", ["A": .object(["properties": .object(backReferences)])]),
    ]

    /// Forty members that are the schema itself, and an id: 40^6 values to an example six levels deep.
    static var backReferences: JSONObject {
        var properties: JSONObject = ["id": ["type": "integer"]]
        for index in 0..<40 { properties["m\(index)"] = ["$ref": "#/components/schemas/A"] }
        return properties
    }

    @Test("A schema that includes itself is mocked, and served, without a crash", .timeLimit(.minutes(1)), arguments: 0..<5)
    func loop(index: Int) async throws {
        let (_, schemas) = Self.loops[index]
        let mock = try OpenAPIImport.make(from: Self.document(schemas, root: "A"), file: "loops.json")
        let server = try await MockServer.inMemory(try ServerConfiguration(root: mock.configuration, file: "loops.json"))
        #expect(await server.get("/report").status == .ok)
        #expect(await server.get("/things").status != .internalServerError)
        // What the schema gives, up to where it comes round, is there.
        if index < 2 { #expect(try await server.get("/report").json()["name"] != nil) }
    }

    @Test("Sixty schemas each an allOf of the next twice are each worked out once", .timeLimit(.minutes(1)))
    func sharedWithoutEnd() async throws {
        var schemas = JSONObject()
        for index in 0..<60 {
            let next: JSON = ["$ref": .string("#/components/schemas/S\(index + 1)")]
            schemas["S\(index)"] = ["allOf": [next, next, ["properties": .object(["p\(index)": ["type": "string"]])]]]
        }
        schemas["S60"] = Self.named
        // 2^60 merges before: a startup that never ended.
        let mock = try OpenAPIImport.make(from: Self.document(schemas, root: "S0"), file: "shared.json")
        let server = try await MockServer.inMemory(try ServerConfiguration(root: mock.configuration, file: "shared.json"))
        let report = try await server.get("/report").json()
        #expect(report["p0"] != nil && report["p59"] != nil && report["name"] != nil)
    }
}

@Suite("The mock's own document, read back")
struct OpenAPIRoundTripTests {
    @Test(
        "A configuration's document, mocked again, has the same resources: types, keys, actions, parents, required fields and defaults"
    )
    func roundTrip() async throws {
        let root: JSON = [
            "resources": [
                ["name": "authors", "fields": ["name": ["type": "string", "required": true], "born": "date", "photo": "blob"]],
                [
                    "name": "books", "primaryKey": "isbn", "actions": ["list", "show", "create", "update"],
                    "fields": [
                        "isbn": "string", "title": ["type": "string", "required": true],
                        "pages": ["type": "integer", "default": 100], "tags": "json", "price": "float", "inPrint": "boolean",
                    ],
                    "parents": [["resource": "authors", "foreignKey": "author_id"]],
                ],
                [
                    "name": "loans", "primaryKey": "code", "keyFormat": ["pattern": "^ln_[0-9a-f]{6}$"],
                    "fields": ["code": "string", "days": "integer"],
                ],
                ["name": "holds", "primaryKey": "ref", "keyFormat": "uuid", "fields": ["ref": "string", "note": "string"]],
            ]
        ]
        let original = try ServerConfiguration(root: root, file: "library.json")
        let document = await OpenAPIDocument.make(for: try await MockServer.inMemory(original), title: "Library")
        #expect(try await validate(document, as: "json").hasSuffix(": OK"))
        let mock = try OpenAPIImport.make(from: document, file: "library.openapi.json")
        let again = try ServerConfiguration(root: mock.configuration, file: "library.openapi.json")
        #expect(again.resources == original.resources)
        #expect(mock.stubs.isEmpty)
        // Nothing to say: books are keyed by an ISBN the create requires, loans and holds by keys the
        // server makes in the form the document gives (a pattern, a UUID).
        #expect(mock.notes.isEmpty)
    }
}

extension OpenAPIImportTests {
    @Test(
        "Errors come back in the document's shape: a nested error object with its message filled, a 404 of the API's own, text where it says text"
    )
    func documentedErrorShapes() async throws {
        // OpenAI's shape: `{"error": {"message", "type", "param", "code"}}` with a nullable code; a 404
        // with its own example; a report whose errors are plain text.
        let error: JSON = [
            "type": "object", "required": ["error"],
            "properties": [
                "error": [
                    "type": "object", "required": ["message", "type", "param", "code"],
                    "properties": [
                        "message": ["type": "string"], "type": ["type": "string"],
                        "param": ["type": ["string", "null"]], "code": ["type": ["string", "null"]],
                    ],
                ]
            ],
        ]
        let model: JSON = ["type": "object", "properties": ["id": ["type": "integer"], "name": ["type": "string"]]]
        func content(_ schema: JSON, _ example: JSON? = nil) -> JSON {
            var media: JSONObject = ["schema": schema]
            if let example { media["example"] = example }
            return ["application/json": .object(media)]
        }
        let document: JSON = [
            "openapi": "3.1.0", "info": ["title": "Errors", "version": "1"],
            "components": ["schemas": ["Error": error]],
            "paths": [
                "/models": [
                    "get": [
                        "parameters": [["name": "limit", "in": "query", "schema": ["type": "integer", "maximum": 5]]],
                        "responses": [
                            "200": ["description": "ok", "content": content(["type": "array", "items": model])],
                            "default": ["description": "error", "content": content(["$ref": "#/components/schemas/Error"])],
                        ],
                    ],
                    "post": [
                        "requestBody": ["required": true, "content": content(model)],
                        "responses": [
                            "201": ["description": "made", "content": content(model)],
                            "400": ["description": "bad", "content": content(["$ref": "#/components/schemas/Error"])],
                        ],
                    ],
                ],
                "/models/{id}": [
                    "get": [
                        "parameters": [["name": "id", "in": "path", "required": true, "schema": ["type": "integer"]]],
                        "responses": [
                            "200": ["description": "ok", "content": content(model)],
                            "404": [
                                "description": "none",
                                "content": content(
                                    ["$ref": "#/components/schemas/Error"],
                                    [
                                        "error": [
                                            "message": "No such model", "type": "invalid_request_error", "param": "id",
                                            "code": nil,
                                        ]
                                    ]),
                            ],
                        ],
                    ]
                ],
                "/report": [
                    "get": [
                        "parameters": [["name": "year", "in": "query", "schema": ["type": "integer"]]],
                        "responses": [
                            "200": ["description": "ok", "content": ["text/csv": ["schema": ["type": "string"]]]],
                            "4XX": ["description": "bad", "content": ["text/plain": ["schema": ["type": "string"]]]],
                        ],
                    ]
                ],
            ],
        ]
        let mock = try OpenAPIImport.make(from: document, file: "errors.json")
        let server = try await MockServer.inMemory(try ServerConfiguration(root: mock.configuration, file: "errors.json"))

        let tooMany = await server.get("/models?limit=50")
        #expect(tooMany.status == .badRequest)
        #expect(tooMany.headerFields[.contentType] == "application/json")
        let listError = try #require(try tooMany.json()["error"])
        #expect(listError["message"]?.stringValue?.contains("limit") == true)
        // Every required member is there, and the nullable code carries the status as text.
        #expect(listError["type"]?.stringValue != nil && listError["param"] != nil)
        #expect(listError["code"] == "400")
        // A body the schema refuses: the document lists 400, not 422, so 400 it is.
        let refused = await server.send(MockRequest(.post, "/models", json: ["name": 3]))
        #expect(refused.status == .badRequest)
        #expect(try refused.json()["error"]?["message"]?.stringValue?.contains("/name") == true)
        // A missing record: the documented 404, the example's type and param kept, the message the mock's.
        let missing = await server.get("/models/42")
        #expect(missing.status == .notFound)
        let notFound = try #require(try missing.json()["error"])
        #expect(notFound["type"] == "invalid_request_error" && notFound["param"] == "id")
        #expect(notFound["message"]?.stringValue?.contains("42") == true)
        let report = await server.get("/report?year=soon")
        #expect(report.status == .badRequest)
        #expect(report.headerFields[.contentType] == "text/plain")
    }
}

extension OpenAPIImportTests {
    @Test(
        "chat.yaml: a key made by its pattern, a creation date filled when the record is made, errors in the API's shape, a union sent through a nested create"
    )
    func chatDocument() async throws {
        let (server, openAPI) = try await mock(fromDocument: "chat.yaml")
        #expect(openAPI.resources == ["channels", "messages"])
        // `created` is read-only and required in every answer: made, not a note any more.
        #expect(!openAPI.notes.contains { $0.message.contains("which every answer should carry") })
        var request = MockRequest(.post, "/api/channels", json: ["name": "general"])
        request.headerFields[HTTPField.Name("X-Api-Key")!] = "k"
        let created = await server.respond(to: request)
        #expect(created.status == .created)
        let channel = try created.json()
        let key = try #require(channel["id"]?.stringValue)
        #expect(key.wholeMatch(of: /C[0-9A-Z]{8}/) != nil)
        #expect(channel["created"]?.stringValue?.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/) != nil)
        // Optional members left out are left out of the answer, not null.
        #expect(channel["topic"] == nil)
        // The list answers its envelope, the new channel among the records made from the schema.
        var list = MockRequest(.get, "/api/channels?limit=100")
        list.headerFields[HTTPField.Name("X-Api-Key")!] = "k"
        let page = try await server.respond(to: list).json()
        #expect(page["object"] == "list" && page["has_more"] == false)
        #expect(page["data"]?.arrayValue?.contains { $0["id"] == .string(key) } == true)
        #expect(page["data"]?.arrayValue?.allSatisfy { $0["created"]?.stringValue?.contains("T") == true } == true)
        // Unasked, the list answers its `limit`'s documented default of 20.
        #expect(openAPI.configuration["resources"]?[0]?["pageSize"] == 20)
        var unpaged = MockRequest(.get, "/api/channels")
        unpaged.headerFields[HTTPField.Name("X-Api-Key")!] = "k"
        let firstPage = try await server.respond(to: unpaged).json()
        #expect(firstPage["data"]?.arrayValue?.count == min(20, page["data"]?.arrayValue?.count ?? 0))

        func send(_ request: MockRequest) async -> MockResponse {
            var keyed = request
            keyed.headerFields[HTTPField.Name("X-Api-Key")!] = "k"
            return await server.respond(to: keyed)
        }
        let message = await send(
            MockRequest(.post, "/api/channels/\(key)/messages", json: ["content": ["type": "text", "text": "hello"]]))
        #expect(message.status == .created)
        #expect(try message.json()["channel_id"] == .string(key))
        // The union refuses a branch without what it requires, in the API's error shape (its `default`).
        let refused = await send(MockRequest(.post, "/api/channels/\(key)/messages", json: ["content": ["type": "image"]]))
        #expect(refused.status == .unprocessableContent)
        #expect(try refused.json()["error"]?["code"] == 422)
        #expect(try refused.json()["error"]?["type"] == "invalid_request_error")
        // A missing channel: the documented 404 in the same shape; without the key, a 401 in it too.
        let missing = await send(MockRequest(.get, "/api/channels/CZZZZZZZZ"))
        #expect(missing.status == .notFound)
        #expect(try missing.json()["error"]?["message"]?.stringValue?.contains("CZZZZZZZZ") == true)
        let anonymous = await server.respond(to: MockRequest(.get, "/api/channels/\(key)"))
        #expect(anonymous.status == .unauthorized)
        #expect(try anonymous.json()["error"]?["code"] == 401)
        #expect(anonymous.headerFields[.wwwAuthenticate]?.hasPrefix("ApiKey") == true)
    }
}

extension OpenAPIImportTests {
    @Test("An imported stub answers its other documented statuses and named examples when a request asks with Prefer")
    func preferredExamples() async throws {
        let login: JSON = [
            "post": [
                "responses": [
                    "200": [
                        "description": "signed in",
                        "content": [
                            "application/json": [
                                "schema": ["type": "object", "properties": ["token": ["type": "string"]]],
                                "examples": [
                                    "admin": ["value": ["token": "t-admin"]], "guest": ["value": ["token": "t-guest"]],
                                ],
                            ]
                        ],
                    ],
                    "401": [
                        "description": "wrong password",
                        "content": [
                            "application/json": [
                                "schema": [
                                    "type": "object", "required": ["error"], "properties": ["error": ["type": "string"]],
                                ]
                            ]
                        ],
                    ],
                    "204": ["description": "already signed in"],
                ]
            ]
        ]
        let document: JSON = ["openapi": "3.1.0", "info": ["title": "Login", "version": "1"], "paths": ["/login": login]]
        let mock = try OpenAPIImport.make(from: document, file: "login.json")
        let server = try await MockServer.inMemory(try ServerConfiguration(root: mock.configuration, file: "login.json"))
        func ask(_ preference: String?) async -> MockResponse {
            var request = MockRequest(.post, "/login")
            if let preference { request.headerFields[HTTPField.Name("Prefer")!] = preference }
            return await server.respond(to: request)
        }
        #expect(try await ask(nil).json()["token"] == "t-admin")
        #expect(try await ask("example=guest").json()["token"] == "t-guest")
        let denied = await ask("code=401")
        #expect(denied.status == .unauthorized)
        #expect(try denied.json()["error"]?.stringValue != nil)
        let empty = await ask("code=204")
        #expect(empty.status == .noContent && empty.body.isEmpty)
    }
}

extension OpenAPIImportTests {
    @Test("Cursors and date ranges are read as bounds: after and before on the key, created_after and until on the date fields")
    func cursorsAndRanges() async throws {
        let event: JSON = [
            "type": "object",
            "properties": [
                "id": ["type": "integer"], "name": ["type": "string"],
                "createdAt": ["type": "string", "format": "date-time"], "due": ["type": "string", "format": "date"],
            ],
        ]
        let parameters: [JSON] = ["limit", "after", "before", "created_after", "until", "due_from", "cursor"].map {
            ["name": .string($0), "in": "query", "schema": ["type": "string"]]
        }
        let examples: [JSON] = (1...5).map { index in
            [
                "id": .integer(index), "name": .string("e\(index)"), "createdAt": .string("2024-0\(index)-01T00:00:00Z"),
                "due": .string("2025-0\(index)-15"),
            ]
        }
        let document: JSON = [
            "openapi": "3.1.0", "info": ["title": "Events", "version": "1"],
            "paths": [
                "/events": [
                    "get": [
                        "parameters": .array(parameters),
                        "responses": [
                            "200": [
                                "description": "ok",
                                "content": [
                                    "application/json": [
                                        "schema": ["type": "array", "items": event], "example": .array(examples),
                                    ]
                                ],
                            ]
                        ],
                    ]
                ],
                "/events/{id}": [
                    "get": ["responses": ["200": ["description": "ok", "content": ["application/json": ["schema": event]]]]]
                ],
            ],
        ]
        let mock = try OpenAPIImport.make(from: document, file: "events.json")
        #expect(
            mock.configuration["resources"]?[0]?["queryNames"] == [
                "after": "id_gt", "before": "id_lt", "created_after": "createdAt_gte", "cursor": "_cursor",
                "due_from": "due_gte", "limit": "_limit", "until": "createdAt_lte",
            ])
        #expect(!mock.notes.contains { $0.message.contains("the query parameter cursor is not used") })
        let server = try await MockServer.inMemory(try ServerConfiguration(root: mock.configuration, file: "events.json"))
        func names(_ query: String) async throws -> [JSON] {
            try await server.get("/events?" + query).json().arrayValue?.compactMap { $0["name"] } ?? []
        }
        #expect(try await names("after=2&limit=2") == ["e3", "e4"])
        // The document's opaque `cursor` pages by the mock's own cursors, under the document's names.
        let first = await server.get("/events?cursor=&limit=2")
        let next = try #require(first.headerFields[.nextCursor])
        #expect(first.headerFields[.link]?.contains("cursor=\(next)&limit=2>") == true)
        #expect(try await names("cursor=\(next)&limit=2") == ["e3", "e4"])
        // One it did not make is the document's business: ignored and said so, the first page answered.
        let foreign = await server.get("/events?cursor=opaque-from-production&limit=2")
        #expect(foreign.status == .ok && foreign.headerFields[.ignoredQuery] == "cursor")
        #expect(try await names("before=3") == ["e1", "e2"])
        #expect(try await names("created_after=2024-04-01") == ["e4", "e5"])
        #expect(try await names("until=2024-02-15") == ["e1", "e2"])
        #expect(try await names("due_from=2025-05-01") == ["e5"])
    }
}

extension OpenAPIImportTests {
    @Test(
        "Collections under one literal prefix become resources under it as a base path; a parent written after its nested list is still its parent"
    )
    func prefixAndLateParent() async throws {
        func answer(_ schema: JSON) -> JSON {
            ["responses": ["200": ["description": "ok", "content": ["application/json": ["schema": schema]]]]]
        }
        let flow: JSON = [
            "type": "object", "properties": ["sid": ["type": "string", "readOnly": true], "name": ["type": "string"]],
        ]
        let cat: JSON = [
            "type": "object",
            "properties": ["id": ["type": "integer"], "name": ["type": "string"], "ownerId": ["type": "integer"]],
        ]
        let owner: JSON = ["type": "object", "properties": ["id": ["type": "integer"], "name": ["type": "string"]]]
        let sid: JSON = ["parameters": [["name": "Sid", "in": "path", "required": true, "schema": ["type": "string"]]]]
        let ownerId: JSON = ["parameters": [["name": "ownerId", "in": "path", "required": true, "schema": ["type": "integer"]]]]
        func with(_ base: JSON, _ extra: JSON) -> JSON {
            var object = base.objectValue ?? [:]
            for (key, value) in extra.objectValue ?? [:] { object[key] = value }
            return .object(object)
        }
        let twilio: JSON = [
            "openapi": "3.0.3", "info": ["title": "Flows", "version": "1"], "servers": [["url": "https://studio.example.com"]],
            "paths": [
                "/v2/Flows": ["get": answer(["type": "array", "items": flow])],
                "/v2/Flows/{Sid}": ["get": with(answer(flow), sid)],
                "/v2/Executions": ["get": answer(["type": "array", "items": flow])],
            ],
        ]
        let flows = try OpenAPIImport.make(from: twilio, file: "flows.json")
        #expect(flows.resources == ["Flows", "Executions"])
        #expect(flows.configuration["basePath"] == "/v2")
        let server = try await MockServer.inMemory(try ServerConfiguration(root: flows.configuration, file: "flows.json"))
        #expect(try await server.get("/v2/Flows").json().arrayValue?.isEmpty == false)
        #expect(await server.get("/Flows").status == .notFound)

        let pets: JSON = [
            "openapi": "3.0.3", "info": ["title": "Pets", "version": "1"],
            "paths": [
                "/owners/{ownerId}/cats": ["get": with(answer(["type": "array", "items": cat]), ownerId)],
                "/owners": ["get": answer(["type": "array", "items": owner])],
                "/owners/{ownerId}": ["get": with(answer(owner), ownerId)],
            ],
        ]
        let mock = try OpenAPIImport.make(from: pets, file: "pets.json")
        #expect(mock.resources == ["owners", "cats"])
        #expect(!mock.notes.contains { $0.message.contains("is no resource") })
        #expect(mock.configuration["resources"]?[1]?["parents"]?[0]?["resource"] == "owners")
    }

    @Test("Records without a key member get one the store makes that no answer shows, nor the mock's own document")
    func keyLeftOut() async throws {
        let pet: JSON = [
            "type": "object", "required": ["name"], "additionalProperties": false,
            "properties": ["name": ["type": "string"], "tag": ["type": "string"]],
        ]
        func content(_ schema: JSON) -> JSON { ["application/json": ["schema": schema]] }
        let petId: JSON = [["name": "petId", "in": "path", "required": true, "schema": ["type": "integer"]]]
        let document: JSON = [
            "openapi": "3.0.3", "info": ["title": "Pets", "version": "1"],
            "paths": [
                "/pets": [
                    "get": ["responses": ["200": ["description": "ok", "content": content(["type": "array", "items": pet])]]],
                    "post": [
                        "requestBody": ["content": content(pet)],
                        "responses": ["201": ["description": "made", "content": content(pet)]],
                    ],
                ],
                "/pets/{petId}": [
                    "get": [
                        "parameters": petId, "responses": ["200": ["description": "ok", "content": content(pet)]],
                    ]
                ],
            ],
        ]
        let mock = try OpenAPIImport.make(from: document, file: "pets.json")
        #expect(mock.configuration["resources"]?[0]?["answersKey"] == false)
        let server = try await MockServer.inMemory(try ServerConfiguration(root: mock.configuration, file: "pets.json"))
        let created = await server.respond(to: MockRequest(.post, "/pets", json: ["name": "Fig"]))
        #expect(created.status == .created)
        let made = try created.json()
        #expect(made["id"] == nil && made["name"] == "Fig")
        let location = try #require(created.headerFields[.location])
        #expect(location.hasPrefix("/pets/"))
        let read = await server.respond(to: MockRequest(.get, location))
        #expect(read.status == .ok)
        #expect(try read.json()["id"] == nil)
        #expect(
            try await server.respond(to: MockRequest(.get, "/pets")).json().arrayValue?.allSatisfy { $0["id"] == nil } == true)
        // Its own document shows no key member and no link that would need one.
        let own = await OpenAPIDocument.make(for: server, title: "Pets")
        let schemas = own["components"]?["schemas"]?.objectValue ?? [:]
        let record = try #require(
            schemas.first { $0.value["description"]?.stringValue?.contains("as the server answers it") == true })
        #expect(record.value["properties"]?["id"] == nil)
        #expect(own["paths"]?["/pets"]?["post"]?["responses"]?["201"]?["links"] == nil)
        // A path parameter named in another case than its member is the key: `{Sid}` and `sid`.
        var sid = document
        sid["paths"] = [
            "/flows/{Sid}": [
                "get": [
                    "parameters": [["name": "Sid", "in": "path", "required": true, "schema": ["type": "string"]]],
                    "responses": [
                        "200": [
                            "description": "ok",
                            "content": content([
                                "type": "object", "properties": ["sid": ["type": "string"], "name": ["type": "string"]],
                            ]),
                        ]
                    ],
                ]
            ]
        ]
        let flows = try OpenAPIImport.make(from: sid, file: "flows.json")
        #expect(flows.configuration["resources"]?[0]?["primaryKey"] == "sid")
        #expect(flows.configuration["resources"]?[0]?["answersKey"] == nil)
    }

    @Test("The keys the document's example requests name are records: generated records take them, or copies of an example")
    func exampleKeys() async throws {
        let store: JSON = [
            "type": "object", "required": ["id", "name"],
            "properties": ["id": ["type": "string", "readOnly": true], "name": ["type": "string"]],
        ]
        func content(_ schema: JSON) -> JSON { ["application/json": ["schema": schema]] }
        func document(listExample: JSON?) -> JSON {
            var list: JSON = ["type": "array", "items": store]
            if let listExample { list["example"] = listExample }
            return [
                "openapi": "3.0.3", "info": ["title": "Stores", "version": "1"],
                "paths": [
                    "/vector_stores": [
                        "get": ["responses": ["200": ["description": "ok", "content": content(list)]]],
                        "post": [
                            "requestBody": ["content": content(["type": "object", "properties": ["name": ["type": "string"]]])],
                            "responses": ["200": ["description": "made", "content": content(store)]],
                        ],
                    ],
                    "/vector_stores/{vector_store_id}": [
                        "get": [
                            "parameters": [
                                [
                                    "name": "vector_store_id", "in": "path", "required": true, "schema": ["type": "string"],
                                    "example": "vs_abc123",
                                ]
                            ],
                            "responses": ["200": ["description": "ok", "content": content(store)]],
                        ]
                    ],
                ],
            ]
        }
        let generated = try OpenAPIImport.make(from: document(listExample: nil), file: "stores.json")
        #expect(generated.configuration["generate"]?["vector_stores"]?["keys"] == ["vs_abc123"])
        let server = try await MockServer.inMemory(try ServerConfiguration(root: generated.configuration, file: "stores.json"))
        #expect(try await server.respond(to: MockRequest(.get, "/vector_stores/vs_abc123")).json()["id"] == "vs_abc123")
        #expect(try await server.respond(to: MockRequest(.get, "/vector_stores")).json().arrayValue?.count == 10)
        // With example records, a copy of the first takes the key.
        let examples = try OpenAPIImport.make(
            from: document(listExample: [["id": "vs_first", "name": "Docs"]]), file: "stores.json")
        let records = examples.configuration["data"]?["vector_stores"]?.arrayValue ?? []
        #expect(records == [["id": "vs_first", "name": "Docs"], ["id": "vs_abc123", "name": "Docs"]])
    }
}
