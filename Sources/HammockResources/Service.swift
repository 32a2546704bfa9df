public import Foundation
import HTTPTypes
public import HammockClient
import HammockWire

/// An API: a base URL, a transport, and one canonical ``Resource`` per URL.
///
/// ```swift
/// let api = try Service(baseURL: "https://api.example.com/v1")
/// api.configure("/items/*") { $0.expirationTime = .seconds(60) }
/// let profile = api.resource("/profile")
/// profile.loadIfNeeded()
/// ```
/// Asking twice for the same URL, by whatever route (`resource`, `child`, `relative`, `withParam`),
/// returns the same object for as long as anyone holds it, so every screen that shows `/profile` shares
/// its data, its error and its requests.
///
/// ## Lifetime
/// Keep one service per API, for as long as you use the API. The service also keeps recently used
/// resources nobody observes (``maximumUnobservedResources``), so a screen that comes back finds its
/// data. When the last reference to the service goes, it lets go of those; resources that someone still
/// holds keep working, loading and staying canonical (`resource.service` then hands out a service object
/// for the same API). Nothing forms a cycle: a service made per test, user or tenant is freed.
///
/// ## Isolation
/// A service and its resources live on the main actor: their state reads are synchronous, observers
/// run there in a fixed order, and SwiftUI can watch resources directly (they are `@Observable`).
/// Network calls, response parsing and cache I/O run off the main actor; only their results come
/// back to it. On Linux the main actor is served by the main dispatch queue, which an `async` `main`
/// (and the test runner) drains.
@MainActor
public final class Service {
    let core: ServiceCore

    /// The URL `resource(_:)` paths are relative to; `nil` if the text given was not a URL.
    public var baseURL: URL? { core.baseURL }
    /// The transport and interceptors that carry requests under the base URL. Requests for other URLs
    /// (an absolute URL, `relative("https://elsewhere/…")`) go through the transport alone, unless
    /// ``applyInterceptors(under:)`` names them.
    public var transport: InterceptedTransport { core.transport }

    /// Lets requests under `baseURL`, another origin or path, go through the service's interceptors too
    /// (a second API host that takes the same token).
    ///
    /// ```swift
    /// api.applyInterceptors(under: URL(string: "https://uploads.example.com/v1")!)
    /// ```
    public func applyInterceptors(under baseURL: URL) {
        core.interceptedBases.append(baseURL)
    }

    /// A client for the service's base URL with the service's transport and interceptors.
    @available(*, deprecated, message: "use transport; a service without a valid base URL has no client")
    public var client: RestClient {
        RestClient(
            baseURL: baseURL ?? URL(fileURLWithPath: "/"), transport: core.transport.transport,
            interceptors: core.transport.interceptors)
    }

    /// How many unobserved, idle resources the service keeps before it releases the least recently
    /// used ones. Observed resources and resources with requests in flight are never released, and a
    /// released resource that someone still holds stays the one `resource(_:)` returns.
    public var maximumUnobservedResources: Int {
        get { core.maximumUnobservedResources }
        set { core.maximumUnobservedResources = newValue }
    }

    /// How long the service keeps an idle resource nobody observes after it was last asked for, besides
    /// the count ``maximumUnobservedResources``; `nil` (the default) for no time limit. A screen that
    /// comes back within it finds its data; a long session does not keep every URL it ever visited.
    public var unobservedLifetime: Duration? {
        get { core.unobservedLifetime }
        set {
            core.unobservedLifetime = newValue
            core.releaseExpired(force: true)
        }
    }

    /// Reloads every observed resource whose data is no longer fresh (``Resource/isUpToDate``), as an
    /// app wants when it returns to the foreground or the network comes back; unobserved ones wait until
    /// someone asks. Also lets go of resources past ``unobservedLifetime``. Returns how many loads started.
    ///
    /// ```swift
    /// .onChange(of: scenePhase) { if $0 == .active { api.refetchStale() } }
    /// ```
    @discardableResult
    public func refetchStale() -> Int {
        core.releaseExpired(force: true)
        var started = 0
        for resource in core.liveResources where resource.hasObservers && !resource.isUpToDateUntracked {
            if resource.loadIfNeeded() != nil { started += 1 }
        }
        return started
    }

