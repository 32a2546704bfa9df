import Foundation
import HTTPTypes
import HammockClient
import HammockJSON
import HammockResources
import HammockTesting
import Testing

@MainActor
@Suite("Loading: freshness, sharing and conditional requests")
struct LoadingTests {
    let backend = ScriptedBackend()
    let clock = ManualClock()
    let api: Service

    init() throws {
        api = try Service(baseURL: "http://api.test", transport: backend.transport, clock: clock)
    }

    @Test("a load stores the data with its metadata and tells observers in order")
    func load() async throws {
        backend.setFallback(
            .json(["name": "Ada"], headers: [("ETag", "\"v1\""), ("Last-Modified", "Sun, 22 Nov 2026 05:00:00 GMT")]))
        let profile = api.resource("/profile")
        let log = EventLog()
        let owner = Owner()
        profile.addObserver(owner: owner) { resource, event in log.events.append(event) }
        clock.advance(by: .seconds(7))
        let request = try #require(profile.loadIfNeeded())
        #expect(profile.isLoading && profile.isRequesting)
        let entity = try await request.value()
        #expect(!profile.isLoading && !profile.isRequesting)
        #expect(log.events == [.observerAdded, .requested, .newData(.network)])
        let data = try #require(profile.latestData)
        #expect(data.jsonContent == ["name": "Ada"])
        #expect(data.contentType == "application/json")
        #expect(data.etag == "\"v1\"")
        #expect(data.lastModified == "Sun, 22 Nov 2026 05:00:00 GMT")
        #expect(data.timestamp == ServiceInstant(sinceStart: .seconds(7)))
        #expect(profile.timestamp == data.timestamp)
        #expect(entity.jsonContent == data.jsonContent)
        #expect(backend.requests.first?.method == .get)
        #expect(backend.requests.first?.path == "/profile")
        withExtendedLifetime(owner) {}
    }

