import Foundation
import HTTPTypes
import HammockClient
import HammockHTTPServer
import HammockJSON
import HammockJWT
import HammockServer
import HammockTesting
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The client's `Authenticator` against the mock's login, in process (`MockServerTransport`) and over a
/// loopback socket (`URLSessionTransport`): one refresh for many refusals, one error for every waiter
/// when the refresh is refused, a key rotated mid-run, a 403 left alone.
@Suite("Authenticator against the mock's login", .timeLimit(.minutes(2)))
struct AuthenticatorTests {
    enum Reach: String, CaseIterable, CustomStringConvertible, Sendable {
        case inProcess = "in process"
        case loopback
        var description: String { rawValue }
    }

    static let configuration = """
        {"resources": [{"name": "people", "fields": {"name": "string"}},
                       {"name": "notes", "fields": {"text": "string", "ownerId": "string"}}],
         "data": {"people": [{"name": "Ada"}, {"name": "Grace"}]},
         "auth": {
           "users": [{"username": "ada", "password": "lovelace", "roles": ["admin"]},
                     {"username": "bob", "password": "builder"}],
           "clients": [{"id": "ios-app"}],
           "protect": [{"resource": "people"}, {"resource": "people", "actions": ["write"], "roles": ["admin"]},
                       {"resource": "notes", "owner": "ownerId"}]
         }}
        """

    /// A signed-in client: the server, its client, the authenticator, and how many sign-outs it saw.
    struct Session {
        let server: MockServer
        let client: RestClient
        let authenticator: Authenticator
        let store: MemoryCredentialStore
        let signOuts: Counter
    }

    final class Counter: Sendable {
        let value = Atomic(0)
        func add() { value.add(1, ordering: .relaxed) }
        var count: Int { value.load(ordering: .relaxed) }
    }

    /// A session on a new server, or on `shared` (started already for a loopback session).
    static func session(_ reach: Reach, as username: String = "ada", on shared: MockServer? = nil) async throws -> Session {
        let configuration = try ServerConfiguration(parsing: Array(Self.configuration.utf8), file: "auth.json")
        let server: MockServer
        if let shared {
            server = shared
        } else {
            server = try await MockServer.inMemory(configuration, tokenSigner: JWTAccessTokens())
        }
        let base: URL
        let transport: any HTTPTransport
        switch reach {
        case .inProcess:
            base = try #require(URL(string: "http://auth.hammock.invalid"))
            transport = MockServerTransport(server: server)
        case .loopback:
            if shared == nil { try await server.start(host: "127.0.0.1", port: 0) }
            base = try #require(await server.baseURL)
            transport = URLSessionTransport(session: URLSession(configuration: .ephemeral))
        }
        let endpoint = OAuthTokenEndpoint(
            url: base.appendingPathComponent("auth/token"), clientID: "ios-app", transport: transport)
        let store = MemoryCredentialStore()
        let signOuts = Counter()
        let authenticator = Authenticator(tokenEndpoint: endpoint, store: store) { signOuts.add() }
        await authenticator.signIn(
            try await endpoint.signIn(username: username, password: username == "ada" ? "lovelace" : "builder"))
        let client = RestClient(baseURL: base, transport: transport, interceptors: [authenticator])
        return Session(server: server, client: client, authenticator: authenticator, store: store, signOuts: signOuts)
    }

    static func refreshes(on server: MockServer) -> Int {
        server.journal.entries.filter { $0.method == .post && $0.path == "/auth/token" }.count
    }

