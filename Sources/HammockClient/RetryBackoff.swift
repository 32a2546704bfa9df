/// When to try again: `initialDelay` after the first failure, then `multiplier` times longer each time,
/// at most `maximumDelay`. ``RetryPolicy`` follows it, and so do observable resources' loads.
///
/// ```swift
/// RetryPolicy(backoff: RetryBackoff(maximumAttempts: 4, initialDelay: .milliseconds(500)))
/// service.configure { $0.retry = RetryBackoff(maximumAttempts: 4) }     // HammockResources
/// ```
public struct RetryBackoff: Sendable, Hashable {
    /// The most attempts, the first included.
    public var maximumAttempts: Int
    /// The wait before the second attempt.
    public var initialDelay: Duration
    /// How much longer each next wait is.
    public var multiplier: Double
    /// The longest wait.
    public var maximumDelay: Duration

    /// A backoff policy.
    public init(
        maximumAttempts: Int = 3, initialDelay: Duration = .milliseconds(500), multiplier: Double = 2,
        maximumDelay: Duration = .seconds(30)
    ) {
        self.maximumAttempts = max(1, maximumAttempts)
        self.initialDelay = initialDelay
        self.multiplier = max(1, multiplier)
        self.maximumDelay = maximumDelay
    }

    /// The wait after attempt number `attempt` (1 for the first) failed.
    public func delay(afterAttempt attempt: Int) -> Duration {
        var delay = initialDelay
        for _ in 1..<max(1, attempt) {
            delay = delay * multiplier
            if delay >= maximumDelay { return maximumDelay }
        }
        return min(delay, maximumDelay)
    }
}
