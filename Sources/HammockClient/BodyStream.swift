import Synchronization

/// A body that arrives in chunks, read once, as it arrives: an async sequence of byte chunks.
///
/// ```swift
/// let response = try await client.stream(RequestBuilder(.get, "/events"))
/// for try await event in response.body.serverSentEvents { print(event.event, event.data) }
/// ```
/// A transport hands one over for a streamed call (``HTTPTransport/stream(_:body:)``); it can also be
/// made from bytes, from any async sequence of chunks, or with a writer (``makeStream(expectedLength:bufferSize:onTermination:)``).
///
/// Reading is single-pass: a second iteration throws ``BodyStreamError/alreadyRead`` (a stream made
/// from bytes or a file can be read again, from the start). Reading is
/// backpressured: a transport that can wait (AsyncHTTPClient, the in-process one, URLSession by
/// suspending its task) holds at most about ``defaultBufferSize`` bytes the reader has not taken, so a
/// slow reader slows the transfer instead of filling memory. When every copy of the stream and of its
/// iterator is gone, or the reading task is cancelled, the transfer behind it is cancelled.
public struct BodyStream: AsyncSequence, Sendable {
    public typealias Element = [UInt8]
    public typealias Failure = any Error

    /// The length the sender announced (`Content-Length`), if it did.
    public let expectedLength: Int?
    let lifetime: Lifetime

    /// How many bytes a transport holds for a reader that has not taken them, by default: 256 KiB
    /// (a few of URLSession's and NIO's reads; enough to keep loopback at full speed, little enough that
    /// a thousand open streams hold a quarter gigabyte at most).
    public static let defaultBufferSize = 256 << 10

    /// A body of `bytes`, in one chunk (none when empty).
    public init(_ bytes: [UInt8]) {
        expectedLength = bytes.count
        lifetime = Lifetime(.bytes(bytes))
    }

