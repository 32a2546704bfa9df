/// Which answer may become a resource's data: the races between loads, invalidations, local overrides,
/// cache reads and wipes, as one value with named transitions. ``Resource`` is its `@Observable` shell:
/// it asks the ledger before recording anything, and does what the verdict says. Tested without a
/// network (`LoadLedgerTests`).
///
/// The rules:
/// - a load's answer is recorded unless a load that started later was recorded first, or an override
///   or a wipe came after it started (the data it would replace is newer than the request);
/// - a load that started before the latest invalidation is recorded but leaves the resource
///   invalidated (its answer may predate the mutation that invalidated it);
/// - a cache read shows its copy only if no data of any kind arrived since it was asked for;
/// - a load in flight is reused only if it started after the latest invalidation, override or wipe.
struct LoadLedger: Equatable {
    /// What a load carries from its start to its answer.
    struct Ticket: Equatable {
        /// Its place among loads, in the order they started.
        let sequence: Int
        /// The epoch it started in.
        let epoch: Int
    }

    /// What to do with a load's answer.
    enum Verdict: Equatable {
        /// Drop it: newer data is already there.
        case ignore
        /// Record it; if `staysInvalidated`, the resource stays invalidated afterwards (and an observed
        /// one reloads), unless something replaced the data while observers heard of it.
        case record(staysInvalidated: Bool, version: Int)
    }

    /// Bumped whenever the data is replaced, by anything.
    private(set) var dataVersion = 0
    /// Bumped by every invalidation, override and wipe: what started before is stale.
    private(set) var epoch = 0
    /// Loads started so far.
    private(set) var loadsStarted = 0
    /// No answer of a load numbered at or below this is recorded (the latest recorded load, or every
    /// load in flight when an override or a wipe came).
    private(set) var recordedThrough = 0
    /// The epoch at which the data was last declared stale by an invalidation.
    private(set) var invalidatedEpoch = 0

    /// A load starts.
    mutating func startLoad() -> Ticket {
        loadsStarted += 1
        return Ticket(sequence: loadsStarted, epoch: epoch)
    }

    /// Whether a load with `ticket` still counts for deduplication (`load()`, `loadIfNeeded()`).
    func isCurrent(_ ticket: Ticket) -> Bool { ticket.epoch == epoch }

    /// A load's answer (data or 304) arrived.
    mutating func loadAnswered(_ ticket: Ticket) -> Verdict {
        guard ticket.sequence > recordedThrough else { return .ignore }
        recordedThrough = ticket.sequence
        dataVersion += 1
        return .record(staysInvalidated: ticket.epoch < invalidatedEpoch, version: dataVersion)
    }

    /// The resource was invalidated: loads in flight may still record, but leave it invalidated.
    mutating func invalidate() {
        epoch += 1
        invalidatedEpoch = epoch
    }

    /// A local override replaced the data: every load in flight is older than it and is dropped.
    mutating func override() -> Int {
        epoch += 1
        recordedThrough = loadsStarted
        dataVersion += 1
        return dataVersion
    }

    /// The resource was wiped: nothing in flight may bring the old data back.
    mutating func wipe() {
        epoch += 1
        recordedThrough = loadsStarted
        dataVersion += 1
    }

    /// A rolled-back override restored the data from before it: newer than any cache read, but loads
    /// in flight (started after the override) still bring the server's word.
    mutating func restore() -> Int {
        dataVersion += 1
        return dataVersion
    }

    /// A cache read is asked for: the version it must find unchanged to show its copy.
    func cacheReadStarted() -> Int { dataVersion }

    /// A cache read came back: whether its copy may be shown (nothing arrived since it was asked for).
    mutating func cacheReadAnswered(askedAt version: Int) -> Bool {
        guard version == dataVersion else { return false }
        dataVersion += 1
        return true
    }

    /// Whether the data is still the one recorded at `version` (no observer replaced it meanwhile).
    func isUnchanged(since version: Int) -> Bool { version == dataVersion }
}
