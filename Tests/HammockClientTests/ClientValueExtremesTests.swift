import Foundation
import HTTPTypes
import HammockClient
import Synchronization
import Testing

/// No public value traps: each is held in its range where it is used (the second client review found
/// `maximumAttempts = 0` trapping on every idempotent request, and an infinite multiplier trapping).
@Suite("Client values at their extremes")
struct ClientValueExtremesTests {
    @Test("A RetryBackoff whose attempts are set to zero or less after it is made still sends once", arguments: [0, -1, Int.min])
    func zeroAttempts(attempts: Int) async throws {
        var backoff = RetryBackoff()
        backoff.maximumAttempts = attempts
        #expect(backoff.maximumAttempts == 1)
        let sent = Mutex(0)
        let transport = MockTransport { _, _ in
            sent.withLock { $0 += 1 }
            return (HTTPResponse(status: .serviceUnavailable), [])
        }
        let chain = InterceptedTransport(transport, interceptors: [RetryPolicy(backoff: backoff, clock: ContinuousClock())])
        let head = HTTPRequest(method: .get, scheme: "https", authority: "api.example", path: "/items")
        let (response, _) = try await chain.send(head, body: nil)
        #expect(response.status == .serviceUnavailable)
        #expect(sent.withLock { $0 } == 1)
    }

    @Test(
        "Backoff waits stay between zero and the longest wait for any multiplier, delay and attempt number",
        arguments: [Double.infinity, -.infinity, .nan, 0, -3, 1, 2, 1e308, .greatestFiniteMagnitude])
    func delays(multiplier: Double) {
        var backoff = RetryBackoff(initialDelay: .seconds(1), maximumDelay: .seconds(30))
        backoff.multiplier = multiplier
        #expect((1...1_000).contains(backoff.multiplier))
        for attempt in [Int.min, -1, 0, 1, 2, 3, 64, 1_100, Int.max] {
            let delay = backoff.delay(afterAttempt: attempt)
            #expect(delay >= .seconds(1) && delay <= .seconds(30), "attempt \(attempt): \(delay)")
        }
        let widest = RetryBackoff(
            maximumAttempts: Int.max, initialDelay: .seconds(Int64.max), multiplier: multiplier, maximumDelay: .seconds(Int64.max)
        )
        #expect(widest.delay(afterAttempt: Int.max) == .seconds(Int64.max))
        let negative = RetryBackoff(initialDelay: .seconds(-5), multiplier: multiplier, maximumDelay: .seconds(-1))
        #expect(negative.delay(afterAttempt: 7) == .zero)
    }

    @Test("Backoff waits still grow and cap as documented")
    func growth() {
        let backoff = RetryBackoff(initialDelay: .milliseconds(500), multiplier: 2, maximumDelay: .seconds(3))
        #expect(
            (1...6).map { backoff.delay(afterAttempt: $0) } == [
                .milliseconds(500), .seconds(1), .seconds(2), .seconds(3), .seconds(3), .seconds(3),
            ])
    }
}
