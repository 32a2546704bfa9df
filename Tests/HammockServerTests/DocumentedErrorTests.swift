import HTTPTypes
import HammockJSON
import HammockServer
import Testing

/// Errors answered as the API document answers them (an operation's `errors` in the configuration's
/// `validation`), rather than as problem+json.
@Suite("Documented errors")
struct DocumentedErrorTests {
    /// A pets API whose errors are `{"error": {"code": N, "message": …}}`, a 404 of its own on the item,
    /// only a 400 (no 422) on the create, `default` on the list, plain text on a report, a 401 with no body.
    static let configuration = """
        {
          "resources": [{"name": "pets", "fields": {"name": "string", "kind": "string"}},
                        {"name": "tags", "primaryKey": "label", "fields": {"label": "string"}}],
          "routes": [{"method": "GET", "path": "/report", "text": "all fine"}],
          "validation": {
            "schemas": {
              "Error": {"type": "object", "required": ["error"], "properties": {"error": {
                "type": "object", "required": ["code", "message"],
                "properties": {"code": {"type": "integer"}, "message": {"type": "string"},
                               "kind": {"type": "string", "enum": ["invalid_request", "not_found"]}}}}}
            },
            "securitySchemes": {"token": {"type": "http", "scheme": "bearer"}},
            "operations": [
              {"method": "GET", "path": "/pets", "parameters": [{"name": "limit", "in": "query", "schema": {"type": "integer", "maximum": 10}}],
               "errors": [{"status": "default", "contentType": "application/json",
                           "body": {"error": {"code": 0, "message": "", "kind": "invalid_request"}},
                           "fill": {"/error/code": "status", "/error/message": "detail", "/error/kind": "title"},
                           "schema": {"$ref": "#/components/schemas/Error"}}]},
              {"method": "POST", "path": "/pets",
               "body": {"required": true, "content": {"application/json": {"schema": {"type": "object", "required": ["name"]}}}},
               "errors": [{"status": "400", "contentType": "application/vnd.pets.error+json",
                           "body": {"code": "0", "message": ""}, "fill": {"/code": "status", "/message": "detail"}}]},
              {"method": "GET", "path": "/pets/:id", "security": [{"token": []}],
               "errors": [{"status": "404", "contentType": "application/json", "body": {"error": {"code": 404, "message": "gone"}},
                           "fill": {"/error/code": "status", "/error/message": "detail"}},
                          {"status": "401"}]},
              {"method": "POST", "path": "/tags", "errors": [{"status": "400", "contentType": "application/json", "body": {"message": ""}}]},
              {"method": "GET", "path": "/report", "parameters": [{"name": "year", "in": "query", "schema": {"type": "integer"}}],
               "errors": [{"status": "4XX", "contentType": "text/plain"}]}
            ]
          }
        }
        """

    static func server() async throws -> MockServer {
        let configuration = try ServerConfiguration(parsing: Array(Self.configuration.utf8), file: "pets.json")
        return try await MockServer(configuration: configuration, store: MemoryStore())
    }

    @Test("A missing record is answered with the document's 404 body, the problem's words where its message goes")
    func exactStatus() async throws {
        let server = try await Self.server()
        let response = await server.respond(to: MockRequest(.get, "/pets/7", headerFields: [.authorization: "Bearer t"]))
        #expect(response.status == .notFound)
        #expect(response.headerFields[.contentType] == "application/json")
        let error = try response.json()["error"]
        #expect(error?["code"] == 404)
        #expect(error?["message"]?.stringValue?.contains("7") == true)
    }

    @Test("A refusal the document has no code for takes its range or its default; a constrained member keeps the example")
    func rangeAndDefault() async throws {
        let server = try await Self.server()
        let list = await server.respond(to: MockRequest(.get, "/pets?limit=50"))
        #expect(list.status == .badRequest)
        let error = try list.json()["error"]
        #expect(error?["code"] == 400)
        #expect(error?["message"]?.stringValue?.contains("limit") == true)
        // "The request does not match the API document" is no value of the documented enum: the example's stays.
        #expect(error?["kind"] == "invalid_request")
        let report = await server.respond(to: MockRequest(.get, "/report?year=soon"))
        #expect(report.status == .badRequest)
        #expect(report.headerFields[.contentType] == "text/plain")
        #expect(String(decoding: report.body, as: UTF8.self).contains("year"))
    }

    @Test(
        "A body the schema refuses is answered with the document's 400 when it lists no 422, code as text where the body has text"
    )
    func inputStatusMapped() async throws {
        let server = try await Self.server()
        let response = await server.respond(to: MockRequest(.post, "/pets", json: ["kind": "cat"]))
        #expect(response.status == .badRequest)
        #expect(response.headerFields[.contentType] == "application/vnd.pets.error+json")
        #expect(try response.json()["code"] == "400")
        #expect(try response.json()["message"]?.stringValue?.contains("name") == true)
        // Nothing was stored.
        #expect(try await server.respond(to: MockRequest(.get, "/pets")).json().arrayValue?.isEmpty == true)
    }

    @Test(
        "A documented answer without content has no body but keeps the challenge; what the document does not cover stays problem+json"
    )
    func noContentAndUncovered() async throws {
        let server = try await Self.server()
        let anonymous = await server.respond(to: MockRequest(.get, "/pets/1"))
        #expect(anonymous.status == .unauthorized)
        #expect(anonymous.body.isEmpty)
        #expect(anonymous.headerFields[.contentType] == nil)
        #expect(anonymous.headerFields[values: .wwwAuthenticate] == [#"Bearer realm="hammock""#])
        // DELETE /pets/1 is no operation of the document: the mock's own problem.
        let missing = await server.respond(to: MockRequest(.delete, "/pets/1"))
        #expect(missing.status == .notFound)
        #expect(missing.headerFields[.contentType] == "application/problem+json")
        // POST /tags documents only 400: a 409 for a taken key stays a problem.
        #expect(await server.respond(to: MockRequest(.post, "/tags", json: ["label": "red"])).status == .created)
        let taken = await server.respond(to: MockRequest(.post, "/tags", json: ["label": "red"]))
        #expect(taken.status == .conflict)
        #expect(taken.headerFields[.contentType] == "application/problem+json")
    }

    @Test("An errors entry with an unknown status, key or member is refused naming its key path")
    func mistakes() {
        func keyPath(_ errors: String) -> String? {
            let text =
                #"{"routes": [{"method": "GET", "path": "/x"}], "validation": {"operations": [{"method": "GET", "path": "/x", "errors": \#(errors)}]}}"#
            let error = #expect(throws: ConfigurationError.self) {
                try ServerConfiguration(parsing: Array(text.utf8), file: "bad.json")
            }
            return error?.keyPath
        }
        #expect(keyPath(#"[{"status": "200"}]"#) == "validation.operations[0].errors[0].status")
        #expect(keyPath(#"[{"status": "404", "colour": 1}]"#) == "validation.operations[0].errors[0].colour")
        #expect(keyPath(#"[{"status": "404", "fill": {"/m": "weather"}}]"#) == "validation.operations[0].errors[0].fill./m")
        #expect(keyPath(#"[{"status": "404", "fill": {"m": "detail"}}]"#) == "validation.operations[0].errors[0].fill.m")
        #expect(keyPath(#"{"status": "404"}"#) == "validation.operations[0].errors")
    }
}
