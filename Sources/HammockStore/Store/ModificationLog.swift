public import Foundation

/// When each resource's records last changed, for `Last-Modified`, in whole seconds as HTTP dates carry
/// them. A store that keeps its data in one process holds one (``MemoryStore`` and `SQLiteStore` do,
/// behind a lock) and answers ``MockStore/lastChange(of:now:marking:)`` and
/// ``MockStore/noteChange(of:at:)`` with it; a store that several servers share keeps the same entries
/// where its data is, under the same rules:
///
/// A date of one-second resolution must never name two different contents that a client could both
/// have seen: a client that read the list, then saw a second write land in the same second, would
/// be told 304 for a copy that is gone. So a change in a second that an answer has already carried
/// moves the resource's date to the next second, and until the clock reaches that second, answers
/// carry no `Last-Modified` at all (RFC 9110 §8.8.2.1 forbids one in the future; the `ETag` still
/// validates them).
public struct ModificationLog: Sendable, Hashable {
    /// One resource's modification time.
    public struct Entry: Sendable, Hashable {
        /// Seconds since 1970.
        public var second: Int
        /// Whether an answer has carried `second` since it was set.
        public var isServed: Bool

        public init(second: Int, isServed: Bool) {
            self.second = second
            self.isServed = isServed
        }
    }

    /// The entries by resource name.
    public private(set) var entries: [String: Entry] = [:]

    public init() {}

    /// A date as the whole second HTTP dates carry, held within the years 1 to 9999 that they cover
    /// (a clock gone wrong gives the nearest edge, never a trap).
    public static func second(of date: Date) -> Int {
        let interval = date.timeIntervalSince1970
        guard interval.isFinite else { return 0 }
        return Int(max(-62_135_596_800, min(interval, 253_402_300_799)).rounded(.down))
    }

    /// When the latest of `resources` changed, and, with `marking`, notes that an answer carries that
    /// date; `nil` while it is still ahead of `now`. A resource with no entry yet counts as changed at
    /// `now` (nothing a client holds can be older).
    public mutating func lastChange(of resources: [String], now: Int, marking: Bool) -> Int? {
        for name in resources where entries[name] == nil { entries[name] = Entry(second: now, isServed: false) }
        let latest = resources.compactMap { entries[$0]?.second }.max() ?? now
        guard latest <= now else { return nil }
        if marking { for name in resources { entries[name]?.isServed = true } }
        return latest
    }

    /// Notes a change to `resources` at `second`.
    public mutating func noteChange(of resources: [String], at second: Int) {
        for name in resources {
            guard var entry = entries[name] else {
                entries[name] = Entry(second: second, isServed: false)
                continue
            }
            if second > entry.second {
                entry.second = second
            } else if entry.isServed {
                // The date an answer carried would name this content too: move past it.
                entry.second += 1
            }
            entry.isServed = false
            entries[name] = entry
        }
    }
}
