import Foundation
import HTTPTypes
import HammockClient
import HammockJSON
import HammockResources
import HammockTesting
import Testing

/// Credentials and private data stay in their scope: configuration headers only under the base URL,
/// no path traversal from children, nothing persisted that the server said not to store.
@MainActor
@Suite("Credentials and private data stay in their scope")
struct CredentialScopeTests {
    let backend = ScriptedBackend()

    func service(_ base: String = "https://api.example.com/v1") throws -> Service {
        try Service(baseURL: base, transport: backend.transport, clock: ManualClock())
    }

    @Test("Headers configured by pattern reach only URLs under the base URL; other hosts need configure(whenURLMatches:)")
    func headersStayHome() async throws {
        let api = try service()
        api.configure { $0.headers[.authorization] = "Bearer user-secret" }
        api.configure("/items/*") { $0.headers[HTTPField.Name("X-Api-Key")!] = "key-123" }
        _ = await api.resource("/items").relative("https://tracker.example.net/items/1").load().response()
        let elsewhere = backend.requests.last
        #expect(elsewhere?.authority == "tracker.example.net")
        #expect(elsewhere?.headerFields[.authorization] == nil)
        #expect(elsewhere?.headerFields[HTTPField.Name("X-Api-Key")!] == nil)

        // Same host, outside the base path; same host and path, another scheme or port: not under the base.
        for url in [
            "https://api.example.com/v1beta/items/1", "http://api.example.com/v1/items/1",
            "https://api.example.com:8443/v1/items/1",
        ] {
            _ = await api.resource(absoluteURL: url).load().response()
            #expect(backend.requests.last?.headerFields[.authorization] == nil, "\(url)")
        }

        _ = await api.resource("/items/1").load().response()
        #expect(backend.requests.last?.headerFields[.authorization] == "Bearer user-secret")
        #expect(backend.requests.last?.headerFields[HTTPField.Name("X-Api-Key")!] == "key-123")

        api.configure(whenURLMatches: { $0.host == "tracker.example.net" }) { $0.headers[.authorization] = "Bearer tracker" }
        _ = await api.resource(absoluteURL: "https://tracker.example.net/items/2").load().response()
        #expect(backend.requests.last?.headerFields[.authorization] == "Bearer tracker")
    }

    @Test("A child named . or .. fails without a request; dot segments in paths are resolved before patterns see them")
    func dotSegments() async throws {
        let api = try service()
        api.configure("/users/**") { $0.headers[.authorization] = "Bearer users-scope" }
        let users = api.resource("/users")
        for name in ["../admin/keys", "..", ".", "a/../../admin"] {
            let escaped = users.child(name)
            _ = await escaped.load().response()
            #expect(escaped.latestError?.userMessage.contains("'.' and '..' are not child names") == true, "\(name)")
        }
        #expect(backend.requestCount == 0)
        #expect(users.child("%2E%2E").url.absoluteString == "https://api.example.com/v1/users/%252E%252E")
        #expect(api.resource("/users/../admin") === api.resource("/admin"))
        #expect(api.resource("/users/%2E%2E/admin") === api.resource("/admin"))
        #expect(api.resource("/users/%2e./admin").url.path == "/v1/admin")
        #expect(api.resource("/users/./7") === users.child("7"))
        _ = await api.resource("/users/../admin").load().response()
        #expect(backend.requests.last?.path == "/v1/admin")
        #expect(backend.requests.last?.headerFields[.authorization] == nil)  // /admin is not under /users
    }

    @Test("A base URL with a query or user info is refused where the service is made, saying why, and nothing is sent")
    func badBaseURLs() async throws {
        for base in ["https://api.example.com/v1?api_key=K", "https://user:pass@api.example.com/v1"] {
            let error = #expect(throws: InvalidBaseURL.self) { try service(base) }
            #expect(error?.reason.contains("has a query") == true || error?.reason.contains("has user info") == true)
        }
        #expect(backend.requestCount == 0)
    }
}

@MainActor
@Suite("What a persistent cache keeps")
struct CacheSafetyTests {
    let backend = ScriptedBackend()

    func service(cache: any EntityCache, clock: ManualClock = ManualClock()) throws -> Service {
        let api = try Service(baseURL: "http://api.test", transport: backend.transport, clock: clock)
        api.configure { $0.cache = cache }
        return api
    }

