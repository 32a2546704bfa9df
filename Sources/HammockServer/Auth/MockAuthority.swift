import Foundation
import HTTPTypes
import HammockJSON
import Synchronization

/// The mock's login at run time: its settings, its signing keys, the refresh tokens it has handed out.
///
/// One per server and settings: a reload that keeps the `auth` section keeps it (and so every token
/// handed out); one that changes it makes a new one.
final class MockAuthority: Sendable {
    let settings: AuthSettings
    let keys: any AccessTokenKeyring
    /// The server's wall clock: tokens' `iat` and `exp`, and the checks of both.
    let now: @Sendable () -> Date
    private let state = Mutex(State())
    /// Tokens whose signature was checked, and what they said: a token sent again skips the signature.
    private let verified = Mutex(VerifiedTokens())
    /// Whether any owner rule covers reads: a read of any route may then reach owned records.
    private let hasOwnedReads: Bool

    /// Why: a protected GET cost 100-108 µs of CPU with ES256 and RS256 and 67 µs with HS256, against
    /// 17.6 µs open (scripts/bench-auth, docs/benchmarks.md), nearly all of it in checking one token
    /// again and again (jwt-kit decodes header and claims through Foundation's JSONDecoder on every call).
    /// A signature over the same bytes stays valid, so only the times, the key (still the server's?) and
    /// the switches are checked again; those are checked on every request, cached or not.
    struct VerifiedTokens: Sendable {
        /// At most this many, about 1 KiB each: more distinct live tokens than a test makes.
        static let limit = 4096
        var entries: [String: (keyID: String, claims: JSONObject)] = [:]
        var order: [String] = []

        mutating func insert(_ token: String, keyID: String, claims: JSONObject) {
            guard entries.updateValue((keyID, claims), forKey: token) == nil else { return }
            order.append(token)
            if order.count > Self.limit {
                // Drop the older half in one go: amortized O(1) per insert.
                for old in order.prefix(Self.limit / 2) { entries[old] = nil }
                order.removeFirst(Self.limit / 2)
            }
        }
    }

    /// A refresh token's grant: whose it is and what it may renew.
    struct RefreshGrant: Sendable {
        var subject: String
        var client: String?
        var scope: String?
        var expires: Date
        /// Every token of a chain of rotations shares one: reusing a spent token ends the whole chain
        /// (RFC 9700 §4.14.2, refresh token rotation's replay detection).
        var family: String
    }

    struct State: Sendable {
        /// The refresh tokens that may be used, by value.
        var refreshTokens: [String: RefreshGrant] = [:]
        /// The same in the order issued (spent ones linger until passed over), for dropping the oldest.
        var refreshOrder: [String] = []
        /// Tokens already used, and the family each belonged to; bounded (see ``spentLimit``).
        var spent: [String: String] = [:]
        var spentOrder: [String] = []
        var switches = AuthSwitches()
    }

    /// What a test turned on: the hard cases of a login, played on demand.
    ///
    /// Access tokens carry the generation they were issued in (the first part of their `jti`, which a
    /// client never reads); a switch that ends tokens raises the generation and ends those below it, so
    /// a token issued in the same second after the switch still holds.
    struct AuthSwitches: Sendable {
        var generation = 0
        /// Access tokens of a lower generation are expired.
        var expiredBelow = 0
        /// A subject's access tokens of a lower generation are revoked.
        var revokedBelow: [String: Int] = [:]
        /// How many of the next refresh-token grants answer `invalid_grant`.
        var refusedRefreshes = 0
        /// How many of the next protected requests answer 401, whatever their token.
        var forcedUnauthorized = 0
    }

    /// How many used refresh tokens are remembered for replay detection: a test's run makes a few
    /// hundred; a forgotten one is simply unknown (the same `invalid_grant`).
    static let spentLimit = 10_000
    /// How many refresh tokens may be live at once (about 200 bytes each). Past it, the oldest go (their
    /// sessions then end at the next refresh): a client signing in again and again, or a fuzzer, would
    /// otherwise grow the server without bound.
    static let liveLimit = 100_000