    @Test("50 calls of loadIfNeeded() in a loop send exactly one request")
    func fiftyCalls() async {
        let profile = api.resource("/profile")
        var requests: [ResourceRequest] = []
        for _ in 0..<50 {
            if let request = profile.loadIfNeeded() { requests.append(request) }
        }
        #expect(requests.count == 50)
        #expect(requests.allSatisfy { $0 === requests[0] })  // every caller shares the one in flight
        _ = await requests[0].response()
        for _ in 0..<50 { #expect(profile.loadIfNeeded() == nil) }
        #expect(backend.requestCount == 1)
    }

    @Test("identical concurrent loads share one request; load() joins the one in flight")
    func sharing() async {
        backend.hold(true)
        let profile = api.resource("/profile")
        let first = profile.load()
        let second = profile.load()
        #expect(first === second)
        #expect(await backend.waitForHeld(1))
        backend.releaseAll()
        _ = await first.response()
        #expect(backend.requestCount == 1)
    }

    @Test("loadIfNeeded() sends nothing inside the expiration window, and loads after it")
    func expiration() async {
        api.configure { $0.expirationTime = .seconds(30) }
        let profile = api.resource("/profile")
        _ = await profile.loadIfNeeded()?.response()
        clock.advance(by: .seconds(29))
        #expect(profile.isUpToDate)
        #expect(profile.loadIfNeeded() == nil)
        clock.advance(by: .seconds(1))
        #expect(!profile.isUpToDate)
        _ = await profile.loadIfNeeded()?.response()
        #expect(backend.requestCount == 2)
    }

    @Test("invalidate() makes the next loadIfNeeded() load, keeping the data meanwhile")
    func invalidate() async {
        backend.setFallback(.json(["v": 1]))
        let profile = api.resource("/profile")
        _ = await profile.load().response()
        profile.invalidate()
        #expect(profile.latestData?.jsonContent == ["v": 1])
        let request = profile.loadIfNeeded()
        #expect(request != nil)
        _ = await request?.response()
        #expect(!profile.isInvalidated)
        #expect(backend.requestCount == 2)
    }

    @Test("a 304 keeps the data, refreshes its timestamp and says not modified; both validators are sent")
    func notModified() async throws {
        let validators = [("ETag", "\"abc\""), ("Last-Modified", "Sat, 21 Nov 2026 10:00:00 GMT")]
        backend.script(
            .json(["name": "Ada"], headers: validators),
            .init(status: .notModified, headers: [("ETag", "\"abc\"")], body: []))
        let profile = api.resource("/profile")
        _ = await profile.load().response()
        let before = try #require(profile.latestData)
        let log = EventLog()
        let owner = Owner()
        profile.addObserver(owner: owner) { _, event in log.events.append(event) }
        clock.advance(by: .seconds(45))
        let request = try #require(profile.loadIfNeeded())
        let entity = try await request.value()
        let sent = backend.requests.last
        #expect(backend.requestCount == 2)
        #expect(sent?.headerFields[.ifNoneMatch] == "\"abc\"")
        #expect(sent?.headerFields[.ifModifiedSince] == "Sat, 21 Nov 2026 10:00:00 GMT")
        #expect(log.events == [.observerAdded, .requested, .notModified])
        let after = try #require(profile.latestData)
        #expect(after.jsonContent == ["name": "Ada"] && entity.jsonContent == after.jsonContent)
        #expect(after.timestamp == before.timestamp.advanced(by: .seconds(45)))
        #expect(after.etag == "\"abc\"" && after.lastModified == before.lastModified)
        #expect(profile.loadIfNeeded() == nil)  // fresh again
        withExtendedLifetime(owner) {}
    }

    @Test("an error keeps the old data, and loadIfNeeded() waits out the retry time")
    func errorKeepsData() async throws {
        api.configure { $0.retryTime = .seconds(5) }
        backend.script(
            .json(["name": "Ada"]),
            .json(
                ["title": "Unavailable", "detail": "The profile service is down for maintenance."], status: .serviceUnavailable,
                headers: [("Content-Type", "application/problem+json")]))
        let profile = api.resource("/profile")
        _ = await profile.load().response()
        clock.advance(by: .seconds(60))
        let outcome = await profile.loadIfNeeded()?.response()
        guard case .failure(let failure)? = outcome else {
            Issue.record("expected a failure")
            return
        }
        let error = try #require(profile.latestError)
        #expect(error.status == .serviceUnavailable)
        #expect(error.userMessage == "The profile service is down for maintenance.")
        #expect(failure.userMessage == error.userMessage)
        #expect(error.entity?.jsonContent?["title"] == "Unavailable")
        #expect(error.timestamp == ServiceInstant(sinceStart: .seconds(60)))
        #expect(profile.latestData?.jsonContent == ["name": "Ada"])
        #expect(profile.timestamp == error.timestamp)
        clock.advance(by: .seconds(4))
        #expect(profile.loadIfNeeded() == nil)
        clock.advance(by: .seconds(1))
        backend.setFallback(.json(["name": "Ada L."]))
        _ = await profile.loadIfNeeded()?.response()
        #expect(profile.latestError == nil)
        #expect(profile.latestData?.jsonContent == ["name": "Ada L."])
    }

    @Test("transport failures and statuses without a body still read well")
    func messages() async {
        backend.script(
            .init(failure: FakeNetworkError(message: "connection refused")),
            .init(status: .notFound, headers: [], body: []))
        let profile = api.resource("/profile")
        _ = await profile.load().response()
        #expect(profile.latestError?.userMessage.contains("connection refused") == true)
        if case .transport(let cause)? = profile.latestError?.cause {
            #expect(cause as? FakeNetworkError == FakeNetworkError(message: "connection refused"))
        } else {
            Issue.record("expected a transport cause")
        }
        _ = await profile.load().response()
        #expect(profile.latestError?.status == .notFound)
        #expect(profile.latestError?.userMessage == "Not Found.")
    }

    @Test("a 304 with no data to keep is an error, not a silent drop")
    func notModifiedWithoutData() async {
        backend.script(.init(status: .notModified, headers: [], body: []))
        let profile = api.resource("/profile")
        _ = await profile.load().response()
        guard case .notModifiedWithoutData? = profile.latestError?.cause else {
            Issue.record("expected notModifiedWithoutData, got \(String(describing: profile.latestError))")
            return
        }
    }

    @Test("cancelLoadIfUnobserved() cancels only when nobody observes")
    func cancelIfUnobserved() async throws {
        backend.hold(true)
        let profile = api.resource("/profile")
        let owner = Owner()
        let log = EventLog()
        profile.addObserver(owner: owner) { _, event in log.events.append(event) }
        let request = profile.load()
        #expect(await backend.waitForHeld(1))
        profile.cancelLoadIfUnobserved()
        #expect(profile.isLoading && !request.isCompleted)
        profile.removeObservers(ownedBy: owner)
        profile.cancelLoadIfUnobserved()
        #expect(!profile.isLoading && request.isCompleted)
        let outcome = await request.response()
        guard case .failure(let error) = outcome else {
            Issue.record("expected cancellation")
            return
        }
        #expect(error.isCancellation)
        #expect(profile.latestError == nil)  // a cancellation is not an error of the resource
        #expect(log.events == [.observerAdded, .requested])
        #expect(backend.heldCount == 0)  // the network call was abandoned too
    }

    @Test("a cancelled waiter stops waiting, and the shared load goes on")
    func cancelledWaiter() async {
        backend.hold(true)
        let profile = api.resource("/profile")
        let request = profile.load()
        let waiter = Task { @MainActor in await request.response() }
        #expect(await backend.waitForHeld(1))
        waiter.cancel()
        guard case .failure(let error) = await waiter.value else {
            Issue.record("expected the waiter to stop")
            return
        }
        #expect(error.isCancellation)
        #expect(!request.isCompleted && profile.isLoading)
        backend.releaseAll()
        guard case .success = await request.response() else {
            Issue.record("expected the load to succeed for the others")
            return
        }
        #expect(profile.latestData != nil)
    }

    @Test("cancelling tells observers, and a late response is ignored")
    func cancelEvent() async {
        backend.hold(true)
        let profile = api.resource("/profile")
        let owner = Owner()
        let log = EventLog()
        profile.addObserver(owner: owner) { _, event in log.events.append(event) }
        let request = profile.load()
        request.cancel()
        request.cancel()
        #expect(log.events == [.observerAdded, .requested, .requestCancelled])
        #expect(profile.latestData == nil && profile.latestError == nil)
        withExtendedLifetime(owner) {}
    }

    @Test("overrideLocalData, overrideLocalContent and wipe")
    func localChanges() async {
        backend.setFallback(.json(["name": "Ada"], headers: [("ETag", "\"1\"")]))
        let profile = api.resource("/profile")
        let owner = Owner()
        let log = EventLog()
        profile.addObserver(owner: owner) { _, event in log.events.append(event) }
        _ = await profile.load().response()
        profile.overrideLocalContent(with: (["name": "Grace"] as JSON))
        #expect(profile.latestData?.jsonContent == ["name": "Grace"])
        #expect(profile.latestData?.etag == "\"1\"")  // metadata kept
        profile.overrideLocalData(with: Entity(content: "plain", contentType: "text/plain"))
        #expect(profile.latestData?.typedContent(as: String.self) == "plain")
        profile.wipe()
        #expect(profile.latestData == nil && profile.latestError == nil)
        #expect(!profile.isUpToDate)
        #expect(
            log.events == [
                .observerAdded, .requested, .newData(.network), .newData(.localOverride), .newData(.localOverride),
                .newData(.wipe),
            ])
        withExtendedLifetime(owner) {}
    }

