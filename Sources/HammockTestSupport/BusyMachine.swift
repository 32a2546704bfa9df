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
/// taking the concurrency pool's threads away from it. They stop when `body` returns or throws.
/// - Parameters:
///   - threads: How many spinning threads; one per core when `nil`.
///   - isolation: Where `body` runs: the caller's actor (a `@MainActor` test's main actor).
public func withBusyMachine<T>(
    threads: Int? = nil, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
) async rethrows -> T {
    let stop = Arc()
    for _ in 0..<max(threads ?? ProcessInfo.processInfo.activeProcessorCount, 1) {
        let thread = Thread {
            var work: UInt64 = 1
            while !stop.flag.load(ordering: .relaxed) {
                for _ in 0..<10_000 { work = work &* 6_364_136_223_846_793_005 &+ 1 }
            }
            if work == 0 { print(work) }  // keeps the loop from being optimized away
        }
        thread.start()
    }
    defer { stop.flag.store(true, ordering: .relaxed) }
    return try await body()
}

/// The flag the spinning threads read, shared by reference.
private final class Arc: Sendable {
    let flag = Atomic<Bool>(false)
}
