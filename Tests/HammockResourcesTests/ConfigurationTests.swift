import Foundation
import HTTPTypes
import HammockClient
import HammockResources
import HammockTesting
import Testing

@MainActor
@Suite("Configuration by pattern")
struct ConfigurationTests {
    @Test("rules apply in order, later wins, and only where they match")
    func order() throws {
        let api = try Service(baseURL: "http://api.test", transport: MockTransport { _, _ in throw FakeNetworkError() })
        api.configure { $0.expirationTime = .seconds(10) }
        api.configure("/items/*") { $0.expirationTime = .seconds(20) }
        api.configure("/items/**", description: "items everywhere") { $0.retryTime = .seconds(5) }
        api.configure { $0.headers[.accept] = "application/json" }
        let item = api.resource("/items/1")
        #expect(item.configuration.expirationTime == .seconds(20))
        #expect(item.configuration.retryTime == .seconds(5))
        #expect(item.configuration.headers[.accept] == "application/json")
        let nested = api.resource("/items/1/parts")
        #expect(nested.configuration.expirationTime == .seconds(10))
        #expect(nested.configuration.retryTime == .seconds(5))
        #expect(api.resource("/other").configuration.retryTime == .seconds(1))
        #expect(api.configurationDescriptions(for: item.url) == ["/**", "/items/*", "items everywhere", "/**"])
    }

    @Test("invalidating the configuration re-evaluates it, and headers reach the wire")
    func reevaluation() async throws {
        let backend = ScriptedBackend()
        let api = try Service(baseURL: "http://api.test", transport: backend.transport)
        let session = Session()
        api.configure { $0.headers[.authorization] = "Bearer \(session.token)" }
        let profile = api.resource("/profile")
        #expect(profile.configuration.headers[.authorization] == "Bearer first")
        session.token = "second"
        #expect(profile.configuration.headers[.authorization] == "Bearer first")  // cached until invalidated
        api.invalidateConfiguration()
        #expect(profile.configuration.headers[.authorization] == "Bearer second")
        _ = await profile.load().response()
        #expect(backend.requests.first?.headerFields[.authorization] == "Bearer second")
    }

    @Test("invalidating and wiping by pattern touches only the matching resources")
    func byPattern() async throws {
        let backend = ScriptedBackend()
        let api = try Service(baseURL: "http://api.test", transport: backend.transport, clock: ManualClock())
        let item = api.resource("/items/1")
        let nested = api.resource("/items/1/parts")
        let other = api.resource("/users/1")
        for resource in [item, nested, other] { _ = await resource.load().response() }
        #expect(api.resources(matching: "/items/**").map(\.url.path) == ["/items/1", "/items/1/parts"])
        api.invalidateResources(matching: "/items/*")
        #expect(item.isInvalidated && !nested.isInvalidated && !other.isInvalidated)
        api.wipeResources(matching: "/items/**")
        #expect(item.latestData == nil && nested.latestData == nil && other.latestData != nil)
        api.wipeResources()
        #expect(other.latestData == nil)
    }

    @Test("a predicate can configure resources too")
    func predicate() throws {
        let api = try Service(baseURL: "http://api.test", transport: MockTransport { _, _ in throw FakeNetworkError() })
        api.configure(whenURLMatches: { $0.query?.contains("live=1") == true }) { $0.pollingInterval = .seconds(3) }
        #expect(api.resource("/feed?live=1").configuration.pollingInterval == .seconds(3))
        #expect(api.resource("/feed").configuration.pollingInterval == nil)
    }
}

@MainActor
final class Session {
    var token = "first"
}
