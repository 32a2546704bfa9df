import Foundation
import HTTPTypes
import HammockJSON
import HammockWire

/// An OAuth 2.0 error (RFC 6749 §5.2): what a client library reads, so the token endpoint answers in
/// its shape (`{"error": "invalid_grant", "error_description": "…"}`) rather than problem+json.
struct TokenEndpointError: Error, Sendable, Hashable {
    enum Code: String, Sendable {
        case invalidRequest = "invalid_request"
        case invalidClient = "invalid_client"
        case invalidGrant = "invalid_grant"
        case unauthorizedClient = "unauthorized_client"
        case unsupportedGrantType = "unsupported_grant_type"
    }

    var code: Code
    var description: String
    /// Whether the client tried `Authorization: Basic`, which a 401 then challenges (RFC 6749 §5.2).
    var challengesBasic = false
    /// Whether a switch, not the request, made the error (the journal notes it).
    var bySwitch = false

    init(_ code: Code, _ description: String, challengesBasic: Bool = false, bySwitch: Bool = false) {
        self.code = code
        self.description = description
        self.challengesBasic = challengesBasic
        self.bySwitch = bySwitch
    }

    var response: MockResponse {
        var fields: HTTPFields = [.cacheControl: "no-store"]
        if challengesBasic { fields[.wwwAuthenticate] = "Basic realm=\"hammock\"" }
        let status: HTTPResponse.Status = code == .invalidClient ? .unauthorized : .badRequest
        return MockResponse(
            status: status, headerFields: fields,
            json: ["error": .string(code.rawValue), "error_description": .string(description)])
    }
}

/// The login's endpoints, a family of routes the router asks first: `POST /auth/token` (the path the
/// settings give), `GET /.well-known/jwks.json`, `GET /.well-known/openid-configuration`. They answer
/// only while the runtime in force has an authority, under the base path like every route.
struct AuthRoutes: MockRoutes {
    /// The server's base path, which the discovery document's addresses include.
    let basePath: String?
    /// The runtime in force, for the route table (a request reads its own).
    let runtime: RuntimeCell

    static let jwksPath = AuthSettings.jwksPath
    static let discoveryPath = AuthSettings.discoveryPath

    func endpoint(for request: MockRequest) throws -> MockEndpoint? {
        guard let authority = request.runtime?.settings.authority else { return nil }
        switch request.path {
        case authority.settings.tokenPath:
            return MockEndpoint(methods: [.post], route: MatchedRoute(kind: .auth, pattern: authority.settings.tokenPath)) {
                request in await Self.token(request, authority: authority)
            }
        case Self.jwksPath:
            return MockEndpoint(methods: [.get, .head], route: MatchedRoute(kind: .auth, pattern: Self.jwksPath)) { _ in
                MockResponse(headerFields: [.cacheControl: "max-age=60"], json: authority.keys.jwks)
            }
        case Self.discoveryPath:
            return MockEndpoint(methods: [.get, .head], route: MatchedRoute(kind: .auth, pattern: Self.discoveryPath)) {
                request in MockResponse(json: discovery(request, authority: authority))
            }
        default:
            return nil
        }
    }

    /// Listed in the route table while login is on.
    var routeTable: [RouteTableEntry] {
        guard let authority = runtime.runtime.settings.authority else { return [] }
        return [
            RouteTableEntry(methods: [.post], pattern: authority.settings.tokenPath),
            RouteTableEntry(methods: [.get, .head], pattern: Self.jwksPath),
            RouteTableEntry(methods: [.get, .head], pattern: Self.discoveryPath),
        ]
    }

