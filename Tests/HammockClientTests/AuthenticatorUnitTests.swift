import Foundation
import HTTPTypes
import HammockJSON
import Synchronization
import Testing

@testable import HammockClient

/// The authenticator's promises with a refresh of the test's own (gated, counted, failing at will) and a
/// transport that answers by the token it sees: the orders of events a real server makes hard to force.
@Suite("Authenticator, event by event")
struct AuthenticatorUnitTests {
    /// A refresh the test releases: each call waits until `release` and answers the next tokens.
    final class GatedRefresh: Sendable {
        let calls = Atomic(0)
        private let gate = Mutex<[CheckedContinuation<Void, Never>]>([])
        private let opened = Atomic(false)
        let outcome: Mutex<Result<AuthTokens, AuthenticationError>>

        init(_ outcome: Result<AuthTokens, AuthenticationError>) { self.outcome = Mutex(outcome) }

        func refresh(_ tokens: AuthTokens) async throws(AuthenticationError) -> AuthTokens {
            calls.add(1, ordering: .relaxed)
            await withCheckedContinuation { continuation in
                let waitNow = gate.withLock { waiting -> Bool in
                    if opened.load(ordering: .relaxed) { return false }
                    waiting.append(continuation)
                    return true
                }
                if !waitNow { continuation.resume() }
            }
            return try outcome.withLock { $0 }.get()
        }

        func release() {
            opened.store(true, ordering: .relaxed)
            for continuation in gate.withLock({ waiting in
                defer { waiting.removeAll() }
                return waiting
            }) { continuation.resume() }
        }
    }

    /// The `Authorization` values a transport saw.
    final class Seen: Sendable {
        let values = Mutex<[String]>([])
    }

    /// A transport accepting only the access token `valid` (401 otherwise), noting what it saw.
    static func transport(accepting valid: String, seen: Seen = Seen()) -> MockTransport {
        MockTransport { request, _ in
            let token = request.headerFields[.authorization] ?? ""
            seen.values.withLock { $0.append(token) }
            let ok = token == "Bearer " + valid
            var response = HTTPResponse(status: ok ? .ok : .unauthorized)
            if !ok { response.headerFields[.wwwAuthenticate] = "Bearer realm=\"api\", error=\"invalid_token\"" }
            return (response, [])
        }
    }

    /// A client of `http://api.test` through `authenticator`, to a transport accepting the token "new".
    static func client(_ authenticator: Authenticator, seen: Seen = Seen()) throws -> RestClient {
        RestClient(
            baseURL: try #require(URL(string: "http://api.test")), transport: transport(accepting: "new", seen: seen),
            interceptors: [authenticator])
    }

    static let old = AuthTokens(accessToken: "old", refreshToken: "r1")
    static let new = AuthTokens(accessToken: "new", refreshToken: "r2")

    @Test("A sign-out during a refresh wins: the refresh's tokens reach neither memory nor the store, and its waiters are told")
    func signOutWinsOverRefresh() async throws {
        let refresh = GatedRefresh(.success(Self.new))
        let store = MemoryCredentialStore()
        let authenticator = Authenticator(store: store) { (tokens) async throws(AuthenticationError) -> AuthTokens in
            try await refresh.refresh(tokens)
        }
        await authenticator.signIn(Self.old)
        let client = try Self.client(authenticator)
        let waiting = Task { () -> RestError? in
            do throws(RestError) {
                _ = try await client.send(RequestBuilder(.get, "/me"))
                return nil
            } catch {
                return error
            }
        }
        while refresh.calls.load(ordering: .relaxed) == 0 { await Task.yield() }
        await authenticator.signOut()
        refresh.release()
        let error = await waiting.value
        guard case .authentication(let cause)? = error?.reason else {
            Issue.record("expected an authentication error, got \(String(describing: error))")
            return
        }
        #expect(cause.reason == AuthenticationError.Reason.signedOut)
        #expect(try await authenticator.tokens == nil)
        #expect(try await store.load() == nil)
    }

    @Test("A token that expires within the margin is renewed before the request goes, so the server never refuses it")
    func refreshBeforeExpiry() async throws {
        let now = Date(timeIntervalSince1970: 1_000_000)
        let refreshes = Atomic(0)
        let authenticator = Authenticator(refreshMargin: .seconds(30), now: { now }) {
            (_) async throws(AuthenticationError) -> AuthTokens in
            refreshes.add(1, ordering: .relaxed)
            return AuthTokens(accessToken: "new", refreshToken: "r2", expiresAt: now.addingTimeInterval(3600))
        }
        await authenticator.signIn(AuthTokens(accessToken: "old", refreshToken: "r1", expiresAt: now.addingTimeInterval(10)))
        let seen = Seen()
        let client = try Self.client(authenticator, seen: seen)
        #expect(try await client.send(RequestBuilder(.get, "/me")).status == .ok)
        #expect(seen.values.withLock { $0 } == ["Bearer new"])
        #expect(refreshes.load(ordering: .relaxed) == 1)
    }