    private init(settings: AuthSettings, keys: any AccessTokenKeyring, now: @escaping @Sendable () -> Date) {
        self.settings = settings
        self.keys = keys
        self.now = now
        hasOwnedReads = settings.rules.contains { $0.ownership != nil && $0.coversReads }
    }

    static func make(
        _ settings: AuthSettings, signer: any AccessTokenSigner, now: @escaping @Sendable () -> Date
    ) async throws -> MockAuthority {
        MockAuthority(settings: settings, keys: try await signer.keyring(for: settings.algorithm), now: now)
    }

    // MARK: Issuing

    /// What `POST /auth/token` answers: the tokens (RFC 6749 §5.1).
    struct Issued: Sendable {
        var accessToken: String
        var refreshToken: String?
        var scope: String?
        var expiresIn: Int

        var json: JSON {
            var object: JSONObject = [
                "access_token": .string(accessToken), "token_type": "Bearer", "expires_in": .integer(expiresIn),
            ]
            if let refreshToken { object["refresh_token"] = .string(refreshToken) }
            if let scope { object["scope"] = .string(scope) }
            return .object(object)
        }
    }

    /// An access token for `subject` (a user's id, or a client's for its own), and a refresh token in
    /// `family` when `refresh` (a new family when `nil`).
    func issue(
        subject: String, roles: [String], claims: JSONObject, client: String?, scope: String?, refresh: Bool,
        family: String? = nil
    ) async throws -> Issued {
        let issuedAt = now()
        let seconds = Int(settings.accessTokenLifetime.components.seconds)
        var payload = claims
        payload["iss"] = .string(settings.issuer)
        payload["sub"] = .string(subject)
        if let audience = settings.audience { payload["aud"] = .string(audience) }
        let epoch = Int(issuedAt.timeIntervalSince1970)
        payload["iat"] = .integer(epoch)
        payload["nbf"] = .integer(epoch)
        payload["exp"] = .integer(epoch + seconds)
        let generation = state.withLock { $0.switches.generation }
        payload["jti"] = .string("\(generation).\(CompactToken.randomID(bytes: 12))")
        payload["roles"] = .array(roles.map(JSON.string))
        if let client { payload["client_id"] = .string(client) }
        if let scope { payload["scope"] = .string(scope) }
        let access = try await keys.sign(payload)
        var refreshToken: String?
        if refresh {
            let token = CompactToken.randomID(bytes: 32)
            let grant = RefreshGrant(
                subject: subject, client: client, scope: scope,
                expires: issuedAt.addingTimeInterval(Double(settings.refreshTokenLifetime.components.seconds)),
                family: family ?? CompactToken.randomID(bytes: 8))
            state.withLock { state in
                state.refreshTokens[token] = grant
                state.refreshOrder.append(token)
                Self.bound(&state)
            }
            refreshToken = token
        }
        return Issued(accessToken: access, refreshToken: refreshToken, scope: scope, expiresIn: seconds)
    }

    /// Drops the oldest live refresh tokens past ``liveLimit`` (down to nine tenths of it), and the spent
    /// ones the order still lists once they outnumber the live.
    static func bound(_ state: inout State, limit: Int = liveLimit) {
        if state.refreshTokens.count > limit {
            var dropped = 0
            while state.refreshTokens.count > limit * 9 / 10, dropped < state.refreshOrder.count {
                state.refreshTokens[state.refreshOrder[dropped]] = nil
                dropped += 1
            }
            state.refreshOrder.removeFirst(dropped)
        }
        if state.refreshOrder.count > 2 * max(state.refreshTokens.count, 1_000) {
            state.refreshOrder.removeAll { state.refreshTokens[$0] == nil }
        }
    }

