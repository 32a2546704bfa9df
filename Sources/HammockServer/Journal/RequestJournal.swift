public import Foundation
import Synchronization

/// Every request the server answered, and its answer, newest last, in a bounded buffer: what a test
/// asks "did the app send that?" of.
///
/// ```swift
/// let server = try await MockServer(resources: [orders])
/// // … the app under test runs against the server …
/// let order = try await server.journal.next(matching: RequestPattern(.post, "/orders"), timeout: .seconds(2))
/// #expect(order.request.headerFields[.authorization] == "Bearer t-1")
/// try server.journal.verify(RequestPattern(.delete, "/orders/*"), count: .never)
/// ```
/// A failed wait or verification throws a ``JournalError`` that names the closest recorded requests
/// and what differed in each, as WireMock's near misses do.
///
/// The server records each request outermost, once its answer is final: refusals of the transport,
/// simulated latency, CORS headers and 304s are recorded as the client saw them. The admin API's
/// requests are not recorded. When the buffer is full (``Limits``), the oldest entries go.
public final class RequestJournal: Sendable {
    /// How much the journal keeps: the oldest entries go when either bound is passed.
    public struct Limits: Sendable, Hashable {
        /// The most entries kept; 0 turns the journal off.
        public var entries: Int
        /// The most bytes of bodies and header fields kept, all entries together.
        public var bytes: Int

        /// Creates limits: 1,000 entries (see docs/benchmarks.md for why not more) and 16 MiB, the bound the reliability suite holds memory to under hostile requests (docs/reliability.md).
        public init(entries: Int = 1_000, bytes: Int = 16 << 20) {
            self.entries = max(entries, 0)
            self.bytes = max(bytes, 0)
        }

        /// No journal.
        public static let off = Limits(entries: 0, bytes: 0)
    }

    struct Waiter {
        var pattern: RequestPattern
        var after: UInt64
        var continuation: CheckedContinuation<JournalEntry?, Never>
    }

    struct State {
        /// Oldest first; `entries[head...]` then `entries[..<head]` once the ring has wrapped.
        var ring: [JournalEntry] = []
        var head = 0
        var bytes = 0
        var lastID: UInt64 = 0
        var nextWaiter = 0
        var waiters: [Int: Waiter] = [:]
        /// Called with each new entry, under the lock (so in order); each must return at once.
        var subscribers: [Int: @Sendable (JournalEntry) -> Void] = [:]

        var ordered: [JournalEntry] { Array(ring[head...] + ring[..<head]) }

        /// Adds the newest entry, dropping the oldest ones the limits no longer allow. An entry heavier
        /// than the whole byte budget is still kept, alone: the latest request is the one a test asks about.
        mutating func append(_ entry: JournalEntry, limits: Limits) {
            while !ring.isEmpty && bytes + entry.weight > limits.bytes { removeOldest() }
            if ring.count >= limits.entries {
                // Full: the oldest slot takes the new entry, the common case once the ring has filled.
                bytes -= ring[head].weight
                ring[head] = entry
                head = (head + 1) % ring.count
            } else if head == 0 {
                ring.append(entry)
            } else {
                // Wrapped, and shortened by the byte budget: the newest goes just before the oldest.
                ring.insert(entry, at: head)
                head += 1
            }
            bytes += entry.weight
        }

        /// Drops the oldest entry (moving the ones after it in the array: only the byte budget does this).
        mutating func removeOldest() {
            guard !ring.isEmpty else { return }
            bytes -= ring[head].weight
            ring.remove(at: head)
            if head == ring.count { head = 0 }
        }
    }

    /// The bounds given at creation.
    public let limits: Limits
    private let state = Mutex(State())
    /// The wall-clock time at a moment of the monotonic clock, from which each entry's time follows.
    private let base: (date: Date, instant: ContinuousClock.Instant)
    /// Sleeps on the server's clock (waits, and the events stream's heartbeat).
    let sleep: @Sendable (Duration) async -> Void

