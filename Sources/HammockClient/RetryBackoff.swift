import Foundation

/// When to try again: `initialDelay` after the first failure, then `multiplier` times longer each time,
/// at most `maximumDelay`. ``RetryPolicy`` follows it, and so do observable resources' loads.
///
/// ```swift
/// RetryPolicy(backoff: RetryBackoff(maximumAttempts: 4, initialDelay: .milliseconds(500)))
/// service.configure { $0.retry = RetryBackoff(maximumAttempts: 4) }     // HammockResources
/// ```
public struct RetryBackoff: Sendable, Hashable {
    /// The most attempts, the first included; at least 1.
    public var maximumAttempts: Int { didSet { maximumAttempts = Self.clamp(attempts: maximumAttempts) } }
    /// The wait before the second attempt; a negative one counts as zero.
    public var initialDelay: Duration
    /// How much longer each next wait is: from 1 to 1,000 (NaN counts as 1).
    public var multiplier: Double { didSet { multiplier = Self.clamp(multiplier: multiplier) } }
    /// The longest wait; a negative one counts as zero.
    public var maximumDelay: Duration

    /// A backoff policy. Every value is safe: each is held in its range, here and when a property is set.
    public init(
        maximumAttempts: Int = 3, initialDelay: Duration = .milliseconds(500), multiplier: Double = 2,
        maximumDelay: Duration = .seconds(30)
    ) {
        self.maximumAttempts = Self.clamp(attempts: maximumAttempts)
        self.initialDelay = initialDelay
        self.multiplier = Self.clamp(multiplier: multiplier)
        self.maximumDelay = maximumDelay
    }

    static func clamp(attempts: Int) -> Int { max(1, attempts) }

    static func clamp(multiplier: Double) -> Double {
        multiplier.isNaN ? 1 : min(max(1, multiplier), 1_000)
    }

    /// The wait after attempt number `attempt` (1 for the first) failed: `initialDelay` ×
    /// `multiplier`^(attempt − 1), at most `maximumDelay`. Computed in seconds as a `Double`, so that
    /// no attempt number or delay overflows, and in constant time for any `attempt`.
    public func delay(afterAttempt attempt: Int) -> Duration {
        let longest = max(maximumDelay, .zero)
        let first = min(max(initialDelay, .zero), longest)
        let exponent = Double(max(1, attempt) - 1)
        let factor = pow(Self.clamp(multiplier: multiplier), exponent)
        let seconds = Self.seconds(first) * factor
        guard seconds.isFinite, seconds < Self.seconds(longest) else { return longest }
        return max(first, .seconds(seconds))
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