    /// A service for `baseURL`, sending through `transport` and `interceptors`, on `clock`.
    ///
    /// ```swift
    /// let api = try Service(baseURL: "https://api.example.com/v1")
    /// ```
    /// - Throws: ``InvalidBaseURL`` for text that is not an absolute `http` or `https` URL with a host,
    ///   or one with a query, user info or a fragment (as `RestClient` refuses them: put API keys in
    ///   headers), so a typo fails here, where it was made, not at every load.
    public convenience init(
        baseURL: String,
        transport: any HTTPTransport = URLSessionTransport(),
        interceptors: [any ClientInterceptor] = [],
        clock: some Clock<Duration> = ContinuousClock()
    ) throws(InvalidBaseURL) {
        guard let url = URL(string: baseURL) else { throw InvalidBaseURL(text: baseURL, reason: "it is not a URL") }
        // The text as given in the error (URL(string:) percent-encodes what it takes in).
        if let problem = InvalidBaseURL.problem(with: url) { throw InvalidBaseURL(text: baseURL, reason: problem) }
        self.init(unvalidatedBaseURL: url, transport: transport, interceptors: interceptors, clock: clock)
    }

    /// A service for `baseURL`, sending through `transport` and `interceptors`, on `clock`.
    /// - Throws: ``InvalidBaseURL`` as ``init(baseURL:transport:interceptors:clock:)-(String,_,_,_)`` does.
    public convenience init(
        baseURL: URL,
        transport: any HTTPTransport = URLSessionTransport(),
        interceptors: [any ClientInterceptor] = [],
        clock: some Clock<Duration> = ContinuousClock()
    ) throws(InvalidBaseURL) {
        if let problem = InvalidBaseURL.problem(with: baseURL) {
            throw InvalidBaseURL(text: baseURL.absoluteString, reason: problem)
        }
        self.init(unvalidatedBaseURL: baseURL, transport: transport, interceptors: interceptors, clock: clock)
    }

    /// A service for `baseURL`, or for no URL at all, not checked here: a malformed one (or `nil`) gives
    /// a service whose resources fail to load with ``ResourceError/Cause/invalidURL(_:)``.
    @available(
        *, deprecated,
        message: "use the throwing init(baseURL:) with a URL or String, which refuses a malformed base URL where it is made"
    )
    public convenience init(
        baseURL: URL?,
        transport: any HTTPTransport = URLSessionTransport(),
        interceptors: [any ClientInterceptor] = [],
        clock: some Clock<Duration> = ContinuousClock()
    ) {
        self.init(unvalidatedBaseURL: baseURL, transport: transport, interceptors: interceptors, clock: clock)
    }

    init(
        unvalidatedBaseURL baseURL: URL?, transport: any HTTPTransport, interceptors: [any ClientInterceptor],
        clock: some Clock<Duration>
    ) {
        core = ServiceCore(
            baseURL: baseURL, transport: InterceptedTransport(transport, interceptors: interceptors), clock: ServiceClock(clock))
        core.handle = self
    }

    /// Another handle on an existing service's core (for resources whose service object was let go).
    init(core: ServiceCore) {
        self.core = core
    }

    deinit {
        // Nothing but this object asked the core to keep idle resources for reuse: let them go, unless
        // a new handle appeared meanwhile.
        let core = self.core
        Task { @MainActor in
            if core.handle == nil { core.retained.removeAll() }
        }
    }

    /// The time now on the service's clock.
    public var now: ServiceInstant { core.now }

    /// The resource at `path` relative to the base URL; a query in `path` is kept (and sorted), and dot
    /// segments are resolved (`/users/../admin` is `/admin`, as the server will see it).
    ///
    /// ```swift
    /// api.resource("/items/123/related") === api.resource("/items").child("123").child("related")  // true
    /// ```
    public func resource(_ path: String) -> Resource {
        guard let baseURL = core.baseURL else { return resource(absoluteURL: ResourceURL.invalid(path)) }
        if let problem = core.baseProblem { return resource(absoluteURL: ResourceURL.invalid(path, reason: problem)) }
        return resource(absoluteURL: ResourceURL.join(baseURL, path))
    }

