import Foundation
import HammockClient
import HammockJSON
import HammockResources
import HammockTesting
import Testing

@MainActor
@Suite("Retry with backoff, and polling")
struct RetryAndPollingTests {
    let backend = ScriptedBackend()
    let clock = ManualClock()
    let api: Service

    init() throws {
        api = try Service(baseURL: "http://api.test", transport: backend.transport, clock: clock)
    }

    @Test("a failed load retries with growing waits on the service clock, as one load")
    func backoff() async {
        api.configure { $0.retry = RetryBackoff(maximumAttempts: 3, initialDelay: .seconds(1), multiplier: 2) }
        backend.script(
            .init(failure: FakeNetworkError()),
            .json(["busy": true], status: .serviceUnavailable),
            .json(["name": "Ada"]))
        let profile = api.resource("/profile")
        let owner = Owner()
        let log = EventLog()
        profile.addObserver(owner: owner) { _, event in log.events.append(event) }
        let request = profile.load()
        #expect(await clock.waitForSleepers(1))
        #expect(backend.requestCount == 1)
        clock.advance(by: .milliseconds(999))
        #expect(backend.requestCount == 1)
        clock.advance(by: .milliseconds(1))
        #expect(await clock.waitForSleepers(1))
        #expect(backend.requestCount == 2)
        clock.advance(by: .seconds(2))
        _ = await request.response()
        #expect(backend.requestCount == 3)
        #expect(profile.latestData?.jsonContent == ["name": "Ada"])
        #expect(log.events == [.observerAdded, .requested, .newData(.network)])  // no error in between
        withExtendedLifetime(owner) {}
    }

    @Test(
        "A polling interval of zero or less polls every 100 ms instead of reloading in a loop",
        arguments: [Duration.zero, .seconds(-5)])
    func pollingFloor(interval: Duration) async {
        backend.setFallback(.json(["n": 1]))
        api.configure { $0.pollingInterval = interval }
        let feed = api.resource("/feed")
        let owner = Owner()
        feed.addObserver(owner: owner) { _, _ in }
        #expect(await clock.waitForSleepers(1))
        for _ in 0..<200 { await Task.yield() }
        #expect(backend.requestCount == 0, "nothing before the first 100 ms")
        clock.advance(by: .milliseconds(100))
        #expect(await eventually { backend.requestCount == 1 })
        withExtendedLifetime(owner) {}
    }

    @Test("A RetryBackoff whose attempts are set to zero after it is made still loads once")
    func zeroAttemptsLoad() async {
        var backoff = RetryBackoff(initialDelay: .seconds(1))
        backoff.maximumAttempts = 0
        api.configure { $0.retry = backoff }
        backend.setFallback(.json(["detail": "down"], status: .serviceUnavailable))
        _ = await api.resource("/profile").load().response()
        #expect(backend.requestCount == 1)
    }

    @Test("client errors are not retried, and the last failure is reported")
    func noRetryOnClientError() async {
        api.configure { $0.retry = RetryBackoff(maximumAttempts: 5, initialDelay: .seconds(1)) }
        backend.setFallback(.json(["detail": "no such profile"], status: .notFound))
        _ = await api.resource("/profile").load().response()
        #expect(backend.requestCount == 1)
        #expect(api.resource("/profile").latestError?.userMessage == "no such profile")
    }

