public import HammockJSON

extension AuthSettings {
    static let keys = [
        "users", "clients", "protect", "tokenPath", "issuer", "audience", "accessTokenLifetime", "refreshTokenLifetime",
        "algorithm", "secret", "queryToken", "apiKeys", "apiKeyHeader", "basic",
    ]

    /// Login settings from JSON, the shape of a configuration file's `auth` section (see ``AuthSettings``):
    /// `users` (`username`, `password`, optional `id`, `roles`, `claims`), `clients` (`id`, optional `secret`,
    /// `roles`), `protect` (rules: `resource` or `route`, optional `actions`, `roles` and `owner`), `tokenPath`,
    /// `issuer`, `audience`, the two lifetimes in seconds, `algorithm` (`ES256`, `RS256`, or `HS256` with a
    /// `secret`) and `queryToken`.
    /// - Throws: ``AuthSettingsError`` naming the key path inside the section.
    public init(json: JSON) throws(AuthSettingsError) {
        guard case .object(let object) = json else {
            throw AuthSettingsError("expected an object: {\"users\": [...], \"protect\": [...]}")
        }
        for key in object.keys where !Self.keys.contains(key) {
            throw AuthSettingsError("unknown key; expected one of \(Self.keys.joined(separator: ", "))", key: key)
        }
        self.init()
        users = try Self.list(object["users"], key: "users") { (element, at) throws(AuthSettingsError) in
            try Self.user(element, at: at)
        }
        var usernames = Set<String>()
        for (index, user) in users.enumerated() where !usernames.insert(user.username).inserted {
            throw AuthSettingsError("'\(user.username.prefix(100))' names an earlier user too", key: "users[\(index)].username")
        }
        clients = try Self.list(object["clients"], key: "clients") { (element, at) throws(AuthSettingsError) in
            try Self.client(element, at: at)
        }
        var clientIDs = Set<String>()
        for (index, client) in clients.enumerated() where !clientIDs.insert(client.id).inserted {
            throw AuthSettingsError("'\(client.id.prefix(100))' names an earlier client too", key: "clients[\(index)].id")
        }
        rules = try Self.list(object["protect"], key: "protect") { (element, at) throws(AuthSettingsError) in
            try Self.rule(element, at: at)
        }
        if let path = try Self.string(object["tokenPath"], key: "tokenPath") {
            guard path.hasPrefix("/"), !path.contains("?"), !path.contains("#"), !path.contains(":"), path.count <= 200 else {
                throw AuthSettingsError("expected a path such as \"/oauth/token\"", key: "tokenPath")
            }
            tokenPath = path
        }
        if let issuer = try Self.string(object["issuer"], key: "issuer") {
            guard !issuer.isEmpty else { throw AuthSettingsError("must not be empty", key: "issuer") }
            self.issuer = issuer
        }
        audience = try Self.string(object["audience"], key: "audience")
        if let seconds = try Self.seconds(object["accessTokenLifetime"], key: "accessTokenLifetime") {
            accessTokenLifetime = seconds
        }
        if let seconds = try Self.seconds(object["refreshTokenLifetime"], key: "refreshTokenLifetime") {
            refreshTokenLifetime = seconds
        }
        let secret = try Self.string(object["secret"], key: "secret")
        switch try Self.string(object["algorithm"], key: "algorithm")?.uppercased() {
        case nil, "ES256": algorithm = .es256
        case "RS256": algorithm = .rs256
        case "HS256":
            // RFC 7518 §3.2: a key at least as long as the hash (32 bytes).
            guard let secret, secret.utf8.count >= 32 else {
                throw AuthSettingsError("HS256 needs a secret of at least 32 bytes (RFC 7518 §3.2)", key: "secret")
            }
            algorithm = .hs256(secret: secret)
        case let other?:
            throw AuthSettingsError("'\(other.prefix(20))' is not one of ES256, RS256, HS256", key: "algorithm")
        }
        if secret != nil, algorithm.name != "HS256" {
            throw AuthSettingsError("a secret is for HS256 only; ES256 and RS256 make their own keys", key: "secret")
        }
        apiKeys = try Self.list(object["apiKeys"], key: "apiKeys") { (element, at) throws(AuthSettingsError) in
            let fields = try Self.object(
                element, at: at, keys: ["key", "user"], example: "{\"key\": \"k-123\", \"user\": \"ada\"}")
            guard let key = try Self.string(fields["key"], key: "\(at).key"), key.utf8.count >= 8,
                key.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
            else {
                throw AuthSettingsError(
                    "expected a key of 8 or more visible ASCII characters (it travels in a header)", key: "\(at).key")
            }
            guard let owner = try Self.string(fields["user"], key: "\(at).user") else {
                throw AuthSettingsError("missing; the username or client id the key acts as", key: "\(at).user")
            }
            return AuthAPIKey(key: key, owner: owner)
        }
        for (index, apiKey) in apiKeys.enumerated() {
            guard users.contains(where: { $0.username == apiKey.owner }) || clients.contains(where: { $0.id == apiKey.owner })
            else {
                throw AuthSettingsError("no user or client is named '\(apiKey.owner.prefix(100))'", key: "apiKeys[\(index)].user")
            }
            if apiKeys[..<index].contains(where: { $0.key == apiKey.key }) {
                throw AuthSettingsError("the same key as an earlier one", key: "apiKeys[\(index)].key")
            }
        }
        if let header = try Self.string(object["apiKeyHeader"], key: "apiKeyHeader") {
            guard ServerConfiguration.isFieldName(header), header.lowercased() != "authorization" else {
                throw AuthSettingsError("expected a header field name such as X-API-Key (not Authorization)", key: "apiKeyHeader")
            }
            apiKeyHeader = header
        }
        if let flag = object["basic"] {
            guard case .bool(let allowed) = flag else { throw AuthSettingsError("expected true or false", key: "basic") }
            allowsBasic = allowed
        }
        if let flag = object["queryToken"] {
            guard case .bool(let allowed) = flag else { throw AuthSettingsError("expected true or false", key: "queryToken") }
            allowsQueryToken = allowed
        }
    }

