import Foundation
import HTTPTypes
import HammockJSON
import HammockJWT
import HammockServer
import Testing

@testable import HammockOpenAPI

/// The login and OpenAPI: a document's OAuth 2.0 flows become the mock's login, its scopes are held, and
/// the mock's own document states its login so that it imports again with it.
@Suite("OpenAPI: the login read and written")
struct OpenAPILoginTests {
    static let document = """
        openapi: 3.1.0
        info: {title: Tasks, version: "1"}
        servers: [{url: "https://api.example.com/v1"}]
        components:
          securitySchemes:
            oauth:
              type: oauth2
              flows:
                password: {tokenUrl: "https://api.example.com/v1/oauth/token", scopes: {"tasks:read": read, "tasks:write": write}}
                clientCredentials: {tokenUrl: "https://api.example.com/v1/oauth/token", scopes: {}}
          schemas:
            Task: {type: object, properties: {id: {type: integer}, title: {type: string}}}
        security: [{oauth: ["tasks:read"]}]
        paths:
          /health:
            get: {security: [], responses: {"200": {description: ok}}}
          /tasks:
            get: {responses: {"200": {description: ok, content: {application/json: {schema: {type: array, items: {$ref: "#/components/schemas/Task"}}}}}}}
            post:
              security: [{oauth: ["tasks:write"]}]
              requestBody: {content: {application/json: {schema: {$ref: "#/components/schemas/Task"}}}}
              responses: {"201": {description: made, content: {application/json: {schema: {$ref: "#/components/schemas/Task"}}}}}
          /tasks/{id}:
            get:
              parameters: [{name: id, in: path, required: true, schema: {type: integer}}]
              responses: {"200": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Task"}}}}}
        """

    static func server(_ text: String = document) async throws -> (MockServer, OpenAPIImport) {
        let openAPI = try OpenAPIImport.make(from: try YAMLText.json(from: text), file: "tasks.yaml")
        let configuration = try ServerConfiguration(root: openAPI.configuration, file: "tasks.yaml")
        return (try await MockServer.inMemory(configuration, tokenSigner: JWTAccessTokens()), openAPI)
    }

    static func token(_ server: MockServer, _ form: String, at path: String = "/v1/oauth/token") async throws -> String {
        let response = await server.respond(
            to: MockRequest(
                .post, path, headerFields: [.contentType: "application/x-www-form-urlencoded"],
                body: Array(form.utf8)))
        #expect(response.status == .ok, "\(String(decoding: response.body, as: UTF8.self))")
        return try #require(try response.json()["access_token"]?.stringValue)
    }

    static func send(_ server: MockServer, _ method: HTTPRequest.Method, _ path: String, token: String?) async -> MockResponse {
        var fields = HTTPFields()
        if let token { fields[.authorization] = "Bearer \(token)" }
        if method == .post {
            return await server.respond(to: MockRequest(method, path, headerFields: fields, json: ["title": "write docs"]))
        }
        return await server.respond(to: MockRequest(method, path, headerFields: fields))
    }

