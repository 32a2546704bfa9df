import HTTPTypes
import HammockClient
import HammockJSON
import HammockResources
import HammockTesting
import Synchronization

/// A fake API behind a `MockTransport`: answers from a script, records every request, and can hold
/// responses until a test releases them.
final class ScriptedBackend: Sendable {
    struct Reply: Sendable {
        var status: HTTPResponse.Status = .ok
        var headers: [(String, String)] = [("Content-Type", "application/json")]
        var body: [UInt8] = Array("{}".utf8)
        var failure: FakeNetworkError?

        static func json(_ json: JSON, status: HTTPResponse.Status = .ok, headers: [(String, String)] = []) -> Reply {
            Reply(status: status, headers: [("Content-Type", "application/json")] + headers, body: json.serialized())
        }
    }

    private struct State {
        var requests: [HTTPRequest] = []
        var script: [Reply] = []
        var fallback = Reply()
        var holding = false
        var held: [Int: CheckedContinuation<Void, any Error>] = [:]
        var nextHold = 0
    }

    private let state = Mutex(State())

    /// The transport to give a service.
    var transport: MockTransport {
        MockTransport { [self] request, _ in try await self.answer(request) }
    }

    /// The requests so far.
    var requests: [HTTPRequest] { state.withLock { $0.requests } }
    var requestCount: Int { state.withLock { $0.requests.count } }

    /// Replies used in order, then `fallback` for every request after.
    func script(_ replies: Reply..., fallback: Reply? = nil) {
        state.withLock {
            $0.script = replies
            if let fallback { $0.fallback = fallback }
        }
    }

    func setFallback(_ reply: Reply) { state.withLock { $0.fallback = reply } }

    /// While holding, responses wait until `releaseAll()`.
    func hold(_ holding: Bool) { state.withLock { $0.holding = holding } }

    var heldCount: Int { state.withLock { $0.held.count } }

    func releaseAll() {
        let waiting = state.withLock { state in
            let waiting = Array(state.held.values)
            state.held = [:]
            return waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Waits (bounded) until `count` responses are held.
    func waitForHeld(_ count: Int) async -> Bool {
        await eventually { heldCount >= count }
    }

    private func answer(_ request: HTTPRequest) async throws -> (HTTPResponse, [UInt8]) {
        let (reply, holdID) = state.withLock { state -> (Reply, Int?) in
            state.requests.append(request)
            let reply = state.script.isEmpty ? state.fallback : state.script.removeFirst()
            guard state.holding else { return (reply, nil) }
            state.nextHold += 1
            return (reply, state.nextHold)
        }
        if let holdID {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let cancelled = state.withLock { state -> Bool in
                        if Task.isCancelled { return true }
                        state.held[holdID] = continuation
                        return false
                    }
                    if cancelled { continuation.resume(throwing: CancellationError()) }
                }
            } onCancel: {
                let continuation = state.withLock { $0.held.removeValue(forKey: holdID) }
                continuation?.resume(throwing: CancellationError())
            }
        }
        if let failure = reply.failure { throw failure }
        var fields = HTTPFields()
        for (name, value) in reply.headers {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        return (HTTPResponse(status: reply.status, headerFields: fields), reply.body)
    }
}

struct FakeNetworkError: Error, Sendable, Equatable {
    var message = "connection refused"
}

/// Something to own observers in tests: when it goes, so do they.
final class Owner {}

/// Records the events an observer saw.
@MainActor
final class EventLog {
    var events: [ResourceEvent] = []
}

/// A counter that `@Sendable` callbacks can bump.
final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

/// Collects transfer events from any task.
final class TransferLog: Sendable {
    private let events = Mutex<[TransferEvent]>([])
    func append(_ event: TransferEvent) { events.withLock { $0.append(event) } }
    var all: [TransferEvent] { events.withLock { $0 } }
}