    @Test("Cache-Control: no-store is never written, and removes what was written before")
    func noStore() async throws {
        let cache = MemoryEntityCache()
        let api = try service(cache: cache)
        backend.script(
            .json(["card": "old"]),
            .json(["card": "4111 1111 1111 1111"], headers: [("Cache-Control", "private, no-store")]))
        let wallet = api.resource("/wallet")
        _ = await wallet.load().response()
        await api.waitForCacheOperations()
        #expect(cache.count == 1)
        _ = await wallet.load().response()
        await api.waitForCacheOperations()
        #expect(await cache.readEntity(forKey: wallet.url.absoluteString) == nil)
        #expect(wallet.latestData?.jsonContent == ["card": "4111 1111 1111 1111"])  // shown, not kept
    }

    @Test("Stored entries drop cookies and hop-by-hop fields; cache files are readable by their owner only")
    func storedFields() async throws {
        let directory = URL(fileURLWithPath: TemporaryFiles.directory("cache"))
        let cache = try FileEntityCache(directory: directory)
        let api = try service(cache: cache)
        backend.setFallback(
            .json(["ok": true], headers: [("Set-Cookie", "sid=secret"), ("Connection", "keep-alive"), ("ETag", "\"1\"")]))
        let profile = api.resource("/profile")
        _ = await profile.load().response()
        await api.waitForCacheOperations()
        let stored = try #require(await cache.readEntity(forKey: profile.url.absoluteString))
        #expect(stored.headerFields[.setCookie] == nil && stored.headerFields[.connection] == nil)
        #expect(stored.headerFields[.eTag] == "\"1\"")
        let name = try #require(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).first { $0.hasSuffix(".json") })
        let file = directory.appendingPathComponent(name)
        let fileMode = try #require(try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber)
        let directoryMode = try #require(
            try FileManager.default.attributesOfItem(atPath: directory.path)[.posixPermissions] as? NSNumber)
        #expect(fileMode.intValue & 0o777 == 0o600)
        #expect(directoryMode.intValue & 0o777 == 0o700)
    }

    @Test("Vary keeps representations apart: an entry stored for one Accept-Language is not shown for another")
    func vary() async throws {
        let cache = MemoryEntityCache()
        backend.setFallback(.json(["greeting": "hello"], headers: [("Vary", "Accept-Language")]))
        let english = try service(cache: cache)
        english.configure { $0.headers[.acceptLanguage] = "en" }
        _ = await english.resource("/greeting").load().response()
        await english.waitForCacheOperations()

        backend.hold(true)
        let french = try service(cache: cache)
        french.configure { $0.headers[.acceptLanguage] = "fr" }
        let greeting = french.resource("/greeting")
        await french.waitForCacheOperations()
        #expect(greeting.latestData == nil)

        let againEnglish = try service(cache: cache)
        againEnglish.configure { $0.headers[.acceptLanguage] = "en" }
        let shown = againEnglish.resource("/greeting")
        #expect(await eventually { shown.latestData != nil })
        #expect(shown.latestData?.jsonContent == ["greeting": "hello"])
        backend.hold(false)
        backend.releaseAll()
    }

    @Test("An entry stored with Vary: * is never shown from the cache, whatever the request sends")
    func varyStar() async throws {
        let cache = MemoryEntityCache()
        backend.setFallback(.json(["greeting": "hello"], headers: [("Vary", "Accept-Language, *")]))
        let first = try service(cache: cache)
        _ = await first.resource("/greeting").load().response()
        await first.waitForCacheOperations()
        #expect(await cache.readEntity(forKey: "http://api.test/greeting") != nil)

        backend.hold(true)
        let again = try service(cache: cache)
        let greeting = again.resource("/greeting")
        await again.waitForCacheOperations()
        #expect(greeting.latestData == nil)
        backend.hold(false)
        backend.releaseAll()
    }

    @Test("Vary: Authorization stores a SHA-256 digest, never the token, taken from the request as sent (interceptors included)")
    @MainActor
    func varyStoresDigests() async throws {
        let folder = URL(fileURLWithPath: TemporaryFiles.directory("vary-digest"))
        let cache = try FileEntityCache(directory: folder)
        backend.setFallback(.json(["name": "user A"], headers: [("Vary", "Authorization, Accept-Language")]))
        let userA = try Service(
            baseURL: "http://api.test", transport: backend.transport,
            interceptors: [BearerAuthentication { "token-A" }], clock: ManualClock())
        userA.configure {
            $0.cache = cache
            $0.headers[.acceptLanguage] = "en"
        }
        _ = await userA.resource("/me").load().response()
        await userA.waitForCacheOperations()

        let stored = try #require(await cache.readEntity(forKey: "http://api.test/me"))
        // Digests computed with Python's hashlib.sha256.
        #expect(
            stored.requestHeaderFields[.authorization]
                == "sha256:554b8cec38a5a3f3b9baf98b21f33155c74c0520c6e4db8bd91ac366fa3775ed")
        #expect(
            stored.requestHeaderFields[.acceptLanguage]
                == "sha256:dbd3a49d0d906b4ed9216b73330d2fb080ef2f758c12f3885068222e5e17151c")
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            let text = String(decoding: try Data(contentsOf: folder.appendingPathComponent(name)), as: UTF8.self)
            #expect(!text.contains("token-A"), "\(name) holds the token")
        }

        // User B, on a service whose interceptor sends another token, is never shown A's copy.
        backend.hold(true)
        let userB = try Service(
            baseURL: "http://api.test", transport: backend.transport,
            interceptors: [BearerAuthentication { "token-B" }], clock: ManualClock())
        userB.configure {
            $0.cache = cache
            $0.headers[.acceptLanguage] = "en"
        }
        let me = userB.resource("/me")
        await userB.waitForCacheOperations()
        #expect(me.latestData == nil)
        backend.hold(false)
        backend.releaseAll()
    }

    @Test("An entry whose varying fields the configuration sets is still shown to a request that sends the same")
    @MainActor
    func varyConfiguredStillHits() async throws {
        let cache = MemoryEntityCache()
        backend.setFallback(.json(["name": "Ada"], headers: [("Vary", "Authorization")]))
        let first = try service(cache: cache)
        first.configure { $0.headers[.authorization] = "Bearer same" }
        _ = await first.resource("/me").load().response()
        await first.waitForCacheOperations()

        backend.hold(true)
        let again = try service(cache: cache)
        again.configure { $0.headers[.authorization] = "Bearer same" }
        let me = again.resource("/me")
        #expect(await eventually { me.latestData != nil })
        let other = try service(cache: cache)
        other.configure { $0.headers[.authorization] = "Bearer other" }
        let notMine = other.resource("/me")
        await other.waitForCacheOperations()
        #expect(notMine.latestData == nil)
        backend.hold(false)
        backend.releaseAll()
    }

    @Test("Both caches stay within their entry and byte limits, dropping the least recently used first")
    func boundedCaches() async throws {
        let entry = { (size: Int) in CachedEntity(bytes: Array(repeating: 1, count: size), headerFields: [:]) }
        let memory = MemoryEntityCache(maximumEntries: 3, maximumBytes: 1_000)
        for key in ["a", "b", "c"] { await memory.writeEntity(entry(100), forKey: key) }
        _ = await memory.readEntity(forKey: "a")  // a is now more recent than b
        await memory.writeEntity(entry(100), forKey: "d")
        #expect(await memory.readEntity(forKey: "b") == nil)
        #expect(await memory.readEntity(forKey: "a") != nil && memory.count == 3)
        await memory.writeEntity(entry(900), forKey: "big")
        #expect(memory.byteCount <= 1_000)
        #expect(await memory.readEntity(forKey: "big") != nil)
        await memory.writeEntity(entry(5_000), forKey: "huge")
        #expect(await memory.readEntity(forKey: "huge") == nil)  // larger than the whole cache

        let directory = URL(fileURLWithPath: TemporaryFiles.directory("bounded"))
        let files = try FileEntityCache(directory: directory, maximumEntries: 2)
        for key in ["x", "y", "z"] { await files.writeEntity(entry(10), forKey: key) }
        let remaining = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }
        #expect(remaining.count == 2)
        #expect(await files.readEntity(forKey: "z") != nil)
    }

    @Test("The server's max-age and no-cache decide freshness when it sends them")
    func cacheControlFreshness() async throws {
        let clock = ManualClock()
        let api = try Service(baseURL: "http://api.test", transport: backend.transport, clock: clock)
        backend.script(
            .json(["v": 1], headers: [("Cache-Control", "max-age=5")]),
            .json(["v": 2], headers: [("Cache-Control", "no-cache")]),
            .json(["v": 3]))
        let feed = api.resource("/feed")
        _ = await feed.load().response()
        clock.advance(by: .seconds(4))
        #expect(feed.loadIfNeeded() == nil)
        clock.advance(by: .seconds(2))
        _ = await feed.loadIfNeeded()?.response()  // older than max-age, younger than the 30 s expiration
        #expect(backend.requestCount == 2)
        #expect(feed.loadIfNeeded() != nil)  // no-cache: always revalidated
    }
}