    /// Creates a journal.
    /// - Parameters:
    ///   - clock: The clock ``next(matching:after:timeout:)`` waits on.
    ///   - now: The wall-clock time, read once: each entry's time is it plus the monotonic time since.
    public init<C: Clock>(
        limits: Limits = Limits(), clock: C = ContinuousClock(), now: @escaping @Sendable () -> Date = { Date() }
    ) where C.Duration == Duration {
        self.limits = limits
        base = (now(), ContinuousClock.now)
        sleep = { duration in try? await clock.sleep(for: duration) }
    }

    /// Whether the journal records anything (its limits allow an entry).
    public var isEnabled: Bool { limits.entries > 0 }

    /// Every entry kept, oldest first.
    public var entries: [JournalEntry] { state.withLock { $0.ordered } }

    /// The entries that match `pattern`, oldest first, after `cursor` if given.
    public func entries(matching pattern: RequestPattern, after cursor: JournalCursor? = nil) -> [JournalEntry] {
        entries.filter { $0.id > (cursor?.id ?? 0) && pattern.matches($0) }
    }

    /// How many kept entries match `pattern`.
    public func count(matching pattern: RequestPattern = .any) -> Int { entries(matching: pattern).count }

    /// Forgets every entry. Entry numbers go on from where they were.
    public func clear() {
        state.withLock { state in
            state.ring.removeAll(keepingCapacity: true)
            state.head = 0
            state.bytes = 0
        }
    }

    /// A mark after the latest entry: ``next(matching:after:timeout:)`` and
    /// ``entries(matching:after:)`` given it see only what is recorded later.
    public func mark() -> JournalCursor { JournalCursor(id: state.withLock { $0.lastID }) }

    /// Checks that the number of kept entries matching `pattern` is `count` (at least one by default).
    /// - Throws: ``JournalError`` with the count found and the closest entries, each with what differed.
    public func verify(_ pattern: RequestPattern, count: RequestCount = .atLeast(1)) throws(JournalError) {
        let all = entries
        let found = all.filter(pattern.matches).count
        guard !count.contains(found) else { return }
        throw JournalError(
            reason: .wrongCount(expected: count, found: found), pattern: pattern,
            nearMisses: found == 0 ? Self.nearMisses(for: pattern, in: all) : [])
    }

    /// The earliest entry after `cursor` (by default the earliest kept) that matches `pattern`, waiting
    /// up to `timeout` for one to be recorded. Waiting from a cursor taken before the app acts
    /// (``mark()``) sees only what the action sent.
    /// - Throws: ``JournalError`` if none is recorded in time (naming the closest entries and what
    ///   differed), if the task is cancelled, or if the journal is off.
    public func next(
        matching pattern: RequestPattern = .any, after cursor: JournalCursor? = nil, timeout: Duration = .seconds(5)
    ) async throws(JournalError) -> JournalEntry {
        guard isEnabled else { throw JournalError(reason: .journalOff, pattern: pattern, nearMisses: []) }
        let after = cursor?.id ?? 0
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let sleep = self.sleep
        let found: JournalEntry? = await withTaskGroup(of: JournalEntry?.self) { group in
            group.addTask { await self.wait(id: id, for: pattern, after: after) }
            group.addTask {
                await sleep(timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        if let found { return found }
        let reason: JournalError.Reason = Task.isCancelled ? .cancelled : .timedOut(after: timeout)
        let misses = Self.nearMisses(for: pattern, in: entries.filter { $0.id > after })
        throw JournalError(reason: reason, pattern: pattern, nearMisses: misses)
    }

    /// Waits for a matching entry; `nil` when cancelled.
    private func wait(id: Int, for pattern: RequestPattern, after: UInt64) async -> JournalEntry? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<JournalEntry?, Never>) in
                let outcome = state.withLock { state -> JournalEntry?? in
                    // Checked under the lock the cancellation handler takes: either it ran before (and
                    // the flag is set) or it runs after the waiter is registered and resumes it.
                    if Task.isCancelled { return .some(nil) }
                    if let entry = state.ordered.first(where: { $0.id > after && pattern.matches($0) }) { return entry }
                    state.waiters[id] = Waiter(pattern: pattern, after: after, continuation: continuation)
                    return nil
                }
                if let outcome { continuation.resume(returning: outcome) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: nil)
        }
    }

