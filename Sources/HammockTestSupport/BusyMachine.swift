import Foundation
import Synchronization

/// Runs `body` while other threads keep every core busy, for tests of what can race: on an idle
/// machine a race may never show (the sign-out trap of the second client review showed in 5 runs of 6
/// on a loaded 2-core machine and never on an idle one).
///
/// ```swift
/// try await withBusyMachine { try await raceDeletesAgainstCreates() }
/// ```
/// The spinning threads are plain threads, not tasks: they compete with the test for the cores without
/// taking the concurrency pool's threads away from it. They stop when the last `body` running returns
/// or throws.
///
/// Tests that run at once share one set of spinners. Each used to start its own: a dozen busy tests in
/// parallel (parameterised over three stores) ran twenty-odd spinners on two cores, and the test
/// process's own threads got a sixth of the machine, so that calls to PostgreSQL timed out together.
/// - Parameters:
///   - threads: How many spinning threads; one per core when `nil`. The first test to start decides.
///   - isolation: Where `body` runs: the caller's actor (a `@MainActor` test's main actor).
public func withBusyMachine<T>(
    threads: Int? = nil, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
) async rethrows -> T {
    BusyMachine.enter(threads: max(threads ?? ProcessInfo.processInfo.activeProcessorCount, 1))
    defer { BusyMachine.leave() }
    return try await body()
}

/// The spinners the running busy tests share, counted.
private enum BusyMachine {
    static let state = Mutex<(users: Int, stop: Arc?)>((0, nil))

    static func enter(threads: Int) {
        state.withLock { state in
            state.users += 1
            guard state.stop == nil else { return }
            let stop = Arc()
            state.stop = stop
            for _ in 0..<threads {
                let thread = Thread {
                    var work: UInt64 = 1
                    while !stop.flag.load(ordering: .relaxed) {
                        for _ in 0..<10_000 { work = work &* 6_364_136_223_846_793_005 &+ 1 }
                    }
                    if work == 0 { print(work) }  // keeps the loop from being optimized away
                }
                thread.start()
            }
        }
    }

    static func leave() {
        state.withLock { state in
            state.users -= 1
            guard state.users == 0 else { return }
            state.stop?.flag.store(true, ordering: .relaxed)
            state.stop = nil
        }
    }
}

/// The flag the spinning threads read, shared by reference.
private final class Arc: Sendable {
    let flag = Atomic<Bool>(false)
}
