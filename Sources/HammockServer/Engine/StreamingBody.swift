/// A response body sent as it is produced, chunk by chunk, instead of as one buffer: Server-Sent Events,
/// and (later) answers too large to hold.
///
/// ```swift
/// let (chunks, writer) = AsyncStream.makeStream(of: [UInt8].self)
/// writer.yield(Array("data: hello\n\n".utf8))
/// writer.finish()
/// return MockResponse(status: .ok, headerFields: [.contentType: "text/event-stream"], stream: StreamingBody(chunks))
/// ```
/// Over HTTP/1.1 it is sent with chunked transfer encoding, each chunk written once the previous one
/// has reached the socket (so a slow client slows the producer, and memory stays flat), and the
/// connection closes after the last chunk. It ends when the sequence finishes, when the client goes
/// away, or when the server stops. In process (``MockServer/respond(to:)``) the caller reads it.
///
/// A class rather than a struct: `AsyncStream`'s layout is not known to this module at compile time, so
/// a struct holding it would make every `MockResponse` copy go through runtime witnesses (perf: +0.5 µs
/// per request on `GET /people/:id`, every response paying for a field almost none use).
public final class StreamingBody: Sendable {
    /// The chunks, in order; the body ends when the sequence does.
    public let chunks: AsyncStream<[UInt8]>

    /// A body made of `chunks`.
    public init(_ chunks: AsyncStream<[UInt8]>) { self.chunks = chunks }

    /// Reads the chunks until the body ends or `limit` bytes have arrived; returns what arrived (the
    /// whole of the chunk that crossed the limit included).
    public func collect(upTo limit: Int = .max) async -> [UInt8] {
        var bytes: [UInt8] = []
        for await chunk in chunks {
            bytes += chunk
            if bytes.count >= limit { break }
        }
        return bytes
    }
}
