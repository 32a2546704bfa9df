public import HammockJSON
import HammockStore
import Synchronization

/// A change to a resource's records, as a live feed sends it (a WebSocket route's `feed`).
public struct ResourceChange: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        /// A record was created; ``ResourceChange/record`` is it as stored.
        case created
        /// A record was replaced or patched; ``ResourceChange/record`` is it as stored now.
        case updated
        /// A record was deleted; ``ResourceChange/record`` is it as it was.
        case deleted
        /// Records changed in a way with no single record to show: a delete elsewhere removed dependents
        /// or set foreign keys to `null`, or the data was reset, restored or loaded. Fetch the list again.
        case invalidated
    }

    public var kind: Kind
    /// The resource's name.
    public var resource: String
    /// The record, for ``Kind/created``, ``Kind/updated`` and ``Kind/deleted``.
    public var record: JSONObject?

    public init(_ kind: Kind, resource: String, record: JSONObject? = nil) {
        self.kind = kind
        self.resource = resource
        self.record = record
    }

    /// The change as a feed sends it: `{"type": "created", "resource": "people", "record": {...}}`.
    public var json: JSON {
        var object: JSONObject = ["type": .string(kind.rawValue), "resource": .string(resource)]
        if let record { object["record"] = .object(record) }
        return .object(object)
    }
}

/// Where a server's writes are announced to the live feeds listening (WebSocket routes with a `feed`).
/// Publishing costs one atomic load while no feed listens, so a bulk load of a million records pays
/// nothing for the feature.
final class ResourceChanges: Sendable {
    private struct State {
        var nextID = 0
        var feeds: [Int: ChangeFeed] = [:]
    }

    private let state = Mutex(State())
    private let listening = Atomic<Int>(0)

    /// A feed of the changes to `resources` (every resource when `nil`), until ``ChangeFeed/cancel()``.
    func subscribe(to resources: Set<String>?) -> ChangeFeed {
        state.withLock { state in
            state.nextID += 1
            let id = state.nextID
            let feed = ChangeFeed(resources: resources) { [weak self] in self?.unsubscribe(id) }
            state.feeds[id] = feed
            listening.store(state.feeds.count, ordering: .releasing)
            return feed
        }
    }

    private func unsubscribe(_ id: Int) {
        state.withLock { state in
            state.feeds[id] = nil
            listening.store(state.feeds.count, ordering: .releasing)
        }
    }

    /// Offers `changes` to every feed that listens to their resources. Never blocks.
    func publish(_ changes: @autoclosure () -> [ResourceChange]) {
        guard listening.load(ordering: .acquiring) > 0 else { return }
        let changes = changes()
        let feeds = state.withLock { Array($0.feeds.values) }
        for feed in feeds { feed.offer(changes) }
    }

    /// What a write did, as changes: its records, then an ``ResourceChange/Kind/invalidated`` for each
    /// other resource it touched (dependents removed, keys set to `null`).
    static func changes(of write: StoreWrite, result: WriteResult) -> [ResourceChange] {
        let kind: ResourceChange.Kind
        switch write.action {
        case .create: kind = .created
        case .update: kind = .updated
        case .delete: kind = .deleted
        }
        let name = write.schema.name
        var changes = result.records.map { ResourceChange(kind, resource: name, record: $0) }
        for other in result.changedResources where other != name { changes.append(ResourceChange(.invalidated, resource: other)) }
        return changes
    }
}

/// One listener's queue of changes not yet sent, bounded: a listener that falls 10,000 changes behind
/// is ended (its socket closed with 1008 and the reason) rather than allowed to hold the server's memory.
final class ChangeFeed: Sendable {
    /// How far behind a listener may fall.
    static let limit = 10_000

    enum Item: Sendable {
        case change(ResourceChange)
        case overflowed(reason: String)
    }

    private struct State {
        var queue: [ResourceChange] = []
        var head = 0
        var overflowed = false
        var cancelled = false
        var waiter: CheckedContinuation<Item?, Never>?
    }

    private let state = Mutex(State())
    let resources: Set<String>?
    private let onCancel: @Sendable () -> Void

    init(resources: Set<String>?, onCancel: @escaping @Sendable () -> Void) {
        self.resources = resources
        self.onCancel = onCancel
    }

    func offer(_ changes: [ResourceChange]) {
        let wanted = resources.map { names in changes.filter { names.contains($0.resource) } } ?? changes
        guard !wanted.isEmpty else { return }
        let delivery: (CheckedContinuation<Item?, Never>, Item)? = state.withLock { state in
            guard !state.overflowed, !state.cancelled else { return nil }
            if state.queue.count - state.head + wanted.count > Self.limit {
                state.overflowed = true
                state.queue.removeAll()
                state.head = 0
            } else {
                state.queue += wanted
            }
            guard let waiter = state.waiter.take(), let item = Self.take(&state) else { return nil }
            return (waiter, item)
        }
        if let (waiter, item) = delivery { waiter.resume(returning: item) }
    }

    private static func take(_ state: inout State) -> Item? {
        if state.overflowed { return .overflowed(reason: "the listener fell \(limit) changes behind") }
        guard state.head < state.queue.count else { return nil }
        let change = state.queue[state.head]
        state.head += 1
        if state.head == state.queue.count {
            state.queue.removeAll(keepingCapacity: true)
            state.head = 0
        }
        return .change(change)
    }

    /// The next change, waiting for one; `nil` once cancelled (or the calling task is).
    func next() async -> Item? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Item?, Never>) in
                let ready: Item?? = state.withLock { state in
                    if let item = Self.take(&state) { return item }
                    if state.cancelled || Task.isCancelled { return .some(nil) }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiter.take() }
            waiter?.resume(returning: nil)
        }
    }

    /// Stops listening: lets go of what waits.
    func cancel() {
        let waiter = state.withLock { state -> CheckedContinuation<Item?, Never>? in
            guard !state.cancelled else { return nil }
            state.cancelled = true
            state.queue.removeAll()
            state.head = 0
            return state.waiter.take()
        }
        waiter?.resume(returning: nil)
        onCancel()
    }
}
