import GRDB
import Synchronization

/// Group commit: the writes that wait while one transaction commits go into the next transaction
/// together, each in a savepoint of its own, and each is acknowledged only once that transaction has
/// committed.
///
/// Every create or update is its own transaction otherwise: a `BEGIN`, a WAL append of the touched
/// pages and a `COMMIT` per request, and a hop to GRDB's writer queue per request. Under concurrent
/// writes the batch grows with the queue and the cost per write falls; a lone write waits for nothing.
///
/// - Fair: a batch is everything submitted when the writer takes it, run in submission order; what
///   arrives meanwhile goes into the next one, so no write waits behind more than one batch.
/// - Independent: a write that fails (a taken key) rolls back its own savepoint and fails alone.
/// - Durable: nobody hears of success before `COMMIT` returns; if the commit fails, every write of
///   the batch fails.
/// - Mirrored after the fact: what the writes change in the store's in-memory mirror is collected
///   (``MirrorChanges``, which the batch's later writes read through) and applied only once `COMMIT`
///   has returned, before the next batch: the mirror never holds what the file does not.
final class GroupCommit: Sendable {
    /// A submitted write: runs in its savepoint and says what to tell its caller once the
    /// transaction's fate is known.
    struct Pending: Sendable {
        let perform: @Sendable (Database, inout MirrorChanges) -> Completion
        /// Fails the write without running it (its transaction could not begin).
        let abandon: @Sendable (any Error) -> Void
    }

    /// What a write's caller hears after the transaction: `committed` if it commits, `rolledBack`
    /// with the commit's error if not.
    struct Completion {
        let committed: () -> Void
        let rolledBack: (any Error) -> Void
    }

    struct State: ~Copyable {
        var pending: [Pending] = []
        var isDraining = false
    }

    let pool: DatabasePool
    let state = Mutex(State())
    /// Called on the writer once a batch has committed, with what its writes changed in the mirror.
    let apply: @Sendable (MirrorChanges) -> Void

    init(pool: DatabasePool, apply: @escaping @Sendable (MirrorChanges) -> Void) {
        self.pool = pool
        self.apply = apply
    }

    /// Runs `body` in the next group transaction and returns its result once that has committed. What
    /// `body` notes in the changes reaches the mirror then, and only if `body` returned.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database, inout MirrorChanges) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let pending = Pending { db, changes in
                let mark = changes.mark()
                do {
                    var value: T?
                    try db.inSavepoint {
                        value = try body(db, &changes)
                        return .commit
                    }
                    guard let value else {
                        throw DatabaseError(message: "a write ended without a result")
                    }
                    return Completion(
                        committed: { continuation.resume(returning: value) },
                        rolledBack: { continuation.resume(throwing: $0) })
                } catch {
                    // Its savepoint rolled back: so do its changes to the mirror-to-be.
                    changes.rollBack(to: mark)
                    return Completion(
                        committed: { continuation.resume(throwing: error) },
                        rolledBack: { _ in continuation.resume(throwing: error) })
                }
            } abandon: { error in
                continuation.resume(throwing: error)
            }
            let start = state.withLock { state -> Bool in
                state.pending.append(pending)
                guard !state.isDraining else { return false }
                state.isDraining = true
                return true
            }
            if start { pool.asyncWriteWithoutTransaction { db in self.drain(db) } }
        }
    }

    /// On GRDB's writer: one transaction per batch until nothing waits.
    private func drain(_ db: Database) {
        while true {
            let batch = state.withLock { state -> [Pending] in
                guard !state.pending.isEmpty else {
                    state.isDraining = false
                    return []
                }
                defer { state.pending = [] }
                return state.pending
            }
            guard !batch.isEmpty else { return }
            var completions: [Completion] = []
            completions.reserveCapacity(batch.count)
            var changes = MirrorChanges()
            do {
                try db.inTransaction(.immediate) {
                    for write in batch { completions.append(write.perform(db, &changes)) }
                    return .commit
                }
                if !changes.isEmpty { apply(changes) }
                for completion in completions { completion.committed() }
            } catch {
                // The transaction did not commit: none of the batch happened, and the mirror never saw it.
                for completion in completions { completion.rolledBack(error) }
                for write in batch.dropFirst(completions.count) { write.abandon(error) }
            }
        }
    }
}