    @Test("progress rises while waiting, stays below one, and ends at one")
    func progress() async {
        backend.hold(true)
        let profile = api.resource("/profile")
        let request = profile.load()
        #expect(request.progress == 0)
        var readings: [Double] = []
        for _ in 0..<5 {
            clock.advance(by: .milliseconds(100))
            readings.append(request.progress)
        }
        #expect(zip(readings, readings.dropFirst()).allSatisfy { $0 < $1 })
        #expect(readings.allSatisfy { $0 > 0 && $0 < 0.95 })
        #expect(await backend.waitForHeld(1))
        backend.releaseAll()
        _ = await request.response()
        #expect(request.progress == 1)
    }

    @Test("progress updates arrive on the service clock and end with one")
    func progressUpdates() async {
        backend.hold(true)
        let request = api.resource("/profile").load()
        let updates = request.progressUpdates(every: .milliseconds(100))
        var iterator = updates.makeAsyncIterator()
        #expect(await iterator.next() == 0)
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .milliseconds(100))
        let second = await iterator.next()
        #expect((second ?? 0) > 0)
        #expect(await backend.waitForHeld(1))
        backend.releaseAll()
        _ = await request.response()
        var last: Double?
        while let value = await iterator.next() { last = value }
        #expect(last == 1)
    }

    @Test("a transport that reports progress moves it by the bytes received")
    func reportedProgress() async throws {
        let latency = AsyncStream<Void>.makeStream()
        let download = AsyncStream<Void>.makeStream()
        let halfway = Counter()
        let transport = MockTransport { _, _ in
            for await _ in latency.stream {}
            TransferProgress.report(.responseHeadReceived(expectedBytes: 1_000))
            TransferProgress.report(.responseBytesReceived(total: 500))
            halfway.increment()
            for await _ in download.stream {}
            TransferProgress.report(.responseBytesReceived(total: 1_000))
            return (HTTPResponse(status: .ok), Array(repeating: UInt8(ascii: " "), count: 1_000))
        }
        let service = try Service(baseURL: "http://api.test", transport: transport, clock: clock)
        let request = service.resource("/big").load()
        clock.advance(by: .milliseconds(100))
        let waiting = request.progress
        #expect(waiting > 0 && waiting < 0.95)
        latency.continuation.finish()
        #expect(await eventually { halfway.value == 1 })
        let half = request.progress
        #expect(abs(half - (waiting + (0.99 - waiting) * 0.5)) < 1e-9)
        clock.advance(by: .seconds(10))
        #expect(request.progress == half)  // moved by bytes now, not by time
        download.continuation.finish()
        _ = await request.response()
        #expect(request.progress == 1)
    }
}
