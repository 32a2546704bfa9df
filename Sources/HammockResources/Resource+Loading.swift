public import Foundation
public import HTTPTypes
import HammockClient
public import HammockJSON

extension Resource {
    /// Loads the resource now, unless an identical load that started after the latest invalidation is
    /// already in flight, in which case that one is returned. The stored `ETag` goes out as
    /// `If-None-Match` and the stored `Last-Modified` as `If-Modified-Since`; a 304 keeps the data and
    /// refreshes its timestamp.
    ///
    /// ```swift
    /// refreshControl.onPull { profile.load() }
    /// ```
    @discardableResult
    public func load() -> ResourceRequest {
        let configuration = self.configuration
        var fields = configuration.headers
        // The validators of what the server last sent: never of a local override.
        if let validated = serverEntity ?? latestData {
            if let etag = validated.etag, fields[.ifNoneMatch] == nil { fields[.ifNoneMatch] = etag }
            if let lastModified = validated.lastModified, fields[.ifModifiedSince] == nil {
                fields[.ifModifiedSince] = lastModified
            }
        }
        if let existing = loadRequests.first(where: { $0.headerFields == fields && $0.ticket.map(ledger.isCurrent) == true }) {
            return existing
        }
        let plan = RequestPlan(
            method: .get, url: url, headerFields: fields, body: nil, pipeline: configuration.pipeline,
            retry: configuration.retry)
        return start(plan, isLoad: true, configuration: configuration)
    }

