import Foundation
import HTTPTypes
import HammockJSON
import HammockJWT
import HammockStore
import HammockTestSupport
import HammockWire
import JWTKit
import Testing

@testable import HammockServer

/// The mock's login: the token endpoint's grants and errors (RFC 6749), access tokens checked on
/// protected routes (RFC 6750), and the hostile tokens, in process.
@Suite("Auth: the mock issues and checks tokens")
struct AuthTests {
    static let configuration = """
        {"resources": [{"name": "people", "fields": {"name": "string"}}, {"name": "notes", "fields": {"text": "string"}}],
         "routes": [{"method": "GET", "path": "/reports/:id", "body": {"id": "{{path.id}}"}}],
         "auth": {
           "users": [{"username": "ada", "password": "lovelace", "roles": ["admin"], "claims": {"name": "Ada"}},
                     {"username": "bob", "password": "builder", "id": "u-2"}],
           "clients": [{"id": "reports", "secret": "s3cret", "roles": ["service"]}, {"id": "ios-app"}],
           "protect": [{"resource": "people"},
                       {"resource": "people", "actions": ["write"], "roles": ["admin"]},
                       {"route": "/reports/:id", "roles": ["service", "admin"]}],
           "accessTokenLifetime": 600, "refreshTokenLifetime": 3600, "audience": "people-api"
         }}
        """

    func server(_ text: String = configuration, clock: ManualClock = ManualClock()) async throws -> MockServer {
        let configuration = try ServerConfiguration(parsing: Array(text.utf8), file: "mock.json")
        return try await MockServer(
            configuration: configuration, store: MemoryStore(), tokenSigner: JWTAccessTokens(), clock: clock)
    }

    func form(_ server: MockServer, _ body: String, headers: HTTPFields = [:]) async -> (MockResponse, JSON) {
        var fields = headers
        fields[.contentType] = "application/x-www-form-urlencoded"
        let response = await server.respond(to: MockRequest(.post, "/auth/token", headerFields: fields, body: Array(body.utf8)))
        return (response, (try? JSON(parsing: response.body)) ?? .null)
    }

    func get(_ server: MockServer, _ path: String, token: String?) async -> MockResponse {
        var fields = HTTPFields()
        if let token { fields[.authorization] = "Bearer \(token)" }
        return await server.respond(to: MockRequest(.get, path, headerFields: fields))
    }