    @Test("An unreachable token endpoint fails the waiters with refreshFailed and keeps the session for the next try")
    func unreachableEndpointKeepsTheSession() async throws {
        let refresh = GatedRefresh(.failure(AuthenticationError(.refreshFailed, detail: "offline")))
        refresh.release()
        let store = MemoryCredentialStore()
        let authenticator = Authenticator(store: store) { (tokens) async throws(AuthenticationError) -> AuthTokens in
            try await refresh.refresh(tokens)
        }
        await authenticator.signIn(Self.old)
        let client = try Self.client(authenticator)
        let error = await #expect(throws: RestError.self) { try await client.send(RequestBuilder(.get, "/me")) }
        guard case .authentication(let cause)? = error?.reason else {
            Issue.record("expected an authentication error")
            return
        }
        #expect(cause.reason == AuthenticationError.Reason.refreshFailed)
        #expect(try await authenticator.tokens == Self.old)
        #expect(try await store.load() == Self.old)
        // Back online: the next request refreshes and goes through.
        refresh.outcome.withLock { $0 = .success(Self.new) }
        #expect(try await client.send(RequestBuilder(.get, "/me")).status == .ok)
        #expect(try await store.load() == Self.new)
    }

    @Test(
        "A request whose token was already replaced when its 401 came back is replayed with the new token, without another refresh"
    )
    func lateRefusalUsesTheNewToken() async throws {
        let refreshes = Atomic(0)
        let authenticator = Authenticator { (_) async throws(AuthenticationError) -> AuthTokens in
            refreshes.add(1, ordering: .relaxed)
            return Self.new
        }
        await authenticator.signIn(Self.old)
        // The first request's 401 arrives after another request has renewed the token.
        let renewed = try await authenticator.renew(replacing: Self.old)
        #expect(renewed == Self.new)
        #expect(try await authenticator.renew(replacing: Self.old) == Self.new)
        #expect(refreshes.load(ordering: .relaxed) == 1)
    }

    @Test("Tokens are read from the store once, by the first request, however many come at once")
    func storeReadOnce() async throws {
        final class CountingStore: CredentialStore {
            let loads = Atomic(0)
            func load() async throws -> AuthTokens? {
                loads.add(1, ordering: .relaxed)
                return AuthTokens(accessToken: "new", refreshToken: "r2")
            }
            func save(_ tokens: AuthTokens?) async throws {}
        }
        let store = CountingStore()
        let authenticator = Authenticator(store: store) { (tokens) async throws(AuthenticationError) -> AuthTokens in tokens }
        let client = try Self.client(authenticator)
        let statuses = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<30 { group.addTask { (try? await client.send(RequestBuilder(.get, "/me")).status.code) ?? 0 } }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 30))
        #expect(store.loads.load(ordering: .relaxed) == 1)
    }

    @Test(
        "A token endpoint's answer is read as RFC 6749 §5.1 says; a JWT's exp is read without trusting it; malformed answers are typed errors"
    )
    func tokenResponses() throws {
        let now = Date(timeIntervalSince1970: 1_000)
        let tokens = try AuthTokens(
            tokenResponse: Array(#"{"access_token":"a","token_type":"bearer","expires_in":60,"refresh_token":"r"}"#.utf8),
            receivedAt: now)
        #expect(tokens == AuthTokens(accessToken: "a", refreshToken: "r", expiresAt: now.addingTimeInterval(60)))
        for body in [#"{}"#, #"{"access_token": ""}"#, #"{"access_token":"a","token_type":"mac"}"#, "not json", #"["a"]"#] {
            #expect(throws: AuthenticationError.self) { try AuthTokens(tokenResponse: Array(body.utf8), receivedAt: now) }
        }
        let claims = Data(#"{"sub":"ada","exp":2000}"#.utf8).base64EncodedString()
            .replacingOccurrences(of: "=", with: "")
        #expect(AuthTokens(accessToken: "h.\(claims).s").expiresAt == Date(timeIntervalSince1970: 2000))
        for token in ["opaque", "a.b.c", "a.\(String(repeating: "x", count: 20_000)).c", "h.e30.s"] {
            #expect(AuthTokens(accessToken: token).expiresAt == nil)
        }
    }

    @Test("Form encoding of grant parameters escapes what a form must, as WHATWG's urlencoded serializer does")
    func formEncoding() {
        #expect(OAuthTokenEndpoint.formEncoded("a b&c=d+é/~") == "a+b%26c%3Dd%2B%C3%A9%2F%7E")
        #expect(OAuthTokenEndpoint.formEncoded("Az09-._*") == "Az09-._*")
    }
}
