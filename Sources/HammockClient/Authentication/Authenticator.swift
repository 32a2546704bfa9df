public import Foundation
public import HTTPTypes
import Synchronization

/// Signs every request with the user's access token, renews it when it expires or the server refuses
/// it, and replays the refused request once: the interceptor an app's login needs.
///
/// ```swift
/// let endpoint = OAuthTokenEndpoint(url: URL(string: "https://api.example.com/auth/token")!, clientID: "ios-app")
/// let authenticator = Authenticator(tokenEndpoint: endpoint, store: MemoryCredentialStore())
/// try await authenticator.signIn(try await endpoint.signIn(username: "ada", password: password))
/// let client = RestClient(baseURL: URL(string: "https://api.example.com")!, interceptors: [authenticator])
/// ```
///
/// What it promises:
/// - **One refresh for many refusals.** Requests that meet an expired token together wait for one
///   refresh and are replayed with its token; a request whose token was already replaced by the time its
///   401 came back is replayed with the new one, without another refresh.
/// - **Before expiry.** A token that expires within ``refreshMargin`` (by `expires_in` or its JWT `exp`) is
///   renewed before the request goes.
/// - **A 401 is replayed once; a 403 never refreshes.** A request the server refused with 401 was not
///   carried out, so it is replayed whatever its method. A request whose outcome is unknown (the
///   connection failed) is never replayed here: that is `RetryPolicy`'s, for idempotent methods.
/// - **A failed refresh is one error for every waiter.** When the token endpoint refuses the refresh
///   token, every waiting request fails with the same ``AuthenticationError`` (`.refreshRejected`), the
///   user is signed out (the store emptied, `onSignOut` called once). When it cannot be reached, they fail
///   with `.refreshFailed` and the tokens are kept for the next try.
/// - **Sign-out wins.** A refresh that finishes after ``signOut()`` does not sign the user back in, in
///   memory or in the store.
///
/// Scope it to the API's origin as any interceptor (a ``RestClient``'s base URL, a service's): it sends
/// the token wherever its requests go.
public final class Authenticator: ClientInterceptor {
    /// How a request's tokens are renewed: an ``OAuthTokenEndpoint``'s `refresh`, or your own.
    public typealias Refresh = @Sendable (AuthTokens) async throws(AuthenticationError) -> AuthTokens

    /// How long before the access token's expiry it is renewed.
    public let refreshMargin: Duration
    let refresh: Refresh
    let now: @Sendable () -> Date
    let onSignOut: (@Sendable () async -> Void)?
    let writer: CredentialWriter
    private let phase = Mutex(Phase(state: .unread, generation: 0, refused: nil))

    /// The named states of a session. Each change raises the generation, which orders what reaches the store.
    enum State: Sendable {
        /// The store has not been read yet.
        case unread
        /// The store is being read; every request waits for it.
        case reading(Task<AuthTokens?, Never>)
        case signedOut
        case signedIn(AuthTokens)
        /// One refresh in flight from these tokens; every request that needs new tokens waits for it.
        case refreshing(from: AuthTokens, Task<AuthTokens, any Error>)
    }

    struct Phase: Sendable {
        var state: State
        var generation: UInt64
        /// The refresh the token endpoint refused last, and the access token it started from: a request
        /// refused with that token whose 401 comes back after the sign-out gets the same error.
        var refused: (accessToken: String, error: AuthenticationError)?

        mutating func move(to state: State) -> UInt64 {
            self.state = state
            generation += 1
            return generation
        }
    }

