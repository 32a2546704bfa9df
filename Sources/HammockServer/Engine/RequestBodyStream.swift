import HammockJSON
import Synchronization

/// A request body read from the socket while the request is already being answered: what a route that
/// takes streamed bodies (``MockEndpoint/takesStreamedBody``, the proxy) sees in place of
/// ``MockRequest/body`` when the body is larger than the server's body limit or its length is not known
/// once the limit is passed. Every other route still sees the whole body, or the 413 it always had.
///
/// ```swift
/// for try await chunk in request.bodyStream! { upload(chunk) }
/// ```
///
/// One reader at a time. It is bounded: past ``highWater`` bytes waiting, the transport stops reading the
/// socket (TCP, or HTTP/2's flow control, then slows the client) until the reader has taken all but
/// ``lowWater`` of them. A body cut short (the client went away, the server stopped) ends the reader's
/// loop with ``RequestBodyStream/Cut`` rather than as if the body had ended.
public final class RequestBodyStream: AsyncSequence, Sendable {
    public typealias Element = [UInt8]

    /// The body ended before all of it arrived: the client closed the connection, the server stopped, or
    /// the client sent nothing more for the request timeout (``stalled``).
    public struct Cut: Error, Sendable, CustomStringConvertible {
        /// The bytes that did arrive.
        public var received: Int
        /// How long the client had sent nothing when the body was ended for it; `nil` for a body cut by a
        /// close or the server's stop.
        public var stalled: Duration?

        public var description: String {
            guard let stalled else { return "the request body was cut short after \(received) bytes" }
            return "the request body stopped arriving after \(received) bytes: nothing more came for \(stalled)"
        }
    }

    private enum End {
        case complete
        case cut(stalled: Duration?)
    }

    private struct State {
        var chunks: [[UInt8]] = []
        var head = 0
        var waitingBytes = 0
        var received = 0
        var end: End?
        var paused = false
        var waiter: CheckedContinuation<[UInt8]?, any Error>?

        mutating func take() -> [UInt8]? {
            guard head < chunks.count else { return nil }
            let chunk = chunks[head]
            chunks[head] = []
            head += 1
            waitingBytes -= chunk.count
            if head == chunks.count {
                chunks.removeAll(keepingCapacity: true)
                head = 0
            }
            return chunk
        }

        /// What a reader with nothing waiting gets: the end, or the cut.
        var ending: Result<[UInt8]?, any Error>? {
            switch end {
            case nil: nil
            case .complete: .success(nil)
            case .cut(let stalled): .failure(Cut(received: received, stalled: stalled))
            }
        }
    }

    /// The length the request declared (`Content-Length`), if it did.
    public let length: Int?
    /// Past this many bytes waiting, ``yield(_:)`` asks the transport to stop reading. 256 KiB: four of
    /// HTTP/2's default 64 KiB windows, a few socket reads, and small beside the 1 MiB body limit.
    let highWater: Int
    /// Reading resumes once no more than this many bytes wait.
    let lowWater: Int
    private let state = Mutex(State())
    private let resume: @Sendable () -> Void

    /// - Parameter length: The declared length, if any.
    /// - Parameter resume: Called, outside any lock, when the transport may read again after
    ///   ``yield(_:)`` said to pause.
    package init(
        length: Int?, highWater: Int = 256 * 1024, lowWater: Int = 64 * 1024, resume: @escaping @Sendable () -> Void = {}
    ) {
        self.length = length
        self.highWater = highWater
        self.lowWater = Swift.min(lowWater, highWater)
        self.resume = resume
    }

    /// Hands the reader bytes the client sent. Returns whether the transport may go on reading: `false`
    /// once ``highWater`` bytes wait (it then waits for `resume`).
    @discardableResult
    package func yield(_ bytes: [UInt8]) -> Bool {
        guard !bytes.isEmpty else { return true }
        let (waiter, keepReading): (CheckedContinuation<[UInt8]?, any Error>?, Bool) = state.withLock { state in
            guard state.end == nil else { return (nil, true) }
            state.received += bytes.count
            if let waiter = state.waiter.take() { return (waiter, true) }
            state.chunks.append(bytes)
            state.waitingBytes += bytes.count
            if state.waitingBytes >= highWater { state.paused = true }
            return (nil, !state.paused)
        }
        waiter?.resume(returning: bytes)
        return keepReading
    }

    /// Ends the body: whole (`complete`), or cut short, which the reader sees as ``Cut`` once it has
    /// taken what arrived.
    package func finish(complete: Bool) {
        end(complete ? .complete : .cut(stalled: nil))
    }

    /// Ends the body as stalled: the client sent nothing for `after`. The reader sees ``Cut`` with
    /// ``Cut/stalled`` set once it has taken what arrived.
    package func stall(after: Duration) {
        end(.cut(stalled: after))
    }

    private func end(_ end: End) {
        let (waiter, received) = state.withLock { state -> (CheckedContinuation<[UInt8]?, any Error>?, Int) in
            guard state.end == nil else { return (nil, state.received) }
            state.end = end
            return (state.waiter.take(), state.received)
        }
        switch end {
        case .complete: waiter?.resume(returning: nil)
        case .cut(let stalled): waiter?.resume(throwing: Cut(received: received, stalled: stalled))
        }
    }

    /// Whether the body has ended, whole or not.
    public var isFinished: Bool { state.withLock { $0.end != nil } }

    /// The bytes that have arrived so far.
    public var received: Int { state.withLock { $0.received } }

    /// The next piece of the body, waiting for one; `nil` at its end. Throws ``Cut`` for a body cut
    /// short, `CancellationError` when the calling task is cancelled.
    func next() async throws -> [UInt8]? {
        try await withTaskCancellationHandler {
            let (taken, resumeReading): (Result<[UInt8]?, any Error>?, Bool) = state.withLock { state in
                guard let chunk = state.take() else { return (state.ending, false) }
                if state.paused, state.waitingBytes <= lowWater {
                    state.paused = false
                    return (.success(chunk), true)
                }
                return (.success(chunk), false)
            }
            if resumeReading { resume() }
            if let taken { return try taken.get() }
            try Task.checkCancellation()
            return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8]?, any Error>) in
                let ready: Result<[UInt8]?, any Error>? = state.withLock { state in
                    if let chunk = state.take() { return .success(chunk) }
                    if let ending = state.ending { return ending }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiter.take() }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// The whole body, if it is at most `limit` bytes; otherwise ``HTTPProblem`` 413.
    public func collect(upTo limit: Int) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in self {
            guard bytes.count + chunk.count <= limit else { throw HTTPProblem.contentTooLarge(limit: limit) }
            bytes += chunk
        }
        return bytes
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let stream: RequestBodyStream
        public mutating func next() async throws -> [UInt8]? { try await stream.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(stream: self) }
}

extension RequestBodyStream.Cut: HTTPProblemConvertible {
    /// What a route that rethrows the cut answers: 408 for a body that stopped arriving (nothing came for
    /// the request timeout), 400 for one cut short (an answer the closed connection may never carry).
    public var problem: HTTPProblem {
        guard let stalled else {
            return HTTPProblem(.badRequest, detail: "The request body was cut short after \(received) bytes")
        }
        let seconds = RequestJournal.seconds(stalled)
        return HTTPProblem(
            .requestTimeout,
            detail: "The request body stopped arriving after \(received) bytes: nothing came for \(seconds) seconds",
            extensions: ["timeout": .double(seconds), "received": .integer(received)])
    }
}
