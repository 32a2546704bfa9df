import Synchronization
import Testing

/// Runs the tests that compute for seconds without suspending one at a time.
///
/// Why: the concurrency pool has one thread per core, two on the CI machine. Two such tests running
/// together held both, and every test waiting on a loopback socket stalled with them: a watchdog task
/// sleeping 50 ms woke up to 10.5 s late in a full run, and reads with a 10 s timeout gave up (a fault
/// test failed CI that way). One at a time, they keep a thread free for everyone else.
struct CPUBound: TestTrait, TestScoping {
    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        await Self.gate.enter()
        do {
            try await function()
        } catch {
            Self.gate.leave()
            throw error
        }
        Self.gate.leave()
    }

    static let gate = Gate()

    /// A lock one task holds at a time; the others wait suspended, holding no thread.
    final class Gate: Sendable {
        private struct State {
            var isHeld = false
            var waiting: [CheckedContinuation<Void, Never>] = []
        }
        private let state = Mutex(State())

        func enter() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let entered = state.withLock { state -> Bool in
                    guard state.isHeld else {
                        state.isHeld = true
                        return true
                    }
                    state.waiting.append(continuation)
                    return false
                }
                if entered { continuation.resume() }
            }
        }

        func leave() {
            let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard !state.waiting.isEmpty else {
                    state.isHeld = false
                    return nil
                }
                return state.waiting.removeFirst()  // the gate passes straight to the next in line
            }
            next?.resume()
        }
    }
}

extension Trait where Self == CPUBound {
    /// The test computes for seconds without suspending: run it alone among such tests.
    static var cpuBound: Self { CPUBound() }
}
