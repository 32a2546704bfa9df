import Foundation
import HTTPTypes
import HammockClient
import HammockJSON
import HammockResources
import HammockTesting
import Synchronization
import Testing

/// The third client review's findings in observable resources: waits of any `Duration`, a progress
/// ticker that cannot spin, and cache writes that leave no whole entry behind in a temporary file.
@MainActor
@Suite("The third client review, in resources")
struct ClientReviewThreeResourcesTests {
    @Test("A polling interval, a delayed cancel and a backoff of Int64.max seconds wait instead of trapping")
    func hugeWaits() async throws {
        let backend = ScriptedBackend()
        // The real clock: a manual one never converts a deadline, which is where ContinuousClock trapped.
        let api = try Service(baseURL: "http://api.test", transport: backend.transport)
        api.configure { $0.pollingInterval = .seconds(Int64.max) }
        let feed = api.resource("/feed")
        let owner = Owner()
        feed.addObserver(owner: owner) { _, _ in }
        _ = await feed.load().response()
        feed.cancelLoadIfUnobserved(afterDelay: .seconds(Int64.max))
        // Long enough for the polling task and the delayed cancel to reach their sleeps.
        for _ in 0..<200 { await Task.yield() }
        try await Task.sleep(for: .milliseconds(50))
        #expect(backend.requestCount == 1)
        feed.removeObservers(ownedBy: owner)
    }

    @Test("progressUpdates(every: .zero) ticks at most every 10 ms instead of spinning on the main actor")
    func progressFloor() async throws {
        let backend = ScriptedBackend()
        let clock = ManualClock()
        let api = try Service(baseURL: "http://api.test", transport: backend.transport, clock: clock)
        backend.hold(true)
        let request = api.resource("/slow").load()
        let values = Mutex(0)
        let stream = request.progressUpdates(every: .zero)
        let reader = Task {
            for await _ in stream { values.withLock { $0 += 1 } }
        }
        // Before, each of these yields let the ticker hand out another value (12,377 in 300 ms).
        for _ in 0..<2_000 { await Task.yield() }
        #expect(values.withLock { $0 } <= 2)
        clock.advance(by: .milliseconds(10))
        #expect(await eventually { values.withLock { $0 } >= 2 })
        backend.releaseAll()
        _ = await request.response()
        reader.cancel()
    }

    @Test("A cache write leaves no temporary file of Foundation's, and a wipe sweeps one a killed write left")
    func cacheTemporaryFiles() async throws {
        let directory = URL(fileURLWithPath: TemporaryFiles.directory("cache"))
        let cache = try FileEntityCache(directory: directory)
        let body = [UInt8](repeating: 65, count: 1 << 20)
        await cache.writeEntity(CachedEntity(bytes: body, headerFields: [.contentType: "text/plain"]), forKey: "https://a.test/x")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names.count == 1 && names.allSatisfy { $0.hasSuffix(".json") && !$0.hasPrefix(".") }, "\(names)")
        // What a process killed inside `FileManager.createFile` left: a whole entry under Foundation's name.
        let leftover = directory.appendingPathComponent(".dat.nosync1C73.sSu5ic")
        try Data(#"{"url":"https://a.test/secret","body":"dG9rZW4="}"#.utf8).write(to: leftover)
        await cache.removeAll()
        #expect(!FileManager.default.fileExists(atPath: leftover.path))
        // Only the cache's own names go: a file of someone else's stays.
        let foreign = directory.appendingPathComponent("notes.txt")
        try Data("mine".utf8).write(to: foreign)
        await cache.removeAll()
        #expect(FileManager.default.fileExists(atPath: foreign.path))
    }
}
