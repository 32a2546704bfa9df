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

    /// `/observed`, loaded, with an observer whose owner the caller keeps alive.
    func loadedAndObserved(_ api: Service) async -> (Resource, NSObject) {
        let observed = api.resource("/observed")
        let owner = NSObject()
        observed.addObserver(owner: owner) { _, _ in }
        _ = await observed.load().response()
        return (observed, owner)
    }

    /// Waits (on the main actor, which the refetching task needs) until `condition` holds, up to 5 s.
    func eventually(_ condition: () -> Bool) async throws {
        for _ in 0..<500 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
    }

    @Test("Events from any async sequence refetch what went stale, until the task is cancelled")
    func refetchOnEvents() async throws {
        let api = try service()
        let (observed, owner) = await loadedAndObserved(api)
        let (events, continuation) = AsyncStream.makeStream(of: Void.self)
        let refetching = api.refetchStale(whenever: events)
        clock.advance(by: .seconds(31))
        let before = backend.requestCount
        continuation.yield()  // the app came back
        try await eventually { backend.requestCount == before + 1 }
        #expect(backend.requestCount == before + 1)
        _ = await observed.loadRequests.first?.response()
        // Fresh again: another event sends nothing.
        continuation.yield()
        try await Task.sleep(for: .milliseconds(50))
        #expect(backend.requestCount == before + 1)
        refetching.cancel()
        continuation.finish()
        await refetching.value
        withExtendedLifetime(owner) {}
    }

    @Test("A posted notification refetches what went stale; once cancelled, posts do nothing and the observers are gone")
    func refetchOnNotifications() async throws {
        let api = try service()
        let (observed, owner) = await loadedAndObserved(api)
        let center = NotificationCenter()
        let cameBack = Notification.Name("HammockTestsAppCameBack")
        let refetching = api.refetchStale(whenPosted: [cameBack], by: center)
        clock.advance(by: .seconds(31))
        let before = backend.requestCount
        center.post(name: cameBack, object: nil)
        try await eventually { backend.requestCount == before + 1 }
        #expect(backend.requestCount == before + 1)
        _ = await observed.loadRequests.first?.response()
        refetching.cancel()
        await refetching.value
        clock.advance(by: .seconds(31))
        center.post(name: cameBack, object: nil)
        try await Task.sleep(for: .milliseconds(50))
        #expect(backend.requestCount == before + 1)
        withExtendedLifetime(owner) {}
    }

    @Test("A refetching task does not keep its service alive, and ends when the service is gone")
    func refetchingDoesNotRetain() async throws {
        weak var weakService: Service?
        let (events, continuation) = AsyncStream.makeStream(of: Void.self)
        var refetching: Task<Void, Never>?
        do {
            let api = try service()
            weakService = api
            refetching = api.refetchStale(whenever: events)
        }
        #expect(weakService == nil)
        continuation.yield()
        await refetching?.value  // ends at the first event, finding no service
        continuation.finish()
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