    /// Spends a refresh token: its grant if it may be used now, once. Reusing a spent one ends every token
    /// of its chain, as a stolen token's use would be detected.
    func spendRefreshToken(_ token: String, client: String?) throws(TokenEndpointError) -> RefreshGrant {
        let moment = now()
        return try state.withLock { (state) throws(TokenEndpointError) -> RefreshGrant in
            if state.switches.refusedRefreshes > 0, state.refreshTokens[token] != nil {
                state.switches.refusedRefreshes -= 1
                state.refreshTokens[token] = nil
                throw TokenEndpointError(
                    .invalidGrant, "The refresh token was refused by a switch (rejectNextRefreshes), and is revoked",
                    bySwitch: true)
            }
            guard let grant = state.refreshTokens.removeValue(forKey: token) else {
                if let family = state.spent[token] {
                    state.refreshTokens = state.refreshTokens.filter { $0.value.family != family }
                    throw TokenEndpointError(
                        .invalidGrant, "The refresh token was already used; every token of its chain is revoked")
                }
                throw TokenEndpointError(.invalidGrant, "The refresh token is unknown or was revoked")
            }
            state.spent[token] = grant.family
            state.spentOrder.append(token)
            if state.spentOrder.count > Self.spentLimit {
                // The older half forgotten in one go: amortized O(1) per use, not an array shift each time.
                for old in state.spentOrder.prefix(Self.spentLimit / 2) { state.spent[old] = nil }
                state.spentOrder.removeFirst(Self.spentLimit / 2)
            }
            guard grant.expires > moment else { throw TokenEndpointError(.invalidGrant, "The refresh token expired") }
            guard grant.client == client else {
                throw TokenEndpointError(.invalidGrant, "The refresh token was issued to another client")
            }
            return grant
        }
    }

    // MARK: Switches

    /// Changes the switches in one step.
    func changeSwitches(_ body: (inout AuthSwitches) -> Void) { state.withLock { body(&$0.switches) } }

    /// Ends `subject`'s sessions: its refresh tokens go, its access tokens are refused. Returns how many
    /// refresh tokens went.
    func revokeSessions(of subject: String) -> Int {
        state.withLock { state in
            state.switches.generation += 1
            state.switches.revokedBelow[subject] = state.switches.generation
            let before = state.refreshTokens.count
            state.refreshTokens = state.refreshTokens.filter { $0.value.subject != subject }
            return before - state.refreshTokens.count
        }
    }

    /// The switches and sessions now, for the admin API.
    var snapshot: (switches: AuthSwitches, refreshTokens: Int) { state.withLock { ($0.switches, $0.refreshTokens.count) } }

    // MARK: Checking

    /// Who a valid token says the caller is.
    struct Principal: Sendable, Hashable {
        var subject: String
        var roles: [String]
        var claims: JSONObject
    }

    /// Lets `request` through to `route` when no rule covers it, or when its token is valid and holds the
    /// roles every covering rule asks; throws the 401 or 403 otherwise. Returns whose records it may reach
    /// when an owner rule holds the caller to their own (``AccessRule/Ownership``).
    func admit(_ request: MockRequest, route: MatchedRoute) async throws(HTTPProblem) -> OwnerScope? {
        let covering = settings.rules.filter { $0.covers(request.method, route: route) }
        guard !covering.isEmpty else {
            // An open route's list may still embed or expand records an owner rule keeps: a caller who
            // says who they are sees their own, anyone else none.
            guard hasOwnedReads, AccessRule.Action(request.method) == .read else { return nil }
            let principal = try? await authenticate(request, notingSwitches: false)
            return ownerScope(for: request, route: route, principal: principal)
        }
        let forced = state.withLock { state in
            guard state.switches.forcedUnauthorized > 0 else { return false }
            state.switches.forcedUnauthorized -= 1
            return true
        }
        if forced {
            request.context?.noteSwitch("auth: 401 forced (answerUnauthorized)")
            throw unauthorized("The access token was refused by a switch (answerUnauthorized)", error: "invalid_token")
        }
        let principal = try await authenticate(request, notingSwitches: true)
        for rule in covering where !rule.roles.isEmpty && !rule.roles.contains(where: principal.roles.contains) {
            throw HTTPProblem(
                .forbidden,
                detail: "\(request.method) \(route.pattern) needs one of the roles \(rule.roles.joined(separator: ", ")); "
                    + "the token of '\(principal.subject.prefix(100))' holds "
                    + (principal.roles.isEmpty ? "none" : principal.roles.joined(separator: ", ")),
                headerFields: [.wwwAuthenticate: "Bearer realm=\"hammock\", error=\"insufficient_scope\""])
        }
        return ownerScope(for: request, route: route, principal: principal)
    }

