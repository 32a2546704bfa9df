import Synchronization

/// Where identified models announce their updates: as an `AsyncStream` per model type, one for all
/// types, and as synchronous observers (handy in tests).
///
/// ```swift
/// let updates = ModelUpdates()                     // or ModelUpdates.shared
/// let token = updates.observe { update in print(update.id) }
/// Task { for await update in updates.updates(of: Product.self, identifiedBy: String.self) { ... } }
/// let newer = try product.updated(with: json, recipe: productJSON, updates: updates)
/// token.cancel()
/// ```
/// Updates are delivered in the order they were published. Streams buffer without limit, so a slow
/// consumer sees every update.
public final class ModelUpdates: Sendable {
    /// The hub ``IdentifiedModel`` publishes to by default.
    public static let shared = ModelUpdates()

    private struct State {
        var nextToken = 0
        var observers: [Int: @Sendable (AnyModelUpdate) -> Void] = [:]
        var continuations: [Int: (filter: ObjectIdentifier?, continuation: AsyncStream<AnyModelUpdate>.Continuation)] = [:]
    }

    private let state = Mutex(State())

    /// Creates a hub of your own.
    public init() {}

    /// Calls `handler` synchronously, on the publishing thread, for every update, until the token is cancelled.
    public func observe(_ handler: @escaping @Sendable (AnyModelUpdate) -> Void) -> ObservationToken {
        let token = state.withLock { state in
            state.nextToken += 1
            state.observers[state.nextToken] = handler
            return state.nextToken
        }
        return ObservationToken { [weak self] in _ = self?.state.withLock { $0.observers.removeValue(forKey: token) } }
    }

    /// Every update of every model type, from now on.
    public func allUpdates() -> AsyncStream<AnyModelUpdate> { stream(filter: nil) }

    /// The updates of `Model` identified by `ID`, from now on.
    public func updates<ID, Model>(of model: Model.Type, identifiedBy id: ID.Type) -> AsyncStream<ModelUpdate<ID, Model>> {
        let all = stream(filter: ObjectIdentifier(IdentifiedModel<ID, Model>.self))
        return AsyncStream { continuation in
            let task = Task {
                for await update in all {
                    if let typed = update.as(Model.self, identifiedBy: ID.self) { continuation.yield(typed) }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// How many streams and observers are listening (for tests and diagnostics).
    public var subscriberCount: Int { state.withLock { $0.observers.count + $0.continuations.count } }

    func publish<ID, Model>(_ update: ModelUpdate<ID, Model>) {
        let erased = AnyModelUpdate(id: update.id, modelType: Model.self, previous: update.previous, current: update.current)
        let type = ObjectIdentifier(IdentifiedModel<ID, Model>.self)
        let (observers, continuations) = state.withLock { state in
            (
                state.observers.sorted { $0.key < $1.key }.map(\.value),
                state.continuations.values.filter { $0.filter == nil || $0.filter == type }.map(\.continuation)
            )
        }
        for continuation in continuations { continuation.yield(erased) }
        for observer in observers { observer(erased) }
    }

    private func stream(filter: ObjectIdentifier?) -> AsyncStream<AnyModelUpdate> {
        let (stream, continuation) = AsyncStream.makeStream(of: AnyModelUpdate.self, bufferingPolicy: .unbounded)
        let token = state.withLock { state in
            state.nextToken += 1
            state.continuations[state.nextToken] = (filter, continuation)
            return state.nextToken
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.continuations.removeValue(forKey: token) }
        }
        return stream
    }
}

/// Keeps an observer registered until cancelled (or deallocated).
public final class ObservationToken: Sendable {
    private let onCancel: Mutex<(@Sendable () -> Void)?>

    init(onCancel: @escaping @Sendable () -> Void) { self.onCancel = Mutex(onCancel) }

    /// Stops the observation. Calling it again does nothing.
    public func cancel() {
        let action = onCancel.withLock { action in
            defer { action = nil }
            return action
        }
        action?()
    }

    deinit { cancel() }
}