    /// Sends `count` GET /people at once; each one's status or error.
    static func concurrentGets(_ client: RestClient, count: Int) async -> [Result<Int, RestError>] {
        await withTaskGroup(of: Result<Int, RestError>.self) { group in
            for _ in 0..<count {
                group.addTask {
                    do throws(RestError) {
                        return .success(try await client.send(RequestBuilder(.get, "/people")).status.code)
                    } catch {
                        return .failure(error)
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
    }

    @Test(
        "Fifty requests that meet an expired token together share one refresh, and all fifty succeed", arguments: Reach.allCases)
    func oneRefreshForFifty(reach: Reach) async throws {
        let session = try await Self.session(reach)
        defer { Task { await session.server.stop() } }
        let before = try #require(try await session.authenticator.tokens)
        try session.server.expireAccessTokens()
        session.server.journal.clear()
        let results = await Self.concurrentGets(session.client, count: 50)
        #expect(results.filter { (try? $0.get()) == 200 }.count == 50)
        #expect(Self.refreshes(on: session.server) == 1)
        let after = try #require(try await session.authenticator.tokens)
        #expect(after.accessToken != before.accessToken)
        #expect(after.refreshToken != before.refreshToken)
        #expect(try await session.store.load() == after)
    }

    @Test(
        "A refused refresh fails every waiting request with one typed error, signs the user out once and empties the store",
        arguments: Reach.allCases)
    func refusedRefreshSignsOut(reach: Reach) async throws {
        let session = try await Self.session(reach)
        defer { Task { await session.server.stop() } }
        try session.server.expireAccessTokens()
        try session.server.rejectNextRefreshes()
        session.server.journal.clear()
        let results = await Self.concurrentGets(session.client, count: 20)
        // Every request that was refused with the session's token gets the refresh's error, also one whose
        // 401 came back after the sign-out. One that a loaded machine started only after the sign-out went
        // without a token, and got the server's 401 as it is.
        var refused = 0
        for result in results {
            guard case .failure(let error) = result else {
                Issue.record("no request may succeed: \(result)")
                continue
            }
            if case .authentication(let cause) = error.reason {
                refused += 1
                #expect(cause.reason == .refreshRejected)
                #expect(cause.oauthError == "invalid_grant")
            } else {
                #expect(error.status == .unauthorized, "\(error)")
            }
        }
        #expect(refused >= 1)
        #expect(Self.refreshes(on: session.server) == 1)
        #expect(await session.authenticator.isSignedIn == false)
        #expect(session.signOuts.count == 1)
        #expect(try await session.store.load() == nil)
        // Signed out, requests go without a token and meet the server's 401 as they are.
        let after = try await session.client.send(RequestBuilder(.get, "/people"), acceptingAnyStatus: true)
        #expect(after.status == .unauthorized)
    }

    @Test(
        "A signing key rotated mid-run, the old one dropped: requests in flight refresh once and carry on",
        arguments: Reach.allCases)
    func rotationMidRun(reach: Reach) async throws {
        let session = try await Self.session(reach)
        defer { Task { await session.server.stop() } }
        session.server.journal.clear()
        let first = await Self.concurrentGets(session.client, count: 10)
        try await session.server.rotateSigningKey(keepingPrevious: false)
        let second = await Self.concurrentGets(session.client, count: 10)
        #expect((first + second).allSatisfy { (try? $0.get()) == 200 })
        #expect(Self.refreshes(on: session.server) == 1)
    }

    @Test("A 403 is returned as it is: no refresh, no replay", arguments: Reach.allCases)
    func forbiddenNeverRefreshes(reach: Reach) async throws {
        let session = try await Self.session(reach, as: "bob")
        defer { Task { await session.server.stop() } }
        session.server.journal.clear()
        var create = RequestBuilder(.post, "/people")
        create.setBody(["name": "Eve"] as JSON)
        let response = try await session.client.send(create, acceptingAnyStatus: true)
        #expect(response.status == .forbidden)
        #expect(Self.refreshes(on: session.server) == 0)
        #expect(session.server.journal.entries.count == 1)
        #expect(await session.authenticator.isSignedIn)
    }

    @Test(
        "Two users signed in to one mock each create and list only their own notes; another's note is a 403, with no refresh",
        arguments: Reach.allCases)
    func ownRecords(reach: Reach) async throws {
        let ada = try await Self.session(reach)
        defer { Task { await ada.server.stop() } }
        let bob = try await Self.session(reach, as: "bob", on: ada.server)
        for (session, text) in [(ada, "ada's"), (bob, "bob's"), (ada, "ada's too")] {
            var create = RequestBuilder(.post, "/notes")
            create.setBody(["text": .string(text)] as JSON)
            #expect(try await session.client.send(create).status == .created)
        }
        func texts(_ session: Session) async throws -> [String] {
            let list = try await session.client.send(RequestBuilder(.get, "/notes"))
            return try JSON(parsing: list.body).arrayValue?.compactMap { $0["text"]?.stringValue } ?? []
        }
        #expect(try await texts(ada) == ["ada's", "ada's too"])
        #expect(try await texts(bob) == ["bob's"])
        ada.server.journal.clear()
        let refused = try await bob.client.send(RequestBuilder(.get, "/notes/1"), acceptingAnyStatus: true)
        #expect(refused.status == .forbidden)
        #expect(Self.refreshes(on: ada.server) == 0)
    }

    @Test("A POST refused with 401 is replayed once after the refresh, and carried out once")
    func refusedWriteReplayedOnce() async throws {
        let session = try await Self.session(.inProcess)
        try session.server.answerUnauthorized(next: 1)
        var create = RequestBuilder(.post, "/people")
        create.setBody(["name": "Eve"] as JSON)
        let response = try await session.client.send(create)
        #expect(response.status == .created)
        #expect(session.server.journal.entries.filter { $0.method == .post && $0.path == "/people" }.map(\.status) == [401, 201])
        #expect(try await session.server.store.count(of: try #require(session.server.schema(named: "people"))) == 3)
    }

    @Test("Under load: five expiries, each met by forty requests at once, make five refreshes and no failure")
    func repeatedExpiriesUnderLoad() async throws {
        let session = try await Self.session(.inProcess)
        session.server.journal.clear()
        for _ in 0..<5 {
            try session.server.expireAccessTokens()
            let results = await Self.concurrentGets(session.client, count: 40)
            #expect(results.allSatisfy { (try? $0.get()) == 200 })
        }
        #expect(Self.refreshes(on: session.server) == 5)
    }
}