    /// Each new entry as it is recorded, until the stream's consumer stops (the buffer keeps the newest
    /// `buffer` entries a slow consumer has not read yet).
    public func updates(buffer: Int = 256) -> AsyncStream<JournalEntry> {
        let (stream, continuation) = AsyncStream<JournalEntry>.makeStream(bufferingPolicy: .bufferingNewest(max(buffer, 1)))
        let id = subscribe { entry in continuation.yield(entry) }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        return stream
    }

    /// Calls `sink` with each entry recorded from now on, in order, under the journal's lock: it must
    /// return at once. Returns what ``unsubscribe(_:)`` takes.
    package func subscribe(_ sink: @escaping @Sendable (JournalEntry) -> Void) -> Int {
        state.withLock { state in
            state.nextWaiter += 1
            state.subscribers[state.nextWaiter] = sink
            return state.nextWaiter
        }
    }

    /// Stops calling a sink ``subscribe(_:)`` registered.
    package func unsubscribe(_ id: Int) { _ = state.withLock { $0.subscribers.removeValue(forKey: id) } }

    static func seconds(_ duration: Duration) -> TimeInterval {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// How many ``updates(buffer:)`` streams and other subscribers are open.
    package var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Records an attempt to deliver a webhook: `request` as sent, `answer` as received (status 0 when none
    /// came). Subscribers get it; waiters do not (a ``RequestPattern`` is about requests the server answered).
    func recordWebhook(request: MockRequest, answer: WebhookAnswer?, attempt: WebhookAttempt) {
        let response = MockResponse(
            status: answer?.status ?? Interventions.noAnswer, headerFields: answer?.headerFields ?? [:],
            body: answer?.body ?? [])
        let peer = URL(string: attempt.url).flatMap { url in url.host.map { host in url.port.map { "\(host):\($0)" } ?? host } }
        record(request: request, response: response, arrival: nil, route: nil, webhook: attempt, peer: peer)
    }

    /// Records a message a client sent on a WebSocket opened by `request`, or the socket's end.
    func recordWebSocket(request: MockRequest, body: [UInt8], event: WebSocketEvent, route: MatchedRoute?, peer: String?) {
        var message = request
        message.body = body
        record(
            request: message, response: MockResponse(status: .switchingProtocols), arrival: nil, route: route,
            webSocket: event, peer: peer)
    }

    /// Records an answered request: subscribers get it, and waiters whose pattern it matches are resumed.
    func record(
        request: MockRequest, response: MockResponse, arrival: ContinuousClock.Instant?, route: MatchedRoute?,
        webhook: WebhookAttempt? = nil, webSocket: WebSocketEvent? = nil, peer: String? = nil
    ) {
        guard isEnabled else { return }
        // One clock read: the wall-clock time follows from the monotonic one (a second read cost 8% of
        // the journal's time under perf).
        let instant = ContinuousClock.now
        let time = base.date.addingTimeInterval(Self.seconds(base.instant.duration(to: instant)))
        let duration = arrival.map { $0.duration(to: instant) } ?? .zero
        let limits = self.limits
        let (entry, woken) = state.withLock { state in
            state.lastID += 1
            let entry = JournalEntry(
                id: state.lastID, time: time, duration: duration, request: request, response: response, route: route,
                isRefused: request.rejection != nil, webhook: webhook, webSocket: webSocket, peer: peer)
            state.append(entry, limits: limits)
            var woken: [CheckedContinuation<JournalEntry?, Never>] = []
            if !state.waiters.isEmpty {
                for (id, waiter) in state.waiters where waiter.after < entry.id && waiter.pattern.matches(entry) {
                    woken.append(waiter.continuation)
                    state.waiters[id] = nil
                }
            }
            // Under the lock, so that every subscriber sees entries in order; yielding never blocks.
            for subscriber in state.subscribers.values { subscriber(entry) }
            return (entry, woken)
        }
        for continuation in woken { continuation.resume(returning: entry) }
    }

    /// The entries closest to matching `pattern`: fewest differences first, the newest first among
    /// equals; at most `limit`.
    static func nearMisses(for pattern: RequestPattern, in entries: [JournalEntry], limit: Int = 3) -> [JournalNearMiss] {
        let scored = entries.map { JournalNearMiss(entry: $0, differences: pattern.differences(from: $0)) }
        let sorted = scored.sorted { a, b in
            a.differences.count != b.differences.count ? a.differences.count < b.differences.count : a.entry.id > b.entry.id
        }
        return Array(sorted.prefix(limit))
    }
}

/// A place in a ``RequestJournal``: entries recorded after it are newer.
public struct JournalCursor: Sendable, Hashable {
    /// The number of the latest entry when the mark was made.
    public var id: UInt64
    /// A cursor after entry `id`.
    public init(id: UInt64) { self.id = id }
}

/// A recorded request that did not match, and what differed: what a failed wait or verification shows.
public struct JournalNearMiss: Sendable, CustomStringConvertible {
    /// The request.
    public var entry: JournalEntry
    /// Each condition it did not meet, in words.
    public var differences: [String]

    /// `#4 POST /orders → 201: body member 'total' is 12, not 10`: the first difference, and how many
    /// more there are.
    public var description: String {
        guard let first = differences.first else { return entry.summary }
        let more = differences.count - 1
        return "\(entry.summary): \(first)" + (more == 0 ? "" : " (and \(more) more difference\(more == 1 ? "" : "s"))")
    }
}

/// A wait or a verification on the journal that failed, with the recorded requests that came closest.
///
/// ```text
/// expected at least 1 request matching POST /orders {body total = 10}, found 0
/// closest recorded requests:
///   #3 POST /orders → 201: body member 'total' is 12, not 10
///   #1 GET /orders → 200: method is GET, not POST
/// ```
public struct JournalError: Error, Sendable, CustomStringConvertible {
    /// Why it failed.
    public enum Reason: Sendable, Hashable {
        /// No matching request was recorded within the timeout.
        case timedOut(after: Duration)
        /// The number of matching requests was not the one expected.
        case wrongCount(expected: RequestCount, found: Int)
        /// The waiting task was cancelled.
        case cancelled
        /// The journal keeps nothing (``RequestJournal/Limits/off``).
        case journalOff
    }

    /// Why it failed.
    public var reason: Reason
    /// What was looked for.
    public var pattern: RequestPattern
    /// The closest recorded requests, closest first (none when the count was wrong only because too
    /// many matched).
    public var nearMisses: [JournalNearMiss]

    public var description: String {
        var lines: [String]
        switch reason {
        case .timedOut(let timeout):
            lines = ["no request matching \(pattern) was recorded within \(timeout)"]
        case .wrongCount(let expected, let found):
            let wanted =
                expected == .never
                ? "no request" : "\(expected) request\(expected.description.hasSuffix(" 1") ? "" : "s")"
            lines = ["expected \(wanted) matching \(pattern), found \(found)"]
        case .cancelled:
            lines = ["cancelled while waiting for a request matching \(pattern)"]
        case .journalOff:
            lines = ["the journal is off (its limits keep no entry), so no request matching \(pattern) can be found"]
        }
        if case .wrongCount(_, let found) = reason, found > 0 { return lines[0] }
        if nearMisses.isEmpty {
            lines.append("the journal holds no request to compare with")
        } else {
            lines.append("closest recorded requests:")
            lines += nearMisses.map { "  \($0)" }
        }
        return lines.joined(separator: "\n")
    }
}
