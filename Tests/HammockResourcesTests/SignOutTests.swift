import Foundation
import HTTPTypes
import HammockClient
import HammockJSON
import HammockResources
import HammockTesting
import Testing

/// Sign-out signs out: every resource, every cache entry, and no write that lands afterwards.
@MainActor
@Suite("Signing out")
struct SignOutTests {
    let backend = ScriptedBackend()

    func service(cache: (any EntityCache)? = nil) throws -> Service {
        let api = try Service(baseURL: "http://api.test", transport: backend.transport, clock: ManualClock())
        if let cache { api.configure { $0.cache = cache } }
        return api
    }

    func temporaryCache() throws -> FileEntityCache {
        try FileEntityCache(
            directory: URL(fileURLWithPath: TemporaryFiles.directory("signout")))
    }

    @Test("wipeResources() removes the cached copy of resources no longer in memory; the next user never sees them")
    func wipeReachesEvicted() async throws {
        let cache = try temporaryCache()
        let api = try service(cache: cache)
        backend.setFallback(.json(["body": "user A's private message"]))
        _ = await api.resource("/messages/1").load().response()
        await api.waitForCacheOperations()
        api.flushUnobservedResources()
        api.wipeResources()
        await api.waitForCacheOperations()
        backend.hold(true)
        let again = api.resource("/messages/1")
        await api.waitForCacheOperations()
        #expect(again.latestData == nil)
        #expect(await cache.readEntity(forKey: again.url.absoluteString) == nil)
        backend.hold(false)
    }

    @Test("Entries written by an earlier launch are wiped by the next, before any resource is made")
    func wipeReachesEarlierLaunches() async throws {
        let cache = try temporaryCache()
        let earlier = try service(cache: cache)
        backend.setFallback(.json(["secret": 1]))
        _ = await earlier.resource("/me").load().response()
        await earlier.waitForCacheOperations()

        let reopened = try FileEntityCache(directory: cache.directory)
        let next = try service(cache: reopened)
        next.wipeResources()
        await next.waitForCacheOperations()
        #expect(await reopened.readEntity(forKey: "http://api.test/me") == nil)
    }

    @Test("A wipe with a pattern removes matching resources and entries, and leaves the rest")
    func wipeByPattern() async throws {
        let cache = MemoryEntityCache()
        let api = try service(cache: cache)
        backend.setFallback(.json(["x": 1]))
        for path in ["/me/profile", "/me/cards", "/public/news"] { _ = await api.resource(path).load().response() }
        await api.waitForCacheOperations()
        api.flushUnobservedResources()
        api.wipeResources(matching: "/me/**")
        await api.waitForCacheOperations()
        #expect(await cache.readEntity(forKey: "http://api.test/me/profile") == nil)
        #expect(await cache.readEntity(forKey: "http://api.test/me/cards") == nil)
        #expect(await cache.readEntity(forKey: "http://api.test/public/news") != nil)
    }

    @Test("A cache write scheduled before a wipe never lands after it, with bodies of any size", arguments: [16 << 10, 1 << 20])
    func writeBeforeWipe(size: Int) async throws {
        let cache = try temporaryCache()
        let api = try service(cache: cache)
        backend.setFallback(
            .init(headers: [("Content-Type", "application/octet-stream")], body: Array(repeating: 7, count: size)))
        let feed = api.resource("/feed")
        _ = await feed.load().response()
        feed.wipe()
        await api.waitForCacheOperations()
        #expect(await cache.readEntity(forKey: feed.url.absoluteString) == nil)
    }

    @Test("An observer that wipes on new data wipes the cached copy too (the write comes before the news)")
    func observerWipes() async throws {
        let cache = try temporaryCache()
        let api = try service(cache: cache)
        backend.setFallback(.json(["x": 1]))
        let profile = api.resource("/profile")
        let owner = Owner()
        profile.addObserver(owner: owner) { resource, event in
            if case .newData(.network) = event { resource.wipe() }
        }
        _ = await profile.load().response()
        await api.waitForCacheOperations()
        #expect(await cache.readEntity(forKey: profile.url.absoluteString) == nil)
        #expect(profile.latestData == nil)
        withExtendedLifetime(owner) {}
    }

    @Test("Signing out of a file-cached service, again and again while other tasks load on a busy machine, never traps")
    func wipeUnderLoad() async throws {
        // Before the fix, `FileEntityCache.removeEntities(where:)` handed its non-escaping predicate to
        // the cache's dispatch queue, which could still hold it when the call returned: "non-escaping
        // closure has escaped", in 5 runs of 6 of the review's program on a busy 2-core machine. On that
        // code this suite trapped in 6 runs of 6.
        let cache = try temporaryCache()
        let api = try service(cache: cache)
        backend.setFallback(.json(["secret": "user A"]))
        await withBusyMachine {
            let readers = (0..<4).map { reader in
                Task { @MainActor in
                    for round in 0..<60 {
                        _ = await api.resource("/items/\(reader)/\(round % 7)").load().response()
                    }
                }
            }
            let wiper = Task { @MainActor in
                for round in 0..<120 {
                    api.wipeResources(matching: round.isMultiple(of: 3) ? "/items/1/**" : nil)
                    await Task.yield()
                }
            }
            for reader in readers { await reader.value }
            await wiper.value
        }
        api.wipeResources()
        await api.waitForCacheOperations()
        for reader in 0..<4 {
            for index in 0..<7 {
                #expect(await cache.readEntity(forKey: "http://api.test/items/\(reader)/\(index)") == nil)
            }
        }
    }

