public import Foundation
public import HammockClient
import HTTPTypes
import HammockWire

/// An API: a base URL, a transport, and one canonical ``Resource`` per URL.
///
/// ```swift
/// let api = Service(baseURL: "https://api.example.com/v1")
/// api.configure("/items/*") { $0.expirationTime = .seconds(60) }
/// let profile = api.resource("/profile")
/// profile.loadIfNeeded()
/// ```
/// Asking twice for the same URL, by whatever route (`resource`, `child`, `relative`, `withParam`),
/// returns the same object, so every screen that shows `/profile` shares its data, its error and its
/// requests.
///
/// ## Isolation
/// A service and its resources live on the main actor: their state reads are synchronous, observers
/// run there in a fixed order, and SwiftUI can watch resources directly (they are `@Observable`).
/// Network calls, response parsing and cache reads run off the main actor; only their results come
/// back to it. On Linux the main actor is served by the main dispatch queue, which an `async` `main`
/// (and the test runner) drains.
@MainActor
public final class Service {
    /// The URL `resource(_:)` paths are relative to; `nil` if the text given was not a URL.
    public let baseURL: URL?
    /// The client whose interceptors and transport carry every request.
    public let client: RestClient
    let clock: ServiceClock
    var resources: [String: Resource] = [:]
    var configurationRules: [ConfigurationRule] = []
    var configurationGeneration = 0
    var accessCounter = 0
    let progressEstimator = ProgressEstimator()

    /// How many unobserved, idle resources the service keeps before it releases the least recently
    /// used ones. Observed resources and resources with requests in flight are never released.
    public var maximumUnobservedResources = 500

    /// A service for `baseURL`, sending through `transport` and `interceptors`, on `clock`.
    ///
    /// Text that is not an absolute URL gives a service whose resources fail to load with a clear
    /// ``ResourceError/Cause/invalidURL(_:)``, rather than a crash.
    public convenience init(
        baseURL: String,
        transport: any HTTPTransport = URLSessionTransport(),
        interceptors: [any ClientInterceptor] = [],
        clock: some Clock<Duration> = ContinuousClock()
    ) {
        let url = URL(string: baseURL).flatMap { $0.scheme == nil || $0.host == nil ? nil : $0 }
        self.init(baseURL: url, transport: transport, interceptors: interceptors, clock: clock)
    }

    /// A service for `baseURL`, sending through `transport` and `interceptors`, on `clock`.
    public init(
        baseURL: URL?,
        transport: any HTTPTransport = URLSessionTransport(),
        interceptors: [any ClientInterceptor] = [],
        clock: some Clock<Duration> = ContinuousClock()
    ) {
        self.baseURL = baseURL
        self.client = RestClient(
            baseURL: baseURL ?? URL(fileURLWithPath: "/"), transport: transport, interceptors: interceptors)
        self.clock = ServiceClock(clock)
    }

    /// The time now on the service's clock.
    public var now: ServiceInstant { clock.now() }

    /// The resource at `path` relative to the base URL; a query in `path` is kept (and sorted).
    ///
    /// ```swift
    /// api.resource("/items/123/related") === api.resource("/items").child("123").child("related")  // true
    /// ```
    public func resource(_ path: String) -> Resource {
        guard let baseURL else { return resource(absoluteURL: ResourceURL.invalid(path)) }
        return resource(absoluteURL: ResourceURL.join(baseURL, path))
    }

    /// The resource at an absolute URL (which may be on another host).
    public func resource(absoluteURL url: URL) -> Resource {
        let canonical = ResourceURL.canonical(url)
        let key = canonical.absoluteString
        accessCounter += 1
        if let existing = resources[key] {
            existing.lastAccess = accessCounter
            return existing
        }
        let resource = Resource(service: self, url: canonical)
        resource.lastAccess = accessCounter
        resources[key] = resource
        if resources.count > maximumUnobservedResources { releaseUnobservedResources(keeping: maximumUnobservedResources) }
        resource.readCacheIfConfigured()
        return resource
    }

    /// The resource at an absolute URL given as text; text that is not a URL gives a resource that
    /// fails to load with ``ResourceError/Cause/invalidURL(_:)``.
    public func resource(absoluteURL text: String) -> Resource {
        resource(absoluteURL: URL(string: text) ?? ResourceURL.invalid(text))
    }

    /// How many resources the service holds now.
    public var resourceCount: Int { resources.count }

    /// Releases every resource with no observers and no request in flight. Holders of such a resource
    /// keep a working object, but `resource(_:)` makes a new one next time.
    public func flushUnobservedResources() {
        releaseUnobservedResources(keeping: 0)
    }

    /// Releases the least recently used idle, unobserved resources until at most `limit` remain.
    func releaseUnobservedResources(keeping limit: Int) {
        let idle = resources.values.filter { !$0.hasObservers && !$0.isRequesting }
        guard idle.count > limit else { return }
        for resource in idle.sorted(by: { $0.lastAccess < $1.lastAccess }).prefix(idle.count - limit) {
            resources.removeValue(forKey: resource.url.absoluteString)
        }
    }

    /// Every resource the service holds whose path matches `pattern`.
    public func resources(matching pattern: String) -> [Resource] {
        let pattern = URLPattern(pattern)
        return resources.values.filter { pattern.matches(ResourceURL.relativePath(of: $0.url, base: baseURL)) }
            .sorted { $0.url.absoluteString < $1.url.absoluteString }
    }

    /// Invalidates every resource whose path matches `pattern` (see ``Resource/invalidate()``).
    public func invalidateResources(matching pattern: String) {
        for resource in resources(matching: pattern) { resource.invalidate() }
    }

    /// Wipes every resource whose path matches `pattern` (see ``Resource/wipe()``), on sign-out say.
    public func wipeResources(matching pattern: String = "/**") {
        for resource in resources(matching: pattern) { resource.wipe() }
    }

    /// After a successful mutation of `resource`: invalidate it, its ancestors, its descendants (for
    /// DELETE) and the configured patterns, and reload the observed ones.
    func invalidateAfterMutation(of resource: Resource, method: HTTPRequest.Method, configuration: ResourceConfiguration) {
        var touched: [Resource] = []
        let path = ResourceURL.relativePath(of: resource.url, base: baseURL)
        let sameServer = resources.values.filter { $0.url.host == resource.url.host && $0.url.port == resource.url.port }
        if method == .delete {
            // What lived below a deleted resource is gone too.
            let prefix = path.hasSuffix("/") ? path : path + "/"
            touched += sameServer.filter { ResourceURL.relativePath(of: $0.url, base: baseURL).hasPrefix(prefix) }
        }
        if configuration.invalidatesAncestorsAfterMutation {
            let segments = path.split(separator: "/")
            var ancestors: Set<String> = ["/"]
            for count in 0...segments.count {
                ancestors.insert("/" + segments.prefix(count).joined(separator: "/"))
            }
            touched += sameServer.filter { ancestors.contains(ResourceURL.relativePath(of: $0.url, base: baseURL)) }
        }
        for pattern in configuration.alsoInvalidatesAfterMutation { touched += resources(matching: pattern) }
        var seen: Set<ObjectIdentifier> = []
        for each in touched.sorted(by: { $0.url.absoluteString < $1.url.absoluteString })
        where seen.insert(ObjectIdentifier(each)).inserted {
            each.invalidate()
            if each.configuration.reloadsObservedResourcesWhenInvalidated, each.hasObservers,
                each.latestData != nil || each.latestError != nil
            {
                each.loadIfNeeded()
            }
        }
    }
}
