public import HammockJSON

extension MockServer {
    /// The login in force (a configuration's `auth` section, or ``setAuth(_:)``); `nil` when the server
    /// has none and every route is open.
    public var auth: AuthSettings? { runtimeCell.runtime.settings.authority?.settings }

    /// Puts `settings` in force from the next request on: its endpoints answer and its rules protect
    /// routes; `nil` opens every route again. The same settings as those in force keep the keys and
    /// every token handed out; other settings make a new key, and earlier tokens stop verifying.
    /// - Throws: ``AuthSettingsError`` for a rule naming a resource the server does not serve, or when the
    ///   server has no ``Options/tokenSigner``.
    public func setAuth(_ settings: AuthSettings?) async throws {
        guard let settings else {
            runtimeCell.change { $0.authority = nil }
            return
        }
        try Self.checkRules(of: settings, resources: schemas.map(\.name))
        if runtimeCell.runtime.settings.authority?.settings == settings { return }
        let authority = try await MockAuthority.make(settings, signer: try requireSigner(), now: tokenClock)
        runtimeCell.change { $0.authority = authority }
    }

    /// The signer of access tokens, or an error saying how to give one.
    func requireSigner() throws(AuthSettingsError) -> any AccessTokenSigner {
        guard let signer = options.tokenSigner else {
            throw AuthSettingsError(
                "A login needs a token signer, and this server has none: add the HammockJWT product and pass "
                    + "tokenSigner: JWTAccessTokens() (hammock serve and HammockServerTesting do)")
        }
        return signer
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
        let authority = try requireAuthority()
        guard let user = authority.settings.users.first(where: { $0.username == username }) else {
            throw AuthSettingsError("No user is named '\(username.prefix(100))'", key: "username", isMissing: true)
        }
        return try await authority.issue(
            subject: user.id, roles: user.roles, claims: user.claims, client: nil, scope: scope, refresh: false
        ).accessToken
    }

    // MARK: Switches: the hard cases of a login, on demand

    /// The login in force, or an error saying there is none.
    func requireAuthority() throws(AuthSettingsError) -> MockAuthority {
        guard let authority = runtimeCell.runtime.settings.authority else {
            throw AuthSettingsError("The server has no login: give it an auth section or call setAuth(_:)", isMissing: true)
        }
        return authority
    }

    /// Every access token issued so far expires now (401 `invalid_token`, "The access token expired");
    /// refresh tokens still work, so a client that refreshes recovers. Tokens issued after this call hold.
    public func expireAccessTokens() throws(AuthSettingsError) {
        try requireAuthority().changeSwitches { switches in
            switches.generation += 1
            switches.expiredBelow = switches.generation
        }
    }

    /// The next `count` refresh-token grants answer `invalid_grant` and revoke the token they were given,
    /// as a server that ended the session would: the path where a client must sign the user out.
    public func rejectNextRefreshes(_ count: Int = 1) throws(AuthSettingsError) {
        guard count >= 0 else { throw AuthSettingsError("expected a count of 0 or more", key: "count") }
        try requireAuthority().changeSwitches { $0.refusedRefreshes = count }
    }

    /// The next `count` requests to protected routes answer 401 `invalid_token`, whatever token they carry.
    public func answerUnauthorized(next count: Int) throws(AuthSettingsError) {
        guard count >= 0 else { throw AuthSettingsError("expected a count of 0 or more", key: "count") }
        try requireAuthority().changeSwitches { $0.forcedUnauthorized = count }
    }

    /// Signs with a new key from now on. With `keepingPrevious` (the default, as identity providers
    /// rotate) tokens signed with the earlier keys still verify and the JWKS lists them all; without, they
    /// stop verifying and leave the JWKS.
    public func rotateSigningKey(keepingPrevious: Bool = true) async throws {
        try await requireAuthority().keys.rotate(keepingPrevious: keepingPrevious)
    }

    /// Ends every session of the user named `username`: their refresh tokens go and their access tokens
    /// are refused ("revoked"). Returns how many refresh tokens went.
    @discardableResult
    public func revokeSessions(of username: String) throws(AuthSettingsError) -> Int {
        let authority = try requireAuthority()
        guard let user = authority.settings.users.first(where: { $0.username == username }) else {
            throw AuthSettingsError("No user is named '\(username.prefix(100))'", key: "username", isMissing: true)
        }
        return authority.revokeSessions(of: user.id)
    }

    /// The JWKS the server publishes at `/.well-known/jwks.json`; `nil` without a login.
    public var jsonWebKeySet: JSON? { runtimeCell.runtime.settings.authority?.keys.jwks }

    /// The ids of the keys that verify the server's tokens, the one that signs last; empty without a login.
    public var signingKeyIDs: [String] { runtimeCell.runtime.settings.authority?.keys.keyIDs ?? [] }
}
