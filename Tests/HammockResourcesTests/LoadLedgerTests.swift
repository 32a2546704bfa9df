import HammockTesting
import Testing

@testable import HammockResources

/// The ledger that decides which answer becomes a resource's data, without a network: each test is an
/// order of events a resource can see.
@Suite("Load ledger")
struct LoadLedgerTests {
    @Test("Loads answered in order are recorded; an older answer after a newer one is dropped")
    func order() {
        var ledger = LoadLedger()
        let first = ledger.startLoad()
        let second = ledger.startLoad()
        #expect(ledger.loadAnswered(second) == .record(staysInvalidated: false, version: 1))
        #expect(ledger.loadAnswered(first) == .ignore)
        let third = ledger.startLoad()
        #expect(ledger.loadAnswered(third) == .record(staysInvalidated: false, version: 2))
    }

    @Test(
        "A load that started before an invalidation is recorded but leaves the resource invalidated, and no longer counts for reuse"
    )
    func invalidation() {
        var ledger = LoadLedger()
        let before = ledger.startLoad()
        ledger.invalidate()
        #expect(!ledger.isCurrent(before))
        let after = ledger.startLoad()
        #expect(ledger.isCurrent(after))
        #expect(ledger.loadAnswered(before) == .record(staysInvalidated: true, version: 1))
        #expect(ledger.loadAnswered(after) == .record(staysInvalidated: false, version: 2))
    }

    @Test("An override drops every load in flight, whatever order they answer in; a load started after it records")
    func override() {
        var ledger = LoadLedger()
        let a = ledger.startLoad()
        let b = ledger.startLoad()
        let version = ledger.override()
        #expect(!ledger.isCurrent(a) && !ledger.isCurrent(b))
        #expect(ledger.loadAnswered(b) == .ignore)
        #expect(ledger.loadAnswered(a) == .ignore)
        #expect(ledger.isUnchanged(since: version))
        let c = ledger.startLoad()
        #expect(ledger.loadAnswered(c) == .record(staysInvalidated: false, version: version + 1))
        #expect(!ledger.isUnchanged(since: version), "the override was replaced: a rollback must not happen")
    }

    @Test("A rollback counts as new data for cache reads but leaves loads started after the override alone")
    func restore() {
        var ledger = LoadLedger()
        let version = ledger.override()
        let afterOverride = ledger.startLoad()
        let cacheRead = ledger.cacheReadStarted()
        #expect(ledger.isUnchanged(since: version))
        _ = ledger.restore()
        let shown = ledger.cacheReadAnswered(askedAt: cacheRead)
        #expect(!shown)
        #expect(ledger.loadAnswered(afterOverride) != .ignore)
    }

    @Test("A wipe drops every load in flight; a cache read loses to any data that arrived after it was asked for")
    func wipeAndCache() {
        var ledger = LoadLedger()
        let load = ledger.startLoad()
        let read = ledger.cacheReadStarted()
        ledger.wipe()
        #expect(ledger.loadAnswered(load) == .ignore)
        let shownAfterWipe = ledger.cacheReadAnswered(askedAt: read)
        #expect(!shownAfterWipe)
        let fresh = ledger.cacheReadStarted()
        let shownFresh = ledger.cacheReadAnswered(askedAt: fresh)
        #expect(shownFresh)
        let late = ledger.startLoad()
        #expect(ledger.loadAnswered(late) != .ignore, "a load's answer replaces cached data")
    }

    @Test(
        "Over random orders of events, no answer older than the newest recorded one, or than an override or wipe, is ever recorded"
    )
    func randomOrders() {
        var random = SplitMix64(seed: 0x10AD)
        for _ in 0..<500 {
            var ledger = LoadLedger()
            var inFlight: [LoadLedger.Ticket] = []
            var barrier = 0  // every load numbered at or below this must be dropped
            var newestRecorded = 0
            for _ in 0..<40 {
                switch random.next() % 6 {
                case 0, 1:
                    inFlight.append(ledger.startLoad())
                case 2 where !inFlight.isEmpty:
                    let ticket = inFlight.remove(at: Int(random.next() % UInt64(inFlight.count)))
                    let verdict = ledger.loadAnswered(ticket)
                    let mayRecord = ticket.sequence > max(barrier, newestRecorded)
                    #expect((verdict != .ignore) == mayRecord)
                    if verdict != .ignore { newestRecorded = ticket.sequence }
                case 3:
                    ledger.invalidate()
                case 4:
                    _ = ledger.override()
                    barrier = ledger.loadsStarted
                default:
                    ledger.wipe()
                    barrier = ledger.loadsStarted
                }
            }
        }
    }
}
