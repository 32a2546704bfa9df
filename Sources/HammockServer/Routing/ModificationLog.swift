import Foundation
import Synchronization

/// When each resource last changed, for `Last-Modified`: resources never changed count as changed when
/// the log was made (the server's start).
final class ModificationLog: Sendable {
    private let changes = Mutex<[String: Date]>([:])
    private let createdAt: Date
    let now: @Sendable () -> Date

    init(now: @escaping @Sendable () -> Date) {
        self.now = now
        self.createdAt = now()
    }

    /// When the data behind `route` last changed (the parent's too, for nested lists).
    func lastModified(of route: Route) -> Date {
        changes.withLock { changes in
            var latest = changes[route.schema.name] ?? createdAt
            if case .children(_, let parent, _, _) = route, let parentChange = changes[parent.name] {
                latest = max(latest, parentChange)
            }
            return latest
        }
    }

    /// Notes a change to `schema`, and to the children whose foreign keys a delete may have cleared.
    func record(_ schema: ResourceSchema, cascadingTo candidates: [ResourceSchema] = []) {
        let time = now()
        let children = candidates.filter { $0.foreignKey(toParent: schema.name) != nil }.map(\.name)
        changes.withLock { changes in
            for name in [schema.name] + children { changes[name] = max(changes[name] ?? time, time) }
        }
    }
}
