public import Foundation
import HammockClient
public import HammockJSON
public import HTTPTypes

extension Resource {
    /// Loads the resource now, unless an identical load is already in flight, in which case that one
    /// is returned. The stored `ETag` goes out as `If-None-Match` and the stored `Last-Modified` as
    /// `If-Modified-Since`; a 304 keeps the data and refreshes its timestamp.
    ///
    /// ```swift
    /// refreshControl.onPull { profile.load() }
    /// ```
    @discardableResult
    public func load() -> ResourceRequest {
        let configuration = self.configuration
        var fields = configuration.headers
        if let latestData {
            if let etag = latestData.etag, fields[.ifNoneMatch] == nil { fields[.ifNoneMatch] = etag }
            if let lastModified = latestData.lastModified, fields[.ifModifiedSince] == nil {
                fields[.ifModifiedSince] = lastModified
            }
        }
        if let existing = loadRequests.first(where: { $0.headerFields == fields }) { return existing }
        let plan = RequestPlan(
            method: .get, url: url, headerFields: fields, body: nil, pipeline: configuration.pipeline,
            retry: configuration.retry)
        return start(plan, isLoad: true, configuration: configuration)
    }

    /// Loads the resource if it needs it, and never sends a redundant request:
    /// - a load in flight is returned as it is;
    /// - nothing is sent (`nil`) while the data is younger than the expiration time, or the latest
    ///   error younger than the retry time, unless the resource was invalidated;
    /// - otherwise it loads.
    ///
    /// ```swift
    /// override func viewWillAppear(_ animated: Bool) { profile.loadIfNeeded() }
    /// ```
    @discardableResult
    public func loadIfNeeded() -> ResourceRequest? {
        if let inFlight = loadInFlight { return inFlight }
        if isUpToDateUntracked { return nil }
        return load()
    }

    /// Sends a request with a JSON body (a mutation, usually) to this resource. It does not change the
    /// resource's data; when it succeeds, the resources it touched are invalidated (see
    /// ``ResourceConfiguration/invalidatesAncestorsAfterMutation``) and observed ones reload.
    ///
    /// ```swift
    /// api.resource("/people").request(.post, json: ["name": "Ada"])
    ///     .onFailure { error in showAlert(error.userMessage) }
    /// ```
    @discardableResult
    public func request(_ method: HTTPRequest.Method, json: JSON, headers: HTTPFields = [:]) -> ResourceRequest {
        request(method, data: json.serialized(options: .sortedKeys), contentType: "application/json", headers: headers)
    }

    /// Sends a request with an `Encodable` body, encoded as JSON by `encoder` (sorted keys, ISO 8601 dates).
    /// An encoding failure completes the request with an error at once.
    @discardableResult
    public func request(
        _ method: HTTPRequest.Method, encoding value: some Encodable, encoder: JSONEncoder? = nil, headers: HTTPFields = [:]
    ) -> ResourceRequest {
        let encoder = encoder ?? RestClient.defaultEncoder()
        do {
            let data = try encoder.encode(value)
            return request(method, data: Array(data), contentType: "application/json", headers: headers)
        } catch {
            let failed = ResourceRequest(
                method: method, url: url, headerFields: headers, isLoad: false, clock: service.clock, expectedDuration: 0)
            failed.complete(with: .failure(ResourceError(
                userMessage: "The request body could not be encoded: \(error)", cause: .pipeline(error),
                timestamp: service.now)))
            return failed
        }
    }

    /// Sends a request with an optional raw body. `request(.get)` fetches without touching the
    /// resource's state; use ``load()`` to update it.
    @discardableResult
    public func request(
        _ method: HTTPRequest.Method, data: [UInt8]? = nil, contentType: String? = nil, headers: HTTPFields = [:]
    ) -> ResourceRequest {
        let configuration = self.configuration
        var fields = configuration.headers
        for field in headers { fields[field.name] = field.value }
        if let contentType, fields[.contentType] == nil { fields[.contentType] = contentType }
        let plan = RequestPlan(method: method, url: url, headerFields: fields, body: data, pipeline: configuration.pipeline, retry: nil)
        return start(plan, isLoad: false, configuration: configuration)
    }

    /// Starts a request: tracks it, tells observers about loads, and records the outcome when it comes.
    private func start(_ plan: RequestPlan, isLoad: Bool, configuration: ResourceConfiguration) -> ResourceRequest {
        let expectedBytes = (plan.body?.count ?? 0) + (latestData?.bytes.count ?? 0)
        let tracker = TransferTracker(clock: service.clock)
        var plan = plan
        plan.tracker = tracker
        let request = ResourceRequest(
            method: plan.method, url: url, headerFields: plan.headerFields, isLoad: isLoad, clock: service.clock,
            expectedDuration: service.progressEstimator.expectedDuration(bytes: expectedBytes), tracker: tracker)
        request.cancellationHandler = { [weak self, weak request] in
            guard let self, let request else { return }
            self.finish(request, with: .failure(.cancelled(at: self.service.now)))
        }
        if isLoad { loadRequests.append(request) }
        allRequests.append(request)
        if isLoad { notifyObservers(.requested) }
        let client = service.client
        let clock = service.clock
        request.task = Task {
            let outcome = await plan.execute(client: client, clock: clock)
            self.finish(request, with: outcome, configuration: configuration)
        }
        return request
    }

