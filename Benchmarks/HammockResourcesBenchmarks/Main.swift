import Foundation
import HammockClient
import HammockJSON
import HammockResources
import HammockServer
import HammockTesting

/// What an app would write by hand to skip fresh data: a timestamp, an in-flight flag, a clock read.
@MainActor
final class HandWrittenFreshness {
    var lastLoaded: ContinuousClock.Instant?
    var inFlight = false
    var loads = 0

    func loadIfNeeded() {
        if inFlight { return }
        if let lastLoaded, ContinuousClock.now - lastLoaded < .seconds(30) { return }
        loads += 1
    }
}

/// `scripts/bench resources`: observable resources against hand-written baselines, in the same run.
@main
struct ResourcesBench {
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// The best of `rounds` timings of `body`, in seconds per iteration.
    @MainActor
    static func measure(iterations: Int, rounds: Int = 5, _ body: (Int) -> Void) -> Double {
        var best = Double.infinity
        for _ in 0..<rounds {
            let start = ContinuousClock.now
            for index in 0..<iterations { body(index) }
            best = min(best, seconds(ContinuousClock.now - start) / Double(iterations))
        }
        return best
    }

    /// The same for an asynchronous body (a typed resource's `loadIfNeeded()`).
    @MainActor
    static func measure(iterations: Int, rounds: Int = 5, _ body: (Int) async throws -> Void) async rethrows -> Double {
        var best = Double.infinity
        for _ in 0..<rounds {
            let start = ContinuousClock.now
            for index in 0..<iterations { try await body(index) }
            best = min(best, seconds(ContinuousClock.now - start) / Double(iterations))
        }
        return best
    }

    static func row(_ name: String, _ hammock: Double, _ baseline: Double, _ baselineName: String) {
        print(
            String(
                format: "| %@ | %.1f ns | %@: %.1f ns | %.2f× |", name, hammock * 1e9, baselineName, baseline * 1e9,
                hammock / baseline))
    }

    @MainActor
    static func main() async throws {
        let arguments = CommandLine.arguments
        let iterations = arguments.firstIndex(of: "--iterations").flatMap { Int(arguments[$0 + 1]) } ?? 1_000_000

        let people = MockResource("people", fields: ["name": .string])
        let server = try await MockServer(resources: [people])
        try await server.addData(.array((1...20).map { ["name": .string("person \($0)")] }), for: "people")
        let api = try Service(baseURL: "http://mock", transport: MockServerTransport(server: server))
        api.configure { $0.expirationTime = .seconds(3600) }

        print("| operation | Hammock | baseline | ratio (Hammock / baseline) |")
        print("|---|---:|---:|---:|")

        // 1. loadIfNeeded() on fresh data, against a hand-written freshness check.
        let list = api.resource("/people")
        _ = await list.load().response()
        let handWritten = HandWrittenFreshness()
        handWritten.lastLoaded = .now
        var skipped = 0
        let fresh = measure(iterations: iterations) { _ in if list.loadIfNeeded() == nil { skipped += 1 } }
        let check = measure(iterations: iterations) { _ in handWritten.loadIfNeeded() }
        guard skipped == iterations * 5, handWritten.loads == 0 else { fatalError("a fresh resource was reloaded") }
        row("`loadIfNeeded()` on fresh data", fresh, check, "hand-written timestamp check")

        // 1b. A typed resource's `loadIfNeeded()` on the same fresh data: it returns the decoded value
        // (from the resource's memo) where the untyped one returns nil.
        struct Person: Decodable, Sendable { var name: String }
        let typed = api.resource("/people", as: [Person].self)
        var counted = 0
        let typedFresh = try await measure(iterations: iterations) { _ in counted += try await typed.loadIfNeeded().count }
        guard counted == iterations * 5 * 20 else { fatalError("the typed resource lost its value") }
        row("typed `loadIfNeeded()` on fresh data (returns the value)", typedFresh, fresh, "untyped `loadIfNeeded()`")

        // 2. The same call when it has to load: an in-process round trip to the mock server.
        let loads = 2_000
        let start = ContinuousClock.now
        for _ in 0..<loads {
            list.invalidate()
            _ = await list.loadIfNeeded()?.response()
        }
        let loaded = seconds(ContinuousClock.now - start) / Double(loads)
        row("`loadIfNeeded()` that loads (in process, 304)", loaded, fresh, "fresh `loadIfNeeded()`")

        // 3. One event to 1,000 closure observers, against calling 1,000 closures from an array.
        let observed = api.resource("/observed")
        var owners: [NSObject] = []
        var calls = 0
        for _ in 0..<1_000 {
            let owner = NSObject()
            owners.append(owner)
            observed.addObserver(owner: owner) { resource, event in
                if case .newData = event { calls += 1 }
            }
        }
        let closures: [(HammockResources.Resource, ResourceEvent) -> Void] = (0..<1_000).map { _ in
            { _, event in if case .newData = event { calls += 1 } }
        }
        let events = max(1, iterations / 1_000)
        let content = JSON.object(["name": "Ada"])
        let delivered = measure(iterations: events) { _ in observed.overrideLocalContent(with: content) }
        let direct = measure(iterations: events) { _ in for closure in closures { closure(observed, .newData(.localOverride)) } }
        guard calls == events * 5 * 2_000 else { fatalError("observers missed events: \(calls)") }
        row("one event to 1,000 observers", delivered, direct, "1,000 closures in an array")
        print(String(format: "\nPer observer: %.1f ns. Iterations: %d.", delivered / 1_000 * 1e9, iterations))
        withExtendedLifetime(owners) {}
        await server.stop()
    }
}