    /// Who the request's credentials say the caller is: an API key, a Basic password or a bearer token.
    func authenticate(_ request: MockRequest, notingSwitches: Bool) async throws(HTTPProblem) -> Principal {
        if let other = try principalWithoutToken(of: request) { return other }
        let token = try bearerToken(of: request)
        do throws(TokenRejection) {
            return try await check(token)
        } catch {
            if notingSwitches, let note = error.switchNote { request.context?.noteSwitch(note) }
            throw unauthorized(error.reason, error: "invalid_token")
        }
    }

    /// The records the caller may reach: for each owner rule covering the request (for a read, each one
    /// covering reads, since a list embeds and expands other resources) whose excepted roles the caller
    /// lacks, the resource's owner field. `nil` when no rule holds the caller; an unknown caller owns
    /// nothing.
    func ownerScope(for request: MockRequest, route: MatchedRoute, principal: Principal?) -> OwnerScope? {
        let reads = AccessRule.Action(request.method) == .read
        var fields: [String: String] = [:]
        for rule in settings.rules {
            guard let ownership = rule.ownership, case .resource(let name) = rule.target,
                (reads && rule.coversReads) || rule.covers(request.method, route: route)
            else { continue }
            if let principal, ownership.exceptRoles.contains(where: principal.roles.contains) { continue }
            if fields[name] == nil { fields[name] = ownership.field }
        }
        guard !fields.isEmpty else { return nil }
        return OwnerScope(subject: principal?.subject, fields: fields)
    }

