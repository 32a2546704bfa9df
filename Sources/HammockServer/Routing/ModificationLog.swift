import Foundation
import Synchronization

/// When each resource last changed, for `Last-Modified`, in whole seconds as HTTP dates carry them:
/// resources never changed count as changed when the log was made (the server's start).
///
/// A date of one-second resolution must never name two different contents that a client could both
/// have seen: a client that read the list, then saw a second write land in the same second, would
/// be told 304 for a copy that is gone. So a change in a second that an answer has already carried
/// moves the resource's date to the next second, and until the clock reaches that second, answers
/// carry no `Last-Modified` at all (RFC 9110 §8.8.2.1 forbids one in the future; the `ETag` still
/// validates them).
final class ModificationLog: Sendable {
    struct Entry {
        /// The resource's modification time, in seconds since 1970.
        var second: Int
        /// Whether an answer has carried `second` since it was set.
        var isServed: Bool
    }

    private let changes = Mutex<[String: Entry]>([:])
    private let createdAt: Int
    let now: @Sendable () -> Date

    init(now: @escaping @Sendable () -> Date) {
        self.now = now
        self.createdAt = Self.second(of: now())
    }

    static func second(of date: Date) -> Int {
        let interval = date.timeIntervalSince1970
        // HTTP dates cover years 1 to 9999; anything beyond (a clock gone wrong) is held at the edge.
        guard interval.isFinite else { return 0 }
        return Int(max(-62_135_596_800, min(interval, 253_402_300_799)).rounded(.down))
    }

    /// When the data behind `route` last changed (the parent's too, for nested lists), and notes that an
    /// answer carries it; `nil` while that time is still ahead of the clock. Read it before the data, so
    /// that a change landing in between makes the date newer than the copy, never older.
    /// With `marking: false` (a precondition's check, which no client sees) nothing is noted.
    func lastModified(of route: Route, marking: Bool = true) -> Date? {
        let current = Self.second(of: now())
        return changes.withLock { changes in
            var names = [route.schema.name]
            if case .children(_, let parent, _, _) = route { names.append(parent.name) }
            let latest = names.map { changes[$0]?.second ?? createdAt }.max() ?? createdAt
            guard latest <= current else { return nil }
            guard marking else { return Date(timeIntervalSince1970: Double(latest)) }
            for name in names { changes[name, default: Entry(second: createdAt, isServed: false)].isServed = true }
            return Date(timeIntervalSince1970: Double(latest))
        }
    }

    /// Notes a change to `schema`, and to the children whose foreign keys a delete may have cleared.
    func record(_ schema: ResourceSchema, cascadingTo candidates: [ResourceSchema] = []) {
        let second = Self.second(of: now())
        let children = candidates.filter { $0.foreignKey(toParent: schema.name) != nil }.map(\.name)
        changes.withLock { changes in
            for name in [schema.name] + children {
                var entry = changes[name] ?? Entry(second: createdAt, isServed: false)
                if second > entry.second {
                    entry.second = second
                } else if entry.isServed {
                    // The date an answer carried would name this content too: move past it.
                    entry.second += 1
                }
                entry.isServed = false
                changes[name] = entry
            }
        }
    }
}
