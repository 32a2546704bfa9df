import HammockJSON
import HammockStore

/// The store as one write request's controller sees it (``ActionRequest/store``): every write it
/// performs carries the request's change date, and a write of the record the route names carries the
/// request's preconditions (`If-Match`…). Both are then kept by the store in the write's own unit of
/// work: the condition on the one read of the record, the date with the change. A controller of your
/// own gets both whichever store call it makes; reads pass straight through. Each write that happens
/// is then announced to the live feeds (WebSocket routes) listening to ``changes``.
///
/// Stubs' and Swift routes' writes (``RouteRecords``) go through one too, with no date or condition of
/// its own: they give their date with each write.
struct WriteScopedStore: RequestScopedStore {
    let base: any MockStore
    /// The second the request's writes note as their change date, when they give none.
    let second: Int?
    /// The record the route names, and what must hold of it.
    let precondition: (schema: String, key: JSON, condition: StoreWrite.Condition)?
    /// Where the writes that happen are announced.
    let changes: ResourceChanges

    func perform(_ write: StoreWrite) async throws -> ConditionalWrite<WriteResult> {
        var write = write
        if write.changedAt == nil, let second { write.changedAt = second }
        if write.condition == nil, let precondition, write.schema.name == precondition.schema {
            switch write.action {
            case .update(let key, _), .delete(let key, _):
                if key.isSameKey(as: precondition.key) { write.condition = precondition.condition }
            case .create: break
            }
        }
        let outcome = try await base.perform(write)
        // A precondition's 412 is thrown as the problem it is, whichever call the controller made.
        if case .refused(let reason) = outcome { throw reason }
        if case .written(let result) = outcome { changes.publish(ResourceChanges.changes(of: write, result: result)) }
        return outcome
    }

    func storedRecord(of schema: ResourceSchema, withKey key: JSON) async throws -> StoredRecord? {
        try await base.storedRecord(of: schema, withKey: key)
    }
    func storedRecords(of schema: ResourceSchema, answering query: ListQuery) async throws -> (page: [StoredRecord], total: Int) {
        try await base.storedRecords(of: schema, answering: query)
    }
    func storedRecords(of schema: ResourceSchema) async throws -> [StoredRecord] { try await base.storedRecords(of: schema) }
    func storedRecords(
        of schema: ResourceSchema, where foreignKey: ResourceSchema.ForeignKey, is parentKey: JSON
    ) async throws -> [StoredRecord] {
        try await base.storedRecords(of: schema, where: foreignKey, is: parentKey)
    }
    func count(of schema: ResourceSchema) async throws -> Int { try await base.count(of: schema) }
}