    @Test(
        "A document's password and client-credentials flows become a login at the tokenUrl's path, with a demo user and client, and a note"
    )
    func flowsBecomeALogin() async throws {
        let (server, openAPI) = try await Self.server()
        let auth = try #require(server.auth)
        #expect(auth.tokenPath == "/oauth/token")
        #expect(auth.users.map(\.username) == ["demo"])
        #expect(auth.clients.map(\.id) == ["demo-client"])
        #expect(openAPI.notes.contains { $0.message.contains("a login is served: tokens at POST /v1/oauth/token") })
        let user = try await Self.token(server, "grant_type=password&username=demo&password=demo")
        let client = try await Self.token(server, "grant_type=client_credentials&client_id=demo-client&client_secret=demo-secret")
        for token in [user, client] { #expect(await Self.send(server, .get, "/v1/tasks", token: token).status == .ok) }
        #expect(await Self.send(server, .get, "/v1/health", token: nil).status == .ok)
        // Without a token, and with a well-formed one the mock did not issue: 401.
        #expect(await Self.send(server, .get, "/v1/tasks", token: nil).status == .unauthorized)
        let foreign = await Self.send(server, .get, "/v1/tasks", token: "eyJhbGciOiJIUzI1NiJ9.e30.c2lnbmF0dXJl")
        #expect(foreign.status == .unauthorized)
        #expect(foreign.headerFields[.wwwAuthenticate]?.contains("invalid_token") == true)
    }

    @Test(
        "A token asked with a narrower scope is refused 403 insufficient_scope where the document asks for another; one without a scope has them all"
    )
    func scopesHeld() async throws {
        let (server, _) = try await Self.server()
        let reader = try await Self.token(server, "grant_type=password&username=demo&password=demo&scope=tasks:read")
        #expect(await Self.send(server, .get, "/v1/tasks", token: reader).status == .ok)
        let refused = await Self.send(server, .post, "/v1/tasks", token: reader)
        #expect(refused.status == .forbidden)
        #expect(
            refused.headerFields[.wwwAuthenticate] == #"Bearer realm="hammock", error="insufficient_scope", scope="tasks:write""#)
        let writer = try await Self.token(
            server, "grant_type=password&username=demo&password=demo&scope=tasks:read%20tasks:write")
        #expect(await Self.send(server, .post, "/v1/tasks", token: writer).status == .created)
        let unscoped = try await Self.token(server, "grant_type=password&username=demo&password=demo")
        #expect(await Self.send(server, .post, "/v1/tasks", token: unscoped).status == .created)
    }

    @Test(
        "A browser flow gets the password grant at its token URL, noted; a bearer-only document gets no login; a tokenUrl with no usable path keeps the default"
    )
    func otherFlows() async throws {
        let browser = Self.document.replacingOccurrences(
            of: #"password: {tokenUrl: "https://api.example.com/v1/oauth/token","#,
            with:
                #"authorizationCode: {authorizationUrl: "https://id.example.com/authorize", tokenUrl: "https://id.example.com/token","#
        ).replacingOccurrences(
            of: #"clientCredentials: {tokenUrl: "https://api.example.com/v1/oauth/token", scopes: {}}"#, with: "")
        let (server, openAPI) = try await Self.server(browser)
        #expect(server.auth?.tokenPath == "/token")
        #expect(openAPI.notes.contains { $0.message.contains("authorizationCode: no browser sign-in is served") })
        // Served under the base path, at the flow's own token URL's path.
        _ = try await Self.token(server, "grant_type=password&username=demo&password=demo", at: "/v1/token")
        let bearerOnly = Self.document.replacingOccurrences(
            of: "type: oauth2\n      flows:", with: "type: http\n      scheme: bearer\n      x-flows:")
        let (plain, _) = try await Self.server(bearerOnly)
        #expect(plain.auth == nil)
        #expect(OpenAPIMapper.tokenPath(of: "https://id.example.com", under: nil) == nil)
        #expect(OpenAPIMapper.tokenPath(of: "oauth/token", under: "/v1") == "/oauth/token")
        #expect(OpenAPIMapper.tokenPath(of: "/v1/oauth/token?x=1", under: "/v1") == "/oauth/token")
        #expect(OpenAPIMapper.tokenPath(of: "/v1:token", under: nil) == nil)
    }

    @Test(
        "The mock's document states its login: an OAuth scheme at the token endpoint, the requirement and 401/403 on protected operations only, the endpoint's shapes"
    )
    func documentStatesTheLogin() async throws {
        let text = """
            {"basePath": "/api",
             "resources": [{"name": "people", "fields": {"name": "string"}}, {"name": "notes", "fields": {"text": "string", "ownerId": "string"}}],
             "routes": [{"method": "GET", "path": "/status", "body": {"ok": true}}],
             "auth": {"users": [{"username": "ada", "password": "lovelace"}], "clients": [{"id": "cron", "secret": "s3cret"}],
                      "apiKeys": [{"key": "key-12345678", "user": "ada"}],
                      "protect": [{"resource": "people", "actions": ["write"]}, {"resource": "notes", "owner": "ownerId"}]}}
            """
        let configuration = try ServerConfiguration(parsing: Array(text.utf8), file: "m.json")
        let server = try await MockServer.inMemory(configuration, tokenSigner: JWTAccessTokens())
        let document = await OpenAPIDocument.make(for: server)
        let schemes = try #require(document["components"]?["securitySchemes"])
        #expect(schemes["login"]?["flows"]?["password"]?["tokenUrl"] == "/api/auth/token")
        #expect(schemes["login"]?["flows"]?["clientCredentials"]?["tokenUrl"] == "/api/auth/token")
        #expect(schemes["apiKey"] == ["type": "apiKey", "in": "header", "name": "X-API-Key"])
        let paths = try #require(document["paths"])
        #expect(paths["/people"]?["get"]?["security"] == nil)
        #expect(paths["/people"]?["post"]?["security"] == [["login": []], ["apiKey": []]])
        #expect(paths["/people"]?["post"]?["responses"]?["401"] != nil)
        #expect(paths["/people"]?["post"]?["responses"]?["403"] == nil)
        #expect(paths["/notes/{id}"]?["get"]?["responses"]?["403"] != nil)
        #expect(paths["/status"]?["get"]?["security"] == nil)
        #expect(paths["/auth/token"]?["post"]?["requestBody"]?["content"]?["application/x-www-form-urlencoded"] != nil)
        #expect(paths["/auth/token"]?["post"]?["security"] == [])
        #expect(paths["/.well-known/jwks.json"]?["get"]?["operationId"] == "getSigningKeys")
        // Valid OpenAPI 3.1 to another implementation, as JSON and as YAML.
        #expect(try await validate(document, as: "json").hasSuffix(": OK"))
        #expect(try await validate(document, as: "yaml").hasSuffix(": OK"))
    }

    @Test(
        "The mock's document imports again with its login: sign in at the same path as the demo user, the protected operations need the mock's token"
    )
    func roundTrip() async throws {
        let text = """
            {"resources": [{"name": "people", "fields": {"name": "string"}}],
             "auth": {"users": [{"username": "ada", "password": "lovelace"}], "protect": [{"resource": "people"}]}}
            """
        let original = try await MockServer.inMemory(
            try ServerConfiguration(parsing: Array(text.utf8), file: "m.json"), tokenSigner: JWTAccessTokens())
        let document = await OpenAPIDocument.make(for: original)
        let openAPI = try OpenAPIImport.make(from: document, file: "mock.json")
        let again = try await MockServer.inMemory(
            try ServerConfiguration(root: openAPI.configuration, file: "mock.json"), tokenSigner: JWTAccessTokens())
        #expect(again.auth?.tokenPath == "/auth/token")
        let response = await again.respond(
            to: MockRequest(
                .post, "/auth/token", headerFields: [.contentType: "application/x-www-form-urlencoded"],
                body: Array("grant_type=password&username=demo&password=demo".utf8)))
        // The token endpoint answers as OAuth says, not as the imported stub of its path does.
        let token = try #require(try response.json()["access_token"]?.stringValue)
        let bad = await again.respond(
            to: MockRequest(.post, "/auth/token", headerFields: [.contentType: "application/x-www-form-urlencoded"], body: []))
        #expect(try bad.json()["error"] == "invalid_request")
        #expect(await again.respond(to: MockRequest(.get, "/people")).status == .unauthorized)
        #expect(
            await again.respond(to: MockRequest(.get, "/people", headerFields: [.authorization: "Bearer \(token)"])).status == .ok
        )
    }
}
