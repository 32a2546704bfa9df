import Foundation
import HTTPTypes
import HammockClient
import HammockJSON
import HammockResources
import HammockTesting
import Testing

/// Refetching what went stale while the app was away, and letting go of what nobody looked at for long.
@MainActor
@Suite("Refetch on events, release by age")
struct RefetchAndReleaseTests {
    let backend = ScriptedBackend()
    let clock = ManualClock()

    func service() throws -> Service {
        let api = try Service(baseURL: "http://api.test", transport: backend.transport, clock: clock)
        backend.setFallback(.json(["n": 1]))
        return api
    }

    @Test("refetchStale() reloads the observed resources past their freshness, and no fresh or unobserved one")
    func refetchStale() async throws {
        let api = try service()
        let observed = api.resource("/observed")
        let unobserved = api.resource("/unobserved")
        let owner = NSObject()
        observed.addObserver(owner: owner) { _, _ in }
        _ = await observed.load().response()
        _ = await unobserved.load().response()
        #expect(api.refetchStale() == 0)  // fresh: nothing to do
        clock.advance(by: .seconds(31))  // past the default 30 s expiration
        let before = backend.requestCount
        #expect(api.refetchStale() == 1)
        #expect(observed.isLoading)
        #expect(!unobserved.isLoading)
        _ = await observed.loadRequests.first?.response()
        #expect(backend.requestCount == before + 1)
        withExtendedLifetime(owner) {}
    }

    @Test("With an unobserved lifetime, an idle resource not asked for within it is let go; observed and recent ones stay")
    func releaseByAge() async throws {
        let api = try service()
        api.unobservedLifetime = .seconds(60)
        let owner = NSObject()
        api.resource("/observed").addObserver(owner: owner) { _, _ in }
        _ = api.resource("/old")
        #expect(api.resourceCount == 2)
        clock.advance(by: .seconds(45))
        _ = api.resource("/recent")
        #expect(api.resourceCount == 3)
        clock.advance(by: .seconds(20))  // /old last asked for 65 s ago, /recent 20 s ago
        api.refetchStale()
        #expect(api.resourceCount == 2)
        // Asked for again, it is kept again.
        _ = api.resource("/old")
        #expect(api.resourceCount == 3)
        withExtendedLifetime(owner) {}
    }
}