    @Test("A resource an observer creates during a wipe never reads the previous user's cached copy")
    func resourceCreatedDuringWipe() async throws {
        let cache = MemoryEntityCache()
        let api = try service(cache: cache)
        backend.setFallback(.json(["name": "user A"]))
        _ = await api.resource("/me").load().response()
        await api.waitForCacheOperations()
        api.flushUnobservedResources()
        #expect(await cache.readEntity(forKey: "http://api.test/me") != nil)

        backend.hold(true)
        let screen = api.resource("/screen")
        let owner = Owner()
        let recreated = Recreated()
        screen.addObserver(owner: owner) { resource, event in
            // A screen that, on sign-out, at once shows the profile again.
            if case .newData(.wipe) = event { recreated.resource = resource.service.resource("/me") }
        }
        api.wipeResources()
        await api.waitForCacheOperations()
        let me = try #require(recreated.resource)
        #expect(me.latestData == nil)
        backend.hold(false)
        backend.releaseAll()
        withExtendedLifetime(owner) {}
    }

    @Test("A wipe removes only the cache's own files, and sweeps the temporary files of writes that never finished")
    func wipeTouchesOnlyItsOwn() async throws {
        let cache = try temporaryCache()
        let api = try service(cache: cache)
        backend.setFallback(.json(["x": 1]))
        _ = await api.resource("/a").load().response()
        await api.waitForCacheOperations()
        let manager = FileManager.default
        let folder = cache.directory
        let foreign = folder.appendingPathComponent("settings.json")
        let shortHex = folder.appendingPathComponent("abc.json")
        let leftover = folder.appendingPathComponent(".\(UUID().uuidString).tmp")
        let otherTemporary = folder.appendingPathComponent(".keep.tmp")
        for file in [foreign, shortHex, leftover, otherTemporary] {
            #expect(manager.createFile(atPath: file.path, contents: Data("{}".utf8)))
        }
        api.wipeResources()
        await api.waitForCacheOperations()
        let left = Set(try manager.contentsOfDirectory(atPath: folder.path))
        #expect(left == ["settings.json", "abc.json", ".keep.tmp"])
    }

    @Test("A cache opened on a folder with leftover temporary files sweeps them on first use")
    func sweepOnFirstUse() async throws {
        let folder = TemporaryFiles.directory("sweep")
        let manager = FileManager.default
        try manager.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let leftover = URL(fileURLWithPath: folder).appendingPathComponent(".\(UUID().uuidString).tmp")
        #expect(manager.createFile(atPath: leftover.path, contents: Data(repeating: 1, count: 4096)))
        let cache = try FileEntityCache(directory: URL(fileURLWithPath: folder))
        await cache.writeEntity(CachedEntity(bytes: [1], headerFields: [:]), forKey: "http://api.test/a")
        #expect(!manager.fileExists(atPath: leftover.path))
    }

    @Test("A resource a view still holds stays the canonical one after eviction, and wipe and invalidation reach it")
    func evictedButHeld() async throws {
        let api = try service()
        api.maximumUnobservedResources = 3
        backend.setFallback(.json(["name": "Previous user"]))
        let profile = api.resource("/profile")  // held, unobserved: the SwiftUI pattern
        _ = await profile.load().response()
        for index in 0..<4 { _ = api.resource("/feed/\(index)") }
        #expect(api.resourceCount <= 3)
        #expect(api.resource("/profile") === profile)
        api.invalidateResources(matching: "/profile")
        #expect(profile.isInvalidated)
        api.wipeResources()
        #expect(profile.latestData == nil)
    }

    @Test("A service that made resources is freed when nobody holds it; resources someone holds keep working")
    func noCycle() async throws {
        weak var released: Service?
        var kept: Resource?
        do {
            let api = try service()
            _ = api.resource("/profile")
            kept = api.resource("/kept")
            released = api
        }
        #expect(await eventually { released == nil })
        backend.setFallback(.json(["still": "working"]))
        guard let resource = kept else {
            Issue.record("the resource held outside the block is gone")
            return
        }
        _ = await resource.load().response()
        #expect(resource.latestData?.jsonContent == ["still": "working"])
        // The same URL through the resource's service is the same object.
        #expect(resource.service.resource("/kept") === resource)
    }
}

/// Where an observer puts the resource it makes (observers run on the main actor).
@MainActor
final class Recreated {
    var resource: Resource?
}
