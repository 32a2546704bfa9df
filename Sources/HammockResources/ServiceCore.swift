import Foundation
import HTTPTypes
import HammockClient
import HammockWire

/// What a service's resources share: the base URL, the transport with its interceptors, the clock, the configuration rules, the
/// table of canonical resources and the caches. Resources hold it, not the ``Service`` object, so that
/// the service object and its resources form no reference cycle: dropping the last reference to the
/// ``Service`` releases the resources it kept for reuse, and resources that someone still holds keep
/// working (and stay canonical) with the core they hold.
@MainActor
final class ServiceCore {
    let baseURL: URL?
    /// Why the base URL cannot be used, if it cannot (a query, user info, a fragment).
    let baseProblem: String?
    let transport: InterceptedTransport
    let clock: ServiceClock
    var configurationRules: [Service.ConfigurationRule] = []
    var configurationGeneration = 0
    let progressEstimator = ProgressEstimator()
    /// Resources kept for reuse although nobody else holds them (bounded, least recently used first).
    var retained: [String: Resource] = [:]
    /// Every resource that exists, held weakly: whoever holds one gets the same one again.
    var live: [String: WeakResource] = [:]
    /// The size of `live` at which it is pruned next.
    var livePruneThreshold = 256
    var accessCounter = 0
    var maximumUnobservedResources = 500
    /// How long an idle, unobserved resource is kept after it was last asked for; `nil` for no limit.
    var unobservedLifetime: Duration?
    /// When the kept resources were last checked against ``unobservedLifetime``.
    var lastLifetimeSweep: ServiceInstant?
    /// Every persistent cache a configuration has named, for sign-out.
    var caches: [any EntityCache] = []
    /// Cache reads, writes and removals, one after another in the order asked.
    let cacheOperations = CacheOperations()
    /// The service object users hold, while they hold it.
    weak var handle: Service?

    /// The same transport without the interceptors: what requests outside the base URL go through.
    let plainTransport: InterceptedTransport
    /// Further URLs under which requests go through the interceptors (``Service/applyInterceptors(under:)``).
    var interceptedBases: [URL] = []

    init(baseURL: URL?, transport: InterceptedTransport, clock: ServiceClock) {
        self.baseURL = baseURL
        self.baseProblem = baseURL.flatMap(ResourceURL.problem(withBase:))
        self.transport = transport
        self.plainTransport = InterceptedTransport(transport.transport)
        self.clock = clock
    }

    /// The chain a request to `url` goes through: with the interceptors under the base URL (and the
    /// bases the app added), without them anywhere else, so that a bearer token or a signature meant
    /// for the API never reaches a tracker or a CDN a resource happens to name.
    func transport(for url: URL) -> InterceptedTransport {
        let bases = (baseProblem == nil ? [baseURL].compactMap { $0 } : []) + interceptedBases
        let isUnder = bases.contains { ResourceURL.relativePath(of: url, under: $0) != nil }
        return isUnder ? transport : plainTransport
    }

    var now: ServiceInstant { clock.now() }

    /// The wall-clock time now, moving with the service's clock.
    var date: Date { clock.date() }

    /// The service object: the one users hold, or a new one if they let go of it.
    var service: Service {
        if let handle { return handle }
        let service = Service(core: self)
        handle = service
        return service
    }

    /// The one resource for `url`: an existing one if anyone still holds it, else a new one.
    func resource(absoluteURL url: URL) -> Resource {
        let canonical = ResourceURL.canonical(url)
        let key = canonical.absoluteString
        accessCounter += 1
        let resource: Resource
        if let existing = retained[key] ?? live[key]?.resource {
            resource = existing
        } else {
            resource = Resource(core: self, url: canonical)
            live[key] = WeakResource(resource)
            if live.count > livePruneThreshold { pruneLive() }
            resource.readCacheIfConfigured()
        }
        resource.lastAccess = accessCounter
        resource.lastAccessTime = now
        retained[key] = resource
        if retained.count > maximumUnobservedResources { releaseUnobserved(keeping: maximumUnobservedResources) }
        releaseExpired()
        return resource
    }

    /// Stops keeping idle, unobserved resources not asked for within ``unobservedLifetime``. Checked at
    /// most four times per lifetime, so asking for resources stays O(1) amortized.
    func releaseExpired(force: Bool = false) {
        guard let lifetime = unobservedLifetime else { return }
        let now = self.now
        if !force, let last = lastLifetimeSweep, last.duration(to: now) < lifetime / 4 { return }
        lastLifetimeSweep = now
        for (key, resource) in retained
        where !resource.hasObservers && !resource.isRequesting && resource.lastAccessTime.duration(to: now) >= lifetime {
            retained.removeValue(forKey: key)
        }
    }

    /// Every resource that exists now, held by the service or by anyone else, in URL order.
    var liveResources: [Resource] {
        pruneLive()
        return live.values.compactMap(\.resource).sorted { $0.url.absoluteString < $1.url.absoluteString }
    }

