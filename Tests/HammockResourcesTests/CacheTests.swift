import Foundation
import HTTPTypes
import HammockClient
import HammockJSON
import HammockResources
import HammockTesting
import Testing

@MainActor
@Suite("Persistent caches")
struct CacheTests {
    let backend = ScriptedBackend()

    func service(cache: any EntityCache) throws -> Service {
        let api = try Service(baseURL: "http://api.test", transport: backend.transport, clock: ManualClock())
        api.configure { $0.cache = cache }
        return api
    }

    @Test("network data is saved, and a new service shows it before the network answers")
    func memoryCache() async throws {
        let cache = MemoryEntityCache()
        backend.setFallback(.json(["name": "Ada"], headers: [("ETag", "\"7\"")]))
        let first = try service(cache: cache)
        _ = await first.resource("/profile").load().response()
        #expect(await eventually { cache.count == 1 })
        #expect(cache.count == 1)

        backend.hold(true)
        let second = try service(cache: cache)
        let profile = second.resource("/profile")
        var iterator = profile.events().makeAsyncIterator()
        #expect(await iterator.next() == .observerAdded)
        #expect(await iterator.next() == .newData(.cache))
        #expect(profile.latestData?.jsonContent == ["name": "Ada"])
        #expect(profile.isInvalidated)  // cached data is revalidated
        backend.script(.init(status: .notModified, headers: [], body: []))
        let request = try #require(profile.loadIfNeeded())
        #expect(await backend.waitForHeld(1))
        #expect(backend.requests.last?.headerFields[.ifNoneMatch] == "\"7\"")
        backend.releaseAll()
        _ = await request.response()
        #expect(await iterator.next() == .requested)
        #expect(await iterator.next() == .notModified)
        #expect(!profile.isInvalidated && profile.isUpToDate)
    }

    @Test("network data that arrives first is not replaced by a late cache read")
    func networkWins() async throws {
        let cache = SlowCache(
            entity: CachedEntity(bytes: Array("{\"old\":true}".utf8), headerFields: [.contentType: "application/json"]))
        backend.setFallback(.json(["new": true]))
        let api = try service(cache: cache)
        let profile = api.resource("/profile")
        _ = await profile.load().response()
        cache.release()
        for _ in 0..<200 { await Task.yield() }
        #expect(profile.latestData?.jsonContent == ["new": true])
    }

    @Test("a file cache survives a new instance, ignores corrupt files, and wipe removes the entry")
    func fileCache() async throws {
        let directory = URL(fileURLWithPath: TemporaryFiles.directory("cache"))
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = "http://api.test/profile"
        let entry = CachedEntity(
            bytes: Array("{\"a\":1}".utf8), headerFields: [.contentType: "application/json", .eTag: "\"x\""])
        try await FileEntityCache(directory: directory).writeEntity(entry, forKey: key)
        let reopened = try FileEntityCache(directory: directory)
        #expect(await reopened.readEntity(forKey: key) == entry)
        #expect(await reopened.readEntity(forKey: "http://api.test/other") == nil)

        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(files.count == 1)
        let file = directory.appendingPathComponent(try #require(files.first))
        try Data("{ not json".utf8).write(to: file)
        #expect(await reopened.readEntity(forKey: key) == nil)

        await reopened.writeEntity(entry, forKey: key)
        let api = try service(cache: reopened)
        let profile = api.resource("/profile")
        var iterator = profile.events().makeAsyncIterator()
        _ = await iterator.next()
        #expect(await iterator.next() == .newData(.cache))
        #expect(profile.latestData?.jsonContent == ["a": 1])
        profile.wipe()
        #expect(await eventually { !FileManager.default.fileExists(atPath: file.path) })
        #expect(await reopened.readEntity(forKey: key) == nil)
    }
}

/// A cache whose read waits until the test releases it.
final class SlowCache: EntityCache {
    let entity: CachedEntity
    let gate = AsyncStream<Void>.makeStream()

    init(entity: CachedEntity) { self.entity = entity }

    func release() { gate.continuation.finish() }

    func readEntity(forKey key: String) async -> CachedEntity? {
        for await _ in gate.stream {}
        return entity
    }

    func writeEntity(_ entity: CachedEntity, forKey key: String) async {}
    func removeEntity(forKey key: String) async {}
    func removeEntities(where predicate: @Sendable (String) -> Bool) async {}
}
