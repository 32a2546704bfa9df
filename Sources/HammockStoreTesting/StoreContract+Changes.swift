import Foundation
import HammockJSON
import HammockStore
import Testing

extension StoreContract {
    /// The dates behind `Last-Modified` (``MockStore/lastChange(of:now:marking:)``), under the rules
    /// `ModificationLog` states.
    static let changes: [Check] = [
        Check("Change dates: the latest of the resources asked, withheld while ahead, moved past a second already served") {
            (subject: Subject) async throws in
            let store = subject.store
            // Well after now, so no date a store noted on its own is later.
            let base = ModificationLog.second(of: Date()) + 1000
            // A resource no change was noted for counts as changed now.
            #expect(try await store.lastChange(of: ["never-noted"], now: base, marking: false) == base)
            try await store.noteChange(of: ["people"], at: base + 5)
            #expect(try await store.lastChange(of: ["people"], now: base + 4, marking: true) == nil)
            #expect(try await store.lastChange(of: ["people"], now: base + 5, marking: true) == base + 5)
            // Served: another change in the same second moves the date to the next one…
            try await store.noteChange(of: ["people"], at: base + 5)
            #expect(try await store.lastChange(of: ["people"], now: base + 5, marking: false) == nil)
            #expect(try await store.lastChange(of: ["people"], now: base + 6, marking: false) == base + 6)
            // …but changes to a date nobody was given (a check without marking) keep it.
            try await store.noteChange(of: ["people"], at: base + 6)
            try await store.noteChange(of: ["people"], at: base + 6)
            #expect(try await store.lastChange(of: ["people"], now: base + 9, marking: true) == base + 6)
            // The latest of several; a clock that went back never moves a date back.
            try await store.noteChange(of: ["cars"], at: base + 8)
            try await store.noteChange(of: ["cars"], at: base + 2)
            #expect(try await store.lastChange(of: ["people", "cars"], now: base + 9, marking: true) == base + 8)
            #expect(try await store.lastChange(of: ["cars"], now: base + 20, marking: true) == base + 8)
        },
        Check("Change dates hold under concurrent writers and readers: no date an answer carried names two contents") {
            (subject: Subject) async throws in
            let store = subject.store
            let second = ModificationLog.second(of: Date()) + 2000
            // A first change before the race: had a reader come first, the resource would count as
            // changed at the reader's `now`, and the writers would move its date past that `now` (a
            // clean-clone CI run, under load, started a reader first).
            try await store.noteChange(of: ["categories"], at: second)
            // Readers mark the date served while writers note changes in the same second: each writer's
            // change lands either before every read that carried its second, or moves the date past it.
            let served = try await withThrowingTaskGroup(of: Int?.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        if index % 2 == 0 {
                            try await store.noteChange(of: ["categories"], at: second)
                            return nil
                        }
                        return try await store.lastChange(of: ["categories"], now: second + 40, marking: true)
                    }
                }
                var dates: [Int] = []
                for try await date in group { if let date { dates.append(date) } }
                return dates
            }
            let final = try #require(try await store.lastChange(of: ["categories"], now: second + 40, marking: false))
            // Twenty writes in one second move the date at most once per read that carried it.
            #expect(final >= second && final <= second + 20)
            #expect(served.allSatisfy { $0 <= final })
            // A write after the last read always moves the date past every date served.
            _ = try await store.lastChange(of: ["categories"], now: second + 40, marking: true)
            try await store.noteChange(of: ["categories"], at: second)
            let moved = try #require(try await store.lastChange(of: ["categories"], now: second + 40, marking: false))
            #expect(served.allSatisfy { $0 < moved })
        },
    ]
}
