import HammockStore
import Synchronization

/// The data ``MockServer/reset()`` goes back to: taken once, before the server answers its first
/// request, so it holds whatever was loaded or generated before the server went to work.
final class Baseline: Sendable {
    enum State {
        case none
        case taking(Task<StoreSnapshot?, Never>)
        case taken(StoreSnapshot?)
    }

    let state = Mutex(State.none)
    /// Set once the snapshot exists: the one check each request pays.
    private let taken = Atomic<Bool>(false)

    var isTaken: Bool { taken.load(ordering: .acquiring) }

    var snapshot: StoreSnapshot? {
        guard case .taken(let snapshot) = state.withLock({ $0 }) else { return nil }
        return snapshot
    }

    func markTaken() { taken.store(true, ordering: .releasing) }

    /// Adds the tables of `snapshot` to the baseline, if one is taken (resources a reload added, with
    /// the data it loaded for them).
    func merge(_ snapshot: StoreSnapshot) {
        state.withLock { state in
            guard case .taken(var saved?) = state else { return }
            saved.tables.merge(snapshot.tables) { _, new in new }
            state = .taken(saved)
        }
    }
}

extension MockServer {
    /// The version of Hammock serving, as `GET /__hammock/version` reports it.
    public static let version = "0.2.0-dev"

    /// Takes the baseline unless it is taken or being taken; every caller returns once it exists, so no
    /// request changes the data before the baseline has it.
    func takeBaselineOnce() async {
        let task: Task<StoreSnapshot?, Never>? = baseline.state.withLock { state in
            switch state {
            case .none:
                let store = self.store
                let schemas = self.schemas
                let task = Task { try? await store.snapshot(of: schemas) }
                state = .taking(task)
                return task
            case .taking(let task): return task
            case .taken: return nil
            }
        }
        guard let task else { return }
        let snapshot = await task.value
        baseline.state.withLock { state in
            if case .taking = state { state = .taken(snapshot) }
        }
        baseline.markTaken()
    }

    /// Makes the current data the baseline that ``reset()`` returns to (the server takes one by itself
    /// before answering its first request; call this after loading more data later).
    public func takeBaseline() async throws {
        let snapshot = try await store.snapshot(of: schemas)
        baseline.state.withLock { $0 = .taken(snapshot) }
        baseline.markTaken()
    }

    /// Returns the server to how it started: the data it had before answering its first request (or
    /// at the last ``takeBaseline()``; a resource added since is emptied), its configured latency, every
    /// scenario and stub sequence at its start, and an empty journal. Generated keys start again where they were, so a test that creates a record
    /// after a reset gets the same key every run. Saved snapshots and routes added since stay.
    ///
    /// ```swift
    /// @Test func createsAnOrder() async throws {
    ///     try await server.reset()
    ///     …
    /// }
    /// ```
    /// - Throws: The store's error, or a 500 ``HTTPProblem`` if the baseline could not be read.
    public func reset() async throws {
        await takeBaselineOnce()
        guard let snapshot = baseline.snapshot else {
            throw HTTPProblem(
                .internalServerError,
                detail: "The store could not be read when the server started, so there is no state to reset to")
        }
        try await restore(snapshot)
        let configured = loaded.withLock { $0 }
        runtimeCell.change { settings in
            settings.latency = configured.latency
            settings.faults = Interventions.named(configured.faults)
        }
        resetScenarios()
        journal.clear()
    }

    /// Every scenario back to its first state, and every stub that answers in turn back to its first
    /// answer (``reset()`` does this too).
    public func resetScenarios() { customRoutes.resetMemory() }

    /// Each scenario that has left its first state, and the state it is in.
    public var scenarioStates: [String: String] { customRoutes.memory.withLock { $0.states } }

    /// Puts a scenario in `state`, as if a stub had moved it there.
    public func setScenario(_ name: String, to state: String) { customRoutes.memory.withLock { $0.states[name] = state } }

    /// The most snapshots a server keeps: each holds what the data has changed since, so a client
    /// saving without end would hold memory without end.
    public static let maximumSnapshots = 100

    /// Saves the current data as `name`, replacing a snapshot of that name; returns it.
    /// - Throws: 400 ``HTTPProblem`` for a name that is not 1 to 100 letters, digits, `.`, `_` or `-`;
    ///   409 when ``maximumSnapshots`` other names are kept; the store's error.
    @discardableResult
    public func saveSnapshot(named name: String) async throws -> StoreSnapshot {
        try Self.checkSnapshotName(name)
        let snapshot = try await store.snapshot(of: schemas)
        let kept = snapshots.withLock { snapshots -> Bool in
            guard snapshots[name] != nil || snapshots.count < Self.maximumSnapshots else { return false }
            snapshots[name] = snapshot
            return true
        }
        guard kept else {
            throw HTTPProblem(.conflict, detail: "The server keeps at most \(Self.maximumSnapshots) snapshots; delete one first")
        }
        return snapshot
    }

    /// Puts the data saved as `name` back (see `StoreSnapshot` for resources added or changed since).
    /// - Throws: 404 ``HTTPProblem`` for an unknown name; the store's error.
    public func restoreSnapshot(named name: String) async throws {
        guard let snapshot = snapshots.withLock({ $0[name] }) else {
            throw HTTPProblem.notFound("No snapshot named '\(name.prefix(100))'; saved: \(snapshotNames.joined(separator: ", "))")
        }
        try await restore(snapshot)
    }

    /// Forgets the snapshot `name`; `false` if there was none.
    @discardableResult
    public func deleteSnapshot(named name: String) -> Bool { snapshots.withLock { $0.removeValue(forKey: name) } != nil }

    /// The names of the saved snapshots, sorted.
    public var snapshotNames: [String] { snapshots.withLock { $0.keys.sorted() } }

    func restore(_ snapshot: StoreSnapshot) async throws {
        let schemas = self.schemas
        try await store.restore(snapshot, schemas: schemas)
        // Every list and record may have changed: validators move on.
        for schema in schemas { try await resources.modifications.record(schema) }
        changes.publish(schemas.map { ResourceChange(.invalidated, resource: $0.name) })
    }

    static func checkSnapshotName(_ name: String) throws(HTTPProblem) {
        let allowed = name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        guard allowed, (1...100).contains(name.utf8.count), name != ".", name != ".." else {
            throw HTTPProblem.badRequest("A snapshot name is 1 to 100 letters, digits, '.', '_' or '-'")
        }
    }

    /// The simulated latency now in force.
    public var latency: Latency? { runtimeCell.runtime.settings.latency }

    /// Changes the simulated latency from the next request on; `nil` for none.
    public func setLatency(_ latency: Latency?) { runtimeCell.change { $0.latency = latency } }
}
