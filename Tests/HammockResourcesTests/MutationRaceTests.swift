import Foundation
import HTTPTypes
import HammockClient
import HammockJSON
import HammockResources
import HammockTesting
import Synchronization
import Testing

struct ReviewPerson: Codable, Equatable, Sendable {
    var id: Int
    var name: String
}

/// A mutation always wins over a stale load, a rejected override never survives a 304, and mutation
/// answers are not the representation.
@MainActor
@Suite("A mutation always wins")
struct MutationRaceTests {
    let backend = ScriptedBackend()
    let clock = ManualClock()
    let api: Service

    init() throws {
        api = try Service(baseURL: "http://api.test", transport: backend.transport, clock: clock)
    }

    @Test("A load in flight when a mutation succeeds does not make the list fresh: a new load follows and wins")
    func loadInFlightDuringMutation() async throws {
        let people = api.resource("/people")
        backend.script(.json(["Ada"]))
        _ = await people.load().response()
        backend.hold(true)
        backend.script(.json(["Ada"]), .json(["id": 2, "name": "Bob"], status: .created), .json(["Ada", "Bob"]))
        let refresh = people.load()  // in flight; its answer predates the POST
        #expect(await backend.waitForHeld(1))
        let post = people.request(.post, json: ["name": "Bob"])
        #expect(await backend.waitForHeld(2))
        backend.releaseAll()
        _ = await post.response()
        let reload = try #require(people.loadIfNeeded())
        #expect(reload !== refresh)
        #expect(await backend.waitForHeld(1))
        backend.hold(false)
        backend.releaseAll()
        _ = await refresh.response()
        _ = await reload.response()
        #expect(people.latestData?.jsonContent == ["Ada", "Bob"])
        #expect(!people.isInvalidated)
        #expect(backend.requestCount == 4)
    }

    @Test("When the newer load finishes first, the older one's late answer does not replace its data")
    func olderLoadFinishesLast() async {
        let feed = api.resource("/feed")
        backend.hold(true)
        backend.script(.json(["old"]), .json(["new"]))
        let older = feed.load()
        #expect(await backend.waitForHeld(1))
        feed.invalidate()
        let newer = feed.load()
        #expect(newer !== older)
        #expect(await backend.waitForHeld(2))
        backend.hold(false)
        backend.releaseAll()
        _ = await newer.response()
        _ = await older.response()
        #expect(feed.latestData?.jsonContent == ["new"])
    }

    @Test("An override supersedes the loads already in flight: their answers, a 304 included, never flip it back")
    func overrideSupersedesLoadsInFlight() async throws {
        let profile = api.resource("/profile")
        backend.script(.json(["name": "Ada"], headers: [("ETag", "\"v1\"")]))
        _ = await profile.load().response()
        backend.hold(true)
        backend.script(
            .json(["name": "Ada, before the edit"], headers: [("ETag", "\"v1\"")]),
            .init(status: .notModified, headers: [("ETag", "\"v1\"")], body: []))
        profile.invalidate()
        let full = profile.load()
        #expect(await backend.waitForHeld(1))
        profile.invalidate()
        let notModified = profile.load()
        #expect(notModified !== full)
        #expect(await backend.waitForHeld(2))
        let optimistic = profile.overrideLocalContent(with: ["name": "Optimistic"] as JSON)
        #expect(profile.loadIfNeeded() == nil, "the override is fresh; the loads in flight no longer count")
        backend.hold(false)
        backend.releaseAll()
        // Their callers still get their answers; the resource keeps the override.
        #expect((try? await full.response().get()) != nil)
        #expect((try? await notModified.response().get()) != nil)
        #expect(profile.latestData?.jsonContent == ["name": "Optimistic"])

        // A load started after the override brings the server's word, and then nothing is rolled back.
        backend.script(.json(["name": "Ada L."]))
        _ = await profile.load().response()
        #expect(profile.latestData?.jsonContent == ["name": "Ada L."])
        #expect(!optimistic.rollBack())
        #expect(profile.latestData?.jsonContent == ["name": "Ada L."])
    }

    @Test("A refused mutation rolls its optimistic override back to the data, freshness and events from before it")
    func rollBackAfterRefusal() async throws {
        let todos = api.resource("/todos")
        backend.script(.json(["a"]))
        _ = await todos.load().response()
        let owner = Owner()
        let log = EventLog()
        todos.addObserver(owner: owner) { _, event in log.events.append(event) }
        let optimistic = todos.overrideLocalContent(with: ["a", "b"] as JSON)
        #expect(todos.latestData?.jsonContent == ["a", "b"])
        backend.script(.json(["detail": "title is taken"], status: .unprocessableContent))
        let outcome = await todos.request(.post, json: ["title": "b"]).response()
        #expect(throws: ResourceError.self) { try outcome.get() }
        #expect(optimistic.rollBack())
        #expect(todos.latestData?.jsonContent == ["a"])
        #expect(!todos.isInvalidated, "a refusal (4xx) changed nothing on the server")
        #expect(!optimistic.rollBack(), "once is enough")
        #expect(log.events == [.observerAdded, .newData(.localOverride), .newData(.localOverride)])
        withExtendedLifetime(owner) {}
    }