    /// Drops the entries of resources nobody holds any more. Run when the table has doubled since the
    /// last pruning (and on every read of `liveResources`), so an app that visits thousands of URLs
    /// keeps a table the size of what is alive, at an amortized constant cost per new resource.
    func pruneLive() {
        live = live.filter { $0.value.resource != nil }
        livePruneThreshold = max(256, live.count * 2)
    }

    /// Stops keeping idle, unobserved resources beyond `limit` (least recently used first). Whoever
    /// still holds one keeps the same object, and `resource(_:)` hands it out again.
    func releaseUnobserved(keeping limit: Int) {
        let idle = retained.values.filter { !$0.hasObservers && !$0.isRequesting }
        guard idle.count > limit else { return }
        for resource in idle.sorted(by: { $0.lastAccess < $1.lastAccess }).prefix(idle.count - limit) {
            retained.removeValue(forKey: resource.url.absoluteString)
        }
    }

    /// The path of `url` relative to the base URL, or `nil` if it is not under it (another scheme,
    /// host or port, or a path outside the base path): patterns apply only to URLs under the base.
    func relativePath(of url: URL) -> String? {
        guard let baseURL, baseProblem == nil else { return nil }
        return ResourceURL.relativePath(of: url, under: baseURL)
    }

    /// Whether `url` is under the base URL and its relative path matches `pattern`.
    func url(_ url: URL, matches pattern: URLPattern) -> Bool {
        relativePath(of: url).map(pattern.matches) ?? false
    }

    /// Remembers `cache` for sign-out (once per object).
    func register(_ cache: any EntityCache) {
        if type(of: cache) is AnyClass {
            let identity = ObjectIdentifier(cache as AnyObject)
            guard !caches.contains(where: { type(of: $0) is AnyClass && ObjectIdentifier($0 as AnyObject) == identity })
            else { return }
        }
        caches.append(cache)
    }

    func computeConfiguration(for url: URL) -> ResourceConfiguration {
        var configuration = ResourceConfiguration()
        for rule in configurationRules where rule.matches(url) { rule.apply(&configuration) }
        if let cache = configuration.cache { register(cache) }
        return configuration
    }

    /// After a successful mutation of `resource`: invalidate it, its ancestors, its descendants (for
    /// DELETE) and the configured patterns, and reload the observed ones.
    func invalidateAfterMutation(of resource: Resource, method: HTTPRequest.Method, configuration: ResourceConfiguration) {
        invalidateAfterMutation(at: resource.url, method: method, configuration: configuration)
    }

    /// The same for a mutation of `url` (a write sent through a `RestClient` the service observes), and
    /// every resource at each of `paths` (whatever its query: `/people?page=2` for `/people`).
    func invalidateAfterMutation(
        at written: URL, method: HTTPRequest.Method, configuration: ResourceConfiguration, alsoAt paths: [URL] = []
    ) {
        let origin = Origin(written)
        let live = liveResources  // pruned and sorted once per mutation
        let sameOrigin = live.filter { Origin($0.url) == origin }
        func pathOf(_ other: URL) -> String { relativePath(of: other) ?? other.path }
        func pathOf(_ other: Resource) -> String { pathOf(other.url) }
        let path = pathOf(written)
        var touched: [Resource] = []
        for declared in paths {
            let declaredPath = pathOf(declared)
            touched += live.filter { Origin($0.url) == Origin(declared) && pathOf($0) == declaredPath }
        }
        if method == .delete {
            // What lived below a deleted resource is gone too.
            let prefix = path.hasSuffix("/") ? path : path + "/"
            touched += sameOrigin.filter { pathOf($0).hasPrefix(prefix) }
        }
        if configuration.invalidatesAncestorsAfterMutation {
            let segments = path.split(separator: "/")
            var ancestors: Set<String> = ["/"]
            for count in 0...segments.count {
                ancestors.insert("/" + segments.prefix(count).joined(separator: "/"))
            }
            touched += sameOrigin.filter { ancestors.contains(pathOf($0)) }
        }
        for pattern in configuration.alsoInvalidatesAfterMutation {
            let pattern = URLPattern(pattern)
            touched += live.filter { url($0.url, matches: pattern) }
        }
        var seen: Set<ObjectIdentifier> = []
        for each in touched where seen.insert(ObjectIdentifier(each)).inserted {
            each.invalidate()
            if each.configuration.reloadsObservedResourcesWhenInvalidated, each.hasObservers,
                each.latestData != nil || each.latestError != nil
            {
                each.loadIfNeeded()
            }
        }
    }
}

/// A resource held weakly, in the table of those that exist.
@MainActor
final class WeakResource {
    weak var resource: Resource?
    init(_ resource: Resource) { self.resource = resource }
}

/// Runs cache operations one after another, in the order they were asked for, off the main actor: a
/// write scheduled before a removal never lands after it (a sign-out stays a sign-out).
@MainActor
final class CacheOperations {
    private var last: Task<Void, Never>?

    /// Schedules `operation` after every operation scheduled before it.
    func enqueue(_ operation: @escaping @Sendable () async -> Void) {
        let previous = last
        last = Task {
            await previous?.value
            await operation()
        }
    }

    /// Returns when every operation scheduled so far has finished.
    func finished() async {
        while let current = last {
            await current.value
            if last == current { return }
        }
    }
}
