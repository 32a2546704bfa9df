public import Foundation
import HTTPTypes
import HammockWire
public import Observation

/// One REST resource, identified by its URL: its latest data, its latest error, and whether a request
/// for it is in flight. Get one from a ``Service``; there is only ever one per URL.
///
/// ```swift
/// let profile = api.resource("/profile")
/// profile.addObserver(owner: self) { resource, event in
///     spinner.isHidden = !resource.isLoading
///     render(resource.latestData.typedContent(ifNone: User.empty))
///     errorLabel.text = resource.latestError?.userMessage
/// }
/// profile.loadIfNeeded()          // call it as often as you like: it never sends a redundant request
/// ```
/// A resource can have data, a more recent error, and a request in flight, all at once: it reports
/// the state of affairs and leaves the precedence to your UI. It is `@Observable`, so a SwiftUI view
/// that reads `latestData` or `isLoading` updates without observers.
@MainActor
@Observable
public final class Resource {
    /// What the service's resources share (the service object holds it too; see ``Service``'s lifetime).
    @ObservationIgnored let core: ServiceCore
    /// The canonical URL (dot segments resolved, query items sorted by name).
    @ObservationIgnored public let url: URL

    /// The service this resource belongs to.
    public var service: Service { core.service }

    /// The latest data, if any: from the network, the cache, or a local override. Errors never clear it.
    public internal(set) var latestData: Entity?
    /// The error of the latest load, if it failed after the latest data arrived; a success clears it.
    public internal(set) var latestError: ResourceError?
    /// Load requests in flight (at most one per distinct set of request headers).
    public internal(set) var loadRequests: [ResourceRequest] = []
    /// Every request in flight: loads and mutations.
    public internal(set) var allRequests: [ResourceRequest] = []
    /// Whether the data was marked stale by ``invalidate()`` or came from the persistent cache.
    public internal(set) var isInvalidated = false

    @ObservationIgnored var observers: [ObserverEntry] = []
    @ObservationIgnored var nextObserverID = 0
    @ObservationIgnored var pollingTask: Task<Void, Never>?
    @ObservationIgnored var lastAccess = 0
    /// When the service last handed this resource out, on its clock.
    @ObservationIgnored var lastAccessTime = ServiceInstant(sinceStart: .zero)
    @ObservationIgnored var cachedConfiguration: (generation: Int, configuration: ResourceConfiguration)?
    /// Which answer may become the data: loads, invalidations, overrides, cache reads and wipes.
    @ObservationIgnored var ledger = LoadLedger()
    /// The latest entity from the server (or the cache), which a local override does not replace: a
    /// 304 confirms this one, never an override the server may have rejected.
    @ObservationIgnored var serverEntity: Entity?
    /// How long the latest data stays fresh by the server's `Cache-Control` (`max-age`, `no-cache`),
    /// if it said; the configured expiration time otherwise.
    @ObservationIgnored var dataLifetime: Duration?
    /// The interval polling runs at now, if it runs.
    @ObservationIgnored var pollingInterval: Duration?
    /// Counts changes of the data's content (not a 304's new timestamp): a typed view's decoded value
    /// is good while this has not moved.
    @ObservationIgnored @usableFromInline var dataVersion = 0
    /// The data decoded by typed views: a `DecodedValue<Value>` under `ObjectIdentifier(Value.self)`.
    @ObservationIgnored @usableFromInline var decoded: [ObjectIdentifier: AnyObject] = [:]

    init(core: ServiceCore, url: URL) {
        self.core = core
        self.url = url
    }

    /// Whether a load is in flight.
    public var isLoading: Bool { !loadRequests.isEmpty }

    /// Whether any request (load or mutation) is in flight.
    public var isRequesting: Bool { !allRequests.isEmpty }

    /// The time of the latest data or error, whichever is later.
    public var timestamp: ServiceInstant? {
        switch (latestData?.timestamp, latestError?.timestamp) {
        case (let data?, let error?): max(data, error)
        case (let data?, nil): data
        case (nil, let error?): error
        case (nil, nil): nil
        }
    }

    /// The configuration the service's rules give this resource now.
    public var configuration: ResourceConfiguration {
        let generation = core.configurationGeneration
        if let cachedConfiguration, cachedConfiguration.generation == generation {
            return cachedConfiguration.configuration
        }
        let configuration = core.computeConfiguration(for: url)
        cachedConfiguration = (generation, configuration)
        return configuration
    }

    /// The resource at `path` below this one: `/items` → `child("123")` → `/items/123`. Slashes in
    /// `path` separate segments; other characters a path cannot hold (`%` included) are percent-encoded.
    /// A `.` or `..` segment gives a resource that fails to load, saying why: a child built from input
    /// (`users.child(username)`) stays below its parent.
    public func child(_ path: String) -> Resource {
        core.resource(absoluteURL: ResourceURL.child(of: url, path))
    }

    /// The resource a link `href` in this resource's content points to, resolved like a browser does:
    /// `"../other"`, `"/root"`, `"?page=2"`, or an absolute URL.
    /// Configuration rules with a pattern apply to it only if it is under the service's base URL.
    public func relative(_ href: String) -> Resource {
        guard let target = URL(string: PercentEncoding.encodeURLText(href), relativeTo: url)?.absoluteURL else {
            return core.resource(absoluteURL: ResourceURL.invalid(href))
        }
        return core.resource(absoluteURL: target)
    }

    /// The same resource with the query item `name` set to `value`, or removed for `nil`.
    /// Parameters are kept sorted, so the order of calls does not matter.
    public func withParam(_ name: String, _ value: String?) -> Resource {
        core.resource(absoluteURL: ResourceURL.settingParameter(name, to: value, in: url))
    }

    /// Whether `loadIfNeeded()` would send nothing now: nothing invalidated the resource, and the latest
    /// error is younger than the retry time or (with no error) the data younger than its freshness
    /// lifetime: the server's `Cache-Control: max-age` (or zero for `no-cache` and `no-store`) when it
    /// sent one, the configured expiration time otherwise.
    public var isUpToDate: Bool {
        // Registers observation of what it reads, then answers from the untracked fast path.
        _ = isInvalidated
        _ = latestError?.timestamp
        _ = latestData?.timestamp
        return isUpToDateUntracked
    }

    /// `isUpToDate` without observation tracking and without copying entities or configuration:
    /// `loadIfNeeded()` asks it on every call.
    var isUpToDateUntracked: Bool {
        if _isInvalidated { return false }
        let windows = freshnessWindows
        if let errorTime = _latestError?.timestamp {
            return errorTime.duration(to: core.now) < windows.retry
        }
        if let dataTime = _latestData?.timestamp {
            return dataTime.duration(to: core.now) < (dataLifetime ?? windows.expiration)
        }
        return false
    }

    /// The expiration and retry times of the current configuration.
    var freshnessWindows: (expiration: Duration, retry: Duration) {
        if let cachedConfiguration, cachedConfiguration.generation == core.configurationGeneration {
            return (cachedConfiguration.configuration.expirationTime, cachedConfiguration.configuration.retryTime)
        }
        let configuration = self.configuration
        return (configuration.expirationTime, configuration.retryTime)
    }

    /// The data, read without observation tracking.
    var latestDataUntracked: Entity? { _latestData }

    /// The first load in flight, read without observation tracking.
    var loadInFlight: ResourceRequest? { _loadRequests.first }
}

extension Resource: CustomStringConvertible {
    public nonisolated var description: String { "Resource(\(url.absoluteString))" }
}
