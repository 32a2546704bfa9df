import NIOCore
import NIOPosix
import Synchronization
import Testing

@testable import HammockProxy

/// The pipe a streamed upstream answer goes through: AsyncHTTPClient pushes each part and reads on once
/// the part is taken; the task sending the answer pulls.
@Suite("A streamed upstream answer, part by part", .timeLimit(.minutes(1)))
struct UpstreamBodyTests {
    let loop = MultiThreadedEventLoopGroup.singleton.any()

    @Test("A part waits for the reader, and the upstream reads on only once the reader has taken it")
    func oneAtATime() async throws {
        let pipe = UpstreamBody(eventLoop: loop)
        let taken = pipe.push(ByteBuffer(string: "one"))
        #expect(try await isPending(taken), "nothing reads the upstream further until the client's side takes the part")
        #expect(try await pipe.next() == ByteBuffer(string: "one"))
        #expect(try await completes(taken))
        pipe.finish(throwing: nil)
        #expect(try await pipe.next() == nil)
    }

    @Test("The end comes after the part still waiting; an error too, and it is thrown, not taken for an end")
    func endsAfterWhatWaits() async throws {
        let whole = UpstreamBody(eventLoop: loop)
        _ = whole.push(ByteBuffer(string: "last"))
        whole.finish(throwing: nil)
        #expect(try await whole.next() == ByteBuffer(string: "last"))
        #expect(try await whole.next() == nil)

        struct Broken: Error {}
        let cut = UpstreamBody(eventLoop: loop)
        _ = cut.push(ByteBuffer(string: "half"))
        cut.finish(throwing: Broken())
        #expect(try await cut.next() == ByteBuffer(string: "half"))
        await #expect(throws: Broken.self) { try await cut.next() }
    }

    @Test("Once the reader has stopped, a part still arriving is dropped at once, never left waiting for no one")
    func stoppedReader() async throws {
        let pipe = UpstreamBody(eventLoop: loop)
        let waiting = pipe.push(ByteBuffer(string: "unread"))
        pipe.stop()
        #expect(try await completes(waiting), "the part that waited is let go")
        #expect(try await completes(pipe.push(ByteBuffer(string: "late"))), "a late part does not hold the upstream's connection")
        await #expect(throws: CancellationError.self) { try await pipe.next() }
    }

    @Test("A reader cancelled while it waits stops the pipe")
    func cancelledReader() async throws {
        let pipe = UpstreamBody(eventLoop: loop)
        let reader = Task { try await pipe.next() }
        reader.cancel()
        await #expect(throws: CancellationError.self) { try await reader.value }
        #expect(try await completes(pipe.push(ByteBuffer(string: "after"))))
    }

    /// Whether `future` completes within 5 s: a part left waiting for no one fails the test, not hangs it.
    func completes(_ future: EventLoopFuture<Void>) async throws -> Bool {
        final class Once: Sendable { let done = Mutex(false) }
        let once = Once()
        let result = loop.makePromise(of: Bool.self)
        let finish: @Sendable (Bool) -> Void = { value in
            let first = once.done.withLock { done in
                defer { done = true }
                return !done
            }
            if first { result.succeed(value) }
        }
        future.whenComplete { _ in finish(true) }
        let timer = loop.scheduleTask(in: .seconds(5)) { finish(false) }
        defer { timer.cancel() }
        return try await result.futureResult.get()
    }

    /// Not completed, after a turn of the loop in which the callbacks of a completed one would have run.
    func isPending(_ future: EventLoopFuture<Void>) async throws -> Bool {
        final class Flag: Sendable { let done = Mutex(false) }
        let flag = Flag()
        future.whenComplete { _ in flag.done.withLock { $0 = true } }
        try await loop.submit {}.get()
        return !flag.done.withLock { $0 }
    }
}