    /// The claims of a token, read without checking it.
    func claims(_ token: String) throws -> JSON {
        let part = try #require(token.split(separator: ".").dropFirst().first)
        return try JSON(parsing: try #require(Base64URL.decode(part)))
    }

    // MARK: The token endpoint

    @Test("The password grant answers a signed access token, a refresh token and its lifetime, never to be cached")
    func passwordGrant() async throws {
        let server = try await server()
        let (response, body) = await form(server, "grant_type=password&username=ada&password=lovelace&scope=people.read")
        #expect(response.status == .ok)
        #expect(response.headerFields[.cacheControl] == "no-store")
        #expect(body["token_type"] == "Bearer")
        #expect(body["expires_in"] == 600)
        #expect(body["scope"] == "people.read")
        let refresh = try #require(body["refresh_token"]?.stringValue)
        #expect(refresh.count >= 40)
        let token = try #require(body["access_token"]?.stringValue)
        let read = try claims(token)
        #expect(read["sub"] == "ada")
        #expect(read["iss"] == "hammock")
        #expect(read["aud"] == "people-api")
        #expect(read["roles"] == ["admin"])
        #expect(read["name"] == "Ada")
        #expect(read["exp"]?.intValue == (read["iat"]?.intValue ?? 0) + 600)
        // The same grant as JSON, as many app clients send it; a user's id is the subject.
        let json = await server.respond(
            to: MockRequest(.post, "/auth/token", json: ["grant_type": "password", "username": "bob", "password": "builder"]))
        #expect(json.status == .ok)
        let bob = try JSON(parsing: json.body)
        #expect(try claims(try #require(bob["access_token"]?.stringValue))["sub"] == "u-2")
    }

    @Test("A wrong password, a missing parameter, an unknown grant and a body of another type get OAuth's errors, not tokens")
    func tokenEndpointErrors() async throws {
        let server = try await server()
        let cases: [(String, String)] = [
            ("grant_type=password&username=ada&password=wrong", "invalid_grant"),
            ("grant_type=password&username=nobody&password=x", "invalid_grant"),
            ("grant_type=password&username=ada", "invalid_request"),
            ("username=ada&password=lovelace", "invalid_request"),
            ("grant_type=authorization_code&code=x", "unsupported_grant_type"),
            ("grant_type=password&grant_type=password&username=ada&password=lovelace", "invalid_request"),
            ("grant_type=refresh_token&refresh_token=made-up", "invalid_grant"),
            ("grant_type=password&username=ada&password=%zz", "invalid_request"),
        ]
        for (body, error) in cases {
            let (response, json) = await form(server, body)
            #expect(response.status == .badRequest, "\(body)")
            #expect(json["error"] == .string(error), "\(body)")
            #expect(json["error_description"]?.stringValue?.isEmpty == false)
        }
        let text = await server.respond(
            to: MockRequest(
                .post, "/auth/token", headerFields: [.contentType: "text/plain"], body: Array("grant_type=password".utf8)))
        #expect(text.status == .badRequest)
        let get = await server.respond(to: MockRequest(.get, "/auth/token"))
        #expect(get.status == .methodNotAllowed)
        #expect(server.journal.entries.count >= cases.count)
    }

    @Test("The journal keeps a token request without its password, client secret or refresh token")
    func journalKeepsNoSecrets() async throws {
        let server = try await server()
        let basic = "Basic " + Data("reports:s3cret".utf8).base64EncodedString()
        let (_, login) = await form(
            server, "grant_type=password&username=ada&password=lovelace&client_secret=s3cret", headers: [:])
        let form = try #require(server.journal.entries.last)
        let parameters = try FormURLEncoded.decode(form.body)
        #expect(parameters["username"] == "ada")
        #expect(parameters["grant_type"] == "password")
        #expect(parameters["password"] == "<redacted>")
        #expect(parameters["client_secret"] == "<redacted>")
        let refresh = login["refresh_token"]?.stringValue ?? ""
        _ = await server.respond(
            to: MockRequest(
                .post, "/auth/token", headerFields: [.authorization: basic],
                json: ["grant_type": "refresh_token", "refresh_token": .string(refresh)]))
        let json = try JSON(parsing: try #require(server.journal.entries.last).body)
        #expect(json["refresh_token"] == "<redacted>")
        #expect(json["grant_type"] == "refresh_token")
        #expect(!String(decoding: try #require(server.journal.entries.last).body, as: UTF8.self).contains(refresh))
        _ = await server.respond(
            to: MockRequest(
                .post, "/auth/token", headerFields: [.contentType: "text/plain"], body: Array("password=lovelace".utf8)))
        #expect(try #require(server.journal.entries.last).body.isEmpty)
        // Other routes keep their bodies as they were.
        _ = await server.respond(to: MockRequest(.post, "/notes", json: ["text": "password=lovelace"]))
        #expect(String(decoding: try #require(server.journal.entries.last).body, as: UTF8.self).contains("lovelace"))
    }

    @Test("A refresh token is used once: it brings a new pair, and its reuse revokes the pair it brought")
    func refreshRotation() async throws {
        let server = try await server()
        let (_, first) = await form(server, "grant_type=password&username=ada&password=lovelace")
        let refresh = try #require(first["refresh_token"]?.stringValue)
        let (renewed, second) = await form(server, "grant_type=refresh_token&refresh_token=\(refresh)")
        #expect(renewed.status == .ok)
        let next = try #require(second["refresh_token"]?.stringValue)
        #expect(next != refresh)
        #expect(second["access_token"] != first["access_token"])
        // A stolen copy of the first token is replayed: refused, and the chain it started ends.
        let (replayed, error) = await form(server, "grant_type=refresh_token&refresh_token=\(refresh)")
        #expect(replayed.status == .badRequest)
        #expect(error["error"] == "invalid_grant")
        let (afterReplay, _) = await form(server, "grant_type=refresh_token&refresh_token=\(next)")
        #expect(afterReplay.status == .badRequest)
    }

    @Test("Fifty refreshes racing with one refresh token: exactly one gets tokens, the rest invalid_grant")
    func racingRefreshes() async throws {
        let server = try await server()
        let (_, login) = await form(server, "grant_type=password&username=ada&password=lovelace")
        let refresh = try #require(login["refresh_token"]?.stringValue)
        let statuses = await withTaskGroup(of: HTTPResponse.Status.self) { group in
            for _ in 0..<50 {
                group.addTask { await form(server, "grant_type=refresh_token&refresh_token=\(refresh)").0.status }
            }
            return await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == .ok }.count == 1)
        #expect(statuses.filter { $0 == .badRequest }.count == 49)
    }

    @Test("Live refresh tokens are bounded: past the limit the oldest go, the newest still work, and the order list stays small")
    func refreshTokensBounded() throws {
        var state = MockAuthority.State()
        let grant = MockAuthority.RefreshGrant(subject: "ada", client: nil, scope: nil, expires: .distantFuture, family: "f")
        for index in 0..<2_500 {
            state.refreshTokens["t\(index)"] = grant
            state.refreshOrder.append("t\(index)")
            MockAuthority.bound(&state, limit: 1_000)
        }
        #expect(state.refreshTokens.count <= 1_000)
        #expect(state.refreshTokens["t2499"] != nil)
        #expect(state.refreshTokens["t0"] == nil)
        #expect(state.refreshOrder.count <= 2_000)
        #expect(Set(state.refreshOrder).isSuperset(of: state.refreshTokens.keys))
    }

    @Test("A refresh token expires after its lifetime on the server's clock, with no sleep")
    func refreshExpiry() async throws {
        let clock = ManualClock()
        let server = try await server(clock: clock)
        let (_, body) = await form(server, "grant_type=password&username=ada&password=lovelace")
        let refresh = try #require(body["refresh_token"]?.stringValue)
        clock.advance(by: .seconds(3601))
        let (response, error) = await form(server, "grant_type=refresh_token&refresh_token=\(refresh)")
        #expect(response.status == .badRequest)
        #expect(error["error_description"] == "The refresh token expired")
    }

    @Test(
        "Client credentials come by Basic or in the body; a wrong secret is 401 invalid_client, a public client may not use them")
    func clientCredentials() async throws {
        let server = try await server()
        let basic = "Basic " + Data("reports:s3cret".utf8).base64EncodedString()
        let (viaHeader, body) = await form(server, "grant_type=client_credentials", headers: [.authorization: basic])
        #expect(viaHeader.status == .ok)
        #expect(body["refresh_token"] == nil)
        let token = try #require(body["access_token"]?.stringValue)
        #expect(try claims(token)["sub"] == "reports")
        #expect(try claims(token)["roles"] == ["service"])
        let (viaBody, _) = await form(server, "grant_type=client_credentials&client_id=reports&client_secret=s3cret")
        #expect(viaBody.status == .ok)
        let wrong = "Basic " + Data("reports:nope".utf8).base64EncodedString()
        let (refused, error) = await form(server, "grant_type=client_credentials", headers: [.authorization: wrong])
        #expect(refused.status == .unauthorized)
        #expect(error["error"] == "invalid_client")
        #expect(refused.headerFields[.wwwAuthenticate] == "Basic realm=\"hammock\"")
        let (publicClient, publicError) = await form(server, "grant_type=client_credentials&client_id=ios-app")
        #expect(publicClient.status == .badRequest)
        #expect(publicError["error"] == "unauthorized_client")
        let (unknown, _) = await form(server, "grant_type=password&username=ada&password=lovelace&client_id=elsewhere")
        #expect(unknown.status == .unauthorized)
        // A refresh token stays with the client it was issued to.
        let (_, appLogin) = await form(server, "grant_type=password&username=ada&password=lovelace&client_id=ios-app")
        let refresh = try #require(appLogin["refresh_token"]?.stringValue)
        let (otherClient, _) = await form(server, "grant_type=refresh_token&refresh_token=\(refresh)")
        #expect(otherClient.status == .badRequest)
    }

    // MARK: Protected routes

    @Test("A protected resource answers 401 with a Bearer challenge without a token, and the record with one")
    func protectedResource() async throws {
        let server = try await server()
        let none = await get(server, "/people", token: nil)
        #expect(none.status == .unauthorized)
        #expect(none.headerFields[.wwwAuthenticate] == "Bearer realm=\"hammock\"")
        #expect(none.headerFields[.contentType] == "application/problem+json")
        let token = try await server.accessToken(for: "ada")
        #expect(await get(server, "/people", token: token).status == .ok)
        // An unprotected resource needs nothing; a preflight never needs a token.
        #expect(await get(server, "/notes", token: nil).status == .ok)
        #expect(await server.respond(to: MockRequest(.options, "/people")).status == .noContent)
    }

    @Test("A role rule answers 403 with insufficient_scope to a valid token without the role, and never asks for a refresh")
    func roleRules() async throws {
        let server = try await server()
        let bob = try await server.accessToken(for: "bob")
        var fields: HTTPFields = [.authorization: "Bearer \(bob)"]
        #expect(await get(server, "/people", token: bob).status == .ok)
        let write = await server.respond(to: MockRequest(.post, "/people", headerFields: fields, json: ["name": "Eve"]))
        #expect(write.status == .forbidden)
        #expect(write.headerFields[.wwwAuthenticate]?.contains("insufficient_scope") == true)
        #expect(await get(server, "/reports/7", token: bob).status == .forbidden)
        fields[.authorization] = "Bearer \(try await server.accessToken(for: "ada"))"
        let admin = await server.respond(to: MockRequest(.post, "/people", headerFields: fields, json: ["name": "Eve"]))
        #expect(admin.status == .created)
        let basic = "Basic " + Data("reports:s3cret".utf8).base64EncodedString()
        let (_, service) = await form(server, "grant_type=client_credentials", headers: [.authorization: basic])
        let report = await get(server, "/reports/7", token: service["access_token"]?.stringValue)
        #expect(report.status == .ok)
        #expect(try JSON(parsing: report.body)["id"] == "7")
    }

    @Test(
        "An API key stands for its user or client on protected routes, roles included; a wrong one is 401 with a challenge naming the header"
    )
    func apiKeys() async throws {
        let server = try await server(
            Self.configuration.replacingOccurrences(
                of: #""audience": "people-api""#,
                with:
                    #""audience": "people-api", "apiKeys": [{"key": "k-ada-0001", "user": "ada"}, {"key": "k-reports-1", "user": "reports"}]"#
            ))
        func send(_ method: HTTPRequest.Method, _ path: String, key: String) async -> MockResponse {
            var fields: HTTPFields = [.init("X-API-Key")!: key]
            if method == .post { fields[.contentType] = "application/json" }
            return await server.respond(
                to: MockRequest(method, path, headerFields: fields, body: method == .post ? Array(#"{"name":"Eve"}"#.utf8) : []))
        }
        #expect(await send(.get, "/people", key: "k-ada-0001").status == .ok)
        #expect(await send(.post, "/people", key: "k-ada-0001").status == .created)
        #expect(await send(.get, "/reports/7", key: "k-reports-1").status == .ok)
        #expect(await send(.post, "/people", key: "k-reports-1").status == .forbidden)
        let wrong = await send(.get, "/people", key: "k-ada-0002")
        #expect(wrong.status == .unauthorized)
        #expect(wrong.headerFields[values: .wwwAuthenticate].contains(#"ApiKey realm="hammock", in="header", name="X-API-Key""#))
        let none = await get(server, "/people", token: nil)
        #expect(none.headerFields[values: .wwwAuthenticate].count == 2)
    }

    @Test("With basic on, a user's password by Authorization: Basic opens protected routes; off, Basic is refused as malformed")
    func basicScheme() async throws {
        let on = try await server(
            Self.configuration.replacingOccurrences(
                of: #""audience": "people-api""#, with: #""audience": "people-api", "basic": true"#))
        func basic(_ server: MockServer, _ pair: String) async -> MockResponse {
            await server.respond(
                to: MockRequest(.get, "/people", headerFields: [.authorization: "Basic " + Data(pair.utf8).base64EncodedString()])
            )
        }
        #expect(await basic(on, "ada:lovelace").status == .ok)
        let wrong = await basic(on, "ada:wrong")
        #expect(wrong.status == .unauthorized)
        #expect(wrong.headerFields[values: .wwwAuthenticate].contains(#"Basic realm="hammock""#))
        #expect(await basic(on, "no colon").status == .unauthorized)
        let off = try await server()
        let refused = await basic(off, "ada:lovelace")
        #expect(refused.status == .unauthorized)
        #expect(refused.headerFields[.wwwAuthenticate]?.contains("invalid_request") == true)
    }

    @Test("An access token expires after its lifetime on the server's clock: 401 invalid_token saying so")
    func accessTokenExpiry() async throws {
        let clock = ManualClock()
        let server = try await server(clock: clock)
        let token = try await server.accessToken(for: "ada")
        clock.advance(by: .seconds(599))
        #expect(await get(server, "/people", token: token).status == .ok)
        clock.advance(by: .seconds(1))
        let expired = await get(server, "/people", token: token)
        #expect(expired.status == .unauthorized)
        #expect(
            expired.headerFields[.wwwAuthenticate]
                == "Bearer realm=\"hammock\", error=\"invalid_token\", error_description=\"The access token expired\"")
    }

    // MARK: Switches

    @Test("Expiring every access token refuses the ones issued so far as expired, noted in the journal; a refresh recovers")
    func expireSwitch() async throws {
        let server = try await server()
        let (_, login) = await form(server, "grant_type=password&username=ada&password=lovelace")
        let token = try #require(login["access_token"]?.stringValue)
        try server.expireAccessTokens()
        let refused = await get(server, "/people", token: token)
        #expect(refused.status == .unauthorized)
        #expect(refused.headerFields[.wwwAuthenticate]?.contains("The access token expired") == true)
        #expect(server.journal.entries.last?.fault == "auth: token expired by expireAccessTokens")
        let refresh = try #require(login["refresh_token"]?.stringValue)
        let (_, renewed) = await form(server, "grant_type=refresh_token&refresh_token=\(refresh)")
        #expect(await get(server, "/people", token: renewed["access_token"]?.stringValue).status == .ok)
        // A token issued in the same second as the switch, after it, holds.
        #expect(await get(server, "/people", token: try await server.accessToken(for: "ada")).status == .ok)
    }

    @Test("Rejecting the next refresh answers invalid_grant once and revokes that token; the next login refreshes again")
    func rejectRefreshSwitch() async throws {
        let server = try await server()
        let (_, login) = await form(server, "grant_type=password&username=ada&password=lovelace")
        let refresh = try #require(login["refresh_token"]?.stringValue)
        try server.rejectNextRefreshes()
        let (refused, error) = await form(server, "grant_type=refresh_token&refresh_token=\(refresh)")
        #expect(refused.status == .badRequest)
        #expect(error["error"] == "invalid_grant")
        #expect(server.journal.entries.last?.fault == "auth: refresh refused (rejectNextRefreshes)")
        let (again, _) = await form(server, "grant_type=refresh_token&refresh_token=\(refresh)")
        #expect(again.status == .badRequest)
        let (_, second) = await form(server, "grant_type=password&username=ada&password=lovelace")
        let (renewed, _) = await form(
            server, "grant_type=refresh_token&refresh_token=\(second["refresh_token"]?.stringValue ?? "")")
        #expect(renewed.status == .ok)
    }

    @Test("Answering 401 to the next two protected requests refuses exactly two, whatever their token, and lets open routes be")
    func forcedUnauthorizedSwitch() async throws {
        let server = try await server()
        let token = try await server.accessToken(for: "ada")
        try server.answerUnauthorized(next: 2)
        #expect(await get(server, "/notes", token: nil).status == .ok)
        let statuses = [
            await get(server, "/people", token: token).status, await get(server, "/people", token: token).status,
            await get(server, "/people", token: token).status,
        ]
        #expect(statuses == [.unauthorized, .unauthorized, .ok])
        #expect(
            server.journal.entries.suffix(3).map(\.fault) == [
                "auth: 401 forced (answerUnauthorized)", "auth: 401 forced (answerUnauthorized)", nil,
            ])
    }

    @Test(
        "Rotating the signing key keeps earlier tokens valid and lists both keys; without the previous, earlier tokens stop verifying"
    )
    func rotationSwitch() async throws {
        let server = try await server()
        let before = try await server.accessToken(for: "ada")
        try await server.rotateSigningKey()
        let after = try await server.accessToken(for: "ada")
        #expect(server.jsonWebKeySet?["keys"]?.arrayValue?.count == 2)
        let kids = try [before, after].map { token in
            try JSON(parsing: try #require(Base64URL.decode(token.split(separator: ".")[0])))["kid"]
        }
        #expect(kids[0] != kids[1])
        #expect(await get(server, "/people", token: before).status == .ok)
        #expect(await get(server, "/people", token: after).status == .ok)
        try await server.rotateSigningKey(keepingPrevious: false)
        #expect(server.jsonWebKeySet?["keys"]?.arrayValue?.count == 1)
        let refused = await get(server, "/people", token: after)
        #expect(refused.status == .unauthorized)
        #expect(refused.headerFields[.wwwAuthenticate]?.contains("names no key") == true)
        #expect(await get(server, "/people", token: try await server.accessToken(for: "ada")).status == .ok)
    }

    @Test("Revoking a user's sessions refuses their access tokens and refresh tokens, and no one else's")
    func revokeSwitch() async throws {
        let server = try await server()
        let (_, ada) = await form(server, "grant_type=password&username=ada&password=lovelace")
        let (_, bob) = await form(server, "grant_type=password&username=bob&password=builder")
        #expect(try server.revokeSessions(of: "ada") == 1)
        let refused = await get(server, "/people", token: ada["access_token"]?.stringValue)
        #expect(refused.status == .unauthorized)
        #expect(refused.headerFields[.wwwAuthenticate]?.contains("revoked") == true)
        let (refresh, _) = await form(server, "grant_type=refresh_token&refresh_token=\(ada["refresh_token"]?.stringValue ?? "")")
        #expect(refresh.status == .badRequest)
        #expect(await get(server, "/people", token: bob["access_token"]?.stringValue).status == .ok)
        let (bobRefresh, _) = await form(
            server, "grant_type=refresh_token&refresh_token=\(bob["refresh_token"]?.stringValue ?? "")")
        #expect(bobRefresh.status == .ok)
        #expect(await get(server, "/people", token: try await server.accessToken(for: "ada")).status == .ok)
        #expect(throws: AuthSettingsError.self) { try server.revokeSessions(of: "nobody") }
    }

    @Test("The admin API turns the switches on over HTTP and shows them; without a login its auth rows answer 404")
    func adminSwitches() async throws {
        let server = try await server()
        func admin(_ method: HTTPRequest.Method, _ path: String, _ body: String = "") async -> (MockResponse, JSON?) {
            var fields: HTTPFields = [:]
            if !body.isEmpty { fields[.contentType] = "application/json" }
            let response = await server.respond(
                to: MockRequest(method, "/__hammock" + path, headerFields: fields, body: Array(body.utf8)))
            return (response, try? JSON(parsing: response.body))
        }
        let (issued, token) = await admin(.post, "/auth/tokens", #"{"username": "ada"}"#)
        #expect(issued.status == .ok)
        let access = try #require(token?["access_token"]?.stringValue)
        #expect(await get(server, "/people", token: access).status == .ok)
        #expect(await admin(.post, "/auth/unauthorized", #"{"count": 1}"#).0.status == .noContent)
        #expect(await admin(.post, "/auth/reject-refresh").0.status == .noContent)
        let (_, state) = await admin(.get, "/auth")
        #expect(state?["switches"]?["answerUnauthorized"] == 1)
        #expect(state?["switches"]?["rejectNextRefreshes"] == 1)
        #expect(state?["algorithm"] == "ES256")
        #expect(await get(server, "/people", token: access).status == .unauthorized)
        #expect(await admin(.post, "/auth/expire").0.status == .noContent)
        #expect(await get(server, "/people", token: access).status == .unauthorized)
        let (rotated, keys) = await admin(.post, "/auth/rotate", #"{"keepPrevious": false}"#)
        #expect(rotated.status == .ok)
        #expect(keys?["keys"]?.arrayValue?.count == 1)
        let (revoked, count) = await admin(.post, "/auth/revoke", #"{"username": "ada"}"#)
        #expect(revoked.status == .ok)
        #expect(count?["refreshTokens"] == 0)
        #expect(await admin(.post, "/auth/revoke", #"{"username": "nobody"}"#).0.status == .notFound)
        #expect(await admin(.post, "/auth/unauthorized", #"{"count": -1}"#).0.status == .badRequest)
        try await server.setAuth(nil)
        let (missing, problem) = await admin(.post, "/auth/expire")
        #expect(missing.status == .notFound)
        #expect(problem?["detail"]?.stringValue?.contains("no login") == true)
    }

    // MARK: Hostile tokens

    /// A token with `header` and `claims`, signed with nothing or with `signature`.
    func forged(header: JSON, claims: JSON, signature: String = "") -> String {
        Base64URL.encode(Array(header.serializedString().utf8)) + "."
            + Base64URL.encode(Array(claims.serializedString().utf8))
            + "." + signature
    }

    @Test(
        "Hostile tokens are refused with 401 and a reason: alg none, HMAC with the public key, a foreign key id, a bad signature, a huge token, garbage"
    )
    func hostileTokens() async throws {
        let server = try await server()
        let good = try await server.accessToken(for: "bob")
        let kid = try #require(server.signingKeyIDs.last)
        var claims = try self.claims(good)
        claims["roles"] = ["admin"]
        let jwks = try #require(server.jsonWebKeySet)
        let tokens: [(String, String)] = [
            (forged(header: ["alg": "none", "typ": "JWT"], claims: claims), "signed with 'none'"),
            (forged(header: ["alg": "none", "kid": .string(kid)], claims: claims, signature: "x"), "signed with 'none'"),
            (
                forged(header: ["alg": "HS256", "kid": .string(kid)], claims: claims, signature: hmac(jwks)),
                "signed with 'HS256'"
            ),
            (forged(header: ["alg": "ES256", "kid": "someone-else"], claims: claims, signature: "AAAA"), "names no key"),
            // Bob's real signature over claims that now say admin.
            (
                forged(
                    header: ["alg": "ES256", "kid": .string(kid)], claims: claims,
                    signature: String(good.split(separator: ".")[2])), "does not verify"
            ),
            (String(repeating: "a", count: 10_000), "longer than 8192"),
            ("not-a-token", "not a JWT"),
            ("a.b.c", "not a JWT"),
        ]
        for (token, reason) in tokens {
            let response = await get(server, "/people", token: token)
            #expect(response.status == .unauthorized, "\(reason)")
            #expect(response.headerFields[.wwwAuthenticate]?.contains("invalid_token") == true, "\(reason)")
            #expect(response.headerFields[.wwwAuthenticate]?.contains(reason) == true, "\(reason)")
        }
        // `Bearer ` with nothing after it is a malformed request, not a token.
        let empty = await get(server, "/people", token: "")
        #expect(empty.status == .unauthorized)
        #expect(empty.headerFields[.wwwAuthenticate]?.contains("invalid_request") == true)
    }

    @Test(
        "On an RS256 server, an HS256 token signed with the public key (its PEM or its JWK) is refused: the key's own algorithm decides"
    )
    func algorithmConfusion() async throws {
        let text = Self.configuration.replacingOccurrences(
            of: #""audience": "people-api""#, with: #""audience": "people-api", "algorithm": "RS256""#)
        let server = try await server(text)
        let good = try await server.accessToken(for: "bob")
        let jwk = try #require(server.jsonWebKeySet?["keys"]?.arrayValue?.first)
        let kid = try #require(jwk["kid"]?.stringValue)
        let publicKey = try Insecure.RSA.PublicKey(
            modulus: try #require(jwk["n"]?.stringValue), exponent: try #require(jwk["e"]?.stringValue))
        var claims = try self.claims(good)
        claims["roles"] = ["admin"]
        for secret in [publicKey.pemRepresentation, jwk.serializedString()] {
            let forger = JWTKeyCollection()
            await forger.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
            let forged = try await forger.sign(ForgedClaims(claims: claims), kid: JWKIdentifier(string: kid))
            let response = await get(server, "/people", token: forged)
            #expect(response.status == .unauthorized)
            #expect(
                response.headerFields[.wwwAuthenticate]?.contains("signed with 'HS256'; this server signs with RS256") == true)
        }
        // The genuine token still passes, so the refusals above are the forgery's.
        #expect(await get(server, "/people", token: good).status == .ok)
    }

    /// Some HMAC-looking signature keyed on the public key's text: the classic confusion attack's shape.
    func hmac(_ jwks: JSON) -> String {
        Base64URL.encode(Array(jwks.serializedString().utf8.prefix(32)))
    }

    @Test(
        "Tokens the server signed but that are not valid now are refused: expired, not yet valid, another issuer or audience, no expiry"
    )
    func signedButInvalid() async throws {
        let server = try await server()
        let authority = try #require(server.runtimeCell.runtime.settings.authority)
        let now = Int(authority.now().timeIntervalSince1970)
        let base: JSONObject = [
            "sub": "ada", "iss": "hammock", "aud": "people-api", "iat": .integer(now), "exp": .integer(now + 60),
            "roles": ["admin"],
        ]
        func token(_ change: (inout JSONObject) -> Void) async throws -> String {
            var claims = base
            change(&claims)
            return try await authority.keys.sign(claims)
        }
        #expect(await get(server, "/people", token: try await token { _ in }).status == .ok)
        let cases: [(String, String)] = [
            (try await token { $0["exp"] = .integer(now - 1) }, "expired"),
            (try await token { $0["nbf"] = .integer(now + 30) }, "not valid yet"),
            (try await token { $0["iss"] = "someone-else" }, "issued by someone else"),
            (try await token { $0["aud"] = "another-api" }, "another audience"),
            (try await token { $0["aud"] = ["another-api", "people-api"] }, ""),
            (try await token { _ = $0.removeValue(forKey: "exp") }, "no expiry"),
            (try await token { _ = $0.removeValue(forKey: "sub") }, "no subject"),
        ]
        for (token, reason) in cases {
            let response = await get(server, "/people", token: token)
            if reason.isEmpty {
                #expect(response.status == .ok, "an audience list holding ours")
            } else {
                #expect(response.status == .unauthorized, "\(reason)")
                #expect(response.headerFields[.wwwAuthenticate]?.contains(reason) == true, "\(reason)")
            }
        }
    }

    @Test("A token in the query string is refused unless the settings allow it; a malformed Authorization is invalid_request")
    func queryTokens() async throws {
        let server = try await server()
        let token = try await server.accessToken(for: "ada")
        let query = await server.respond(to: MockRequest(.get, "/people?access_token=\(token)"))
        #expect(query.status == .unauthorized)
        #expect(query.headerFields[.wwwAuthenticate]?.contains("invalid_request") == true)
        let basic = await server.respond(to: MockRequest(.get, "/people", headerFields: [.authorization: "Basic YTpi"]))
        #expect(basic.status == .unauthorized)
        let allowing = try await self.server(
            Self.configuration.replacingOccurrences(of: #""audience""#, with: #""queryToken": true, "audience""#))
        let allowed = try await allowing.accessToken(for: "ada")
        #expect(await allowing.respond(to: MockRequest(.get, "/people?access_token=\(allowed)")).status == .ok)
    }

    // MARK: Keys and settings

    @Test(
        "The JWKS publishes the signing key's public half with its id, and the discovery document points at it and the token endpoint"
    )
    func keysAndDiscovery() async throws {
        let server = try await server()
        let jwks = try JSON(parsing: await server.respond(to: MockRequest(.get, "/.well-known/jwks.json")).body)
        let key = try #require(jwks["keys"]?.arrayValue?.first)
        #expect(key["kty"] == "EC")
        #expect(key["crv"] == "P-256")
        #expect(key["alg"] == "ES256")
        #expect(key["d"] == nil)
        let token = try await server.accessToken(for: "ada")
        let header = try JSON(parsing: try #require(Base64URL.decode(token.split(separator: ".")[0])))
        #expect(header["kid"] == key["kid"])
        #expect(header["alg"] == "ES256")
        let discovery = await server.respond(
            to: MockRequest(.get, "/.well-known/openid-configuration", headerFields: [.init("Host")!: "localhost:8888"]))
        let document = try JSON(parsing: discovery.body)
        #expect(document["token_endpoint"] == "http://localhost:8888/auth/token")
        #expect(document["jwks_uri"] == "http://localhost:8888/.well-known/jwks.json")
        #expect(document["issuer"] == "hammock")
    }

    @Test("RS256 and HS256 sign and verify too; HS256 publishes no key")
    func otherAlgorithms() async throws {
        for (algorithm, kty) in [("RS256", "RSA"), ("HS256", "")] {
            let text = Self.configuration.replacingOccurrences(
                of: #""audience": "people-api""#,
                with: #""audience": "people-api", "algorithm": "\#(algorithm)""#
                    + (algorithm == "HS256" ? #", "secret": "a secret of thirty-two bytes or more""# : ""))
            let server = try await server(text)
            let token = try await server.accessToken(for: "ada")
            #expect(await get(server, "/people", token: token).status == .ok, "\(algorithm)")
            let keys = server.jsonWebKeySet?["keys"]?.arrayValue ?? []
            #expect(keys.first?["kty"]?.stringValue == (kty.isEmpty ? nil : kty), "\(algorithm)")
        }
    }

    @Test("An auth section's mistakes are refused with the key that holds them")
    func settingsMistakes() async throws {
        let cases: [(String, String)] = [
            (#"{"users": [{"username": "a"}]}"#, "auth.users[0].password"),
            (#"{"users": [{"username": "a", "password": "x"}, {"username": "a", "password": "y"}]}"#, "auth.users[1].username"),
            (#"{"users": [{"username": "a", "password": "x", "claims": {"exp": 1}}]}"#, "auth.users[0].claims.exp"),
            (#"{"protect": [{"resource": "peple"}]}"#, "auth.protect[0].resource"),
            (#"{"protect": [{"resource": "people", "actions": ["erase"]}]}"#, "auth.protect[0].actions[0]"),
            (#"{"protect": [{"resource": "people", "route": "/x"}]}"#, "auth.protect[0]"),
            (#"{"algorithm": "HS256", "secret": "short"}"#, "auth.secret"),
            (#"{"algorithm": "none"}"#, "auth.algorithm"),
            (#"{"accessTokenLifetime": 0}"#, "auth.accessTokenLifetime"),
            (#"{"clients": [{"id": "a:b"}]}"#, "auth.clients[0].id"),
            (#"{"tokenPath": "auth/token"}"#, "auth.tokenPath"),
            (#"{"apiKeys": [{"key": "k-12345678", "user": "nobody"}]}"#, "auth.apiKeys[0].user"),
            (
                #"{"users": [{"username": "a", "password": "x"}], "apiKeys": [{"key": "short", "user": "a"}]}"#,
                "auth.apiKeys[0].key"
            ),
            (#"{"apiKeyHeader": "Authorization"}"#, "auth.apiKeyHeader"),
            (#"{"basic": "yes"}"#, "auth.basic"),
            (#"{"expire": true}"#, "auth.expire"),
        ]
        for (section, key) in cases {
            let text = #"{"resources": [{"name": "people", "fields": {"name": "string"}}], "auth": \#(section)}"#
            let error = #expect(throws: ConfigurationError.self) {
                try ServerConfiguration(parsing: Array(text.utf8), file: "m.json")
            }
            #expect(error?.keyPath == key, "\(section)")
        }
    }

    @Test("A server with no token signer refuses a login with a message saying what to pass, and serves without one")
    func noSigner() async throws {
        let configuration = try ServerConfiguration(parsing: Array(Self.configuration.utf8), file: "mock.json")
        let error = await #expect(throws: AuthSettingsError.self) {
            try await MockServer(configuration: configuration, store: MemoryStore())
        }
        #expect(error?.message.contains("tokenSigner: JWTAccessTokens()") == true)
        var open = configuration
        open.auth = nil
        let server = try await MockServer(configuration: open, store: MemoryStore())
        #expect(await get(server, "/people", token: nil).status == .ok)
    }

    @Test("A reload that keeps the auth section keeps every token; one that changes it makes a new key")
    func reloadKeepsTokens() async throws {
        let server = try await server()
        let token = try await server.accessToken(for: "ada")
        let same = try ServerConfiguration(parsing: Array(Self.configuration.utf8), file: "mock.json")
        _ = try await server.reload(same)
        #expect(await get(server, "/people", token: token).status == .ok)
        let changed = try ServerConfiguration(
            parsing: Array(Self.configuration.replacingOccurrences(of: "600", with: "700").utf8), file: "mock.json")
        _ = try await server.reload(changed)
        let refused = await get(server, "/people", token: token)
        #expect(refused.status == .unauthorized)
        #expect(await get(server, "/people", token: try await server.accessToken(for: "ada")).status == .ok)
        try await server.setAuth(nil)
        #expect(await get(server, "/people", token: nil).status == .ok)
        #expect(await server.respond(to: MockRequest(.post, "/auth/token")).status == .notFound)
    }
}

/// Claims as a forger writes them.
struct ForgedClaims: JWTPayload {
    var claims: JSON
    init(claims: JSON) { self.claims = claims }
    init(from decoder: any Decoder) throws { claims = try JSON(from: decoder) }
    func encode(to encoder: any Encoder) throws { try claims.encode(to: encoder) }
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
