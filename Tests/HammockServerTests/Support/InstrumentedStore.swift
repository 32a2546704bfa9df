import HammockJSON
import HammockServer
import Synchronization

/// A store that hands every call to another and lets a test step in before each: to count calls, or to
/// hold one at a gate while something else happens (a resource removed under a request in flight).
final class InstrumentedStore: MockStore {
    let inner: any MockStore
    /// Called with the operation's name (`storedRecords`, `create`, …) before it is handed on.
    let before: @Sendable (String) async -> Void

    init(_ inner: any MockStore, before: @escaping @Sendable (String) async -> Void) {
        self.inner = inner
        self.before = before
    }

    func addResource(_ schema: ResourceSchema) async throws {
        await before("addResource")
        try await inner.addResource(schema)
    }

    func dropResource(_ schema: ResourceSchema) async throws {
        await before("dropResource")
        try await inner.dropResource(schema)
    }

    func count(of schema: ResourceSchema) async throws -> Int {
        await before("count")
        return try await inner.count(of: schema)
    }

    func storedRecord(of schema: ResourceSchema, withKey key: JSON) async throws -> StoredRecord? {
        await before("storedRecord")
        return try await inner.storedRecord(of: schema, withKey: key)
    }

    func storedRecords(of schema: ResourceSchema) async throws -> [StoredRecord] {
        await before("storedRecords")
        return try await inner.storedRecords(of: schema)
    }

    func storedRecords(
        of schema: ResourceSchema, where foreignKey: ResourceSchema.ForeignKey, is parentKey: JSON
    )
        async throws -> [StoredRecord]
    {
        await before("storedRecords")
        return try await inner.storedRecords(of: schema, where: foreignKey, is: parentKey)
    }

    func storedRecords(
        of schema: ResourceSchema, answering query: ListQuery
    ) async throws -> (
        page: [StoredRecord], total: Int
    ) {
        await before("query")
        return try await inner.storedRecords(of: schema, answering: query)
    }

    func perform(_ write: StoreWrite) async throws -> ConditionalWrite<WriteResult> {
        switch write.action {
        case .create: await before("create")
        case .update: await before("update")
        case .delete: await before("delete")
        }
        return try await inner.perform(write)
    }

    func snapshot(of schemas: [ResourceSchema]) async throws -> StoreSnapshot {
        await before("snapshot")
        return try await inner.snapshot(of: schemas)
    }

    func restore(_ snapshot: StoreSnapshot, schemas: [ResourceSchema]) async throws {
        await before("restore")
        try await inner.restore(snapshot, schemas: schemas)
    }

    func lastChange(of resources: [String], now: Int, marking: Bool) async throws -> Int? {
        await before("lastChange")
        return try await inner.lastChange(of: resources, now: now, marking: marking)
    }

    func noteChange(of resources: [String], at second: Int) async throws {
        await before("noteChange")
        try await inner.noteChange(of: resources, at: second)
    }

    func close() async throws { try await inner.close() }
}

/// A gate a store call waits at while it is closed: ``arrived`` tells the test that a call is held.
final class StoreGate: Sendable {
    private struct State {
        var isClosed = false
        var waiting: [CheckedContinuation<Void, Never>] = []
        var arrivals: [CheckedContinuation<Void, Never>] = []
        var held = 0
    }

    private let state = Mutex(State())

    /// Closes the gate; ``arrived()`` then waits for a call that arrives from now on.
    func close() {
        state.withLock { state in
            state.isClosed = true
            state.held = 0
        }
    }

    func open() {
        let waiting = state.withLock { state in
            state.isClosed = false
            defer { state.waiting.removeAll() }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Waits here while the gate is closed.
    func pass() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (proceed, arrivals) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                guard state.isClosed else { return (true, []) }
                state.waiting.append(continuation)
                state.held += 1
                defer { state.arrivals.removeAll() }
                return (false, state.arrivals)
            }
            for arrival in arrivals { arrival.resume() }
            if proceed { continuation.resume() }
        }
    }

    /// Returns once a call is held at the gate.
    func arrived() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.held > 0 { return true }
                state.arrivals.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}
