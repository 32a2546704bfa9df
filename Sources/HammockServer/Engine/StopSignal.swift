import Synchronization

/// Raised while the server stops, so responses held back by simulated latency are sent at once
/// instead of keeping the graceful shutdown waiting for the full delay.
final class StopSignal: Sendable {
    private struct State {
        var isRaised = false
        var nextID = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    /// Wakes every waiter; later waits return at once until ``lower()``.
    func raise() {
        let waiters = state.withLock { state in
            state.isRaised = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    func lower() { state.withLock { $0.isRaised = false } }

    /// How many wait now.
    var waiterCount: Int { state.withLock { $0.waiters.count } }

    /// Returns when the signal is raised, or when the calling task is cancelled.
    func wait() async {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.isRaised || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }
}

extension LatencyTimer {
    /// Runs `body`, then holds its outcome (an answer or an error) until `delay` after the call began,
    /// or until the server stops, whichever comes first: simulated latency, `_delay` and delay faults.
    func hold<T: Sendable>(
        for delay: Duration, releasedBy stopSignal: StopSignal, _ body: () async throws -> T
    ) async throws -> T {
        let wait = markArrival()
        let outcome: Result<T, any Error>
        do {
            outcome = .success(try await body())
        } catch {
            outcome = .failure(error)
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await wait(delay) }
            group.addTask { await stopSignal.wait() }
            await group.next()
            group.cancelAll()
        }
        return try outcome.get()
    }
}