    @Test("backoff delays grow, cap, and Retry-After can ask for longer")
    func delays() async {
        let policy = RetryBackoff(maximumAttempts: 6, initialDelay: .seconds(1), multiplier: 3, maximumDelay: .seconds(20))
        #expect(
            (1...5).map { policy.delay(afterAttempt: $0) } == [.seconds(1), .seconds(3), .seconds(9), .seconds(20), .seconds(20)])
        api.configure { $0.retry = RetryBackoff(maximumAttempts: 2, initialDelay: .seconds(1)) }
        backend.script(.json([:], status: .tooManyRequests, headers: [("Retry-After", "10")]), .json(["ok": true]))
        let request = api.resource("/limited").load()
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(9))
        #expect(backend.requestCount == 1)
        clock.advance(by: .seconds(1))
        _ = await request.response()
        #expect(backend.requestCount == 2)
    }

    @Test("a Retry-After beyond the backoff's longest wait ends the retries at once instead of parking the load")
    func retryAfterCap() async {
        api.configure { $0.retry = RetryBackoff(maximumAttempts: 3, initialDelay: .seconds(1), maximumDelay: .seconds(30)) }
        backend.script(.json([:], status: .serviceUnavailable, headers: [("Retry-After", "86400")]), .json(["ok": true]))
        let parked = api.resource("/parked")
        _ = await parked.load().response()
        #expect(backend.requestCount == 1)
        #expect(parked.latestError?.status == .serviceUnavailable)
        #expect(!parked.isLoading)

        // Whitespace around the seconds is allowed; the wait is honoured when it is within the cap.
        backend.script(.json([:], status: .serviceUnavailable, headers: [("Retry-After", " 12 ")]), .json(["ok": true]))
        let request = api.resource("/spaced").load()
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(11))
        #expect(backend.requestCount == 2)
        clock.advance(by: .seconds(1))
        _ = await request.response()
        #expect(backend.requestCount == 3)

        // The HTTP-date form counts from the response's own Date, whatever the device's clock says.
        let dated = [("Date", "Sun, 06 Nov 1994 08:49:37 GMT"), ("Retry-After", "Sun, 06 Nov 1994 08:49:52 GMT")]
        backend.script(.json([:], status: .serviceUnavailable, headers: dated), .json(["ok": true]))
        let datedLoad = api.resource("/dated").load()
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(14))
        #expect(backend.requestCount == 4)
        clock.advance(by: .seconds(1))
        _ = await datedLoad.response()
        #expect(backend.requestCount == 5)

        // A date a day after the response's Date is beyond the cap: the answer comes back at once.
        let distant = [("Date", "Sun, 06 Nov 1994 08:49:37 GMT"), ("Retry-After", "Mon, 07 Nov 1994 08:49:37 GMT")]
        backend.script(.json([:], status: .serviceUnavailable, headers: distant))
        let distantLoad = api.resource("/distant")
        _ = await distantLoad.load().response()
        #expect(backend.requestCount == 6)
        #expect(distantLoad.latestError?.status == .serviceUnavailable)
    }

    @Test("an observed resource polls, conditionally, and stops when nobody observes")
    func polling() async {
        api.configure("/feed") { $0.pollingInterval = .seconds(10) }
        backend.setFallback(.json(["items": []], headers: [("ETag", "\"feed-1\"")]))
        let feed = api.resource("/feed")
        _ = await feed.load().response()
        let owner = Owner()
        feed.addObserver(owner: owner) { _, _ in }
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(10))
        #expect(await eventually { backend.requestCount == 2 })
        #expect(backend.requestCount == 2)
        #expect(backend.requests.last?.headerFields[.ifNoneMatch] == "\"feed-1\"")
        #expect(await eventually { !feed.isLoading })
        #expect(await clock.waitForSleepers(1))
        feed.removeObservers(ownedBy: owner)
        #expect(clock.sleeperCount == 0)  // the polling task stopped
        clock.advance(by: .seconds(60))
        for _ in 0..<200 { await Task.yield() }
        #expect(backend.requestCount == 2)
    }

    @Test("cancelLoadIfUnobserved(afterDelay:) spares a load that gains an observer in time")
    func delayedCancel() async {
        backend.hold(true)
        let profile = api.resource("/profile")
        let request = profile.load()
        profile.cancelLoadIfUnobserved(afterDelay: .seconds(1))
        let owner = Owner()
        profile.addObserver(owner: owner) { _, _ in }
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(1))
        for _ in 0..<200 { await Task.yield() }
        #expect(!request.isCompleted)
        profile.removeObservers(ownedBy: owner)
        profile.cancelLoadIfUnobserved(afterDelay: .seconds(1))
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(1))
        #expect(await eventually { request.isCompleted })
        #expect(request.isCompleted)
    }
}
