extension Resource {
    /// Adds a closure observer that lives as long as `owner` (held weakly). It is called at once with
    /// `.observerAdded`, then after every change, on the main actor.
    ///
    /// ```swift
    /// profile.addObserver(owner: self) { [weak self] resource, event in self?.render(resource) }
    /// ```
    /// Capture the owner weakly in the closure, or the closure keeps it alive.
    @discardableResult
    public func addObserver(
        owner: AnyObject, _ closure: @escaping @MainActor (Resource, ResourceEvent) -> Void
    ) -> ResourceObservation {
        addEntry(owner: owner, identity: nil, deliver: closure)
    }

    /// Adds an object observer, held weakly: it stops when the object goes away. Adding the same
    /// object twice keeps one observation.
    @discardableResult
    public func addObserver(_ observer: some ResourceObserver) -> ResourceObservation {
        let identity = ObjectIdentifier(observer)
        if let existing = observers.first(where: { $0.identity == identity && $0.isAlive }) {
            return ResourceObservation(resource: self, id: existing.id)
        }
        return addEntry(
            owner: observer, identity: identity,
            deliver: { [weak observer] resource, event in observer?.resourceChanged(resource, event: event) },
            stopped: { [weak observer] resource in observer?.stoppedObserving(resource) })
    }

    /// Adds an object observer that lives as long as `owner`: the resource keeps `observer` alive,
    /// and lets go of it when `owner` goes away.
    @discardableResult
    public func addObserver(_ observer: some ResourceObserver, owner: AnyObject) -> ResourceObservation {
        addEntry(
            owner: owner, identity: ObjectIdentifier(observer),
            deliver: { resource, event in observer.resourceChanged(resource, event: event) },
            stopped: { resource in observer.stoppedObserving(resource) })
    }

    /// The resource's events as an asynchronous sequence, starting with `.observerAdded` (read the
    /// resource for its current state). The stream counts as an observer until its consumer stops.
    ///
    /// ```swift
    /// for await event in profile.events() {
    ///     if case .newData = event { render(profile.latestData) }
    /// }
    /// ```
    /// By default events are buffered without limit, so none is lost to a slow consumer; pass
    /// `.bufferingNewest(1)` to keep only the latest.
    public func events(
        bufferingPolicy: AsyncStream<ResourceEvent>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<ResourceEvent> {
        stream(bufferingPolicy: bufferingPolicy) { _, event in event }
    }

    /// A stream fed by an observer that lives until the stream's consumer stops.
    func stream<Element: Sendable>(
        bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy = .unbounded,
        _ element: @escaping @MainActor (Resource, ResourceEvent) -> Element
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: bufferingPolicy)
        let observation = addEntry(
            owner: nil, identity: nil,
            deliver: { resource, event in
                continuation.yield(element(resource, event))
            })
        let id = observation.id
        continuation.onTermination = { [weak self] _ in
            Task { @MainActor in self?.removeObserver(id: id) }
        }
        return stream
    }

    /// Removes every observer `owner` owns.
    public func removeObservers(ownedBy owner: AnyObject) {
        let removed = observers.filter { $0.owner === owner }
        observers.removeAll { $0.owner === owner }
        for entry in removed { entry.stopped(self) }
        observersChanged()
    }

    /// How many observers are alive (owners gone are not counted).
    public var observerCount: Int {
        pruneObservers()
        return observers.count
    }

    /// Whether anything observes the resource.
    public var hasObservers: Bool { observerCount > 0 }

    func addEntry(
        owner: AnyObject?, identity: ObjectIdentifier?, deliver: @escaping @MainActor (Resource, ResourceEvent) -> Void,
        stopped: @escaping @MainActor (Resource) -> Void = { _ in }
    ) -> ResourceObservation {
        nextObserverID += 1
        let entry = ObserverEntry(id: nextObserverID, owner: owner, identity: identity, deliver: deliver, stopped: stopped)
        observers.append(entry)
        entry.deliver(self, .observerAdded)
        observersChanged()
        return ResourceObservation(resource: self, id: entry.id)
    }

    func removeObserver(id: Int) {
        guard let index = observers.firstIndex(where: { $0.id == id }) else { return }
        let entry = observers.remove(at: index)
        entry.stopped(self)
        observersChanged()
    }

    /// Calls every live observer with `event`, in the order they were added.
    func notifyObservers(_ event: ResourceEvent) {
        // One pass: deliver to the living, and prune afterwards only if someone's owner was gone.
        var sawDead = false
        for entry in observers {
            guard entry.isAlive else {
                sawDead = true
                continue
            }
            entry.deliver(self, event)
        }
        if sawDead { pruneObservers() }
    }

    /// Drops observers whose owners are gone.
    func pruneObservers() {
        guard observers.contains(where: { !$0.isAlive }) else { return }
        let dead = observers.filter { !$0.isAlive }
        observers.removeAll { !$0.isAlive }
        for entry in dead { entry.stopped(self) }
        observersChanged()
    }

    /// Starts or stops polling as observers come and go.
    func observersChanged() {
        updatePolling()
    }

    /// Polls at the configured interval while anything observes the resource: starts, stops or
    /// restarts the polling task when observers or the configuration change.
    func updatePolling() {
        // At least 100 ms: a zero or negative interval would reload in a loop on the main actor.
        let interval = observers.contains { $0.isAlive } ? configuration.pollingInterval.map { max($0, .milliseconds(100)) } : nil
        guard interval != pollingInterval || (interval != nil && pollingTask == nil) else { return }
        pollingTask?.cancel()
        pollingTask = nil
        pollingInterval = interval
        guard let interval else { return }
        let clock = core.clock
        pollingTask = Task { [weak self] in
            while !Task.isCancelled {
                do { try await clock.sleep(interval) } catch { return }
                guard let self, self.hasObservers, !Task.isCancelled else { return }
                self.load()
            }
        }
    }
}
