import Synchronization

/// A clock that moves only when a test advances it, for code that takes its time from a `Clock`:
/// simulated latency in the mock server, expiry and retry windows in observable resources.
///
/// ```swift
/// let clock = ManualClock()
/// let service = try Service(baseURL: "http://api", transport: transport, clock: clock)
/// clock.advance(by: .seconds(31))          // the data is now older than the expiration time
/// ```
/// Sleepers wake when the clock passes their deadline; a cancelled sleeper throws `CancellationError`.
public final class ManualClock: Clock {
    /// A point on the manual clock: an offset from where it started.
    public struct Instant: InstantProtocol {
        /// How far after the clock's start.
        public var offset: Duration
        /// An instant `offset` after the start.
        public init(offset: Duration) { self.offset = offset }
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct State {
        var now = Instant(offset: .zero)
        var nextID = 0
        var sleepers: [Int: (deadline: Instant, continuation: CheckedContinuation<Void, any Error>)] = [:]
    }

    private let state = Mutex(State())

    /// A clock at offset zero.
    public init() {}

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .zero }

    /// How many sleepers are waiting.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Bool? in
                    if Task.isCancelled { return false }
                    if deadline <= state.now { return true }
                    state.sleepers[id] = (deadline, continuation)
                    return nil
                }
                switch outcome {
                case true?: continuation.resume()
                case false?: continuation.resume(throwing: CancellationError())
                case nil: break
                }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward and wakes every sleeper whose deadline has come.
    public func advance(by duration: Duration) {
        let due = state.withLock { state in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for key in due.keys { state.sleepers.removeValue(forKey: key) }
            return due.values.map(\.continuation)
        }
        for continuation in due { continuation.resume() }
    }

    /// Waits until `count` sleepers are registered (see ``eventually(isolation:_:)``). Returns whether they came.
    public func waitForSleepers(_ count: Int) async -> Bool {
        await eventually { sleeperCount >= count }
    }
}
