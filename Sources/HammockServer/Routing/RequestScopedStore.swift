import HammockJSON
import HammockStore

/// A store as one request sees it, over the server's store (`base`): it changes what it must (the
/// write's date and conditions, the caller's records) and passes the rest straight through, which this
/// protocol does once for every such view. A request never closes the server's store.
protocol RequestScopedStore: MockStore {
    var base: any MockStore { get }
}

extension RequestScopedStore {
    func addResource(_ schema: ResourceSchema) async throws { try await base.addResource(schema) }
    func dropResource(_ schema: ResourceSchema) async throws { try await base.dropResource(schema) }
    func snapshot(of schemas: [ResourceSchema]) async throws -> StoreSnapshot { try await base.snapshot(of: schemas) }
    func restore(_ snapshot: StoreSnapshot, schemas: [ResourceSchema]) async throws {
        try await base.restore(snapshot, schemas: schemas)
    }
    func lastChange(of resources: [String], now: Int, marking: Bool) async throws -> Int? {
        try await base.lastChange(of: resources, now: now, marking: marking)
    }
    func noteChange(of resources: [String], at second: Int) async throws {
        try await base.noteChange(of: resources, at: second)
    }
    func exclusively<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await base.exclusively(body)
    }
    func health() async -> StoreHealth { await base.health() }
    func finishLoad(of schema: ResourceSchema, records: Int) async throws {
        try await base.finishLoad(of: schema, records: records)
    }
    /// Not the request's to close: the server closes its store.
    func close() async throws {}
}
