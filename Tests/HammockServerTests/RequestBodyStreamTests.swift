import Synchronization
import Testing

@testable import HammockServer

/// The body a route reads as it arrives: order, its two ends, and the bound that makes the transport
/// stop reading.
@Suite("A request body read as it arrives")
struct RequestBodyStreamTests {
    @Test("The reader gets the pieces in the order they arrived, then the end")
    func order() async throws {
        let body = RequestBodyStream(length: 6)
        #expect(body.yield([1, 2]))
        #expect(body.yield([]), "nothing is no piece")
        #expect(body.yield([3, 4, 5, 6]))
        body.finish(complete: true)
        var pieces: [[UInt8]] = []
        for try await piece in body { pieces.append(piece) }
        #expect(pieces == [[1, 2], [3, 4, 5, 6]])
        #expect(body.length == 6 && body.received == 6)
    }

    @Test("A reader that waits is woken by the next piece and by the end")
    func waiting() async throws {
        let body = RequestBodyStream(length: nil)
        let reader = Task { () -> [UInt8] in
            var bytes: [UInt8] = []
            for try await piece in body { bytes += piece }
            return bytes
        }
        for byte in UInt8(0)..<50 {
            body.yield([byte])
            await Task.yield()
        }
        body.finish(complete: true)
        #expect(try await reader.value == Array(0..<50))
    }

    @Test("A body cut short ends the reader's loop with an error after what did arrive, never as a whole body")
    func cut() async throws {
        let body = RequestBodyStream(length: 100)
        body.yield([1, 2, 3])
        body.finish(complete: false)
        body.finish(complete: true)  // too late: the first end holds
        var iterator = body.makeAsyncIterator()
        #expect(try await iterator.next() == [1, 2, 3])
        await #expect(throws: RequestBodyStream.Cut.self) { try await iterator.next() }
        #expect(body.yield([4]), "bytes after the end are dropped")
        #expect(body.received == 3)
    }

    @Test("Past the high-water mark the transport is told to stop reading, and resumed once the reader has caught up")
    func backpressure() async throws {
        let resumed = Atomic(0)
        let body = RequestBodyStream(length: nil, highWater: 100, lowWater: 40) { resumed.add(1, ordering: .relaxed) }
        #expect(body.yield(Array(repeating: 0, count: 50)))
        #expect(!body.yield(Array(repeating: 1, count: 50)), "100 bytes wait: read no more")
        #expect(!body.yield(Array(repeating: 2, count: 30)), "still paused")
        var iterator = body.makeAsyncIterator()
        _ = try await iterator.next()
        #expect(resumed.load(ordering: .relaxed) == 0, "80 bytes still wait, above the low-water mark")
        _ = try await iterator.next()
        #expect(resumed.load(ordering: .relaxed) == 1, "30 wait: the transport reads again")
        _ = try await iterator.next()
        #expect(resumed.load(ordering: .relaxed) == 1, "resumed once")
    }

    @Test("A cancelled reader stops waiting with CancellationError")
    func cancelled() async throws {
        let body = RequestBodyStream(length: nil)
        let reader = Task { () -> Int in
            var count = 0
            for try await piece in body { count += piece.count }
            return count
        }
        reader.cancel()
        await #expect(throws: CancellationError.self) { try await reader.value }
    }

    @Test("collect(upTo:) gives the whole body within the limit and a 413 past it")
    func collect() async throws {
        let small = RequestBodyStream(length: nil)
        small.yield([1, 2, 3])
        small.finish(complete: true)
        #expect(try await small.collect(upTo: 3) == [1, 2, 3])
        let large = RequestBodyStream(length: nil)
        large.yield([1, 2, 3, 4])
        large.finish(complete: true)
        await #expect(throws: HTTPProblem.self) { try await large.collect(upTo: 3) }
    }
}
