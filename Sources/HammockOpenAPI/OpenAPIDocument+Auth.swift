import HTTPTypes
import HammockJSON
import HammockServer

/// The mock's login in its OpenAPI document: the token endpoint, the key set and the discovery document
/// as operations; `securitySchemes` for each way in the login takes (an OAuth 2.0 scheme whose flows name
/// the token endpoint, an API key, Basic); and on each operation an access rule covers, the requirement
/// and its 401 and 403. A document written this way imports again with its login (``OpenAPIImport``).
extension Builder {
    /// The name of the login's bearer scheme among the document's `securitySchemes`.
    static let loginScheme = "login"
    static let apiKeyScheme = "apiKey"
    static let basicScheme = "basic"

    /// Whether `row` is one of the login's own endpoints.
    func isLoginRow(_ row: RouteTableEntry) -> Bool {
        guard let auth = server.auth, row.resource == nil else { return false }
        return [auth.tokenPath, AuthSettings.jwksPath, AuthSettings.discoveryPath].contains(row.pattern)
    }

    /// The login's endpoints as operations.
    func addLoginOperations(_ row: RouteTableEntry, to item: inout JSONObject) {
        var operation: JSONObject = ["tags": ["auth"], "security": []]
        switch row.pattern {
        case AuthSettings.jwksPath:
            operation["operationId"] = "getSigningKeys"
            operation["summary"] = "The public keys that verify access tokens (RFC 7517)"
            operation["responses"] = [
                "200": [
                    "description": "The key set",
                    "content": [
                        "application/json": [
                            "schema": [
                                "type": "object", "required": ["keys"],
                                "properties": ["keys": ["type": "array", "items": ["type": "object"]]],
                            ]
                        ]
                    ],
                ]
            ]
            item["get"] = .object(operation)
        case AuthSettings.discoveryPath:
            operation["operationId"] = "getOpenIDConfiguration"
            operation["summary"] = "Where the token endpoint and the keys are (OpenID Connect Discovery)"
            operation["responses"] = [
                "200": [
                    "description": "The discovery document",
                    "content": ["application/json": ["schema": ["type": "object", "required": ["issuer", "token_endpoint"]]]],
                ]
            ]
            item["get"] = .object(operation)
        default:
            operation["operationId"] = "requestToken"
            operation["summary"] = "Sign in, refresh or get a client's token (OAuth 2.0 token endpoint, RFC 6749)"
            let body: JSON = ["schema": ["$ref": "#/components/schemas/TokenRequest"]]
            operation["requestBody"] = [
                "required": true,
                "content": ["application/x-www-form-urlencoded": body, "application/json": body],
            ]
            let error: JSON = [
                "description": "OAuth 2.0's error (RFC 6749 §5.2): 401 for a client that failed to authenticate",
                "content": ["application/json": ["schema": ["$ref": "#/components/schemas/TokenError"]]],
            ]
            operation["responses"] = [
                "200": [
                    "description": "The tokens; never to be cached",
                    "headers": ["Cache-Control": ["schema": ["type": "string", "const": "no-store"]]],
                    "content": ["application/json": ["schema": ["$ref": "#/components/schemas/TokenResponse"]]],
                ],
                "400": error, "401": error,
            ]
            item["post"] = .object(operation)
        }
    }

    /// Adds the login's requirement, with its 401 (and a 403 where a role or an owner may refuse), to each
    /// operation of `row` an access rule covers.
    func secure(_ row: RouteTableEntry, in item: inout JSONObject) {
        guard let auth = server.auth, !auth.rules.isEmpty else { return }
        let route = MatchedRoute(kind: row.resource == nil ? .custom : .resource, pattern: row.pattern, resource: row.resource)
        let requirements = JSON.array(Self.schemeNames(of: auth).map { [$0: []] })
        for method in row.methods {
            guard let key = Self.operationKey(method), case .object(var operation)? = item[key] else { continue }
            let covering = auth.rules.filter { $0.covers(method, route: route) }
            guard !covering.isEmpty else { continue }
            operation["security"] = requirements
            var responses = operation["responses"]?.objectValue ?? JSONObject()
            var statuses = [401]
            if covering.contains(where: { !$0.roles.isEmpty || $0.ownership != nil }) { statuses.append(403) }
            addProblems(statuses, to: &responses)
            operation["responses"] = .object(responses)
            item[key] = .object(operation)
        }
    }

    /// The names of the schemes the login takes, in the order a client should try them.
    static func schemeNames(of auth: AuthSettings) -> [String] {
        [loginScheme] + (auth.apiKeys.isEmpty ? [] : [apiKeyScheme]) + (auth.allowsBasic ? [basicScheme] : [])
    }

    /// The login's `securitySchemes`, and the token endpoint's schemas, for the components.
    func loginComponents() -> (schemes: JSONObject, schemas: JSONObject)? {
        guard let auth = server.auth else { return nil }
        // An absolute path: a relative `tokenUrl` resolves against the server's URL, which would drop its
        // last segment (`/v1` + `auth/token` is `/auth/token`).
        let tokenURL = JSON.string((server.options.basePath ?? "") + auth.tokenPath)
        var flows = JSONObject()
        if !auth.users.isEmpty { flows["password"] = ["tokenUrl": tokenURL, "refreshUrl": tokenURL, "scopes": [:]] }
        if auth.clients.contains(where: { $0.secret != nil }) {
            flows["clientCredentials"] = ["tokenUrl": tokenURL, "scopes": [:]]
        }
        var schemes = JSONObject()
        schemes[Self.loginScheme] =
            flows.isEmpty
            ? ["type": "http", "scheme": "bearer", "bearerFormat": "JWT", "description": "An access token of the mock's login"]
            : [
                "type": "oauth2", "flows": .object(flows),
                "description": .string(
                    "The mock's login: an access token (a JWT, \(auth.algorithm.name)) as Authorization: Bearer"),
            ]
        if !auth.apiKeys.isEmpty {
            schemes[Self.apiKeyScheme] = ["type": "apiKey", "in": "header", "name": .string(auth.apiKeyHeader)]
        }
        if auth.allowsBasic { schemes[Self.basicScheme] = ["type": "http", "scheme": "basic"] }
        let text: JSON = ["type": "string"]
        let schemas: JSONObject = [
            "TokenRequest": [
                "type": "object", "required": ["grant_type"],
                "properties": [
                    "grant_type": ["type": "string", "enum": ["password", "refresh_token", "client_credentials"]],
                    "username": text, "password": text, "refresh_token": text, "scope": text, "client_id": text,
                    "client_secret": text,
                ],
            ],
            "TokenResponse": [
                "type": "object", "required": ["access_token", "token_type", "expires_in"],
                "properties": [
                    "access_token": text, "token_type": ["type": "string", "const": "Bearer"],
                    "expires_in": ["type": "integer"], "refresh_token": text, "scope": text,
                ],
            ],
            "TokenError": [
                "type": "object", "required": ["error"],
                "properties": [
                    "error": [
                        "type": "string",
                        "enum": [
                            "invalid_request", "invalid_client", "invalid_grant", "unauthorized_client", "unsupported_grant_type",
                        ],
                    ],
                    "error_description": text,
                ],
            ],
        ]
        return (schemes, schemas)
    }
}
