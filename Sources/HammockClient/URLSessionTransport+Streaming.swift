import Foundation
public import HTTPTypes
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the transport's session delegate hands one task's events to.
protocol TaskTransfer: Sendable {
    /// The head arrived; `false` to cancel the task.
    func received(_ response: URLResponse) -> Bool
    /// Part of the body arrived; `false` to cancel the task.
    func received(_ data: Data, on task: URLSessionDataTask) -> Bool
    /// The task ended.
    func completed(error: (any Error)?, response: URLResponse?)
    /// So many bytes of the request body have gone, of `expected` (negative when unknown).
    func sent(total: Int64, expected: Int64)
}

extension TaskTransfer {
    func sent(total: Int64, expected: Int64) {}
}

extension URLSessionTransport {
    /// Streams with a data task of the transport's session: the call returns with the head, and the
    /// body's chunks are handed over as URLSession delivers them. On Apple platforms a reader more than
    /// ``BodyStream/defaultBufferSize`` behind suspends the task until it catches up, so a large body is
    /// never held whole. On Linux, FoundationNetworking cannot pause a running task safely: the body
    /// arrives as fast as the network sends it and waits in the stream for the reader (use
    /// `AsyncHTTPClientTransport` there for bodies larger than memory). The timeout bounds the wait for
    /// the head (URLSession's own idle timeout, `timeoutIntervalForRequest`, still applies between
    /// chunks). With a session you passed, the body is read whole first, as ``send(_:body:)`` does.
    ///
    /// A body read from a file (`BodyStream(contentsOf:)`, an `@Body` file URL) goes as an upload task
    /// from that file: URLSession reads it as it sends (FoundationNetworking's upload task sent a 300 MB
    /// file through about 43 MB of resident memory; docs/benchmarks.md), and its progress is the task's
    /// own, reported as ``TransferEvent/requestBytesSent(total:expected:)``. A 307 or 308 answering such
    /// an upload on Linux is not followed (FoundationNetworking would resend it without its body).
    public func stream(_ request: HTTPRequest, body: BodyStream?) async throws -> (HTTPResponse, BodyStream) {
        let file = streams ? body?.fileSource : nil
        let bytes = file == nil ? try await body?.collect(upTo: 1 << 30) : nil
        guard streams else {
            let (response, data) = try await send(request, body: bytes)
            return (response, BodyStream(data))
        }
        let urlRequest = try Self.urlRequest(for: request, body: bytes)
        let handle = DataTaskHandle()
        let transfer = StreamTransfer(handle: handle, uploadReporter: file?.reporter)
        let timeout = self.timeout
        let deadline = Task {
            try await Task.sleep(for: timeout)
            if transfer.failHead(with: URLError(.timedOut)) { handle.cancel() }
        }
        defer { deadline.cancel() }
        let (response, stream) = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<(URLResponse, BodyStream), any Error>) in
                transfer.start(continuation)
                let task =
                    file.map { session.uploadTask(with: urlRequest, fromFile: URL(fileURLWithPath: $0.path)) }
                    ?? session.dataTask(with: urlRequest)
                TransferRouter.shared.register(transfer, for: task)
                TransferRouter.shared.register(redirects, for: task)
                handle.start(task)
            }
        } onCancel: {
            // Once the head is in, the task belongs to the stream: its reader ends it.
            if transfer.failHead(with: CancellationError()) { handle.cancel() }
        }
        return (try Self.head(of: response), stream)
    }
}

/// One streamed request's transfer: resumes the caller with the head, then feeds the body's chunks to
/// a ``BodyStream``, suspending the task while the reader is behind.
final class StreamTransfer: TaskTransfer {
    private struct State {
        var continuation: CheckedContinuation<(URLResponse, BodyStream), any Error>?
        var headFailure: (any Error)?
        var headDelivered = false
        /// The task is suspended because the reader is behind.
        var paused = false
        /// The reader caught up before the task was suspended: do not suspend it.
        var drainedEarly = false
    }

    private let state = Mutex(State())
    private let channel: ChunkChannel
    private let writer: BodyStream.Writer

    /// Who hears of a file upload's progress, if anyone (captured where the call started).
    private let uploadReporter: TransferReporter?

