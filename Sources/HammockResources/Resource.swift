public import Foundation
import HTTPTypes
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
    /// The service that made this resource.
    @ObservationIgnored public let service: Service
    /// The canonical URL (query items sorted by name).
    @ObservationIgnored public let url: URL

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
    @ObservationIgnored var cachedConfiguration: (generation: Int, configuration: ResourceConfiguration)?
    /// Bumped whenever data arrives from anywhere but the cache, so a late cache read never wins.
    @ObservationIgnored var dataGeneration = 0

    init(service: Service, url: URL) {
        self.service = service
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
        let generation = service.configurationGeneration
        if let cachedConfiguration, cachedConfiguration.generation == generation {
            return cachedConfiguration.configuration
        }
        let configuration = service.computeConfiguration(for: url)
        cachedConfiguration = (generation, configuration)
        return configuration
    }

    /// The resource at `path` below this one: `/items` → `child("123")` → `/items/123`. Slashes in
    /// `path` separate segments; other characters a path cannot hold are percent-encoded.
    public func child(_ path: String) -> Resource {
        service.resource(absoluteURL: ResourceURL.child(of: url, path))
    }

    /// The resource a link `href` in this resource's content points to, resolved like a browser does:
    /// `"../other"`, `"/root"`, `"?page=2"`, or an absolute URL.
    public func relative(_ href: String) -> Resource {
        guard let target = URL(string: href, relativeTo: url)?.absoluteURL else {
            return service.resource(absoluteURL: ResourceURL.invalid(href))
        }
        return service.resource(absoluteURL: target)
    }

    /// The same resource with the query item `name` set to `value`, or removed for `nil`.
    /// Parameters are kept sorted, so the order of calls does not matter.
    public func withParam(_ name: String, _ value: String?) -> Resource {
        service.resource(absoluteURL: ResourceURL.settingParameter(name, to: value, in: url))
    }

    /// Whether `loadIfNeeded()` would send nothing now: nothing invalidated the resource, and the latest
    /// error is younger than the retry time or (with no error) the data younger than the expiration time.
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
            return errorTime.duration(to: service.now) < windows.retry
        }
        if let dataTime = _latestData?.timestamp {
            return dataTime.duration(to: service.now) < windows.expiration
        }
        return false
    }

    /// The expiration and retry times of the current configuration.
    var freshnessWindows: (expiration: Duration, retry: Duration) {
        if let cachedConfiguration, cachedConfiguration.generation == service.configurationGeneration {
            return (cachedConfiguration.configuration.expirationTime, cachedConfiguration.configuration.retryTime)
        }
        let configuration = self.configuration
        return (configuration.expirationTime, configuration.retryTime)
    }

    /// The first load in flight, read without observation tracking.
    var loadInFlight: ResourceRequest? { _loadRequests.first }
}

extension Resource: CustomStringConvertible {
    public nonisolated var description: String { "Resource(\(url.absoluteString))" }
}