    /// OpenID Connect Discovery's document, as much of it as a client library reads to find the token
    /// endpoint and the keys. Addresses are built from the request's `Host`.
    func discovery(_ request: MockRequest, authority: MockAuthority) -> JSON {
        let host = request.headerFields[.init("Host")!] ?? "localhost"
        let base = "http://\(host)\(basePath ?? "")"
        var algorithms: [JSON] = []
        if authority.keys.jwks["keys"]?.arrayValue?.isEmpty == false { algorithms = [.string(authority.settings.algorithm.name)] }
        return [
            "issuer": .string(authority.settings.issuer),
            "token_endpoint": .string(base + authority.settings.tokenPath),
            "jwks_uri": .string(base + Self.jwksPath),
            "grant_types_supported": ["password", "refresh_token", "client_credentials"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
            "response_types_supported": ["token"],
            "id_token_signing_alg_values_supported": .array(algorithms),
            "subject_types_supported": ["public"],
        ]
    }

    // MARK: The token endpoint

    static func token(_ request: MockRequest, authority: MockAuthority) async -> MockResponse {
        do throws(TokenEndpointError) {
            let parameters = try parameters(of: request)
            let client = try authenticateClient(request, parameters: parameters, authority: authority)
            guard let grant = parameters["grant_type"] else {
                throw TokenEndpointError(.invalidRequest, "grant_type is missing (password, refresh_token or client_credentials)")
            }
            let issued: MockAuthority.Issued
            switch grant {
            case "password":
                guard let username = parameters["username"], let password = parameters["password"] else {
                    throw TokenEndpointError(.invalidRequest, "The password grant needs username and password")
                }
                guard let user = authority.settings.users.first(where: { $0.username == username }),
                    constantTimeEquals(user.password, password)
                else { throw TokenEndpointError(.invalidGrant, "The username or password is wrong") }
                issued = try await issue(
                    authority, subject: user.id, roles: user.roles, claims: user.claims, client: client?.id,
                    scope: parameters["scope"], refresh: true)
            case "refresh_token":
                guard let token = parameters["refresh_token"] else {
                    throw TokenEndpointError(.invalidRequest, "The refresh_token grant needs refresh_token")
                }
                let spent = try authority.spendRefreshToken(token, client: client?.id)
                let (roles, claims) = try currentGrant(of: spent.subject, client: spent.client, authority: authority)
                issued = try await issue(
                    authority, subject: spent.subject, roles: roles, claims: claims, client: spent.client,
                    scope: parameters["scope"] ?? spent.scope, refresh: true, family: spent.family)
            case "client_credentials":
                guard let client else {
                    throw TokenEndpointError(
                        .invalidClient, "client_credentials needs the client's id and secret (Basic or client_id/client_secret)")
                }
                guard client.secret != nil else {
                    throw TokenEndpointError(
                        .unauthorizedClient, "'\(client.id)' is a public client (no secret): it may not use client_credentials")
                }
                // RFC 6749 §4.4.3: no refresh token; the client asks again.
                issued = try await issue(
                    authority, subject: client.id, roles: client.roles, claims: [:], client: client.id,
                    scope: parameters["scope"], refresh: false)
            default:
                throw TokenEndpointError(
                    .unsupportedGrantType, "'\(grant.prefix(60))' is not one of password, refresh_token, client_credentials")
            }
            // RFC 6749 §5.1: tokens must not be cached.
            return MockResponse(headerFields: [.cacheControl: "no-store", .init("Pragma")!: "no-cache"], json: issued.json)
        } catch {
            if error.bySwitch { request.context?.noteSwitch("auth: refresh refused (rejectNextRefreshes)") }
            return error.response
        }
    }

    static func issue(
        _ authority: MockAuthority, subject: String, roles: [String], claims: JSONObject, client: String?, scope: String?,
        refresh: Bool, family: String? = nil
    ) async throws(TokenEndpointError) -> MockAuthority.Issued {
        do {
            return try await authority.issue(
                subject: subject, roles: roles, claims: claims, client: client, scope: scope, refresh: refresh, family: family)
        } catch {
            // Signing fails only if the key does; no client input reaches it.
            throw TokenEndpointError(.invalidRequest, "The token could not be signed: \(error)")
        }
    }

    /// The roles and claims a renewed token carries: the user's or client's as the settings say now.
    static func currentGrant(
        of subject: String, client: String?, authority: MockAuthority
    ) throws(TokenEndpointError) -> ([String], JSONObject) {
        if let user = authority.settings.users.first(where: { $0.id == subject }) { return (user.roles, user.claims) }
        if let known = authority.settings.clients.first(where: { $0.id == subject }) { return (known.roles, [:]) }
        throw TokenEndpointError(.invalidGrant, "The refresh token's user no longer exists")
    }

    /// The body's parameters: a form (RFC 6749 §4.3.2) or, for the many clients that send one, JSON.
    /// Parameters sent twice are refused (§3.2).
    static func parameters(of request: MockRequest) throws(TokenEndpointError) -> [String: String] {
        let type = request.headerFields[.contentType].map(HeaderValue.mediaType(of:)) ?? ""
        let object: JSONObject
        switch type {
        case "application/x-www-form-urlencoded":
            var names = Set<ArraySlice<UInt8>>()
            for pair in request.body.split(separator: UInt8(ascii: "&")) {
                let name = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)[0]
                guard names.insert(name).inserted else {
                    throw TokenEndpointError(
                        .invalidRequest, "'\(String(decoding: name.prefix(40), as: UTF8.self))' is sent twice")
                }
            }
            do {
                object = try FormURLEncoded.decode(request.body)
            } catch {
                throw TokenEndpointError(.invalidRequest, "The form body has a malformed percent-encoding or is not UTF-8")
            }
        case "application/json":
            guard case .object(let parsed)? = try? JSON(parsing: request.body, duplicateKeys: .reject) else {
                throw TokenEndpointError(.invalidRequest, "The JSON body must be an object of strings, each key once")
            }
            object = parsed
        default:
            throw TokenEndpointError(
                .invalidRequest, "Send the parameters as application/x-www-form-urlencoded (or JSON), not '\(type.prefix(60))'")
        }
        var parameters: [String: String] = [:]
        for (key, value) in object {
            guard case .string(let text) = value else {
                throw TokenEndpointError(.invalidRequest, "'\(key.prefix(40))' must be a string")
            }
            // §3.2: a parameter sent without a value is treated as omitted.
            if !text.isEmpty { parameters[key] = text }
        }
        return parameters
    }