    init(handle: DataTaskHandle, uploadReporter: TransferReporter? = nil) {
        channel = ChunkChannel(bufferSize: BodyStream.defaultBufferSize, onTermination: { handle.cancel() })
        writer = BodyStream.Writer(channel: channel)
        self.uploadReporter = uploadReporter
    }

    func sent(total: Int64, expected: Int64) {
        uploadReporter?.report(.requestBytesSent(total: Int(total), expected: expected >= 0 ? Int(expected) : nil))
    }

    func start(_ continuation: CheckedContinuation<(URLResponse, BodyStream), any Error>) {
        let failure = state.withLock { state -> (any Error)? in
            if let failure = state.headFailure { return failure }
            state.continuation = continuation
            return nil
        }
        if let failure { continuation.resume(throwing: failure) }
    }

    /// Ends the call with `error` if the head has not arrived; `true` if it did end it.
    func failHead(with error: any Error) -> Bool {
        let (ended, continuation) = state.withLock {
            state -> (Bool, CheckedContinuation<(URLResponse, BodyStream), any Error>?) in
            guard !state.headDelivered, state.headFailure == nil else { return (false, nil) }
            state.headFailure = error
            defer { state.continuation = nil }
            return (true, state.continuation)
        }
        continuation?.resume(throwing: error)
        return ended
    }

    func received(_ response: URLResponse) -> Bool {
        let expected = response.expectedContentLength >= 0 ? Int(response.expectedContentLength) : nil
        let stream = BodyStream(expectedLength: expected, lifetime: BodyStream.Lifetime(.channel(channel)))
        let continuation = state.withLock { state -> CheckedContinuation<(URLResponse, BodyStream), any Error>? in
            guard state.headFailure == nil, !state.headDelivered else { return nil }
            state.headDelivered = true
            defer { state.continuation = nil }
            return state.continuation
        }
        guard let continuation else { return false }
        continuation.resume(returning: (response, stream))
        return true
    }

    func received(_ data: Data, on task: URLSessionDataTask) -> Bool {
        #if canImport(FoundationNetworking)
        // FoundationNetworking's `suspend()` of a running data task stops its transfer on a queue of its
        // own; a `resume()` that comes first makes it fail the task instead ("cancelled" after a
        // quick pause and resume, measured here), and chunks already read keep arriving after it. So on
        // Linux the body is not paused: it arrives as fast as the network sends it, and waits in the
        // stream for the reader.
        _ = writer.yield([UInt8](data)) {}
        #else
        // `nonisolated(unsafe)`: URLSessionTask is not `Sendable` on every SDK, but `suspend()` and
        // `resume()` are documented as safe from any thread, and they are all the closure calls on it.
        nonisolated(unsafe) let task = task
        pause(task, unless: writer.yield([UInt8](data)) { self.drained(task) })
        #endif
        return true
    }

    #if !canImport(FoundationNetworking)
    /// Suspends `task` when the buffer is full, once (suspensions nest, and one drain resumes once).
    /// The task is only suspended and resumed under the lock, so a drain that comes between the buffer
    /// filling and the suspension is never lost.
    private func pause(_ task: URLSessionDataTask, unless accepted: Bool) {
        guard !accepted else { return }
        state.withLock { state in
            if state.drainedEarly {
                state.drainedEarly = false
            } else if !state.paused {
                state.paused = true
                task.suspend()
            }
        }
    }

    /// The reader caught up: resume the task if it was suspended.
    private func drained(_ task: URLSessionDataTask) {
        state.withLock { state in
            if state.paused {
                state.paused = false
                task.resume()
            } else {
                state.drainedEarly = true
            }
        }
    }
    #endif

    func completed(error: (any Error)?, response: URLResponse?) {
        let continuation = state.withLock { state -> CheckedContinuation<(URLResponse, BodyStream), any Error>? in
            defer { state.continuation = nil }
            return state.headDelivered ? nil : state.continuation
        }
        if let continuation {
            continuation.resume(throwing: error ?? URLError(.badServerResponse))
            return
        }
        writer.finish(throwing: error)
    }
}
