import Foundation
import HammockServer

/// The engine alone, in process: `MockServer.respond(to:)` on the memory store, no socket, no log.
/// What a request costs before the transport adds its share; the figure to profile
/// (`perf record -g hammock-bench engine`).
enum EngineBenchmark {
    /// - Parameter only: Runs only the request at this index (for a profile of one kind of request).
    static func run(rounds: Int, iterations: Int, only: Int? = nil) async throws {
        let mock = try await HTTPBenchmark.makeMock(storeName: "memory", directory: NSTemporaryDirectory())
        let patch: JSON = ["numberOfKids": 3]
        let cases: [(String, MockRequest)] = [
            ("GET /people/42", MockRequest(.get, "/people/42")),
            ("GET /people (100)", MockRequest(.get, "/people")),
            ("PATCH /people/42", MockRequest(.patch, "/people/42", json: patch)),
            ("GET /nowhere (404)", MockRequest(.get, "/nowhere")),
        ]
        print("\n### The engine in process (memory store), best of \(rounds) rounds of \(iterations)\n")
        print("| request | µs per request |")
        print("|---|---:|")
        for (index, (name, request)) in cases.enumerated() where only == nil || only == index {
            var best = Double.infinity
            for _ in 0..<rounds {
                let start = ContinuousClock.now
                for _ in 0..<iterations { _ = await mock.respond(to: request) }
                let elapsed = ContinuousClock.now - start
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                best = min(best, seconds * 1e6 / Double(iterations))
            }
            print("| \(name) | \(String(format: "%.2f", best)) |")
        }
    }
}