    @Test("A 304 after a rejected optimistic override restores the server's data, not the override")
    func notModifiedAfterOverride() async {
        let profile = api.resource("/profile")
        backend.script(
            .json(["name": "Ada"], headers: [("ETag", "\"v1\"")]),
            .json(["detail": "name is taken"], status: .unprocessableContent),
            .init(status: .notModified, headers: [("ETag", "\"v1\"")], body: []))
        _ = await profile.load().response()
        profile.overrideLocalContent(with: ["name": "Optimistic"] as JSON)
        #expect(profile.latestData?.text == #"{"name":"Optimistic"}"#)
        _ = await profile.request(.put, json: ["name": "Optimistic"]).response()
        _ = await profile.load().response()
        #expect(backend.requests.last?.headerFields[.ifNoneMatch] == "\"v1\"")
        #expect(profile.latestData?.jsonContent == ["name": "Ada"])
    }

    @Test("A mutation's answer is not run through the representation's model; a successful POST invalidates the list")
    func mutationPipeline() async throws {
        api.configure("/people") { $0.pipeline[.model] = [.decoding([ReviewPerson].self)] }
        api.configure("/people/*") { $0.pipeline[.model] = [.decoding(ReviewPerson.self)] }
        backend.script(
            .json([["id": 1, "name": "Ada"]]), .json(["id": 2, "name": "Bob"], status: .created),
            .init(status: .ok, headers: [("Content-Type", "application/json")], body: []),
            .init(status: .noContent, headers: [("Content-Type", "application/json")], body: []))
        let people = api.resource("/people")
        _ = await people.load().response()
        let created = await people.request(.post, json: ["name": "Bob"]).response()
        #expect(try created.get().jsonContent?["name"] == "Bob")
        #expect(people.isInvalidated)
        let head = await api.resource("/people/1").request(.head).response()
        #expect((try? head.get()) != nil)
        let deleted = await api.resource("/people/1").request(.delete).response()
        #expect((try? deleted.get()) != nil)
    }

    @Test(
        "A mutation whose outcome is unknown (a broken connection, a 5xx, a cancellation) invalidates the list; a 4xx does not",
        arguments: ["transport", "502", "503", "504", "500", "cancelled", "422", "409"])
    func unknownOutcomeInvalidates(outcome: String) async {
        backend.script(.json([["id": 1, "name": "Ada"]]))
        let people = api.resource("/people")
        _ = await people.load().response()
        #expect(!people.isInvalidated)
        switch outcome {
        case "transport":
            backend.script(.init(failure: FakeNetworkError()))
        case "cancelled":
            backend.hold(true)
        default:
            let code = Int(outcome) ?? 500
            backend.script(.json(["detail": "no"], status: HTTPResponse.Status(code: code)))
        }
        let post = people.request(.post, json: ["name": "Bob"])
        if outcome == "cancelled" {
            #expect(await backend.waitForHeld(1))  // the request went out: the server may have it
            post.cancel()
            backend.hold(false)
            backend.releaseAll()
        }
        _ = await post.response()
        #expect(people.isInvalidated == !outcome.hasPrefix("4"), "after \(outcome)")
    }

    @Test("A polling interval configured after observers exist starts polling, and removing it stops it")
    func pollingAfterObservers() async {
        backend.setFallback(.json(["items": []]))
        let feed = api.resource("/feed")
        let owner = Owner()
        feed.addObserver(owner: owner) { _, _ in }
        _ = await feed.load().response()
        // Read by the configuration closure on whatever thread applies it, so behind a lock.
        let interval = Mutex<Duration?>(.seconds(5))
        api.configure("/feed") { $0.pollingInterval = interval.withLock { $0 } }
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(5))
        #expect(await eventually { backend.requestCount == 2 })
        interval.withLock { $0 = nil }
        api.invalidateConfiguration()
        #expect(await eventually { clock.sleeperCount == 0 })
        clock.advance(by: .seconds(20))
        for _ in 0..<50 { await Task.yield() }
        #expect(backend.requestCount == 2)
        withExtendedLifetime(owner) {}
    }

    @Test("An observer that invalidates on new data from a load that was already stale gets one reload, not a loop")
    func invalidateInCallback() async {
        backend.setFallback(.json(["n": 1]))
        let feed = api.resource("/feed")
        let owner = Owner()
        var invalidations = 0
        feed.addObserver(owner: owner) { resource, event in
            if case .newData(.network) = event, invalidations < 1 {
                invalidations += 1
                resource.invalidate()
            }
        }
        backend.hold(true)
        let stale = feed.load()
        #expect(await backend.waitForHeld(1))
        feed.invalidate()  // the load in flight no longer counts
        backend.hold(false)
        backend.releaseAll()
        _ = await stale.response()
        #expect(await eventually { backend.requestCount == 2 && !feed.isRequesting })
        for _ in 0..<50 { await Task.yield() }
        #expect(backend.requestCount == 2)
        withExtendedLifetime(owner) {}
    }

    @Test("states() can keep only the newest state for a slow consumer")
    func newestStateOnly() async {
        backend.setFallback(.json(["n": 1]))
        let feed = api.resource("/feed")
        let states = feed.states(bufferingPolicy: .bufferingNewest(1))
        for _ in 0..<3 { _ = await feed.load().response() }
        var iterator = states.makeAsyncIterator()
        let first = await iterator.next()
        // The three loads' events collapsed into the last one: the same body again, so notModified.
        #expect(first?.event == .notModified)
    }
}
