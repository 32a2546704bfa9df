/// The undo of an optimistic update: ``Resource/overrideLocalData(with:)`` returns one, and a
/// mutation the server refuses rolls it back (TanStack Query's `onMutate` snapshot and `onError`).
///
/// ```swift
/// let optimistic = todos.overrideLocalContent(with: withNewItem)
/// todos.request(.post, json: newItem)
///     .onFailure { _ in optimistic.rollBack() }
/// ```
/// Rolling back puts back the data, freshness and invalidation the resource had before the override,
/// unless something replaced the override since (a load's answer, another override, a wipe): then the
/// newer data stays and `rollBack()` returns `false`.
@MainActor
public struct LocalOverride {
    struct Snapshot {
        var data: Entity?
        var lifetime: Duration?
        var isInvalidated: Bool
    }

    weak var resource: Resource?
    let version: Int
    let previous: Snapshot

    /// Puts back what the override replaced, if the override is still the data. Observers get
    /// `.newData(.localOverride)`. Returns whether it did.
    @discardableResult
    public func rollBack() -> Bool {
        resource?.restore(previous, ifStill: version) ?? false
    }
}
