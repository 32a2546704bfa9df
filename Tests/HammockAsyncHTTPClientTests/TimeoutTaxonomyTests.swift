import Foundation
import HTTPTypes
import HammockAsyncHTTPClient
import HammockClient
import HammockHTTPServer
import HammockServer
import HammockTestSupport
import Synchronization
import Testing

/// One error for one failure, whichever transport: a timeout is `RestError.Reason.timedOut` on
/// URLSession, AsyncHTTPClient and the request's own limit alike, so a `catch` needs no transport.
@Suite("Timeouts: one case on every transport", .timeLimit(.minutes(1)))
struct TimeoutTaxonomyTests {
    @Test("A slow server times out as .timedOut through URLSession and through AsyncHTTPClient, with the transport's error kept")
    func sameCaseOnBothTransports() async throws {
        let server = try await MockServer(
            resources: [MockResource("people", fields: ["name": .string])],
            options: MockServer.Options(latency: Latency(.seconds(5)...(.seconds(5)))))
        try await server.start(host: "127.0.0.1", port: 0)
        defer { Task { await server.stop() } }  // also when the test fails part way
        let base = try #require(await server.baseURL)
        let transports: [(String, any HTTPTransport)] = [
            ("URLSession", URLSessionTransport(timeout: .milliseconds(300))),
            ("AsyncHTTPClient", AsyncHTTPClientTransport(timeout: .milliseconds(300))),
        ]
        for (name, transport) in transports {
            let client = RestClient(baseURL: base, transport: transport)
            let error = await #expect(throws: RestError.self, "\(name)") {
                _ = try await client.send(RequestBuilder(.get, "/people"))
            }
            #expect(error?.isTimeout == true, "\(name): \(String(describing: error))")
            guard case .timedOut(let underlying)? = error?.reason else { continue }
            #expect(RestError.isTimeout(underlying), "\(name): \(underlying)")
            #expect(error?.description.contains("timed out") == true)
        }
    }

    @Test("A request's own timeout, on the client's clock, ends a call the transport would wait on, cancelling it")
    func requestTimeout() async throws {
        let clock = ManualClock()
        let cancelled = Atomic(false)
        let transport = MockTransport { _, _ in
            do {
                try await Task.sleep(for: .seconds(3600))
            } catch {
                cancelled.store(true, ordering: .relaxed)
                throw error
            }
            return (HTTPResponse(status: .ok), [])
        }
        let client = RestClient(baseURL: try #require(URL(string: "https://api.example.com")), transport: transport, clock: clock)
        var request = RequestBuilder(.get, "/slow")
        request.timeout = .seconds(5)
        let limited = request
        let call = Task { try await client.send(limited) }
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .seconds(5))
        let result = await call.result
        guard case .failure(let failure) = result, let error = failure as? RestError else {
            Issue.record("expected a RestError, got \(result)")
            return
        }
        guard case .timedOut(let underlying) = error.reason else {
            Issue.record("expected .timedOut, got \(error.reason)")
            return
        }
        #expect(underlying as? RequestTimeout == RequestTimeout(limit: .seconds(5)))
        let wasCancelled = cancelled.load(ordering: .relaxed)
        #expect(wasCancelled)
        // A call that answers in time is not touched by its limit.
        let quick = RestClient(
            baseURL: try #require(URL(string: "https://api.example.com")),
            transport: MockTransport { _, _ in (HTTPResponse(status: .ok), Array("{}".utf8)) }, clock: clock)
        #expect(try await quick.send(request).status == .ok)
        // Limits at the extremes: the longest never traps the clock (it is bounded to a year); none
        // left (zero, negative) ends the call at once as a timeout rather than waiting.
        request.timeout = .seconds(Int64.max)
        #expect(try await quick.send(request).status == .ok)
        for spent in [Duration.zero, .seconds(-5)] {
            var hopeless = RequestBuilder(.get, "/slow")
            hopeless.timeout = spent
            let error = await #expect(throws: RestError.self) { try await client.send(hopeless) }
            #expect(error?.isTimeout == true, "\(spent)")
        }
    }
}
