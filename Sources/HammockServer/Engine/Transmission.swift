import HTTPTypes
import Synchronization

/// How a transport sends an answer whose body does not leave as one buffer: a streamed body, a
/// throttled one, a truncated one. The HTTP listener and ``MockServer/exchange(_:timeout:)`` both send what
/// this gives, so a fault looks the same in process and on a socket.
package struct Transmission: Sendable {
    /// The body, throttled and cut as the answer's ``MockResponse/delivery`` says.
    package let body: StreamingBody
    /// The `Content-Length` to announce; `nil` when it is not known (chunked, or until the close).
    package let length: Int?
    /// The body stops early (a truncate fault): the connection closes after it, without a last chunk.
    package let isTruncated: Bool
}

extension MockResponse {
    /// Whether a transport must send this answer through a ``Transmission``, not as one buffer.
    package var needsTransmission: Bool {
        if stream != nil { return true }
        switch delivery {
        case .normal: return false
        case .throttled: return !body.isEmpty
        case .fault(let fault): return fault == .truncate
        }
    }
}

extension MockServer {
    /// The body to send for `response`, and how.
    package func transmission(of response: MockResponse) -> Transmission {
        let source = response.stream ?? Self.buffered(response.body)
        let length = response.stream == nil ? response.body.count : response.stream?.length
        switch response.delivery {
        case .throttled(let bytesPerSecond):
            return Transmission(
                body: Self.throttled(source, bytesPerSecond: bytesPerSecond, timer: interventions.timer), length: length,
                isTruncated: false)
        case .fault(.truncate):
            return Transmission(body: Self.truncated(source, length: length), length: length, isTruncated: true)
        case .normal, .fault:
            return Transmission(body: source, length: length, isTruncated: false)
        }
    }

    /// The largest piece of a buffered body written at once: 64 KiB, the size of SwiftNIO's high-water
    /// mark, so a body much larger than the socket's buffer waits for the client between pieces.
    static let pieceSize = 64 << 10

    static func buffered(_ bytes: [UInt8]) -> StreamingBody {
        StreamingBody(length: bytes.count) { writer in
            var start = 0
            while start < bytes.count {
                let end = min(start + pieceSize, bytes.count)
                try await writer.write(Array(bytes[start..<end]))
                start = end
            }
        }
    }

    /// `body` at `bytesPerSecond`: cut into slices of a twentieth of a second, each written when the
    /// bytes before it and itself are due, so the last byte leaves at size / rate after the first write.
    static func throttled(_ body: StreamingBody, bytesPerSecond: Int, timer: LatencyTimer) -> StreamingBody {
        let rate = max(bytesPerSecond, 1)
        let slice = min(max(rate / 20, 1), pieceSize)
        return StreamingBody(length: body.length) { writer in
            let wait = timer.markArrival()
            let sent = Mutex(0)
            try await body.write(
                to: BodyWriter { chunk in
                    var start = 0
                    while start < chunk.count {
                        let end = min(start + slice, chunk.count)
                        let due = sent.withLock { sent in
                            sent += end - start
                            return Double(sent) / Double(rate)
                        }
                        await wait(.nanoseconds(Int64(min(due, 86_400 * 365) * 1e9)))
                        try await writer.write(Array(chunk[start..<end]))
                        start = end
                    }
                })
        }
    }

    /// The first half of `body`: of its `length` when known, else of its first chunk.
    static func truncated(_ body: StreamingBody, length: Int?) -> StreamingBody {
        StreamingBody { writer in
            let remaining = Mutex(length.map { $0 / 2 })
            do {
                try await body.write(
                    to: BodyWriter { chunk in
                        let keep = min(chunk.count, remaining.withLock { $0 } ?? chunk.count / 2)
                        if keep > 0 { try await writer.write(Array(chunk[..<keep])) }
                        let left = remaining.withLock { remaining in
                            remaining = (remaining ?? keep) - keep
                            return remaining
                        }
                        if left == 0 { throw Truncated() }
                    })
            } catch is Truncated {}
        }
    }

    private struct Truncated: Error {}

    /// How many exchanges and held answers wait for the server to stop (for tests of the stop).
    package var stopWaiters: Int { stopSignal.waiterCount }

    /// Answers `request` as a client across a network receives the answer: a connection fault is thrown
    /// (``ConnectionFaultError``), a throttled body takes its time, and a streamed body is read whole.
    /// A timeout fault waits, as a client does, until `timeout` passes on the server's clock (then
    /// throws ``ConnectionFaultError``), the server stops (the same), or the calling task is cancelled
    /// (`CancellationError`). ``respond(to:)`` gives the answer itself, with its
    /// ``MockResponse/delivery`` to read.
    ///
    /// ```swift
    /// server.setFaults([try Fault("GET /people/:id", effect: .connection(.reset))])
    /// let error = await #expect(throws: ConnectionFaultError.self) { try await server.exchange(MockRequest(.get, "/people/1")) }
    /// ```
    /// - Throws: ``ConnectionFaultError``, `CancellationError`, or what a streamed body's producer threw.
    public func exchange(_ request: MockRequest, timeout: Duration? = nil) async throws -> MockResponse {
        let exchanged = try await exchangeStreaming(request, timeout: timeout)
        var response = exchanged.head
        if let body = exchanged.body {
            response.body = try await body.collect()
            if exchanged.isTruncated { throw ConnectionFaultError(.truncate, partialResponse: response) }
        }
        try Task.checkCancellation()
        return response
    }

    /// An answer as a transport that hands a body on as it is written receives it (HammockURLProtocol,
    /// and ``exchange(_:timeout:)``, which collects it): the head, and the body to send chunk by chunk,
    /// throttled or cut as the answer's delivery says.
    package struct StreamedExchange: Sendable {
        /// The status and header fields; its body is empty when ``body`` carries it.
        package var head: MockResponse
        /// The body, when it is not in ``head`` (a stream, a throttled or cut body).
        package var body: StreamingBody?
        /// The body stops early (a truncate fault): after it, the connection is lost.
        package var isTruncated: Bool
    }

    /// ``exchange(_:timeout:)`` without reading the body: a timeout fault waits the same way, other
    /// connection faults throw the same way, and a body that does not leave as one buffer is handed over
    /// to be sent as it is written.
    package func exchangeStreaming(_ request: MockRequest, timeout: Duration?) async throws -> StreamedExchange {
        var response = await respond(to: request)
        switch response.delivery {
        case .fault(.timeout):
            let wait = interventions.timer.markArrival()
            let stopSignal = self.stopSignal
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await stopSignal.wait() }
                if let timeout { group.addTask { await wait(timeout) } }
                await group.next()
                group.cancelAll()
            }
            try Task.checkCancellation()
            throw ConnectionFaultError(.timeout)
        case .fault(.truncate):
            let body = transmission(of: response).body
            response.body = []
            response.stream = nil
            return StreamedExchange(head: response, body: body, isTruncated: true)
        case .fault(let fault):
            throw ConnectionFaultError(fault)
        case .normal, .throttled:
            try Task.checkCancellation()
            guard response.needsTransmission else { return StreamedExchange(head: response, body: nil, isTruncated: false) }
            let body = transmission(of: response).body
            response.body = []
            response.stream = nil
            return StreamedExchange(head: response, body: body, isTruncated: false)
        }
    }

    /// Returns when the server stops (``stop()``): what an in-process transport ends its streamed bodies
    /// on, as the HTTP listener closes its connections.
    package func untilStopped() async { await stopSignal.wait() }
}
