import Foundation
import HammockClient

/// A moment on a service's clock: how long after the service was created.
///
/// Resources stamp their data and errors with these, and compare them with the service's expiration
/// and retry times. Because they come from the clock you give the service, a test can move time on.
///
/// ```swift
/// if let age = resource.latestData.map({ $0.timestamp.duration(to: service.now) }), age > .seconds(60) { … }
/// ```
public struct ServiceInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// The time since the service was created.
    public var sinceStart: Duration

    /// The instant `sinceStart` after the service was created.
    public init(sinceStart: Duration) { self.sinceStart = sinceStart }

    /// The instant `duration` later.
    public func advanced(by duration: Duration) -> ServiceInstant { ServiceInstant(sinceStart: sinceStart + duration) }

    /// The time from this instant to `other` (negative if `other` is earlier).
    public func duration(to other: ServiceInstant) -> Duration { other.sinceStart - sinceStart }

    public static func < (lhs: ServiceInstant, rhs: ServiceInstant) -> Bool { lhs.sinceStart < rhs.sinceStart }

    public var description: String { "+\(sinceStart)" }
}

/// Any `Clock` measured in `Duration`, reduced to what a service needs: the time now, a sleep, and the
/// client's retry policy running on it.
struct ServiceClock: Sendable {
    let now: @Sendable () -> ServiceInstant
    let sleep: @Sendable (Duration) async throws -> Void
    let retryPolicy: @Sendable (RetryBackoff) -> any ClientInterceptor
    /// The wall-clock time at `now()`: the date a response arrived, which its `Date` and `Expires` are
    /// compared with. It moves with the clock, from the wall-clock time when the service was made.
    let date: @Sendable () -> Date

    init<C: Clock>(_ clock: C, startDate: Date = Date()) where C.Duration == Duration {
        let start = (instant: clock.now, date: startDate)
        now = { ServiceInstant(sinceStart: start.instant.duration(to: clock.now)) }
        date = {
            let (seconds, attoseconds) = start.instant.duration(to: clock.now).components
            return start.date.addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18)
        }
        // Every wait of the service (polling, a delayed cancel, progress ticks) is clamped here, once.
        sleep = { duration in try await clock.sleep(for: duration.clampedForSleep) }
        retryPolicy = { backoff in RetryPolicy(backoff: backoff, clock: clock) }
    }
}