    /// Checks the bearer token of a request to an operation an API document protects: one this server
    /// issued and valid now (401 `invalid_token` otherwise), carrying the scopes of one of the ways in
    /// that take a bearer token (`scopes`, as the document's requirements list them; 403
    /// `insufficient_scope` otherwise, RFC 6750 §3.1). A token with no `scope` claim, as the token endpoint
    /// issues when none is asked, carries every scope. A request that met the document another way (an
    /// API key, say) carries no bearer token and passes.
    func checkDocumentedBearer(_ request: MockRequest, scopes: [[String]]) async throws(HTTPProblem) {
        guard let value = request.headerFields[.authorization], let token = Self.credentials(value, scheme: "Bearer") else {
            return
        }
        let principal: Principal
        do throws(TokenRejection) {
            principal = try await check(String(token))
        } catch {
            if let note = error.switchNote { request.context?.noteSwitch(note) }
            throw unauthorized(error.reason, error: "invalid_token")
        }
        guard case .string(let granted)? = principal.claims["scope"], !scopes.contains(where: \.isEmpty) else { return }
        let held = Set(granted.split(separator: " ").map(String.init))
        guard let wanted = scopes.first, !scopes.contains(where: { held.isSuperset(of: $0) }) else { return }
        let asked = wanted.joined(separator: " ")
        throw HTTPProblem(
            .forbidden,
            detail: "\(request.method) \(request.path.prefix(200)) needs the scope\(wanted.count == 1 ? "" : "s") \(asked); "
                + "the token carries \(granted.isEmpty ? "none" : granted)",
            headerFields: [
                .wwwAuthenticate:
                    "Bearer realm=\"hammock\", error=\"insufficient_scope\", scope=\"\(asked.replacingOccurrences(of: "\"", with: "'"))\""
            ])
    }

    /// Who an API key or a Basic password says the caller is, when the settings accept them and the
    /// request carries one; `nil` to look for a bearer token.
    func principalWithoutToken(of request: MockRequest) throws(HTTPProblem) -> Principal? {
        if !settings.apiKeys.isEmpty, let name = HTTPField.Name(settings.apiKeyHeader), let given = request.headerFields[name] {
            // Every key compared in full, so the time taken says nothing of which key is near.
            var found: AuthAPIKey?
            for apiKey in settings.apiKeys where AuthRoutes.constantTimeEquals(apiKey.key, given) { found = apiKey }
            guard let found, let principal = principal(named: found.owner) else {
                throw unauthorized("The API key in \(settings.apiKeyHeader) is not one of this server's", error: "invalid_token")
            }
            return principal
        }
        guard settings.allowsBasic, let value = request.headerFields[.authorization],
            let credentials = Self.credentials(value, scheme: "Basic")
        else { return nil }
        guard let (username, password) = Self.basicPair(credentials) else {
            throw unauthorized("The Authorization header must be 'Basic base64(user:password)'", error: "invalid_request")
        }
        guard let user = settings.users.first(where: { $0.username == username }),
            AuthRoutes.constantTimeEquals(user.password, password)
        else { throw unauthorized("The username or password is wrong", error: "invalid_token") }
        return Principal(subject: user.id, roles: user.roles, claims: user.claims)
    }

    /// The principal of a user (by username) or a client (by id).
    func principal(named name: String) -> Principal? {
        if let user = settings.users.first(where: { $0.username == name }) {
            return Principal(subject: user.id, roles: user.roles, claims: user.claims)
        }
        if let client = settings.clients.first(where: { $0.id == name }) {
            return Principal(subject: client.id, roles: client.roles, claims: [:])
        }
        return nil
    }

    /// The token a request carries: `Authorization: Bearer …`, or `?access_token=` where allowed.
    func bearerToken(of request: MockRequest) throws(HTTPProblem) -> String {
        if let value = request.headerFields[.authorization] {
            guard let token = Self.credentials(value, scheme: "Bearer") else {
                throw unauthorized(
                    "The Authorization header must be 'Bearer TOKEN'" + (settings.allowsBasic ? " or 'Basic …'" : ""),
                    error: "invalid_request")
            }
            return String(token)
        }
        if let query = request.query, let parameters = try? FormURLEncoded.decode(Array(query.utf8)),
            case .string(let token)? = parameters["access_token"]
        {
            guard settings.allowsQueryToken else {
                throw unauthorized(
                    "An access token in the query string is refused (RFC 6750 §2.3: it stays in logs and histories); "
                        + "send 'Authorization: Bearer TOKEN'", error: "invalid_request")
            }
            return token
        }
        throw unauthorized(nil, error: nil)
    }

    /// The principal of a token this server signed that is valid now.
    func check(_ token: String) async throws(TokenRejection) -> Principal {
        let claims: JSONObject
        if let cached = verified.withLock({ $0.entries[token] }), keys.keyIDs.contains(cached.keyID) {
            claims = cached.claims
        } else {
            let keyID = try CompactToken.keyID(of: token, for: keys)
            do {
                claims = try await keys.verify(token, keyID: keyID)
            } catch {
                throw TokenRejection("The access token's signature does not verify")
            }
            verified.withLock { $0.insert(token, keyID: keyID, claims: claims) }
        }
        let moment = Int(now().timeIntervalSince1970)
        guard case .integer(let expires)? = claims["exp"] else { throw TokenRejection("The access token has no expiry (exp)") }
        guard moment < expires else { throw TokenRejection("The access token expired") }
        if case .integer(let notBefore)? = claims["nbf"], moment < notBefore {
            throw TokenRejection("The access token is not valid yet (nbf)")
        }
        guard claims["iss"] == .string(settings.issuer) else {
            throw TokenRejection("The access token was issued by someone else (iss)")
        }
        if let audience = settings.audience {
            let given: [JSON] = claims["aud"].map { $0.arrayValue ?? [$0] } ?? []
            guard given.contains(.string(audience)) else {
                throw TokenRejection("The access token is for another audience (aud); this server is '\(audience)'")
            }
        }
        guard case .string(let subject)? = claims["sub"] else { throw TokenRejection("The access token names no subject (sub)") }
        let generation = claims["jti"]?.stringValue.flatMap { Int($0.prefix { $0 != "." }) } ?? 0
        let switches = state.withLock { $0.switches }
        if generation < switches.expiredBelow {
            throw TokenRejection("The access token expired", switchNote: "auth: token expired by expireAccessTokens")
        }
        if generation < switches.revokedBelow[subject, default: 0] {
            throw TokenRejection(
                "The access token was revoked (the user's sessions were ended)",
                switchNote: "auth: token revoked by revokeSessions")
        }
        let roles = claims["roles"]?.arrayValue?.compactMap(\.stringValue) ?? []
        return Principal(subject: subject, roles: roles, claims: claims)
    }

    /// What an `Authorization` value carries after `scheme` (`Bearer`, `Basic`; any case); `nil` for another
    /// scheme or nothing after it. Spaces and tabs are trimmed by hand: Foundation's trimming goes through
    /// UTF-16 and cost 20 µs a request for a 400-byte token (perf, scripts/bench-auth).
    static func credentials(_ value: String, scheme: String) -> Substring? {
        let trimmed = trimmingSpaces(Substring(value))
        let length = scheme.utf8.count + 1
        guard trimmed.utf8.count > length, trimmed.prefix(length).lowercased() == scheme.lowercased() + " " else { return nil }
        return trimmingSpaces(trimmed.dropFirst(length))
    }

    /// The halves of a Basic value's `user:password` (RFC 7617); `nil` when it is not base64 of UTF-8 text
    /// with a colon.
    static func basicPair(_ credentials: Substring) -> (String, String)? {
        guard let bytes = Data(base64Encoded: String(credentials)).map(Array.init),
            let text = String(validating: bytes, as: UTF8.self), let colon = text.firstIndex(of: ":")
        else { return nil }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    /// `text` without the spaces and tabs around it (RFC 9110 §5.6.3's whitespace).
    static func trimmingSpaces(_ text: Substring) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else {
            return text[text.endIndex...]
        }
        return text[first...last]
    }

    /// A 401 with RFC 6750 §3's challenge: no error code for a request that sent no token, `error` and its
    /// description otherwise; then a challenge for each other way in the settings accept (Basic, the
    /// API key's header).
    func unauthorized(_ reason: String?, error: String?) -> HTTPProblem {
        var challenge = "Bearer realm=\"hammock\""
        if let error { challenge += ", error=\"\(error)\"" }
        if let reason { challenge += ", error_description=\"\(reason.replacingOccurrences(of: "\"", with: "'"))\"" }
        var fields: HTTPFields = [.wwwAuthenticate: challenge]
        var ways = ["'Authorization: Bearer TOKEN'"]
        if settings.allowsBasic {
            fields.append(HTTPField(name: .wwwAuthenticate, value: "Basic realm=\"hammock\""))
            ways.append("'Authorization: Basic …'")
        }
        if !settings.apiKeys.isEmpty {
            // No standard challenge names an API key; this one says where it goes, as the document checks do.
            fields.append(
                HTTPField(
                    name: .wwwAuthenticate, value: "ApiKey realm=\"hammock\", in=\"header\", name=\"\(settings.apiKeyHeader)\""))
            ways.append("an API key in \(settings.apiKeyHeader)")
        }
        return HTTPProblem(
            .unauthorized, detail: reason ?? "This route needs credentials: \(ways.joined(separator: ", or "))",
            headerFields: fields)
    }
}
