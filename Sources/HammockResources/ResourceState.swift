public import Foundation
import Synchronization

/// A resource's state at one moment, as a value: safe to hand to any task.
///
/// ```swift
/// Task.detached {
///     for await state in await profile.states() {
///         await cache.remember(state.latestData)      // no hop back to the main actor needed
///     }
/// }
/// ```
public struct ResourceState: Sendable {
    /// The event that produced this state (`.observerAdded` for the first one).
    public var event: ResourceEvent
    /// The resource's URL.
    public var url: URL
    /// The latest data then.
    public var latestData: Entity?
    /// The latest error then.
    public var latestError: ResourceError?
    /// Whether a load was in flight.
    public var isLoading: Bool
    /// Whether any request was in flight.
    public var isRequesting: Bool
}

extension Resource {
    /// The resource's state after each event, as values, starting with the current state. Unlike
    /// ``events(bufferingPolicy:)``, each element carries the state as it was when the event happened, so a consumer
    /// on another task, or one that falls behind, still sees every step exactly.
    ///
    /// ```swift
    /// for await state in profile.states() {
    ///     print(state.event, state.isLoading, state.latestData?.jsonContent ?? "no data")
    /// }
    /// ```
    /// States wait for a slow consumer in a buffer of at most 32 by default, the oldest dropped first;
    /// a consumer that only needs the latest state (a view model, say) asks for `.bufferingNewest(1)`.
    /// A wipe empties the buffer before its own state goes in: states still unread when a user signs
    /// out never reach the consumer, and nothing keeps the previous user's data alive.
    public func states(
        bufferingPolicy: AsyncStream<ResourceState>.Continuation.BufferingPolicy = .bufferingNewest(32)
    ) -> AsyncStream<ResourceState> {
        let channel = StateChannel(policy: bufferingPolicy)
        let observation = addEntry(
            owner: nil, identity: nil,
            deliver: { resource, event in
                if case .newData(.wipe) = event { channel.clear() }
                channel.yield(resource.state(after: event))
            })
        let subscription = StateSubscription(resource: self, observerID: observation.id, channel: channel)
        return AsyncStream(
            unfolding: { await subscription.next() },
            onCancel: { channel.finish() })
    }

    /// The state now, labelled with `event`.
    public func state(after event: ResourceEvent) -> ResourceState {
        ResourceState(
            event: event, url: url, latestData: latestData, latestError: latestError, isLoading: isLoading,
            isRequesting: isRequesting)
    }
}

/// The states waiting for one `states()` consumer: a bounded queue that a wipe empties, and the
/// consumer's wait for the next one. Touched from the main actor (yield, clear) and from the consumer's
/// task (next), under one lock.
final class StateChannel: Sendable {
    private struct Storage {
        var buffer: [ResourceState] = []
        var head = 0
        var waiter: CheckedContinuation<ResourceState?, Never>?
        var isFinished = false

        var count: Int { buffer.count - head }

        mutating func popFirst() -> ResourceState? {
            guard head < buffer.count else { return nil }
            let state = buffer[head]
            head += 1
            if head > 64, head * 2 > buffer.count {  // compact now and then: the array never grows unbounded
                buffer.removeFirst(head)
                head = 0
            }
            return state
        }
    }

    private let storage = Mutex(Storage())
    /// The most states kept, and whether the newest (rather than the oldest) are kept past it.
    private let limit: Int
    private let keepsNewest: Bool

    init(policy: AsyncStream<ResourceState>.Continuation.BufferingPolicy) {
        switch policy {
        case .bufferingNewest(let count):
            (limit, keepsNewest) = (max(0, count), true)
        case .bufferingOldest(let count):
            (limit, keepsNewest) = (max(0, count), false)
        default:
            (limit, keepsNewest) = (Int.max, true)
        }
    }

    func yield(_ state: ResourceState) {
        let waiter = storage.withLock { storage -> CheckedContinuation<ResourceState?, Never>? in
            guard !storage.isFinished else { return nil }
            if let waiter = storage.waiter {
                storage.waiter = nil
                return waiter
            }
            if storage.count < limit {
                storage.buffer.append(state)
            } else if keepsNewest, limit > 0 {
                _ = storage.popFirst()
                storage.buffer.append(state)
            }
            return nil
        }
        waiter?.resume(returning: state)
    }

    /// Drops every state not yet read.
    func clear() {
        storage.withLock { storage in
            storage.buffer.removeAll()
            storage.head = 0
        }
    }

    /// Ends the sequence: the consumer's wait, if any, ends with `nil`, and nothing more is kept.
    func finish() {
        let waiter = storage.withLock { storage -> CheckedContinuation<ResourceState?, Never>? in
            storage.isFinished = true
            storage.buffer.removeAll()
            storage.head = 0
            defer { storage.waiter = nil }
            return storage.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// The next state, waiting for one if none is buffered; `nil` once finished.
    func next() async -> ResourceState? {
        await withCheckedContinuation { continuation in
            let ready = storage.withLock { storage -> ResourceState?? in
                if let state = storage.popFirst() { return .some(state) }
                if storage.isFinished { return .some(nil) }
                storage.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

/// Ties a `states()` sequence to its observer: when the sequence goes away (its consumer stopped),
/// the observer is removed.
final class StateSubscription: Sendable {
    private weak let resource: Resource?
    private let observerID: Int
    let channel: StateChannel

    init(resource: Resource, observerID: Int, channel: StateChannel) {
        self.resource = resource
        self.observerID = observerID
        self.channel = channel
    }

    func next() async -> ResourceState? { await channel.next() }

    deinit {
        channel.finish()
        let id = observerID
        Task { @MainActor [resource] in resource?.removeObserver(id: id) }
    }
}