    /// The client the request authenticates as, if any: `Authorization: Basic` (RFC 6749 §2.3.1) or
    /// `client_id` and `client_secret` in the body, not both. A public client names itself with
    /// `client_id` alone.
    static func authenticateClient(
        _ request: MockRequest, parameters: [String: String], authority: MockAuthority
    ) throws(TokenEndpointError) -> AuthClient? {
        var id = parameters["client_id"]
        var secret = parameters["client_secret"]
        var viaBasic = false
        if let header = request.headerFields[.authorization] {
            guard let credentials = MockAuthority.credentials(header, scheme: "Basic"),
                let (user, password) = MockAuthority.basicPair(credentials)
            else {
                throw TokenEndpointError(
                    .invalidClient, "The Authorization header must be 'Basic base64(client_id:client_secret)'",
                    challengesBasic: true)
            }
            guard secret == nil else {
                throw TokenEndpointError(.invalidRequest, "Authenticate the client one way: Basic or client_secret, not both")
            }
            // §2.3.1: both halves are form-encoded before base64.
            id = PercentEncoding.decodeForm(Array(user.utf8)[...]) ?? user
            secret = PercentEncoding.decodeForm(Array(password.utf8)[...]) ?? password
            viaBasic = true
        }
        guard let id else { return nil }
        guard let client = authority.settings.clients.first(where: { $0.id == id }) else {
            throw TokenEndpointError(.invalidClient, "No client is named '\(id.prefix(100))'", challengesBasic: viaBasic)
        }
        if let expected = client.secret {
            guard let secret, constantTimeEquals(expected, secret) else {
                throw TokenEndpointError(
                    .invalidClient,
                    secret == nil ? "The client '\(id.prefix(100))' must give its secret" : "The client secret is wrong",
                    challengesBasic: viaBasic)
            }
        }
        return client
    }

    /// The parameters whose values the journal does not keep.
    static let secretParameters: Set<String> = ["password", "client_secret", "refresh_token", "client_assertion"]

    /// A token request's body with the values of ``secretParameters`` replaced by `<redacted>`, form or
    /// JSON; a body that is neither is not kept at all (it might hold a secret in a shape not read here).
    static func redactedBody(of request: MockRequest) -> [UInt8] {
        let type = request.headerFields[.contentType].map(HeaderValue.mediaType(of:)) ?? ""
        switch type {
        case "application/x-www-form-urlencoded":
            let pairs = request.body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false).map {
                pair -> [UInt8] in
                let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
                guard let name = PercentEncoding.decodeForm(parts[0]), secretParameters.contains(name) else { return Array(pair) }
                return Array(parts[0]) + Array("=%3Credacted%3E".utf8)
            }
            return Array(pairs.joined(separator: [UInt8(ascii: "&")]))
        case "application/json":
            guard case .object(var object)? = try? JSON(parsing: request.body) else { return [] }
            for key in object.keys where secretParameters.contains(key) { object[key] = "<redacted>" }
            return JSON.object(object).serialized()
        default:
            return []
        }
    }

    /// Whether two secrets are equal, in time that depends only on the expected one's length.
    static func constantTimeEquals(_ expected: String, _ given: String) -> Bool {
        AdminGuard.constantTimeEquals(Array(expected.utf8), Array(given.utf8))
    }
}
