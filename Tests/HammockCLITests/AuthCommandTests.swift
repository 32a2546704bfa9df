import Foundation
import HammockJSON
import HammockTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `hammock serve` with an `auth` section, met by implementations no one here wrote: PyJWT verifies the
/// access tokens against the JWKS the mock serves, and a script written from RFC 6749's examples checks
/// the token endpoint (Tests/Scripts/oauth_client.py).
@Suite("Auth against PyJWT and RFC 6749's examples", .timeLimit(.minutes(2)))
struct AuthCommandTests {
    static func configuration(algorithm: String) throws -> String {
        let text = """
            {"resources": [{"name": "people", "fields": {"name": "string"}}],
             "auth": {
               "users": [{"username": "johndoe", "password": "A3ddj3w", "roles": ["reader"]}],
               "clients": [{"id": "s6BhdRkqt3", "secret": "gX1fBat3bV", "roles": ["service"]}],
               "protect": [{"resource": "people"}],
               "audience": "people-api", "algorithm": "\(algorithm)"
             }}
            """
        let path = TemporaryFiles.directory("auth") + "auth-\(algorithm).json"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func run(algorithm: String) async throws -> [String: JSON] {
        try await HammockProcess.pythonReports(
            serving: [try configuration(algorithm: algorithm), "--port", "0"], script: "oauth_client.py",
            scriptArguments: [algorithm])
    }

    @Test(
        "PyJWT verifies the mock's tokens against its JWKS (ES256 and RS256), its forgeries are refused, and the token endpoint passes RFC 6749's examples",
        arguments: ["ES256", "RS256"])
    func againstPyJWT(algorithm: String) async throws {
        let reports = try await Self.run(algorithm: algorithm)
        let pyjwt = try #require(reports["pyjwt"], "\(reports)")
        #expect(pyjwt["status"] == 200)
        #expect(pyjwt["subject"] == "johndoe")
        #expect(pyjwt["roles"] == ["reader"])
        #expect(pyjwt["jwks_uri"] == true)
        #expect(pyjwt["token_endpoint"] == true)
        #expect(pyjwt["unauthorized"] == 401)
        #expect(pyjwt["challenge"] == "Bearer realm=\"hammock\"")
        #expect(pyjwt["authorized"] == 200)
        #expect(pyjwt["forgeries"] == [401, 401])
        // A 10,000-byte token is within the server's header limits, and refused unread (over 8192 bytes).
        #expect(pyjwt["huge"] == 401)
        let conformance = try #require(reports["rfc6749"], "\(reports)")
        #expect(conformance["failures"] == [], "\(conformance)")
        #expect((conformance["passed"]?.intValue ?? 0) >= 30)
    }

    @Test(
        "An OpenAPI document's bearer requirements, with --auth, take only the mock's own valid tokens: a made-up one is 401, an issued one passes, an open operation stays open"
    )
    func documentWithLogin() async throws {
        let auth = TemporaryFiles.directory("auth") + "login.yaml"
        try Data("users:\n  - {username: ada, password: lovelace}\n".utf8).write(to: URL(fileURLWithPath: auth))
        let process = try HammockProcess(
            ["serve", "Tests/OpenAPI/documents/tasks.yaml", "--auth", auth, "--port", "0", "--store", "memory"])
        let banner = await process.firstLine { $0.hasPrefix("Hammock is serving") }
        // The document's first server puts every route under /v3, the login's too.
        let base =
            try #require(banner?.split(separator: " ").last.map(String.init), "\(process.errorOutput.withLock { $0 })") + "/v3"
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        func status(_ path: String, token: String?) async throws -> Int {
            var request = URLRequest(url: try #require(URL(string: base + path)))
            if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
            let (_, response) = try await session.data(for: request)
            return (response as? HTTPURLResponse)?.statusCode ?? 0
        }
        #expect(try await status("/projects", token: nil) == 401)
        #expect(try await status("/projects", token: "made-up") == 401)
        var login = URLRequest(url: try #require(URL(string: base + "/auth/token")))
        login.httpMethod = "POST"
        login.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        login.httpBody = Data("grant_type=password&username=ada&password=lovelace".utf8)
        let (body, _) = try await session.data(for: login)
        let token = try #require(try JSON(parsing: [UInt8](body))["access_token"]?.stringValue)
        #expect(try await status("/projects", token: token) == 200)
        #expect(try await status("/health", token: nil) == 200)
        process.interrupt()
        #expect(await process.exitStatus() == 0)
    }

    @Test(
        "A document's OAuth password flow is served as a demo login at its tokenUrl, said on start; --auth replaces it with the file's users"
    )
    func documentsOwnLogin() async throws {
        let document = TemporaryFiles.directory("auth") + "notes.yaml"
        let text = """
            openapi: 3.0.3
            info: {title: Notes, version: "1"}
            servers: [{url: /api}]
            components:
              securitySchemes:
                oauth: {type: oauth2, flows: {password: {tokenUrl: /api/oauth/token, scopes: {}}}}
            security: [{oauth: []}]
            paths:
              /notes:
                get: {responses: {"200": {description: ok, content: {application/json: {schema: {type: array, items: {type: object}}}}}}}
            """
        try Data(text.utf8).write(to: URL(fileURLWithPath: document))
        let auth = TemporaryFiles.directory("auth") + "ada.yaml"
        try Data("users:\n  - {username: ada, password: lovelace}\ntokenPath: /oauth/token\n".utf8).write(
            to: URL(fileURLWithPath: auth))
        for (extra, user, password) in [([String](), "demo", "demo"), (["--auth", auth], "ada", "lovelace")] {
            let process = try HammockProcess(["serve", document, "--port", "0"] + extra)
            let banner = await process.firstLine { $0.hasPrefix("Hammock is serving") }
            let base = try #require(banner?.split(separator: " ").last.map(String.init)) + "/api"
            let said = await process.firstLine { $0.hasPrefix("auth:") }
            #expect(
                said?.contains("/api/oauth/token (1 user, 0 clients, ES256); the API document's requirements") == true,
                "\(said ?? "")")
            let session = URLSession(configuration: .ephemeral)
            func signIn(_ user: String, _ password: String) async throws -> String? {
                var login = URLRequest(url: try #require(URL(string: base + "/oauth/token")))
                login.httpMethod = "POST"
                login.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
                login.httpBody = Data("grant_type=password&username=\(user)&password=\(password)".utf8)
                let (body, _) = try await session.data(for: login)
                return try JSON(parsing: [UInt8](body))["access_token"]?.stringValue
            }
            let token = try #require(try await signIn(user, password))
            // The other login's user is unknown to this one.
            #expect(try await signIn(user == "demo" ? "ada" : "demo", user == "demo" ? "lovelace" : "demo") == nil)
            var list = URLRequest(url: try #require(URL(string: base + "/notes")))
            let (_, refused) = try await session.data(for: list)
            #expect((refused as? HTTPURLResponse)?.statusCode == 401)
            list.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            let (_, answered) = try await session.data(for: list)
            #expect((answered as? HTTPURLResponse)?.statusCode == 200)
            session.finishTasksAndInvalidate()
            process.interrupt()
            #expect(await process.exitStatus() == 0)
        }
    }
}
