public import HTTPTypes
public import HammockJSON

/// The mock's login: who may sign in, how its access tokens are made, and which routes need one (a
/// configuration's `auth` section, or ``MockServer/setAuth(_:)`` in Swift).
///
/// ```json
/// "auth": {
///   "users": [{"username": "ada", "password": "lovelace", "roles": ["admin"], "claims": {"name": "Ada"}}],
///   "clients": [{"id": "reports", "secret": "s3cret", "roles": ["service"]}],
///   "protect": [{"resource": "people"},
///               {"resource": "people", "actions": ["create", "update", "delete"], "roles": ["admin"]}],
///   "accessTokenLifetime": 900
/// }
/// ```
/// The server then answers `POST /auth/token` (OAuth 2.0's password, refresh-token and client-credentials
/// grants), `GET /.well-known/jwks.json` and `GET /.well-known/openid-configuration`, and a protected
/// route answers 401 without a valid access token, 403 when a rule's roles exclude the user.
public struct AuthSettings: Sendable, Hashable {
    /// Who may sign in with a password.
    public var users: [AuthUser]
    /// The applications that may ask for tokens of their own (client credentials), or must name
    /// themselves when a user signs in through them.
    public var clients: [AuthClient]
    /// Which routes need a token, and which roles they need.
    public var rules: [AccessRule]
    /// Where tokens are asked for, under the base path like every route.
    public var tokenPath: String
    /// The tokens' `iss`.
    public var issuer: String
    /// The tokens' `aud`, and what a token must carry to be accepted; `nil` for none.
    public var audience: String?
    /// How long an access token lasts.
    public var accessTokenLifetime: Duration
    /// How long a refresh token lasts unused; each use replaces it with a new one.
    public var refreshTokenLifetime: Duration
    /// How tokens are signed.
    public var algorithm: SigningAlgorithm
    /// Whether a token may come as `?access_token=` (RFC 6750 §2.3), which leaves it in logs and
    /// histories; off unless the API documents it.
    public var allowsQueryToken: Bool
    /// API keys a protected route also accepts, in the ``apiKeyHeader`` field, each acting as a user or
    /// client; none by default.
    public var apiKeys: [AuthAPIKey]
    /// The header field an API key comes in.
    public var apiKeyHeader: String
    /// Whether a protected route also accepts a user's password by `Authorization: Basic` (RFC 7617).
    public var allowsBasic: Bool

    /// Where the signing keys are published (RFC 7517), under the base path.
    public static let jwksPath = "/.well-known/jwks.json"
    /// Where the OpenID discovery document is served, under the base path.
    public static let discoveryPath = "/.well-known/openid-configuration"

    /// How tokens are signed: `ES256` (the default, a P-256 key made at start), `RS256` (a 2048-bit RSA key),
    /// both published in the JWKS; or `HS256` with a shared secret, published nowhere.
    public enum SigningAlgorithm: Sendable, Hashable {
        case es256
        case rs256
        case hs256(secret: String)

        /// The name a JWT header gives it.
        public var name: String {
            switch self {
            case .es256: "ES256"
            case .rs256: "RS256"
            case .hs256: "HS256"
            }
        }
    }

    /// Login settings; every route is open until `rules` protect some.
    public init(
        users: [AuthUser] = [], clients: [AuthClient] = [], rules: [AccessRule] = [], tokenPath: String = "/auth/token",
        issuer: String = "hammock", audience: String? = nil, accessTokenLifetime: Duration = .seconds(3600),
        refreshTokenLifetime: Duration = .seconds(30 * 86400), algorithm: SigningAlgorithm = .es256,
        allowsQueryToken: Bool = false, apiKeys: [AuthAPIKey] = [], apiKeyHeader: String = "X-API-Key",
        allowsBasic: Bool = false
    ) {
        self.users = users
        self.clients = clients
        self.rules = rules
        self.tokenPath = tokenPath
        self.issuer = issuer
        self.audience = audience
        self.accessTokenLifetime = accessTokenLifetime
        self.refreshTokenLifetime = refreshTokenLifetime
        self.algorithm = algorithm
        self.allowsQueryToken = allowsQueryToken
        self.apiKeys = apiKeys
        self.apiKeyHeader = apiKeyHeader
        self.allowsBasic = allowsBasic
    }
}

/// Someone who signs in with a password.
public struct AuthUser: Sendable, Hashable {
    /// What the token's `sub` says: the id given, or the username.
    public var id: String
    public var username: String
    public var password: String
    /// What access rules ask for (the token's `roles`).
    public var roles: [String]
    /// More claims for the user's tokens (`name`, `email`, …); the registered ones are the server's.
    public var claims: JSONObject

