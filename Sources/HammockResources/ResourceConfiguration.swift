public import HTTPTypes

/// How a service treats the resources a configuration pattern matches.
///
/// ```swift
/// service.configure { $0.expirationTime = .seconds(60) }                 // every resource
/// service.configure("/items/*") {
///     $0.headers[.authorization] = "Bearer \(token)"
///     $0.pipeline[.model] = [.decoding(Item.self)]
///     $0.pollingInterval = .seconds(15)
/// }
/// ```
/// Configurations apply in the order they were added; where two set the same property, the later wins.
public struct ResourceConfiguration: Sendable {
    /// How long data counts as fresh: `loadIfNeeded()` sends nothing while data is younger.
    public var expirationTime: Duration = .seconds(30)
    /// How long after a failed load `loadIfNeeded()` waits before trying again.
    public var retryTime: Duration = .seconds(1)
    /// Header fields sent with every request (loads and mutations).
    public var headers: HTTPFields = [:]
    /// Turns response bytes into content.
    public var pipeline = ResponsePipeline()
    /// Retries a failed load (transport failure, 408, 429, 5xx) before reporting an error. Off by default.
    public var retry: RetryBackoff?
    /// While a resource has observers, reload it this often (conditionally, so unchanged data costs a 304).
    public var pollingInterval: Duration?
    /// A persistent cache: data shows from it before the network answers, and network data is saved to it.
    public var cache: (any EntityCache)?
    /// After a successful mutation (`POST`, `PUT`, `PATCH`, `DELETE`), invalidate the resource itself and
    /// every resource at an ancestor path (`/people/1` → `/people`, with any query). On by default.
    public var invalidatesAncestorsAfterMutation = true
    /// More resources to invalidate after a successful mutation, as URL patterns (`"/stats/**"`).
    public var alsoInvalidatesAfterMutation: [String] = []
    /// Whether invalidated resources that have observers reload at once (`loadIfNeeded()`). On by default.
    public var reloadsObservedResourcesWhenInvalidated = true

    /// The defaults: 30 s expiration, 1 s retry time, the standard pipeline, no retries, no polling,
    /// no cache.
    public init() {}
}

/// Waits longer after each failed attempt: `initialDelay`, then times `multiplier`, at most `maximumDelay`.
///
/// ```swift
/// service.configure { $0.retry = RetryBackoff(maximumAttempts: 4, initialDelay: .milliseconds(500)) }
/// ```
/// A `Retry-After` header given in seconds is honoured when it asks for longer.
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
    public init(maximumAttempts: Int = 3, initialDelay: Duration = .milliseconds(500), multiplier: Double = 2, maximumDelay: Duration = .seconds(30)) {
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

    /// Statuses worth another attempt.
    static func isRetryable(_ status: HTTPResponse.Status) -> Bool {
        [408, 429, 500, 502, 503, 504].contains(status.code)
    }
}