    /// An authenticator renewing tokens with `refresh`, keeping them in `store`.
    /// - Parameters:
    ///   - store: Where the tokens are kept between requests and launches.
    ///   - refreshMargin: Renew a token this long before it expires (30 s by default, for clock skew and
    ///     the request's own time on the way).
    ///   - now: The wall clock the expiry is read against.
    ///   - onSignOut: Called once each time a refused refresh signs the user out (not on ``signOut()``).
    ///   - refresh: New tokens for the tokens given, or an ``AuthenticationError``.
    public init(
        store: any CredentialStore = MemoryCredentialStore(), refreshMargin: Duration = .seconds(30),
        now: @escaping @Sendable () -> Date = { Date() }, onSignOut: (@Sendable () async -> Void)? = nil,
        refresh: @escaping Refresh
    ) {
        self.writer = CredentialWriter(store: store)
        self.refreshMargin = refreshMargin
        self.now = now
        self.onSignOut = onSignOut
        self.refresh = refresh
    }

    /// An authenticator renewing tokens at `tokenEndpoint`.
    public convenience init(
        tokenEndpoint: OAuthTokenEndpoint, store: any CredentialStore = MemoryCredentialStore(),
        refreshMargin: Duration = .seconds(30), onSignOut: (@Sendable () async -> Void)? = nil
    ) {
        self.init(store: store, refreshMargin: refreshMargin, now: tokenEndpoint.now, onSignOut: onSignOut) {
            (tokens) async throws(AuthenticationError) -> AuthTokens in try await tokenEndpoint.refresh(tokens)
        }
    }

    // MARK: The session

    /// Starts a session with `tokens` (what a sign-in gave), saved to the store.
    public func signIn(_ tokens: AuthTokens) async {
        let generation = phase.withLock { phase in
            phase.refused = nil
            return phase.move(to: .signedIn(tokens))
        }
        await writer.write(tokens, generation: generation)
    }

    /// Ends the session: the tokens leave memory and the store; a refresh in flight is disowned (its
    /// waiters get `.signedOut`).
    public func signOut() async {
        let generation = phase.withLock { $0.move(to: .signedOut) }
        await writer.write(nil, generation: generation)
    }

    /// The tokens in use, reading the store the first time; `nil` when signed out.
    public var tokens: AuthTokens? {
        get async throws { try await currentTokens() }
    }

    /// Whether a session is open (the store read first if need be).
    public var isSignedIn: Bool {
        get async { ((try? await currentTokens()) ?? nil) != nil }
    }

    // MARK: Requests

    public func intercept(_ request: HTTPRequest, body: [UInt8]?, next: Next) async throws -> (HTTPResponse, [UInt8]) {
        guard var tokens = try await currentTokens() else { return try await next(request, body) }
        if let expiry = tokens.expiresAt, tokens.refreshToken != nil,
            now().addingTimeInterval(Self.seconds(refreshMargin)) >= expiry
        {
            do {
                tokens = try await renew(replacing: tokens)
            } catch let error as AuthenticationError where error.reason == .refreshFailed && expiry > now() {
                // Not expired yet and the endpoint out of reach: the old token may still do.
            }
        }
        let (response, responseBody) = try await next(Self.signed(request, with: tokens), body)
        guard response.status == .unauthorized, tokens.refreshToken != nil,
            Self.challengesBearer(response.headerFields)
        else { return (response, responseBody) }
        let renewed = try await renew(replacing: tokens)
        return try await next(Self.signed(request, with: renewed), body)
    }

    static func signed(_ request: HTTPRequest, with tokens: AuthTokens) -> HTTPRequest {
        var request = request
        request.headerFields[.authorization] = "Bearer \(tokens.accessToken)"
        return request
    }

    /// Whether a 401 is about the bearer token: no challenge, or a Bearer one (a Basic challenge from a
    /// proxy on the way is not the token's to fix).
    static func challengesBearer(_ fields: HTTPFields) -> Bool {
        let challenges = fields[values: .wwwAuthenticate]
        return challenges.isEmpty
            || challenges.contains { $0.trimmingCharacters(in: .whitespaces).lowercased().hasPrefix("bearer") }
    }

    // MARK: Transitions

