public import HTTPTypes
public import HammockClient

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
    /// Retries a failed load (a transport failure, 429, 502, 503 or 504) before reporting an error, through
    /// the client's `RetryPolicy` on the service's clock. Off by default.
    public var retry: RetryBackoff?
    /// While a resource has observers, reload it this often (conditionally, so unchanged data costs a
    /// 304); at least every 100 ms, whatever is set.
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
