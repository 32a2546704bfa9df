import Foundation
import HammockClient
import HammockJSON
import HammockResources
import HammockTesting
import Observation
import Testing

/// A screen that observes a resource through the protocol.
@MainActor
final class ProfileScreen: ResourceObserver {
    var events: [ResourceEvent] = []
    var stopped = 0
    func resourceChanged(_ resource: Resource, event: ResourceEvent) {
        MainActor.assertIsolated("observers run on the main actor")
        events.append(event)
    }
    func stoppedObserving(_ resource: Resource) { stopped += 1 }
}

@MainActor
@Suite("Observers and events")
struct ObserverTests {
    let backend = ScriptedBackend()
    let clock = ManualClock()
    let api: Service

    init() throws {
        api = try Service(baseURL: "http://api.test", transport: backend.transport, clock: clock)
    }

    @Test("an observer is told at once, and in the order observers were added")
    func immediateAndOrdered() async {
        let profile = api.resource("/profile")
        var calls: [String] = []
        let owner = Owner()
        profile.addObserver(owner: owner) { _, event in calls.append("first \(event)") }
        profile.addObserver(owner: owner) { _, event in calls.append("second \(event)") }
        #expect(calls == ["first observerAdded", "second observerAdded"])
        _ = await profile.load().response()
        #expect(calls.suffix(4) == ["first requested", "second requested", "first newData(network)", "second newData(network)"])
        withExtendedLifetime(owner) {}
    }

    @Test("observers go away with their owner, and the unobserved resource can be released")
    func ownerDeallocated() async {
        var profile: Resource? = api.resource("/profile")
        weak let weakProfile = profile
        let log = EventLog()
        var owner: Owner? = Owner()
        weak let weakOwner = owner
        profile?.addObserver(owner: owner ?? Owner()) { _, event in log.events.append(event) }
        #expect(profile?.observerCount == 1)
        owner = nil
        #expect(weakOwner == nil)
        #expect(profile?.observerCount == 0)
        _ = await profile?.load().response()
        #expect(log.events == [.observerAdded])  // nothing after the owner left
        profile = nil
        #expect(weakProfile != nil)  // the service still holds it
        api.flushUnobservedResources()
        #expect(weakProfile == nil)
        #expect(api.resourceCount == 0)
    }

    @Test("protocol observers are held weakly, added once, and told when they stop")
    func protocolObservers() {
        let profile = api.resource("/profile")
        var screen: ProfileScreen? = ProfileScreen()
        weak let weakScreen = screen
        if let screen {
            profile.addObserver(screen)
            profile.addObserver(screen)
        }
        #expect(profile.observerCount == 1)
        #expect(screen?.events == [.observerAdded])
        screen = nil
        #expect(weakScreen == nil)
        #expect(profile.observerCount == 0)
    }

    @Test("an observer with a separate owner lives as long as the owner")
    func separateOwner() {
        let profile = api.resource("/profile")
        var owner: Owner? = Owner()
        weak var weakScreen: ProfileScreen?
        do {
            let screen = ProfileScreen()
            weakScreen = screen
            profile.addObserver(screen, owner: owner ?? Owner())
        }
        #expect(weakScreen != nil)  // kept by the resource for its owner
        owner = nil
        #expect(profile.observerCount == 0)
        #expect(weakScreen == nil)
    }

    @Test("cancelling an observation stops it and says so")
    func cancelObservation() {
        let profile = api.resource("/profile")
        let screen = ProfileScreen()
        let observation = profile.addObserver(screen)
        observation.cancel()
        #expect(screen.stopped == 1)
        #expect(profile.observerCount == 0)
        profile.overrideLocalContent(with: (["x": 1] as JSON))
        #expect(screen.events == [.observerAdded])
    }