    enum Reading {
        case tokens(AuthTokens?)
        case wait(Task<AuthTokens?, Never>)
        case waitForRefresh(Task<AuthTokens, any Error>)
    }

    /// The tokens to sign with now: read from the store once, waiting for a refresh in flight.
    func currentTokens() async throws -> AuthTokens? {
        let reading = phase.withLock { phase -> Reading in
            switch phase.state {
            case .unread:
                let store = writer.store
                // A store that cannot be read is an empty one: the user signs in again.
                let task = Task { (try? await store.load()) ?? nil }
                phase.state = .reading(task)
                return .wait(task)
            case .reading(let task): return .wait(task)
            case .signedOut: return .tokens(nil)
            case .signedIn(let tokens): return .tokens(tokens)
            case .refreshing(_, let task): return .waitForRefresh(task)
            }
        }
        switch reading {
        case .tokens(let tokens):
            return tokens
        case .wait(let task):
            let loaded = await task.value
            // Only the first waiter moves on from reading; a sign-in meanwhile wins over what was read.
            phase.withLock { phase in
                if case .reading = phase.state { _ = phase.move(to: loaded.map(State.signedIn) ?? .signedOut) }
            }
            return try await currentTokens()
        case .waitForRefresh(let task):
            return try await task.value
        }
    }

    enum Renewal {
        case use(AuthTokens)
        case wait(Task<AuthTokens, any Error>)
        case fail(AuthenticationError)
    }

    /// New tokens in place of `failed`: the refresh in flight, or one started now, or the tokens that
    /// already replaced `failed`.
    func renew(replacing failed: AuthTokens) async throws -> AuthTokens {
        let renewal = phase.withLock { phase -> Renewal in
            switch phase.state {
            case .refreshing(_, let task):
                return .wait(task)
            case .signedIn(let current) where current.accessToken != failed.accessToken:
                return .use(current)
            case .signedIn(let current):
                guard current.refreshToken != nil else {
                    return .fail(
                        AuthenticationError(.noRefreshToken, detail: "The access token was refused and there is no refresh token")
                    )
                }
                let task = Task { try await self.performRefresh(from: current) }
                _ = phase.move(to: .refreshing(from: current, task))
                return .wait(task)
            case .signedOut:
                if let refused = phase.refused, refused.accessToken == failed.accessToken { return .fail(refused.error) }
                return .fail(AuthenticationError(.signedOut, detail: "The user signed out while the request waited"))
            case .unread, .reading:
                return .fail(AuthenticationError(.signedOut, detail: "The user signed out while the request waited"))
            }
        }
        switch renewal {
        case .use(let tokens): return tokens
        case .fail(let error): throw error
        case .wait(let task): return try await task.value
        }
    }

    /// The refresh every waiter shares: its outcome moves the session on, unless a sign-in or sign-out
    /// came first (then it is disowned, and says so).
    func performRefresh(from current: AuthTokens) async throws -> AuthTokens {
        func settle(_ state: State, refused: AuthenticationError? = nil) -> UInt64? {
            phase.withLock { phase in
                guard case .refreshing(let from, _) = phase.state, from == current else { return nil }
                if let refused { phase.refused = (current.accessToken, refused) }
                return phase.move(to: state)
            }
        }
        let disowned = AuthenticationError(.signedOut, detail: "The session changed while the token was being renewed")
        do throws(AuthenticationError) {
            let renewed = try await refresh(current)
            guard let generation = settle(.signedIn(renewed)) else { throw disowned }
            await writer.write(renewed, generation: generation)
            return renewed
        } catch  where error.reason == .refreshFailed {
            // The session may be good: keep it, and let a later request try again.
            _ = settle(.signedIn(current))
            throw error
        } catch  where error.reason == .signedOut {
            throw error
        } catch {
            guard let generation = settle(.signedOut, refused: error) else { throw disowned }
            await writer.write(nil, generation: generation)
            await onSignOut?()
            throw error
        }
    }

    static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
