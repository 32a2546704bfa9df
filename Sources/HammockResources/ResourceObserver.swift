/// An object that follows a resource. Implement it on a view controller or a view model.
///
/// ```swift
/// final class ProfileScreen: ResourceObserver {
///     func resourceChanged(_ resource: Resource, event: ResourceEvent) {
///         nameLabel.text = resource.latestData?.jsonContent?["name"]?.stringValue
///     }
/// }
/// profile.addObserver(screen)          // held weakly: it goes away with the screen
/// ```
@MainActor
public protocol ResourceObserver: AnyObject {
    /// Called when the observer is added (`.observerAdded`) and after every change.
    func resourceChanged(_ resource: Resource, event: ResourceEvent)
    /// Called when the observer is removed, explicitly or because its owner went away.
    func stoppedObserving(_ resource: Resource)
}

extension ResourceObserver {
    public func stoppedObserving(_ resource: Resource) {}
}

/// An observation you can end early. Observers end on their own when their owner goes away; keeping
/// this is optional.
///
/// ```swift
/// let observation = profile.addObserver(owner: self) { resource, _ in render(resource) }
/// observation.cancel()
/// ```
@MainActor
public final class ResourceObservation {
    weak var resource: Resource?
    let id: Int

    init(resource: Resource, id: Int) {
        self.resource = resource
        self.id = id
    }

    /// Stops the observer; it is not called again.
    public func cancel() {
        resource?.removeObserver(id: id)
    }
}

/// One observer as a resource keeps it.
@MainActor
final class ObserverEntry {
    let id: Int
    /// Who keeps the observer alive, held weakly; `nil` with `hasOwner` false for streams, which end
    /// when their consumer stops.
    weak var owner: AnyObject?
    let hasOwner: Bool
    /// The observer object, for protocol observers (to avoid adding one twice).
    let identity: ObjectIdentifier?
    let deliver: (Resource, ResourceEvent) -> Void
    let stopped: (Resource) -> Void

    init(
        id: Int, owner: AnyObject?, identity: ObjectIdentifier?, deliver: @escaping (Resource, ResourceEvent) -> Void,
        stopped: @escaping (Resource) -> Void = { _ in }
    ) {
        self.id = id
        self.owner = owner
        self.hasOwner = owner != nil
        self.identity = identity
        self.deliver = deliver
        self.stopped = stopped
    }

    var isAlive: Bool { !hasOwner || owner != nil }
}