    /// The resource at an absolute URL (which may be on another host). Configuration rules made with a
    /// pattern apply only to URLs under the base URL; reach others with `configure(whenURLMatches:)`.
    public func resource(absoluteURL url: URL) -> Resource {
        core.resource(absoluteURL: url)
    }

    /// The resource at an absolute URL given as text; text that is not a URL gives a resource that
    /// fails to load with ``ResourceError/Cause/invalidURL(_:)``.
    public func resource(absoluteURL text: String) -> Resource {
        resource(absoluteURL: URL(string: PercentEncoding.encodeURLText(text)) ?? ResourceURL.invalid(text))
    }

    /// How many resources the service keeps now (those it keeps for reuse, observed or not).
    public var resourceCount: Int { core.retained.count }

    /// How many entries the table of live resources has, dead ones not yet pruned included (tests).
    package var trackedResourceCount: Int { core.live.count }

    /// Stops keeping the resources that have no observers and no request in flight. Whoever holds one
    /// keeps a working object, and `resource(_:)` returns that same object while it lives.
    public func flushUnobservedResources() {
        core.releaseUnobserved(keeping: 0)
    }

    /// Every resource that exists (kept by the service, or held by anyone) whose URL is under the base
    /// URL and whose relative path matches `pattern`.
    public func resources(matching pattern: String) -> [Resource] {
        let pattern = URLPattern(pattern)
        return core.liveResources.filter { core.url($0.url, matches: pattern) }
    }

    /// Invalidates every resource whose path matches `pattern` (see ``Resource/invalidate()``).
    public func invalidateResources(matching pattern: String) {
        for resource in resources(matching: pattern) { resource.invalidate() }
    }

    /// Wipes resources and their cached copies: the sign-out call.
    ///
    /// ```swift
    /// api.wipeResources()                      // everything: every resource, every cache entry
    /// api.wipeResources(matching: "/me/**")    // only what is under /me
    /// ```
    /// Without a pattern it reaches every resource that exists (whoever holds it, on any host) and
    /// every entry of every cache a configuration has named, including entries written by earlier
    /// launches. With a pattern, the resources and cache entries under the base URL whose path
    /// matches. A cache write scheduled before the wipe never lands after it.
    public func wipeResources(matching pattern: String? = nil) {
        let urlPattern = pattern.map(URLPattern.init)
        let matches: (@Sendable (String) -> Bool)?
        if let urlPattern, let baseURL = core.baseURL, core.baseProblem == nil {
            matches = { key in
                guard let url = URL(string: key), let path = ResourceURL.relativePath(of: url, under: baseURL) else {
                    return false
                }
                return urlPattern.matches(path)
            }
        } else if urlPattern != nil {
            matches = nil  // no base URL: no path can match
        } else {
            matches = { _ in true }
        }
        // The cache removals are queued before any resource is wiped: an observer told of the wipe may
        // create a resource at once, and its cache read, queued after them, must find nothing.
        for cache in core.caches {
            guard let matches else { break }
            core.cacheOperations.enqueue { await cache.removeEntities(where: matches) }
        }
        for resource in core.liveResources where urlPattern.map({ core.url(resource.url, matches: $0) }) ?? true {
            resource.wipe()
        }
    }

    /// Returns when every cache write and removal scheduled so far has landed: before the app is
    /// suspended, say, or in a test.
    public func waitForCacheOperations() async {
        await core.cacheOperations.finished()
    }
}

/// A base URL a ``Service`` refuses: it says which text, and why.
public struct InvalidBaseURL: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text given.
    public var text: String
    /// Why it cannot be a base URL.
    public var reason: String

    public var description: String { "'\(text.prefix(200))' cannot be a base URL: \(reason)" }

    /// Why `url` cannot be a service's base URL, or `nil` if it can.
    static func problem(with url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased() else { return "it has no scheme (write https://…)" }
        guard scheme == "http" || scheme == "https" else { return "its scheme is \(scheme), not http or https" }
        guard let host = url.host, !host.isEmpty else { return "it has no host" }
        return ResourceURL.problem(withBase: url)
    }
}
