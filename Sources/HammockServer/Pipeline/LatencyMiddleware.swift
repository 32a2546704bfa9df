/// Holds each response until a random time in ``Latency``'s range has passed since its request
/// arrived, or until the server stops, whichever comes first.
struct LatencyMiddleware: MockMiddleware {
    let latency: Latency
    let timer: LatencyTimer
    let random: @Sendable () -> Double
    let stopSignal: StopSignal

    func handle(_ request: MockRequest, next: (MockRequest) async throws -> MockResponse) async throws -> MockResponse {
        // Outside the problem mapping: by now every error is a response.
        try await timer.hold(for: latency.delay(forUnit: random()), releasedBy: stopSignal) { try await next(request) }
    }
}

/// Holds responses until their target time, on an injected clock.
struct LatencyTimer: Sendable {
    /// Marks a request's arrival and returns a function that waits until `delay` after it.
    let markArrival: @Sendable () -> @Sendable (Duration) async -> Void

    init<C: Clock>(clock: C) where C.Duration == Duration {
        markArrival = {
            let arrival = clock.now
            return { delay in
                // At most a year: a clock traps past about 292 years from now, and a caller's timeout
                // (`exchange(_:timeout:)`, `MockServerTransport(timeout:)`) may be any `Duration`.
                let bounded = min(max(delay, .zero), .seconds(366 * 86_400))
                // Cancellation (a client that went away) ends the wait early; nothing else to do.
                try? await clock.sleep(until: arrival.advanced(by: bounded), tolerance: nil)
            }
        }
    }
}
