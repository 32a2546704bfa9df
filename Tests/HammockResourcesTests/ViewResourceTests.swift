import Foundation
import HTTPTypes
import HammockClient
import HammockJSON
import HammockResources
import HammockTesting
import Testing

/// A screen's hold on a typed resource: what SwiftUI's `.resource(_:)` modifier drives, tested without
/// SwiftUI through the same calls.
@MainActor
@Suite("View resources: observed while on screen")
struct ViewResourceTests {
    struct Person: Decodable, Sendable, Equatable { var name: String }

    let backend = ScriptedBackend()
    let clock = ManualClock()

    func service() throws -> Service {
        backend.setFallback(.json(["name": "Ada"]))
        return try Service(baseURL: "http://api.test", transport: backend.transport, clock: clock)
    }

    @Test("Appearing observes and loads once, however often; an invalidation reloads it while visible; the value shows")
    func appearLoadsAndObserves() async throws {
        let api = try service()
        let person = ViewResource(api.resource("/people/1", as: Person.self))
        person.appear()
        person.appear()
        #expect(person.typed.resource.observerCount == 1)
        #expect(person.isLoading)
        _ = await person.typed.resource.loadRequests.first?.response()
        #expect(person.value == Person(name: "Ada"))
        #expect(person.error == nil)
        backend.setFallback(.json(["name": "Ada Lovelace"]))
        person.typed.resource.invalidate()
        api.refetchStale()
        _ = await person.typed.resource.loadRequests.first?.response()
        #expect(person.value?.name == "Ada Lovelace")
        #expect(backend.requestCount == 2)
    }

    @Test("Disappearing stops observing and cancels a load still in flight after the delay, unless another screen took it")
    func disappearLetsGo() async throws {
        let api = try service()
        backend.hold(true)
        let first = ViewResource(api.resource("/people/1", as: Person.self), cancelDelay: .seconds(1))
        first.appear()
        let load = first.typed.resource.loadRequests.first
        first.disappear()
        #expect(first.typed.resource.observerCount == 0)
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(1))
        let outcome = await load?.response()
        guard case .failure(let error)? = outcome else {
            Issue.record("the load should have been cancelled: \(String(describing: outcome))")
            return
        }
        #expect(error.isCancellation)

        // A screen that shows the same resource before the delay keeps the load going.
        let second = ViewResource(api.resource("/people/1", as: Person.self), cancelDelay: .seconds(1))
        second.appear()
        let kept = second.typed.resource.loadRequests.first
        second.disappear()
        let third = ViewResource(api.resource("/people/1", as: Person.self))
        third.appear()
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(1))
        backend.releaseAll()
        guard case .success? = await kept?.response() else {
            Issue.record("the load should have finished")
            return
        }
        #expect(third.value?.name == "Ada")
    }

    @Test("Data that does not decode, or a failed load, shows as the error")
    func errors() async throws {
        let api = try service()
        backend.setFallback(.json(["name": 42]))
        let person = ViewResource(api.resource("/people/1", as: Person.self))
        person.appear()
        _ = await person.typed.resource.loadRequests.first?.response()
        #expect(person.value == nil)
        #expect(person.error?.userMessage.contains("is not a Person") == true)
    }
}