    @Test("events() starts with the current state and follows the resource")
    func eventStream() async {
        backend.setFallback(.json(["name": "Ada"]))
        let profile = api.resource("/profile")
        _ = await profile.load().response()
        let events = profile.events()
        #expect(profile.observerCount == 1)
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == .observerAdded)
        #expect(profile.latestData?.jsonContent == ["name": "Ada"])  // the state is there to read
        profile.invalidate()
        _ = await profile.loadIfNeeded()?.response()
        #expect(await iterator.next() == .requested)
        // The same body again: told as notModified (structural sharing), not as new data.
        #expect(await iterator.next() == .notModified)
        backend.setFallback(.json(["name": "Grace"]))
        _ = await profile.load().response()
        #expect(await iterator.next() == .requested)
        #expect(await iterator.next() == .newData(.network))
    }

    @Test("a finished events() consumer stops observing")
    func eventStreamEnds() async {
        let profile = api.resource("/profile")
        let consumer = Task { @MainActor in
            for await event in profile.events() where event == .observerAdded { break }
        }
        await consumer.value
        #expect(await eventually { profile.observerCount == 0 })
        #expect(profile.observerCount == 0)
    }

    @Test("resources are @Observable: SwiftUI-style tracking sees loads finish")
    func observation() async {
        let profile = api.resource("/profile")
        let changes = Counter()
        withObservationTracking {
            _ = profile.latestData
        } onChange: {
            changes.increment()
        }
        _ = await profile.load().response()
        #expect(changes.value == 1)
        let loadingChanges = Counter()
        withObservationTracking {
            _ = profile.isLoading
        } onChange: {
            loadingChanges.increment()
        }
        profile.invalidate()
        let request = profile.loadIfNeeded()
        #expect(loadingChanges.value == 1)
        _ = await request?.response()
    }

    @Test("the service keeps a bounded number of unobserved resources, never observed ones")
    func eviction() {
        api.maximumUnobservedResources = 3
        let owner = Owner()
        let kept = api.resource("/kept")
        kept.addObserver(owner: owner) { _, _ in }
        for index in 0..<10 { _ = api.resource("/item/\(index)") }
        #expect(api.resourceCount == 4)  // the observed one and the three most recent
        #expect(api.resources(matching: "/item/*").map(\.url.path) == ["/item/7", "/item/8", "/item/9"])
        #expect(api.resource("/kept") === kept)
        withExtendedLifetime(owner) {}
    }
}

@MainActor
@Suite("State snapshots")
struct StateSnapshotTests {
    @Test("states() starts with the current state and records each step as it was")
    func snapshots() async throws {
        let backend = ScriptedBackend()
        backend.script(.json(["v": 1]), .json(["detail": "down"], status: .badGateway))
        let api = try Service(baseURL: "http://api.test", transport: backend.transport, clock: ManualClock())
        let profile = api.resource("/profile")
        _ = await profile.load().response()
        let gate = AsyncStream<Void>.makeStream()
        let consumer = Self.collect(profile.states(), count: 3, after: gate.stream)
        _ = await profile.load().response()
        // Read everything only now: each snapshot still shows its own moment.
        gate.continuation.finish()
        let seen = await consumer.value
        #expect(seen.map(\.event) == [.observerAdded, .requested, .error])
        #expect(seen[0].latestData?.jsonContent == ["v": 1] && seen[0].latestError == nil && !seen[0].isLoading)
        #expect(seen[1].isLoading && seen[1].latestData?.jsonContent == ["v": 1])
        #expect(seen[2].latestError?.userMessage == "down" && seen[2].latestData?.jsonContent == ["v": 1] && !seen[2].isLoading)
        #expect(seen.allSatisfy { $0.url == profile.url })
        #expect(await eventually { profile.observerCount == 0 })  // the consumer stopped, so did the observer
    }

    @Test("A wipe empties the states a slow consumer has not read: the first it reads is the wipe's, without data")
    func wipeEmptiesStates() async throws {
        let backend = ScriptedBackend()
        backend.setFallback(.json(["owner": "user A"]))
        let api = try Service(baseURL: "http://api.test", transport: backend.transport, clock: ManualClock())
        let profile = api.resource("/profile")
        let gate = AsyncStream<Void>.makeStream()
        let consumer = Self.collect(profile.states(), count: 1, after: gate.stream)
        for _ in 0..<3 { _ = await profile.load().response() }
        profile.wipe()
        gate.continuation.finish()
        let seen = await consumer.value
        #expect(seen.map(\.event) == [.newData(.wipe)])
        #expect(seen.allSatisfy { $0.latestData == nil })
    }

    @Test("states() keeps at most 32 states for a consumer that never reads, the newest")
    func boundedStates() async throws {
        let backend = ScriptedBackend()
        backend.setFallback(.json(["n": 1]))
        let api = try Service(baseURL: "http://api.test", transport: backend.transport, clock: ManualClock())
        let feed = api.resource("/feed")
        let gate = AsyncStream<Void>.makeStream()
        let consumer = Self.collect(feed.states(), count: 32, after: gate.stream)
        for _ in 0..<50 { _ = await feed.load().response() }  // 1 + 100 states
        gate.continuation.finish()
        let seen = await consumer.value
        // Unbounded, the first read would be the first state (.observerAdded).
        #expect(seen.count == 32)
        // Every load after the first brought the same body: notModified (structural sharing).
        #expect(seen.last?.event == .notModified)
        #expect(!seen.contains { $0.event == .observerAdded })
    }

    /// Reads `count` states on another task, once `gate` ends; the stream goes away with the task.
    nonisolated static func collect(
        _ states: AsyncStream<ResourceState>, count: Int, after gate: AsyncStream<Void>
    ) -> Task<[ResourceState], Never> {
        Task.detached {
            for await _ in gate {}
            var seen: [ResourceState] = []
            for await state in states {
                seen.append(state)
                if seen.count == count { break }
            }
            return seen
        }
    }
}