    /// A body made of the chunks of `chunks`; an error it throws ends the body with that error.
    public init<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks, expectedLength: Int? = nil)
    where Chunks.Element == [UInt8] {
        self.expectedLength = expectedLength.flatMap { $0 >= 0 ? $0 : nil }
        lifetime = Lifetime(
            .sequence({
                var iterator = chunks.makeAsyncIterator()
                return { try await iterator.next() }
            }))
    }

    /// A body and the writer that fills it: each ``Writer/write(_:)`` waits while more than `bufferSize`
    /// bytes wait for the reader; `onTermination` runs once the reader has gone (cancelled, or every
    /// copy of the stream dropped) before the writer finished, so the producer can stop.
    public static func makeStream(
        expectedLength: Int? = nil, bufferSize: Int = defaultBufferSize,
        onTermination: (@Sendable () -> Void)? = nil
    ) -> (stream: BodyStream, writer: Writer) {
        let channel = ChunkChannel(bufferSize: Swift.max(1, bufferSize), onTermination: onTermination)
        return (BodyStream(expectedLength: expectedLength, lifetime: Lifetime(.channel(channel))), Writer(channel: channel))
    }

    /// The whole body when it was made from bytes (so a transport can send it as such, and again).
    public var bytes: [UInt8]? {
        if case .bytes(let bytes) = lifetime.origin { return bytes }
        return nil
    }

    /// The file this body reads, if it is one (``init(contentsOf:chunkSize:)``): a transport that can
    /// send a file itself (URLSession's upload task) takes it from there.
    var fileSource: FileSource? {
        if case .file(let source) = lifetime.origin { return source }
        return nil
    }

    /// Whether the body can be read again from the start (made from bytes or a file): a retry or a 307
    /// can send it anew.
    public var isRepeatable: Bool {
        switch lifetime.origin {
        case .bytes, .file: true
        case .channel, .sequence: false
        }
    }

    init(expectedLength: Int?, lifetime: Lifetime) {
        self.expectedLength = expectedLength.flatMap { $0 >= 0 ? $0 : nil }  // a negative length is none
        self.lifetime = lifetime
    }

    public func makeAsyncIterator() -> Iterator { Iterator(lifetime: lifetime) }

    /// Reads the chunks one by one.
    public struct Iterator: AsyncIteratorProtocol {
        let lifetime: Lifetime
        var read: (() async throws -> [UInt8]?)?
        var started = false

        init(lifetime: Lifetime) { self.lifetime = lifetime }

        public mutating func next() async throws -> [UInt8]? {
            if !started {
                started = true
                read = try lifetime.claim()
            }
            guard let read else { return nil }
            guard let chunk = try await read() else {
                self.read = nil
                return nil
            }
            return chunk
        }
    }

    /// The whole body, or ``BodyStreamError/tooLarge(limit:)`` as soon as more than `limit` bytes arrived.
    public func collect(upTo limit: Int) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        if let expectedLength {
            guard expectedLength <= limit else { throw BodyStreamError.tooLarge(limit: limit) }
            // A sender's announced length is a hint, not a promise: a hostile `Content-Length` of
            // 10^18 under a limit of Int.max must not become one allocation.
            bytes.reserveCapacity(Swift.min(expectedLength, 1 << 20))
        }
        for try await chunk in self {
            guard chunk.count <= limit - bytes.count else { throw BodyStreamError.tooLarge(limit: limit) }
            bytes += chunk
        }
        return bytes
    }

    /// The same chunks, with each error `transform` returns in place of the one thrown.
    public func mapError(_ transform: @escaping @Sendable (any Error) -> any Error) -> BodyStream {
        adapted { iterator in
            do { return try await iterator.next() } catch { throw transform(error) }
        }
    }

    /// The same chunks, with `observe` told of each one as the reader takes it (progress, counting).
    public func observingChunks(_ observe: @escaping @Sendable ([UInt8]) -> Void) -> BodyStream {
        adapted { iterator in
            let chunk = try await iterator.next()
            if let chunk { observe(chunk) }
            return chunk
        }
    }

    /// A stream reading this one through `step`, which takes each chunk from the iterator it is given.
    private func adapted(_ step: @escaping @Sendable (inout Iterator) async throws -> [UInt8]?) -> BodyStream {
        let lifetime = self.lifetime
        return BodyStream(
            expectedLength: expectedLength,
            lifetime: Lifetime(
                .sequence({
                    var iterator = Iterator(lifetime: lifetime)
                    return { try await step(&iterator) }
                })))
    }

    /// Fills a ``BodyStream`` made with ``BodyStream/makeStream(expectedLength:bufferSize:onTermination:)``.
    public struct Writer: Sendable {
        let channel: ChunkChannel

        /// Hands `chunk` to the reader, waiting while the reader is more than the buffer size behind.
        /// - Throws: ``BodyStreamError/readerGone`` once the reader has gone; `CancellationError` if the
        ///   writing task is cancelled while it waits.
        public func write(_ chunk: [UInt8]) async throws {
            guard !chunk.isEmpty else { return }
            try await channel.write(chunk)
        }

        /// Hands `chunk` to the reader without waiting, for producers that cannot wait (a delegate
        /// callback). Returns `false` once the buffer is past its size: pause the producer, and resume
        /// it when `whenDrained` is called. Returns `true` also when the reader has gone (the chunk is
        /// dropped; `onTermination` has been called).
        public func yield(_ chunk: [UInt8], whenDrained: @escaping @Sendable () -> Void) -> Bool {
            channel.yield(chunk, whenDrained: whenDrained)
        }

        /// Ends the body: normally, or with `error` for the reader.
        public func finish(throwing error: (any Error)? = nil) { channel.finish(error) }
    }
}

/// Why reading a ``BodyStream`` failed, besides the transfer's own errors.
public enum BodyStreamError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The stream was read before (a body is read once).
    case alreadyRead
    /// More than `limit` bytes arrived for a body collected whole.
    case tooLarge(limit: Int)
    /// A line (of ``TextLines`` or an event of ``ServerSentEvents``) grew past `limit` bytes without ending.
    case lineTooLong(limit: Int)
    /// The reader stopped reading before the writer finished.
    case readerGone

    public var description: String {
        switch self {
        case .alreadyRead: "the body stream was already read (a body is read once)"
        case .tooLarge(let limit): "the body is larger than \(limit) bytes"
        case .lineTooLong(let limit): "a line of the body is longer than \(limit) bytes"
        case .readerGone: "the body's reader has gone"
        }
    }
}

