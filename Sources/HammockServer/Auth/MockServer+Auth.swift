public import HammockJSON

extension MockServer {
    /// The login in force (a configuration's `auth` section, or ``setAuth(_:)``); `nil` when the server
    /// has none and every route is open.
    public var auth: AuthSettings? { runtimeCell.runtime.settings.authority?.settings }

    /// Puts `settings` in force from the next request on: its endpoints answer and its rules protect
    /// routes; `nil` opens every route again. The same settings as those in force keep the keys and
    /// every token handed out; other settings make a new key, and earlier tokens stop verifying.
    /// - Throws: ``AuthSettingsError`` for a rule naming a resource the server does not serve.
    public func setAuth(_ settings: AuthSettings?) async throws {
        guard let settings else {
            runtimeCell.change { $0.authority = nil }
            return
        }
        try Self.checkRules(of: settings, resources: schemas.map(\.name))
        if runtimeCell.runtime.settings.authority?.settings == settings { return }
        let authority = try await MockAuthority.make(settings, now: tokenClock)
        runtimeCell.change { $0.authority = authority }
    }

    /// Refuses a rule that names no served resource: it would protect nothing, silently.
    static func checkRules(of settings: AuthSettings, resources: [String]) throws(AuthSettingsError) {
        for (index, rule) in settings.rules.enumerated() {
            guard case .resource(let name) = rule.target, name != "*", !resources.contains(name) else { continue }
            throw AuthSettingsError("no resource is named '\(name.prefix(100))'", key: "protect[\(index)].resource")
        }
    }

    /// An access token for the user named `username`, as `POST /auth/token` would give after a good
    /// password: for a test that starts signed in.
    /// - Throws: ``AuthSettingsError`` when the server has no login or no such user.
    public func accessToken(for username: String, scope: String? = nil) async throws -> String {
        guard let authority = runtimeCell.runtime.settings.authority else {
            throw AuthSettingsError("The server has no login: give it an auth section or call setAuth(_:)")
        }
        guard let user = authority.settings.users.first(where: { $0.username == username }) else {
            throw AuthSettingsError("No user is named '\(username.prefix(100))'", key: "users")
        }
        return try await authority.issue(
            subject: user.id, roles: user.roles, claims: user.claims, client: nil, scope: scope, refresh: false
        ).accessToken
    }

    /// The JWKS the server publishes at `/.well-known/jwks.json`; `nil` without a login.
    public var jsonWebKeySet: JSON? { runtimeCell.runtime.settings.authority?.keys.jwks }
}
