public import Foundation
public import HTTPTypes

/// One request made through a resource: a load or a mutation. Await it, attach callbacks, or cancel it.
///
/// ```swift
/// let request = api.resource("/people").request(.post, json: ["name": "Ada"])
/// request.onSuccess { entity in print("created", entity.header("Location") ?? "") }
/// switch await request.response() {
/// case .success(let entity): print(entity.jsonContent ?? [:])
/// case .failure(let error): print(error.userMessage)
/// }
/// ```
/// Loads are shared: `loadIfNeeded()` hands every caller the same request while it is in flight, so
/// cancelling it cancels it for all of them.
@MainActor
public final class ResourceRequest {
    /// The method.
    public let method: HTTPRequest.Method
    /// The URL.
    public let url: URL
    /// The header fields it was sent with (after configuration, before interceptors).
    public let headerFields: HTTPFields
    /// Whether it is a load (it updates the resource's data and error).
    public let isLoad: Bool
    /// When it started, on the service's clock.
    public let startedAt: ServiceInstant
    /// Its outcome, once it has one.
    public private(set) var outcome: Result<Entity, ResourceError>?

    let clock: ServiceClock
    let expectedDuration: Double
    let tracker: TransferTracker?
    var task: Task<Void, Never>?
    var cancellationHandler: (() -> Void)?
    /// For loads: its place in order and the epoch it started in (see `LoadLedger`).
    var ticket: LoadLedger.Ticket?
    private var completionHandlers: [(Result<Entity, ResourceError>) -> Void] = []
    private var waiters: [Int: CheckedContinuation<Result<Entity, ResourceError>, Never>] = [:]
    private var nextWaiterID = 0
    private var progressContinuations: [AsyncStream<Double>.Continuation] = []

    init(
        method: HTTPRequest.Method, url: URL, headerFields: HTTPFields, isLoad: Bool, clock: ServiceClock,
        expectedDuration: Double, tracker: TransferTracker? = nil
    ) {
        self.tracker = tracker
        self.method = method
        self.url = url
        self.headerFields = headerFields
        self.isLoad = isLoad
        self.clock = clock
        self.startedAt = clock.now()
        self.expectedDuration = expectedDuration
    }

    /// Whether it has finished (succeeded, failed or been cancelled).
    public var isCompleted: Bool { outcome != nil }

    /// Waits for the outcome. If the waiting task is cancelled, it stops waiting with a cancellation
    /// error, but the request goes on for whoever else shares it (use ``cancel()`` to stop it).
    public func response() async -> Result<Entity, ResourceError> {
        if let outcome { return outcome }
        nextWaiterID += 1
        let id = nextWaiterID
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if Task.isCancelled {
                    continuation.resume(returning: .failure(.cancelled(at: clock.now())))
                } else {
                    waiters[id] = continuation
                }
            }
        } onCancel: {
            Task { @MainActor in self.stopWaiting(id) }
        }
    }

    private func stopWaiting(_ id: Int) {
        waiters.removeValue(forKey: id)?.resume(returning: .failure(.cancelled(at: clock.now())))
    }

    /// Waits for the entity, throwing the error of a failed request.
    public func value() async throws(ResourceError) -> Entity {
        try await response().get()
    }

    /// Calls `handler` with the outcome (at once if it is already known).
    @discardableResult
    public func onCompletion(_ handler: @escaping @MainActor (Result<Entity, ResourceError>) -> Void) -> Self {
        if let outcome { handler(outcome) } else { completionHandlers.append(handler) }
        return self
    }

    /// Calls `handler` with the entity if the request succeeds.
    @discardableResult
    public func onSuccess(_ handler: @escaping @MainActor (Entity) -> Void) -> Self {
        onCompletion { if case .success(let entity) = $0 { handler(entity) } }
    }

    /// Calls `handler` with the error if the request fails (cancellation included).
    @discardableResult
    public func onFailure(_ handler: @escaping @MainActor (ResourceError) -> Void) -> Self {
        onCompletion { if case .failure(let error) = $0 { handler(error) } }
    }

    /// Cancels the request: it completes at once with a cancellation error, and the network call is
    /// abandoned. Cancelling a finished request does nothing.
    public func cancel() {
        guard outcome == nil else { return }
        cancellationHandler?()
        task?.cancel()
    }

    /// How far along it is, from 0 to 1, and 1 once it is done. Until the response head arrives it is
    /// an estimate from the service's typical latency and the bytes to move (the request body and the
    /// resource's previous response). Transports that report progress (`TransferProgress`:
    /// AsyncHTTPClient, the mock server in process) then move it by the body bytes received against
    /// `Content-Length`.
    public var progress: Double {
        guard outcome == nil else { return 1 }
        let now = clock.now()
        let estimate = ProgressEstimator.fraction(elapsed: startedAt.duration(to: now).seconds, expected: expectedDuration)
        guard let transfer = tracker?.snapshot, let headAt = transfer.headReceivedAt else { return estimate }
        let atHead = ProgressEstimator.fraction(elapsed: startedAt.duration(to: headAt).seconds, expected: expectedDuration)
        guard let expected = transfer.expectedBytes, expected > 0 else { return max(atHead, estimate) }
        let received = min(1, Double(transfer.receivedBytes) / Double(expected))
        return atHead + (0.99 - atHead) * received
    }

    /// The progress every `interval` on the service's clock (at least every 10 ms: a zero interval
    /// recomputed it tens of thousands of times a second on the main actor), ending with 1 when the
    /// request completes.
    public func progressUpdates(every interval: Duration) -> AsyncStream<Double> {
        let interval = max(interval, .milliseconds(10))
        let (stream, continuation) = AsyncStream.makeStream(of: Double.self, bufferingPolicy: .bufferingNewest(1))
        guard outcome == nil else {
            continuation.yield(1)
            continuation.finish()
            return stream
        }
        progressContinuations.append(continuation)
        continuation.yield(progress)
        let clock = self.clock
        let ticker = Task { [weak self] in
            while !Task.isCancelled {
                do { try await clock.sleep(interval) } catch { return }
                guard let self, self.outcome == nil else { return }
                continuation.yield(self.progress)
            }
        }
        continuation.onTermination = { _ in ticker.cancel() }
        return stream
    }

    /// Records the outcome and tells everyone waiting. Only the first call counts.
    func complete(with outcome: Result<Entity, ResourceError>) {
        guard self.outcome == nil else { return }
        self.outcome = outcome
        cancellationHandler = nil
        for continuation in progressContinuations {
            continuation.yield(1)
            continuation.finish()
        }
        progressContinuations = []
        let handlers = completionHandlers
        completionHandlers = []
        for handler in handlers { handler(outcome) }
        let waiters = self.waiters.values
        self.waiters = [:]
        for waiter in waiters { waiter.resume(returning: outcome) }
    }
}