extension BodyStream {
    /// Where a body's chunks come from, and who is told when its reader goes away.
    enum Origin: Sendable {
        case bytes([UInt8])
        case channel(ChunkChannel)
        /// A file, read anew from the start by each reading.
        case file(FileSource)
        /// Makes the pull function in the reading task (an iterator need not be `Sendable`).
        case sequence(@Sendable () -> (() async throws -> [UInt8]?))
    }

    /// Shared by every copy of one stream and its iterator: the first iteration claims the origin, and
    /// when the last copy goes, a channel's writer is told that nobody reads any more.
    final class Lifetime: Sendable {
        let origin: Origin
        private let claimed = Atomic<Bool>(false)

        init(_ origin: Origin) { self.origin = origin }

        func claim() throws -> () async throws -> [UInt8]? {
            // Bytes and files are there to be read again (a retry sends a request body anew); nothing else is.
            switch origin {
            case .bytes, .file: break
            case .channel, .sequence:
                guard !claimed.exchange(true, ordering: .relaxed) else { throw BodyStreamError.alreadyRead }
            }
            switch origin {
            case .bytes(let bytes):
                var pending: [UInt8]? = bytes.isEmpty ? nil : bytes
                return {
                    defer { pending = nil }
                    return pending
                }
            case .channel(let channel): return { try await channel.next() }
            case .file(let source): return source.reader()
            case .sequence(let make): return make()
            }
        }

        deinit {
            if case .channel(let channel) = origin { channel.readerGone(CancellationError()) }
        }
    }
}

/// One writer, one reader, a bounded buffer between them: the writer waits (or is told to pause) while
/// the buffer holds more than `bufferSize` bytes, the reader waits while it is empty.
final class ChunkChannel: Sendable {
    private struct State {
        var chunks: [[UInt8]] = []
        var head = 0
        var buffered = 0
        /// Whether the writer finished, and with what error (none for a normal end).
        var finished = false
        var failure: (any Error)?
        var readerGone = false
        var reader: CheckedContinuation<[UInt8]?, any Error>?
        var writer: CheckedContinuation<Void, any Error>?
        var whenDrained: (@Sendable () -> Void)?
        var onTermination: (@Sendable () -> Void)?

        mutating func pop() -> [UInt8]? {
            guard head < chunks.count else { return nil }
            let chunk = chunks[head]
            chunks[head] = []
            head += 1
            // Compact once the taken half is large, so the array does not grow with the whole body.
            if head > 64, head * 2 > chunks.count {
                chunks.removeFirst(head)
                head = 0
            }
            buffered -= chunk.count
            return chunk
        }
    }

    private let state: Mutex<State>
    let bufferSize: Int

    init(bufferSize: Int, onTermination: (@Sendable () -> Void)?) {
        self.bufferSize = bufferSize
        state = Mutex(State(onTermination: onTermination))
    }

