import Synchronization

/// One reader's queue of journal entries not yet sent (the admin API's event stream), bounded in bytes:
/// a reader that stops reading is dropped, told why, rather than allowed to hold the server's memory.
///
/// The journal offers each entry as it records it, under its lock; the stream's writer takes them with
/// ``next()`` as fast as the client reads. Two bounds hold what waits: this feed's own
/// (``FeedBudget/perFeed``) and all feeds' together (``FeedBudget/total``). An entry heavier than a whole
/// bound is still taken when nothing waits (a client that reads keeps up with one large request); past
/// either bound the feed overflows: what waits is let go, and ``next()`` says so once, then ends.
final class JournalFeed: Sendable {
    /// What the writer sends next.
    enum Item: Sendable {
        /// An entry.
        case entry(JournalEntry)
        /// Nothing happened for a while: a comment keeps proxies from closing the stream.
        case heartbeat
        /// The reader fell too far behind: the last event, saying why, and the end.
        case overflowed(reason: String)
        /// The server stops, or the stream was closed.
        case finished
    }

    private struct State {
        var queue: [JournalEntry] = []
        var head = 0
        var bytes = 0
        var heartbeat = false
        /// Set once: what ends the feed after the queue (or instead of it, for an overflow).
        var ending: Item?
        var waiter: CheckedContinuation<Item, Never>?

        mutating func take() -> Item? {
            if case .overflowed? = ending { return ending }
            if head < queue.count {
                let entry = queue[head]
                head += 1
                bytes -= entry.weight
                if head == queue.count {
                    queue.removeAll(keepingCapacity: true)
                    head = 0
                }
                return .entry(entry)
            }
            if let ending { return ending }
            if heartbeat {
                heartbeat = false
                return .heartbeat
            }
            return nil
        }
    }

    private let state = Mutex(State())
    private let budget: FeedBudget

    init(budget: FeedBudget) { self.budget = budget }

    /// Takes `entry` unless that passes a bound, in which case the feed overflows. Never blocks.
    func offer(_ entry: JournalEntry) {
        let waiter: (CheckedContinuation<Item, Never>, Item)? = state.withLock { state in
            guard state.ending == nil else { return nil }
            let waiting = state.queue.count - state.head
            if waiting > 0 {
                if state.bytes + entry.weight > FeedBudget.perFeed {
                    return overflow(
                        &state,
                        reason: "the reader fell \(state.bytes + entry.weight) bytes behind; one may fall \(FeedBudget.perFeed)")
                }
                if !budget.reserve(entry.weight) {
                    return overflow(&state, reason: "the event streams together fell \(FeedBudget.total) bytes behind")
                }
            } else {
                budget.forceReserve(entry.weight)
            }
            state.queue.append(entry)
            state.bytes += entry.weight
            return state.waiter.take().flatMap { waiter in state.take().map { (waiter, $0) } }
        }
        if let (continuation, item) = waiter {
            release(item)
            continuation.resume(returning: item)
        }
    }

    /// Ends the feed with `reason`, letting go of what waits; called with the lock held.
    private func overflow(_ state: inout State, reason: String) -> (CheckedContinuation<Item, Never>, Item)? {
        budget.release(state.bytes)
        state.queue.removeAll()
        state.head = 0
        state.bytes = 0
        state.ending = .overflowed(reason: reason)
        guard let waiter = state.waiter.take() else { return nil }
        return (waiter, .overflowed(reason: reason))
    }

    /// Asks for a heartbeat when nothing else is to be sent.
    func beat() { deliver { $0.heartbeat = true } }

    /// Ends the feed after what waits.
    func finish() { deliver { state in if state.ending == nil { state.ending = .finished } } }

    /// Lets go of whatever waits (the stream is gone).
    func close() {
        let bytes = state.withLock { state -> Int in
            defer {
                state.queue.removeAll()
                state.head = 0
                state.bytes = 0
                if state.ending == nil { state.ending = .finished }
            }
            return state.bytes
        }
        budget.release(bytes)
        deliver { _ in }
    }

    private func deliver(_ change: (inout State) -> Void) {
        let ready: (CheckedContinuation<Item, Never>, Item)? = state.withLock { state in
            change(&state)
            guard state.waiter != nil, let item = state.take() else { return nil }
            return state.waiter.take().map { ($0, item) }
        }
        if let (continuation, item) = ready {
            release(item)
            continuation.resume(returning: item)
        }
    }

    /// The next thing to send, waiting for one. One caller at a time.
    func next() async -> Item {
        await withCheckedContinuation { (continuation: CheckedContinuation<Item, Never>) in
            let ready = state.withLock { state -> Item? in
                if let item = state.take() { return item }
                state.waiter = continuation
                return nil
            }
            if let ready {
                release(ready)
                continuation.resume(returning: ready)
            }
        }
    }

    /// Gives the total budget back what a taken entry held.
    private func release(_ item: Item) {
        if case .entry(let entry) = item { budget.release(entry.weight) }
    }

    /// Bytes waiting, for tests.
    var waitingBytes: Int { state.withLock { $0.bytes } }
}

/// What all of a server's event streams may hold unsent together.
final class FeedBudget: Sendable {
    /// One reader may fall this far behind: 8 MiB, half the journal's own budget, so a reader keeps up
    /// with bursts of large requests, and 32 of them cannot take more than the journal's 16 MiB each.
    static let perFeed = 8 << 20
    /// All readers together: 64 MiB.
    static let total = 64 << 20

    private let held = Atomic<Int>(0)

    /// Takes `bytes` if the total allows; false when it does not (nothing is taken then).
    func reserve(_ bytes: Int) -> Bool {
        var current = held.load(ordering: .relaxed)
        while true {
            guard current + bytes <= Self.total else { return false }
            let (exchanged, original) = held.compareExchange(
                expected: current, desired: current + bytes, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    /// Takes `bytes` whatever the total (the one entry a feed with nothing waiting may hold).
    func forceReserve(_ bytes: Int) { held.add(bytes, ordering: .relaxed) }

    func release(_ bytes: Int) { held.subtract(bytes, ordering: .relaxed) }

    /// Bytes held now, for tests.
    var heldBytes: Int { held.load(ordering: .relaxed) }
}