    static func list<T>(
        _ value: JSON?, key: String, _ read: (JSON, String) throws(AuthSettingsError) -> T
    ) throws(AuthSettingsError) -> [T] {
        guard let value, !value.isNull else { return [] }
        guard case .array(let elements) = value else { throw AuthSettingsError("expected an array", key: key) }
        var result: [T] = []
        for (index, element) in elements.enumerated() { result.append(try read(element, "\(key)[\(index)]")) }
        return result
    }

    static func string(_ value: JSON?, key: String) throws(AuthSettingsError) -> String? {
        guard let value, !value.isNull else { return nil }
        guard case .string(let text) = value else { throw AuthSettingsError("expected a string", key: key) }
        return text
    }

    static func strings(_ value: JSON?, key: String) throws(AuthSettingsError) -> [String] {
        try list(value, key: key) { (element, at) throws(AuthSettingsError) in
            guard case .string(let text) = element, !text.isEmpty else { throw AuthSettingsError("expected a name", key: at) }
            return text
        }
    }

    /// A lifetime: 1 second to 10 years.
    static func seconds(_ value: JSON?, key: String) throws(AuthSettingsError) -> Duration? {
        guard let value, !value.isNull else { return nil }
        guard let number = value.doubleValue, number.isFinite, number >= 1, number <= 315_360_000 else {
            throw AuthSettingsError("expected a number of seconds from 1 to 315360000 (10 years)", key: key)
        }
        return .milliseconds(Int64((number * 1000).rounded()))
    }

    static func object(_ value: JSON, at: String, keys: [String], example: String) throws(AuthSettingsError) -> JSONObject {
        guard case .object(let object) = value else { throw AuthSettingsError("expected \(example)", key: at) }
        for key in object.keys where !keys.contains(key) {
            throw AuthSettingsError("unknown key; expected one of \(keys.joined(separator: ", "))", key: "\(at).\(key)")
        }
        return object
    }