    public init(username: String, password: String, id: String? = nil, roles: [String] = [], claims: JSONObject = [:]) {
        self.id = id ?? username
        self.username = username
        self.password = password
        self.roles = roles
        self.claims = claims
    }
}

/// An API key a protected route accepts, standing for a user (their roles) or a client (its roles).
public struct AuthAPIKey: Sendable, Hashable {
    /// The key itself.
    public var key: String
    /// The username or client id it acts as.
    public var owner: String

    public init(key: String, owner: String) {
        self.key = key
        self.owner = owner
    }
}

/// An application that asks for tokens (OAuth 2.0's client).
public struct AuthClient: Sendable, Hashable {
    public var id: String
    /// Its secret; `nil` for a public client (an app), which may not use client credentials.
    public var secret: String?
    /// The roles of the tokens it gets for itself.
    public var roles: [String]

    public init(id: String, secret: String? = nil, roles: [String] = []) {
        self.id = id
        self.secret = secret
        self.roles = roles
    }
}

/// Which requests need an access token, and which roles they need.
///
/// A request that any rule covers needs a valid token (401 without one); each covering rule that lists
/// roles then needs the token to hold one of them (403 otherwise). Rules add up: a request answers only
/// when every rule covering it is met.
public struct AccessRule: Sendable, Hashable {
    /// What a rule covers.
    public enum Target: Sendable, Hashable {
        /// Every route of the resource (its items, its list, nested lists of it); `*` for every resource.
        case resource(String)
        /// A route by its pattern as the route table shows it (`/reports/:id`), or `*` for every route of
        /// every kind (the login's own endpoints excepted).
        case route(String)
    }

    /// What requests do, by method: `read` (GET, HEAD), `create` (POST), `update` (PUT, PATCH),
    /// `delete` (DELETE).
    public enum Action: String, Sendable, Hashable, CaseIterable {
        case read, create, update, delete

        /// The action a method carries out; `nil` for OPTIONS (a preflight needs no token) and methods no
        /// action names (covered only by a rule of every action).
        public init?(_ method: HTTPRequest.Method) {
            switch method {
            case .get, .head: self = .read
            case .post: self = .create
            case .put, .patch: self = .update
            case .delete: self = .delete
            default: return nil
            }
        }
    }

    /// Records that belong to whoever created them: a field of the record names its owner.
    ///
    /// Under a rule with an owner, a signed-in caller (one whose token's `sub`, API key or Basic user has
    /// the id the field holds) sees only their own records in lists, nested lists and relations, gets 403
    /// for another's record by its key (to read, update or delete it), and creates records stamped with
    /// their id (403 for a body that names someone else; the same for an update that would give a record
    /// away). Holders of one of ``exceptRoles`` see and change every record.
    public struct Ownership: Sendable, Hashable {
        /// The field holding the owner's id (`ownerId`); a declared integer field holds it as a number.
        public var field: String
        /// Roles that are not held to their own records (`admin`).
        public var exceptRoles: [String]

        public init(field: String, exceptRoles: [String] = []) {
            self.field = field
            self.exceptRoles = exceptRoles
        }
    }

    public var target: Target
    /// The actions it covers; `nil` for all of them (and any other method but OPTIONS).
    public var actions: Set<Action>?
    /// Roles of which a token must hold one; empty for any signed-in user.
    public var roles: [String]
    /// Whose records the covered requests may reach: only the caller's own when set (resources only).
    public var ownership: Ownership?

    public init(_ target: Target, actions: Set<Action>? = nil, roles: [String] = [], owner: Ownership? = nil) {
        self.target = target
        self.actions = actions
        self.roles = roles
        self.ownership = owner
    }

    /// Whether the rule covers reading (GET, HEAD).
    var coversReads: Bool { actions?.contains(.read) ?? true }

    /// Whether the rule covers `method` on `route` (what the router matched, or a route table's row).
    public func covers(_ method: HTTPRequest.Method, route: MatchedRoute) -> Bool {
        guard method != .options else { return false }
        if let actions {
            guard let action = Action(method), actions.contains(action) else { return false }
        }
        switch target {
        case .resource(let name):
            guard route.kind == .resource, let resource = route.resource else { return false }
            return name == "*" || name == resource
        case .route(let pattern):
            return pattern == "*" || pattern == route.pattern
        }
    }
}

/// What is wrong with an `auth` section, and where.
public struct AuthSettingsError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    /// The key path inside the section (`users[0].password`).
    public var key: String?
    /// Whether what was asked for is not there (the server has no login, no such user), not wrong.
    public var isMissing: Bool

    public init(_ message: String, key: String? = nil, isMissing: Bool = false) {
        self.message = message
        self.key = key
        self.isMissing = isMissing
    }

    public var description: String { key.map { "\($0): \(message)" } ?? message }
}