    /// Loads the resource if it needs it, and never sends a redundant request:
    /// - a load in flight is returned as it is, unless the resource was invalidated after it started
    ///   (a mutation succeeded meanwhile): its answer may predate the change, so a new load starts;
    /// - nothing is sent (`nil`) while the data is fresh, or the latest error younger than the retry
    ///   time, unless the resource was invalidated;
    /// - otherwise it loads.
    ///
    /// ```swift
    /// override func viewWillAppear(_ animated: Bool) { profile.loadIfNeeded() }
    /// ```
    @discardableResult
    public func loadIfNeeded() -> ResourceRequest? {
        if let inFlight = loadInFlight, inFlight.ticket.map(ledger.isCurrent) == true { return inFlight }
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
    /// The response goes through the pipeline's raw, decoding and parsing stages (so a JSON answer is
    /// `JSON`), never through the model stage, which describes the resource's representation rather
    /// than what a mutation answers. HEAD, 204 and 205 responses are left as bytes.
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
                method: method, url: url, headerFields: headers, isLoad: false, clock: core.clock, expectedDuration: 0)
            failed.complete(
                with: .failure(
                    ResourceError(
                        userMessage: "The request body could not be encoded: \(error)", cause: .pipeline(error),
                        timestamp: core.now)))
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
        let plan = RequestPlan(
            method: method, url: url, headerFields: fields, body: data, pipeline: configuration.pipeline.through(.parsing),
            retry: nil)
        return start(plan, isLoad: false, configuration: configuration)
    }

    /// Starts a request: tracks it, tells observers about loads, and records the outcome when it comes.
    private func start(_ plan: RequestPlan, isLoad: Bool, configuration: ResourceConfiguration) -> ResourceRequest {
        let expectedBytes = (plan.body?.count ?? 0) + (latestData?.bytes.count ?? 0)
        let tracker = TransferTracker(clock: core.clock)
        var plan = plan
        plan.tracker = tracker
        let request = ResourceRequest(
            method: plan.method, url: url, headerFields: plan.headerFields, isLoad: isLoad, clock: core.clock,
            expectedDuration: core.progressEstimator.expectedDuration(bytes: expectedBytes), tracker: tracker)
        if isLoad { request.ticket = ledger.startLoad() }
        request.cancellationHandler = { [weak self, weak request] in
            guard let self, let request else { return }
            self.finish(request, with: .failure(.cancelled(at: self.core.now)))
        }
        if isLoad { loadRequests.append(request) }
        allRequests.append(request)
        if isLoad { notifyObservers(.requested) }
        let transport = core.transport(for: plan.url)
        let clock = core.clock
        request.task = Task {
            let outcome = await plan.execute(transport: transport, clock: clock)
            self.finish(request, with: outcome, configuration: configuration)
        }
        return request
    }

    /// Records what a request came back with. A request that already completed (cancelled) is ignored.
    func finish(_ request: ResourceRequest, with outcome: NetworkOutcome, configuration: ResourceConfiguration? = nil) {
        guard !request.isCompleted else { return }
        loadRequests.removeAll { $0 === request }
        allRequests.removeAll { $0 === request }
        let now = core.now
        let duration = request.startedAt.duration(to: now)
        let configuration = configuration ?? self.configuration
        switch outcome {
        case .entity(var entity, let sent):
            entity.timestamp = now
            core.progressEstimator.record(duration: duration, bytes: entity.bytes.count)
            if request.isLoad {
                recordLoad(entity, from: request, sent: sent, event: .newData(.network), configuration: configuration)
            }
            request.complete(with: .success(entity))
            if !request.isLoad, request.method != .get, request.method != .head {
                core.invalidateAfterMutation(of: self, method: request.method, configuration: configuration)
            }
        case .notModified(let fields, let sent):
            core.progressEstimator.record(duration: duration, bytes: 0)
            // A 304 confirms what the server last sent, not a local override it may have refused.
            guard request.isLoad, var data = serverEntity ?? latestData else {
                let error = ResourceError(
                    userMessage: "The server answered 304 Not Modified, but there is no data to keep.",
                    status: .notModified, cause: .notModifiedWithoutData, timestamp: now)
                record(error, for: request)
                return
            }
            data.timestamp = now
            // A 304 carries the current header fields of the representation (RFC 9111 §4.3.4): they replace
            // the stored ones, except those describing the body it does not carry.
            // Every line of a name the 304 carries replaces every stored line of it (§3.2): `Cache-Control`
            // sent on two lines keeps both.
            for name in Set(fields.map(\.name)) where !Self.bodyFields.contains(name) {
                data.headerFields[values: name] = fields[values: name]
            }
            recordLoad(data, from: request, sent: sent, event: .notModified, configuration: configuration)
            request.complete(with: .success(data))
        case .failure(var error):
            error.timestamp = now
            record(error, for: request)
            if !request.isLoad, request.method != .get, request.method != .head, error.mayHaveChangedServer {
                // The server may have done it: lists that would show it must not stay "fresh" without it.
                core.invalidateAfterMutation(of: self, method: request.method, configuration: configuration)
            }
        }
    }

    /// Header fields of a 304 that describe a body and so never replace the stored ones.
    static let bodyFields: Set<HTTPField.Name> = [.contentLength, .contentType, .contentEncoding, .transferEncoding]

    /// Records a load's data, unless the ledger says newer data is already there (a later load, an
    /// override, a wipe); saves it to the cache first, so that an observer that wipes on `.newData`
    /// wipes it too. A load that started before the latest invalidation leaves the resource
    /// invalidated, and an observed one reloads.
    private func recordLoad(
        _ entity: Entity, from request: ResourceRequest, sent: HTTPFields, event: ResourceEvent,
        configuration: ResourceConfiguration
    ) {
        guard let ticket = request.ticket,
            case .record(let staysInvalidated, let version) = ledger.loadAnswered(ticket)
        else { return }
        writeToCache(entity, sent: sent, configuration: configuration)
        serverEntity = entity
        // Structural sharing: a 200 whose body is the one shown changes nothing an observer renders, so
        // it is told as a 304 is (new timestamp and header fields, the same content, no new decoding).
        var event = event
        if event == .newData(.network), let shown = latestData, shown.bytes == entity.bytes,
            shown.contentType == entity.contentType
        {
            event = .notModified
        }
        show(entity, event: event)
        // Decided before observers heard of the data; one that wipes, overrides or invalidates in its
        // callback starts a new story, not a reload loop.
        if staysInvalidated, ledger.isUnchanged(since: version) {
            isInvalidated = true
            if configuration.reloadsObservedResourcesWhenInvalidated, hasObservers { loadIfNeeded() }
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
    /// `.newData(.localOverride)`): an optimistic update. Loads already in flight started before it, so
    /// their answers (a 304 included) no longer replace it; a load started afterwards brings the
    /// server's word. The validators stay those of what the server last sent.
    ///
    /// ```swift
    /// let optimistic = profile.overrideLocalContent(with: renamed)
    /// profile.request(.put, encoding: renamed).onFailure { _ in optimistic.rollBack() }
    /// ```
    @discardableResult
    public func overrideLocalData(with entity: Entity) -> LocalOverride {
        let previous = LocalOverride.Snapshot(data: latestData, lifetime: dataLifetime, isInvalidated: isInvalidated)
        var entity = entity
        entity.timestamp = core.now
        let version = ledger.override()
        show(entity, event: .newData(.localOverride))
        return LocalOverride(resource: self, version: version, previous: previous)
    }

    /// Puts back the data an override replaced, if nothing replaced the override since.
    func restore(_ snapshot: LocalOverride.Snapshot, ifStill version: Int) -> Bool {
        guard ledger.isUnchanged(since: version) else { return false }
        _ = ledger.restore()
        latestData = snapshot.data
        dataVersion += 1
        dataLifetime = snapshot.lifetime
        latestError = nil
        isInvalidated = snapshot.isInvalidated
        notifyObservers(.newData(.localOverride))
        return true
    }

    /// Makes `entity` the current data (fresh, no error), and tells observers `event`. The ledger has
    /// already counted the change.
    func show(_ entity: Entity, event: ResourceEvent) {
        latestData = entity
        if event != .notModified { dataVersion += 1 }
        // What is left of its freshness now, as it arrives (RFC 9111 §4.2: less the age it already had).
        dataLifetime = entity.remainingFreshness(receivedAt: core.date)
        latestError = nil
        isInvalidated = false
        notifyObservers(event)
    }

    /// Replaces the data's content, keeping its content type and headers (JSON when there was no data).
    /// The entity's bytes become the content's when it is `JSON` or a `String`, and empty otherwise,
    /// so `text` never shows the old body.
    ///
    /// ```swift
    /// profile.overrideLocalContent(with: updatedUser)       // the UI shows it at once
    /// ```
    @discardableResult
    public func overrideLocalContent(with content: any Sendable) -> LocalOverride {
        var entity = latestData ?? Entity(content: content, contentType: "application/json")
        entity.content = content
        if let json = content as? JSON {
            entity.bytes = json.serialized()
        } else if let text = content as? String {
            entity.bytes = Array(text.utf8)
        } else {
            entity.bytes = []
        }
        return overrideLocalData(with: entity)
    }

    /// Marks the data stale: the next `loadIfNeeded()` loads, whatever the freshness, and a load already
    /// in flight no longer counts (its answer may predate whatever made the data stale). The data stays
    /// until new data replaces it.
    public func invalidate() {
        ledger.invalidate()
        isInvalidated = true
    }

    /// Forgets the data and the error, cancels loads in flight, and removes the cached copy (after any
    /// cache write scheduled before). Observers get `.newData(.wipe)`.
    public func wipe() {
        for request in loadRequests { request.cancel() }
        ledger.wipe()
        latestData = nil
        dataVersion += 1
        serverEntity = nil
        dataLifetime = nil
        latestError = nil
        isInvalidated = false
        removeFromCache()
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
        let clock = core.clock
        Task { [weak self] in
            try? await clock.sleep(delay)
            self?.cancelLoadIfUnobserved()
        }
    }
}
