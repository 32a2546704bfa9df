import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import Synchronization

/// One request to the upstream through AsyncHTTPClient's delegate API, on the event loop that received
/// the client's request. The async API (`execute(_:timeout:)`) starts an unstructured task on the shared
/// pool for every request (its cancel handler's registration), so every proxied request woke a pool
/// thread and came back: a quarter of the proxy's CPU went to switching threads (docs/benchmarks.md).
/// Here the answer's head arrives through a promise of the loop, and a streamed body through
/// ``UpstreamBody``, one part at a time.
final class UpstreamExchange: HTTPClientResponseDelegate {
    typealias Response = Void

    /// The answer's head came, but its body, read whole, did not: a 502, never an answer cut short.
    struct BrokeOff: Error {
        var error: any Error
    }

    /// What the head brought: the status and fields, and the body, whole (a small answer of known length,
    /// or none) or as it comes.
    struct Head: Sendable {
        var head: HTTPResponseHead
        var whole: [UInt8]?
        var stream: UpstreamBody?
    }

    private struct State {
        var head: HTTPResponseHead?
        /// The body read whole, for an answer that is.
        var collected: [UInt8]?
        var isHeadDelivered = false
    }

    let eventLoop: any EventLoop
    private let headPromise: EventLoopPromise<Head>
    /// The head and at most this many bytes of body with a `Content-Length` are read whole.
    private let readWhole: Int
    /// The request was a `HEAD`: whatever the fields say, no body follows.
    private let isHead: Bool
    private let state = Mutex(State())
    /// The pipe a streamed body goes through, made at the head.
    private let body: UpstreamBody

    init(eventLoop: any EventLoop, readWhole: Int, isHead: Bool) {
        self.eventLoop = eventLoop
        self.readWhole = readWhole
        self.isHead = isHead
        headPromise = eventLoop.makePromise()
        body = UpstreamBody(eventLoop: eventLoop)
    }

    /// The answer's head, and its body if read whole.
    var head: EventLoopFuture<Head> { headPromise.futureResult }

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        let code = head.status.code
        let length = head.headers.first(name: "content-length").flatMap(Int.init)
        let bodiless = isHead || code == 204 || code == 304 || (100..<200).contains(code)
        if bodiless || (length.map { $0 <= readWhole } ?? false) {
            // Read whole, delivered at the end (a body cut short is then a 502, never passed on as whole).
            state.withLock {
                $0.head = head
                $0.collected = bodiless ? nil : []
            }
        } else {
            state.withLock {
                $0.head = head
                $0.isHeadDelivered = true
            }
            body.attach(task)
            headPromise.succeed(Head(head: head, whole: nil, stream: body))
        }
        return eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let whole = state.withLock { state -> Bool in
            guard state.collected != nil else { return false }
            state.collected?.append(contentsOf: buffer.readableBytesView)
            return true
        }
        if whole { return eventLoop.makeSucceededVoidFuture() }
        if isHeadDeliveredAsStream { return body.push(buffer) }
        return eventLoop.makeSucceededVoidFuture()  // a body after a bodiless head: dropped
    }

    private var isHeadDeliveredAsStream: Bool { state.withLock { $0.isHeadDelivered } }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {
        let (head, collected, delivered) = state.withLock { ($0.head, $0.collected, $0.isHeadDelivered) }
        if delivered {
            body.finish(throwing: nil)
        } else if let head {
            headPromise.succeed(Head(head: head, whole: collected ?? [], stream: nil))
        } else {
            headPromise.fail(HTTPClientError.remoteConnectionClosed)
        }
    }

    func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {
        let (delivered, headCame) = state.withLock { ($0.isHeadDelivered, $0.head != nil) }
        if delivered {
            body.finish(throwing: error)
        } else {
            headPromise.fail(headCame ? BrokeOff(error: error) : error)
        }
    }
}

/// A streamed answer's body between AsyncHTTPClient (which pushes each part on the loop, and reads the
/// next once the future it got back completes) and the task that sends it to the client (which pulls).
/// One part waits at most: the upstream is read no faster than the client takes the answer. A reader
/// that stops, or a pipe dropped unread, cancels the upstream's request.
final class UpstreamBody: Sendable {
    private struct State {
        var waiting: (buffer: ByteBuffer, taken: EventLoopPromise<Void>)?
        var reader: CheckedContinuation<ByteBuffer?, any Error>?
        var end: Result<Void, any Error>?
        var task: HTTPClient.Task<Void>?
    }

    let eventLoop: any EventLoop
    private let state = Mutex(State())

    init(eventLoop: any EventLoop) { self.eventLoop = eventLoop }

    func attach(_ task: HTTPClient.Task<Void>) { state.withLock { $0.task = task } }

    /// A part arrived: handed to a waiting reader at once, or kept until one asks. The future completes
    /// when a reader has taken it.
    func push(_ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let taken = eventLoop.makePromise(of: Void.self)
        let (reader, dropped) = state.withLock { state -> (CheckedContinuation<ByteBuffer?, any Error>?, Bool) in
            // The reader has stopped (the request is being cancelled): nothing will take it.
            if state.end != nil { return (nil, true) }
            if let reader = state.reader.take() { return (reader, false) }
            state.waiting = (buffer, taken)
            return (nil, false)
        }
        if dropped {
            taken.succeed()
        } else if let reader {
            taken.succeed()
            reader.resume(returning: buffer)
        }
        return taken.futureResult
    }

    /// The body ended: whole (`nil`), or with `error`.
    func finish(throwing error: (any Error)?) {
        let reader = state.withLock { state -> CheckedContinuation<ByteBuffer?, any Error>? in
            guard state.end == nil else { return nil }
            state.end = error.map { .failure($0) } ?? .success(())
            return state.waiting == nil ? state.reader.take() : nil
        }
        if let error { reader?.resume(throwing: error) } else { reader?.resume(returning: nil) }
    }

    /// The next part, `nil` at the end; throws what cut the body short.
    func next() async throws -> ByteBuffer? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ByteBuffer?, any Error>) in
                let (ready, taken): (Result<ByteBuffer?, any Error>?, EventLoopPromise<Void>?) = state.withLock { state in
                    if let (buffer, taken) = state.waiting.take() { return (.success(buffer), taken) }
                    switch state.end {
                    case .success: return (.success(nil), nil)
                    case .failure(let error): return (.failure(error), nil)
                    case nil: break
                    }
                    state.reader = continuation
                    return (nil, nil)
                }
                // Outside the lock: AsyncHTTPClient may push the next part from inside `succeed`.
                taken?.succeed()
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            stop()
        }
    }

    /// The reader is gone: the upstream's request is cancelled, and a reader still waiting is told so.
    func stop() {
        let (task, reader, waiting) = state.withLock { state in
            let found = (state.end == nil ? state.task : nil, state.reader.take(), state.waiting.take())
            if state.end == nil { state.end = .failure(CancellationError()) }
            return found
        }
        waiting?.taken.succeed()
        reader?.resume(throwing: CancellationError())
        task?.cancel()
    }
}
