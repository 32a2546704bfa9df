import Foundation
import HammockStore

/// `Last-Modified` for the resources' routes: the server's clock, and the dates the store keeps
/// (`MockStore.lastChange(of:now:marking:)`), so that servers sharing a store give one date.
struct ModificationDates: Sendable {
    let store: any MockStore
    let now: @Sendable () -> Date

    /// When the data behind `route` last changed (the parent's too, for nested lists), noting that an
    /// answer carries it; `nil` while that time is still ahead of the clock. Read it before the data, so
    /// that a change landing in between makes the date newer than the copy, never older.
    /// With `marking: false` (a precondition's check, which no client sees) nothing is noted.
    func lastModified(of route: Route, marking: Bool = true) async throws -> Date? {
        var names = [route.schema.name]
        if case .children(_, let parent, _, _) = route { names.append(parent.name) }
        let second = try await store.lastChange(of: names, now: ModificationLog.second(of: now()), marking: marking)
        return second.map { Date(timeIntervalSince1970: Double($0)) }
    }

    /// The clock's second, as writes note it (`StoreWrite.changedAt`).
    func second() -> Int { ModificationLog.second(of: now()) }

    /// Notes a change to `schema` outside a write: a resource added or reshaped.
    func record(_ schema: ResourceSchema) async throws {
        try await store.noteChange(of: [schema.name], at: second())
    }
}