    static func user(_ value: JSON, at: String) throws(AuthSettingsError) -> AuthUser {
        let object = try object(
            value, at: at, keys: ["username", "password", "id", "roles", "claims"],
            example: "{\"username\": \"ada\", \"password\": \"lovelace\"}")
        guard let username = try string(object["username"], key: "\(at).username"), !username.isEmpty else {
            throw AuthSettingsError("missing; the name the user signs in with", key: "\(at).username")
        }
        guard let password = try string(object["password"], key: "\(at).password") else {
            throw AuthSettingsError("missing; the password the user signs in with", key: "\(at).password")
        }
        let id = try string(object["id"], key: "\(at).id")
        if let id, id.isEmpty { throw AuthSettingsError("must not be empty", key: "\(at).id") }
        var claims = JSONObject()
        if let value = object["claims"], !value.isNull {
            guard case .object(let given) = value else { throw AuthSettingsError("expected an object", key: "\(at).claims") }
            for key in given.keys where CompactToken.registeredClaims.contains(key) {
                throw AuthSettingsError(
                    "'\(key)' is set by the server (\(CompactToken.registeredClaims.sorted().joined(separator: ", ")))",
                    key: "\(at).claims.\(key)")
            }
            claims = given
        }
        return AuthUser(
            username: username, password: password, id: id, roles: try strings(object["roles"], key: "\(at).roles"),
            claims: claims)
    }

    static func client(_ value: JSON, at: String) throws(AuthSettingsError) -> AuthClient {
        let object = try object(
            value, at: at, keys: ["id", "secret", "roles"], example: "{\"id\": \"reports\", \"secret\": \"…\"}")
        guard let id = try string(object["id"], key: "\(at).id"), !id.isEmpty, !id.contains(":") else {
            throw AuthSettingsError("missing; the client's id (no ':', which Basic authentication splits on)", key: "\(at).id")
        }
        return AuthClient(
            id: id, secret: try string(object["secret"], key: "\(at).secret"),
            roles: try strings(object["roles"], key: "\(at).roles"))
    }

    static func rule(_ value: JSON, at: String) throws(AuthSettingsError) -> AccessRule {
        let object = try object(
            value, at: at, keys: ["resource", "route", "actions", "roles", "owner"],
            example: "{\"resource\": \"people\"} or {\"route\": \"/reports/:id\", \"roles\": [\"admin\"]}")
        let target: AccessRule.Target
        switch (try string(object["resource"], key: "\(at).resource"), try string(object["route"], key: "\(at).route")) {
        case (let resource?, nil): target = .resource(resource)
        case (nil, let route?):
            guard route == "*" || route.hasPrefix("/") else {
                throw AuthSettingsError("expected a route's pattern such as \"/reports/:id\", or \"*\"", key: "\(at).route")
            }
            target = .route(route)
        case (_?, _?): throw AuthSettingsError("give a resource or a route, not both", key: at)
        case (nil, nil): throw AuthSettingsError("missing; a rule names a resource or a route", key: "\(at).resource")
        }
        var actions: Set<AccessRule.Action>?
        if let value = object["actions"], !value.isNull {
            var set = Set<AccessRule.Action>()
            for (index, name) in try strings(value, key: "\(at).actions").enumerated() {
                if name == "write" {
                    set.formUnion([.create, .update, .delete])
                } else if let action = AccessRule.Action(rawValue: name) {
                    set.insert(action)
                } else {
                    throw AuthSettingsError(
                        "'\(name.prefix(40))' is not one of read, create, update, delete, write", key: "\(at).actions[\(index)]")
                }
            }
            actions = set
        }
        var ownership: AccessRule.Ownership?
        if let value = object["owner"], !value.isNull {
            ownership = try owner(value, at: "\(at).owner")
            guard case .resource = target else {
                throw AuthSettingsError("records have owners; a route's rule cannot say whose they are", key: "\(at).owner")
            }
        }
        return AccessRule(
            target, actions: actions, roles: try strings(object["roles"], key: "\(at).roles"), owner: ownership)
    }

    /// `"ownerId"`, or `{"field": "ownerId", "exceptRoles": ["admin"]}`.
    static func owner(_ value: JSON, at: String) throws(AuthSettingsError) -> AccessRule.Ownership {
        let example = "a field's name such as \"ownerId\", or {\"field\": \"ownerId\", \"exceptRoles\": [\"admin\"]}"
        if case .string(let field) = value {
            guard !field.isEmpty else { throw AuthSettingsError("expected \(example)", key: at) }
            return AccessRule.Ownership(field: field)
        }
        let object = try object(value, at: at, keys: ["field", "exceptRoles"], example: example)
        guard let field = try string(object["field"], key: "\(at).field"), !field.isEmpty else {
            throw AuthSettingsError("missing; the field that holds the owner's id", key: "\(at).field")
        }
        return AccessRule.Ownership(field: field, exceptRoles: try strings(object["exceptRoles"], key: "\(at).exceptRoles"))
    }
}