    /// Records what a request came back with. A request that already completed (cancelled) is ignored.
    func finish(_ request: ResourceRequest, with outcome: NetworkOutcome, configuration: ResourceConfiguration? = nil) {
        guard !request.isCompleted else { return }
        loadRequests.removeAll { $0 === request }
        allRequests.removeAll { $0 === request }
        let now = service.now
        let duration = request.startedAt.duration(to: now)
        switch outcome {
        case .entity(var entity):
            entity.timestamp = now
            service.progressEstimator.record(duration: duration, bytes: entity.bytes.count)
            if request.isLoad {
                record(entity, event: .newData(.network))
                writeToCache(entity, configuration: configuration ?? self.configuration)
            }
            request.complete(with: .success(entity))
            if !request.isLoad, request.method != .get, request.method != .head {
                service.invalidateAfterMutation(of: self, method: request.method, configuration: configuration ?? self.configuration)
            }
        case .notModified(let fields):
            service.progressEstimator.record(duration: duration, bytes: 0)
            guard request.isLoad, var data = latestData else {
                let error = ResourceError(
                    userMessage: "The server answered 304 Not Modified, but there is no data to keep.",
                    status: .notModified, cause: .notModifiedWithoutData, timestamp: now)
                record(error, for: request)
                return
            }
            data.timestamp = now
            // A 304 carries the validators (and caching headers) of the current representation.
            for name in [HTTPField.Name.eTag, .lastModified, .cacheControl, .expires] {
                if let value = fields[name] { data.headerFields[name] = value }
            }
            record(data, event: .notModified)
            request.complete(with: .success(data))
        case .failure(var error):
            error.timestamp = now
            record(error, for: request)
        }
    }

    private func record(_ error: ResourceError, for request: ResourceRequest) {
        if request.isLoad {
            if error.isCancellation {
                notifyObservers(.requestCancelled)
            } else {
                latestError = error
                notifyObservers(.error)
            }
        }
        request.complete(with: .failure(error))
    }

    /// Replaces the data with `entity`, as if it had come from the server (observers get
    /// `.newData(.localOverride)`). Use it to show the result of a mutation before reloading.
    public func overrideLocalData(with entity: Entity) {
        var entity = entity
        entity.timestamp = service.now
        record(entity, event: .newData(.localOverride))
    }

    /// Makes `entity` the current data (fresh, no error), and tells observers `event`.
    private func record(_ entity: Entity, event: ResourceEvent) {
        dataGeneration += 1
        latestData = entity
        latestError = nil
        isInvalidated = false
        notifyObservers(event)
    }

    /// Replaces the data's content, keeping its content type and headers (JSON when there was no data).
    ///
    /// ```swift
    /// profile.overrideLocalContent(with: updatedUser)       // the UI shows it at once
    /// ```
    public func overrideLocalContent(with content: any Sendable) {
        var entity = latestData ?? Entity(content: content, contentType: "application/json")
        entity.content = content
        overrideLocalData(with: entity)
    }

    /// Marks the data stale: the next `loadIfNeeded()` loads, whatever the expiration or retry time.
    /// The data stays until new data replaces it.
    public func invalidate() {
        isInvalidated = true
    }

    /// Forgets the data and the error, cancels loads in flight, and removes the cached copy.
    /// Observers get `.newData(.wipe)`.
    public func wipe() {
        for request in loadRequests { request.cancel() }
        dataGeneration += 1
        latestData = nil
        latestError = nil
        isInvalidated = false
        if let cache = configuration.cache {
            let key = url.absoluteString
            Task { await cache.removeEntity(forKey: key) }
        }
        notifyObservers(.newData(.wipe))
    }

    /// Cancels the loads in flight if nobody observes this resource (a screen that went away started
    /// them). Observed resources keep loading.
    public func cancelLoadIfUnobserved() {
        guard !hasObservers else { return }
        for request in loadRequests { request.cancel() }
    }

    /// Waits `delay` on the service's clock, then cancels the loads in flight if nobody observes the
    /// resource by then: a screen that is about to be replaced by one that observes it does not lose it.
    public func cancelLoadIfUnobserved(afterDelay delay: Duration) {
        let clock = service.clock
        Task { [weak self] in
            try? await clock.sleep(delay)
            self?.cancelLoadIfUnobserved()
        }
    }
}
