import Foundation
import HTTPTypes
import HammockClient
import HammockJSON
import HammockResources
import HammockTesting
import HammockWire
import Testing

/// Freshness by RFC 9111 §4.2: the age a response already had (`Age`, `Date`), `Expires` where there is
/// no `max-age`, and the header fields a 304 brings (§3.2, §4.3.4). Each was wrong before the third review.
@MainActor
@Suite("Freshness by RFC 9111")
struct FreshnessTests {
    let backend = ScriptedBackend()
    let clock = ManualClock()
    let api: Service

    init() throws {
        api = try Service(baseURL: "http://api.test", transport: backend.transport, clock: clock)
        api.configure { $0.expirationTime = .seconds(30) }
    }

    /// An HTTP date `offset` from now.
    static func date(_ offset: TimeInterval) -> String { HTTPDate.format(Date().addingTimeInterval(offset)) }

    @Test("A response that waited 50 of its 60 s in a cache (Age: 50) is fresh for 10 more, not 60")
    func age() async {
        backend.setFallback(.json(["v": 1], headers: [("Cache-Control", "max-age=60"), ("Age", "50")]))
        let feed = api.resource("/feed")
        _ = await feed.load().response()
        clock.advance(by: .seconds(9))
        #expect(feed.isUpToDate)
        clock.advance(by: .seconds(2))
        #expect(!feed.isUpToDate)
        _ = await feed.loadIfNeeded()?.response()
        #expect(backend.requestCount == 2)
    }

    @Test("A Date 40 s in the past counts as age too, when it says more than Age")
    func dateAge() async {
        backend.setFallback(.json(["v": 1], headers: [("Cache-Control", "max-age=60"), ("Date", Self.date(-40))]))
        let feed = api.resource("/feed")
        _ = await feed.load().response()
        clock.advance(by: .seconds(25))
        #expect(!feed.isUpToDate)
    }

    @Test(
        "Without max-age, Expires minus Date is the lifetime; Expires: 0 and an Expires equal to Date are already stale",
        arguments: [("0", 0), ("-1", 0), ("not a date", 0), ("same", 0), ("+120", 120)])
    func expires(value: String, lifetime: Int) async {
        let now = Self.date(0)
        let expires = value == "same" ? now : value == "+120" ? Self.date(120) : value
        backend.setFallback(.json(["v": 1], headers: [("Expires", expires), ("Date", now)]))
        let feed = api.resource("/feed")
        _ = await feed.load().response()
        if lifetime == 0 {
            // Before, the configured 30 s applied: the server's "do not cache" was ignored.
            #expect(!feed.isUpToDate)
            #expect(feed.loadIfNeeded() != nil)
        } else {
            clock.advance(by: .seconds(60))
            #expect(feed.isUpToDate)
            clock.advance(by: .seconds(61))
            #expect(!feed.isUpToDate)
        }
    }

    @Test("max-age wins over Expires")
    func maxAgeFirst() async {
        backend.setFallback(.json(["v": 1], headers: [("Cache-Control", "max-age=100"), ("Expires", "0")]))
        let feed = api.resource("/feed")
        _ = await feed.load().response()
        clock.advance(by: .seconds(90))
        #expect(feed.isUpToDate)
    }

    @Test("A 304 replaces every line of each field it carries with all of its own lines")
    func notModifiedKeepsEveryLine() async throws {
        backend.script(
            .json(["v": 1], headers: [("ETag", "\"a\""), ("Cache-Control", "no-cache"), ("Link", "</p/2>; rel=next")]),
            .init(
                status: .notModified,
                headers: [("ETag", "\"a\""), ("Cache-Control", "max-age=600"), ("Cache-Control", "must-revalidate")], body: []))
        let feed = api.resource("/feed")
        _ = await feed.load().response()
        _ = try await feed.load().value()
        let fields = try #require(feed.latestData?.headerFields)
        #expect(fields[values: .cacheControl] == ["max-age=600", "must-revalidate"])
        #expect(fields[values: HTTPField.Name("Link")!] == ["</p/2>; rel=next"])
        // The lifetime the 304 gave is the one that counts: before, only `must-revalidate` was kept.
        clock.advance(by: .seconds(500))
        #expect(feed.isUpToDate)
    }

    @Test("https://h.example and https://h.example/ are one resource and one cache key")
    func emptyPath() {
        let bare = api.resource(absoluteURL: "HTTPS://H.example.com:443")
        let slash = api.resource(absoluteURL: "https://h.example.com/")
        #expect(bare === slash)
        #expect(bare.url.absoluteString == "https://h.example.com/")
    }
}