    /// The next chunk, `nil` at the end; waits while none is buffered.
    func next() async throws -> [UInt8]? {
        enum Outcome {
            case chunk([UInt8], wake: (CheckedContinuation<Void, any Error>?, (@Sendable () -> Void)?))
            case end((any Error)?)
            case wait
        }
        let outcome = state.withLock { state -> Outcome in
            if let chunk = state.pop() { return .chunk(chunk, wake: Self.drained(&state, bufferSize)) }
            // Gone first: a producer stopped because the reader went ends with its own error after it.
            if state.readerGone { return .end(CancellationError()) }
            if state.finished { return .end(state.failure) }
            return .wait
        }
        switch outcome {
        case .chunk(let chunk, let wake):
            wake.0?.resume()
            wake.1?()
            return chunk
        case .end(let error):
            if let error { throw error }
            return nil
        case .wait:
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    let immediate = state.withLock { state -> Result<[UInt8]?, any Error>? in
                        // Anything may have happened between the two locks.
                        if let chunk = state.pop() { return .success(chunk) }
                        if state.readerGone { return .failure(CancellationError()) }
                        if state.finished { return state.failure.map { .failure($0) } ?? .success(nil) }
                        state.reader = continuation
                        return nil
                    }
                    if let immediate { continuation.resume(with: immediate) }
                }
            } onCancel: {
                readerGone(CancellationError())
            }
        }
    }

    /// The writer to wake once the buffer has drained to half its size.
    private static func drained(
        _ state: inout State, _ bufferSize: Int
    ) -> (CheckedContinuation<Void, any Error>?, (@Sendable () -> Void)?) {
        guard state.buffered <= bufferSize / 2 else { return (nil, nil) }
        defer {
            state.writer = nil
            state.whenDrained = nil
        }
        return (state.writer, state.whenDrained)
    }

    func write(_ chunk: [UInt8]) async throws {
        enum Outcome {
            case gone
            case handed(CheckedContinuation<[UInt8]?, any Error>)
            case buffered(full: Bool)
        }
        let outcome = state.withLock { state -> Outcome in
            if state.readerGone || state.finished { return .gone }
            if let reader = state.reader {
                state.reader = nil
                return .handed(reader)
            }
            state.chunks.append(chunk)
            state.buffered += chunk.count
            return .buffered(full: state.buffered > bufferSize)
        }
        switch outcome {
        case .gone: throw BodyStreamError.readerGone
        case .handed(let reader): reader.resume(returning: chunk)
        case .buffered(full: false): return
        case .buffered(full: true):
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let immediate = state.withLock { state -> Result<Void, any Error>? in
                        if state.readerGone { return .failure(BodyStreamError.readerGone) }
                        if state.buffered <= bufferSize / 2 { return .success(()) }
                        // A cancellation whose handler ran before this point found no writer to wake;
                        // one after it takes the lock, so finds this one.
                        if Task.isCancelled { return .failure(CancellationError()) }
                        state.writer = continuation
                        return nil
                    }
                    if let immediate { continuation.resume(with: immediate) }
                }
            } onCancel: {
                let writer = state.withLock { state in
                    defer { state.writer = nil }
                    return state.writer
                }
                writer?.resume(throwing: CancellationError())
            }
        }
    }

    func yield(_ chunk: [UInt8], whenDrained: @escaping @Sendable () -> Void) -> Bool {
        guard !chunk.isEmpty else { return true }
        let (reader, full) = state.withLock { state -> (CheckedContinuation<[UInt8]?, any Error>?, Bool) in
            if state.readerGone || state.finished { return (nil, false) }
            if let reader = state.reader {
                state.reader = nil
                return (reader, false)
            }
            state.chunks.append(chunk)
            state.buffered += chunk.count
            guard state.buffered > bufferSize else { return (nil, false) }
            state.whenDrained = whenDrained
            return (nil, true)
        }
        reader?.resume(returning: chunk)
        return !full
    }

    func finish(_ error: (any Error)?) {
        let reader = state.withLock { state -> CheckedContinuation<[UInt8]?, any Error>? in
            guard !state.finished else { return nil }
            state.finished = true
            state.failure = error
            state.onTermination = nil  // the writer ended by itself: nothing to stop
            defer { state.reader = nil }
            return state.reader
        }
        if let error { reader?.resume(throwing: error) } else { reader?.resume(returning: nil) }
    }

    /// The reader has gone (cancelled, or dropped): wake everyone, stop the producer.
    func readerGone(_ error: any Error) {
        let (reader, writer, drained, terminate) = state.withLock { state in
            guard !state.readerGone else {
                return (
                    CheckedContinuation<[UInt8]?, any Error>?.none, CheckedContinuation<Void, any Error>?.none,
                    (@Sendable () -> Void)?.none, (@Sendable () -> Void)?.none
                )
            }
            state.readerGone = true
            state.chunks = []
            state.head = 0
            state.buffered = 0
            defer {
                state.reader = nil
                state.writer = nil
                state.whenDrained = nil
                state.onTermination = nil
            }
            return (state.reader, state.writer, state.whenDrained, state.onTermination)
        }
        reader?.resume(throwing: error)
        writer?.resume(throwing: BodyStreamError.readerGone)
        // A paused producer is resumed so it can see the end (its next chunk is dropped) and stop.
        drained?()
        terminate?()
    }
}
