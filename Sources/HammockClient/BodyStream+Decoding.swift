public import Foundation

extension BodyStream {
    /// The body's lines as text (UTF-8, a bad byte read as U+FFFD), as they arrive. A line ends at
    /// `\n`, `\r\n` or `\r`; the last one needs no ending. A line longer than `maximumLength` bytes
    /// fails with ``BodyStreamError/lineTooLong(limit:)`` instead of growing without bound.
    public func lines(maximumLength: Int = 1 << 20) -> TextLines {
        TextLines(body: self, maximumLength: maximumLength, mapError: nil)
    }

    /// The body's lines as text, up to a mebibyte each: ``lines(maximumLength:)``.
    public var lines: TextLines { lines() }

    /// The body read as Server-Sent Events (`text/event-stream`, the WHATWG parsing rules), each event
    /// as its blank line ends it. An event over `maximumEventSize` bytes fails with
    /// ``BodyStreamError/lineTooLong(limit:)``.
    public func serverSentEvents(maximumEventSize: Int = 1 << 20) -> ServerSentEvents {
        ServerSentEvents(body: self, maximumEventSize: maximumEventSize, mapError: nil)
    }

    /// The body read as Server-Sent Events, up to a mebibyte each: ``serverSentEvents(maximumEventSize:)``.
    public var serverSentEvents: ServerSentEvents { serverSentEvents() }

    /// The body read as newline-delimited JSON (NDJSON, JSON Lines): one `T` per non-blank line, as it
    /// arrives. A line that is not a `T` fails with ``JSONLineError`` naming its number.
    public func jsonLines<T: Decodable>(
        of type: T.Type = T.self, decoder: JSONDecoder = JSONDecoder(), maximumLineLength: Int = 1 << 20
    ) -> JSONLines<T> {
        JSONLines(lines: lines(maximumLength: maximumLineLength), makeDecoder: { decoder })
    }
}

/// Cuts bytes into lines at `\n`, `\r\n` or `\r`, across chunk boundaries.
struct LineSplitter {
    private var pending: [UInt8] = []
    /// The last chunk ended with `\r`: a `\n` opening the next one belongs to that ending.
    private var afterCarriageReturn = false
    let limit: Int

    init(limit: Int) { self.limit = max(1, limit) }

    /// The lines `chunk` completes (without their endings).
    mutating func feed(_ chunk: [UInt8]) throws -> [[UInt8]] {
        var lines: [[UInt8]] = []
        var start = chunk.startIndex
        var index = chunk.startIndex
        if afterCarriageReturn, index < chunk.endIndex {
            afterCarriageReturn = false
            if chunk[index] == 0x0A {
                index += 1
                start = index
            }
        }
        while index < chunk.endIndex {
            let byte = chunk[index]
            guard byte == 0x0A || byte == 0x0D else {
                index += 1
                continue
            }
            try append(chunk[start..<index])
            lines.append(pending)
            pending = []
            index += 1
            if byte == 0x0D {
                if index < chunk.endIndex {
                    if chunk[index] == 0x0A { index += 1 }
                } else {
                    afterCarriageReturn = true
                }
            }
            start = index
        }
        try append(chunk[start..<chunk.endIndex])
        return lines
    }

    /// The unfinished last line, if it holds anything.
    mutating func finish() -> [UInt8]? {
        defer { pending = [] }
        return pending.isEmpty ? nil : pending
    }

    private mutating func append(_ bytes: ArraySlice<UInt8>) throws {
        guard bytes.count <= limit - pending.count else { throw BodyStreamError.lineTooLong(limit: limit) }
        pending += bytes
    }
}

/// A body's lines as text, as they arrive (``BodyStream/lines(maximumLength:)``).
public struct TextLines: AsyncSequence, Sendable {
    public typealias Element = String
    public typealias Failure = any Error
    let body: BodyStream
    let maximumLength: Int
    let mapError: (@Sendable (any Error) -> any Error)?

    public func makeAsyncIterator() -> Iterator {
        Iterator(chunks: body.makeAsyncIterator(), splitter: LineSplitter(limit: maximumLength), mapError: mapError)
    }

    /// Reads the lines one by one.
    public struct Iterator: AsyncIteratorProtocol {
        var chunks: BodyStream.Iterator
        var splitter: LineSplitter
        let mapError: (@Sendable (any Error) -> any Error)?
        var ready: [[UInt8]] = []
        var readyIndex = 0
        var ended = false

        public mutating func next() async throws -> String? {
            do { return try await nextLine().map { String(decoding: $0, as: UTF8.self) } } catch {
                throw mapError?(error) ?? error
            }
        }

        mutating func nextLine() async throws -> [UInt8]? {
            while true {
                if readyIndex < ready.count {
                    defer { readyIndex += 1 }
                    return ready[readyIndex]
                }
                guard !ended else { return nil }
                guard let chunk = try await chunks.next() else {
                    ended = true
                    return splitter.finish()
                }
                ready = try splitter.feed(chunk)
                readyIndex = 0
            }
        }
    }
}

extension ServerSentEvents {
    /// One Server-Sent Event, as received (`ServerSentEvents.Event`: the mock server's own
    /// `ServerSentEvent` is what a stub sends).
    public struct Event: Sendable, Hashable {
        /// The event's type: its `event` field, `"message"` when it has none.
        public var event: String
        /// Its `data` lines, joined with `\n`.
        public var data: String
        /// The last event ID the stream has set, up to and including this event (what a reconnection sends
        /// in `Last-Event-ID`), if any.
        public var id: String?
        /// The reconnection time the stream asked for with this event's `retry` field, if it did.
        public var retry: Duration?

        /// An event.
        public init(event: String = "message", data: String, id: String? = nil, retry: Duration? = nil) {
            self.event = event
            self.data = data
            self.id = id
            self.retry = retry
        }

        /// The data decoded from JSON as `T`.
        public func decode<T: Decodable>(_ type: T.Type = T.self, decoder: JSONDecoder = JSONDecoder()) throws -> T {
            try decoder.decode(T.self, from: Data(data.utf8))
        }
    }
}

/// A body read as Server-Sent Events, each as it completes (``BodyStream/serverSentEvents(maximumEventSize:)``).
///
/// Comments (`:` lines) are skipped; an event with no `data` is not dispatched; an event cut off by the
/// end of the body is dropped, as a browser's `EventSource` does.
public struct ServerSentEvents: AsyncSequence, Sendable {
    public typealias Element = Event
    public typealias Failure = any Error
    let body: BodyStream
    let maximumEventSize: Int
    let mapError: (@Sendable (any Error) -> any Error)?

    public func makeAsyncIterator() -> Iterator {
        Iterator(
            lines: TextLines.Iterator(
                chunks: body.makeAsyncIterator(), splitter: LineSplitter(limit: maximumEventSize), mapError: nil),
            limit: Swift.max(1, maximumEventSize), mapError: mapError)
    }

    /// Reads the events one by one.
    public struct Iterator: AsyncIteratorProtocol {
        var lines: TextLines.Iterator
        let limit: Int
        let mapError: (@Sendable (any Error) -> any Error)?
        var lastEventID: String?
        var first = true

        public mutating func next() async throws -> Event? {
            do { return try await nextEvent() } catch { throw mapError?(error) ?? error }
        }

        mutating func nextEvent() async throws -> Event? {
            var type = ""
            var data: [UInt8] = []
            var hasData = false
            var retry: Duration?
            while var line = try await lines.nextLine() {
                if first {
                    first = false
                    if line.starts(with: [0xEF, 0xBB, 0xBF]) { line.removeFirst(3) }  // a byte order mark
                }
                if line.isEmpty {
                    // The blank line dispatches what came before it, if it had data.
                    guard hasData else {
                        type = ""
                        retry = nil
                        continue
                    }
                    return Event(
                        event: type.isEmpty ? "message" : type, data: String(decoding: data, as: UTF8.self),
                        id: lastEventID, retry: retry)
                }
                if line.first == UInt8(ascii: ":") { continue }
                let name: ArraySlice<UInt8>
                var value: ArraySlice<UInt8>
                if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
                    name = line[..<colon]
                    value = line[(colon + 1)...]
                    if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
                } else {
                    name = line[...]
                    value = []
                }
                switch String(decoding: name, as: UTF8.self) {
                case "event": type = String(decoding: value, as: UTF8.self)
                case "data":
                    if hasData { data.append(0x0A) }
                    guard value.count <= limit - data.count else { throw BodyStreamError.lineTooLong(limit: limit) }
                    data += value
                    hasData = true
                case "id" where !value.contains(0):
                    lastEventID = String(decoding: value, as: UTF8.self)
                case "retry":
                    if !value.isEmpty, value.allSatisfy({ (0x30...0x39).contains($0) }), value.count <= 15,
                        let milliseconds = Int64(String(decoding: value, as: UTF8.self))
                    {
                        retry = .milliseconds(milliseconds)
                    }
                default: continue  // unknown fields are ignored
                }
            }
            return nil  // an event the end cut off is not dispatched
        }
    }
}

/// A line of a JSON Lines body that is not the value expected.
public struct JSONLineError: Error, Sendable, CustomStringConvertible {
    /// The line's number, from 1 (blank lines counted).
    public var line: Int
    /// The line's first 200 characters.
    public var excerpt: String
    /// The decoder's error.
    public var underlying: any Error

    public var description: String { "line \(line) is not the value expected (\(underlying)): \(excerpt)" }
}

/// A body read as newline-delimited JSON, one value per non-blank line (``BodyStream/jsonLines(of:decoder:maximumLineLength:)``).
public struct JSONLines<Value: Decodable>: AsyncSequence, Sendable {
    public typealias Element = Value
    public typealias Failure = any Error
    let lines: TextLines
    let makeDecoder: @Sendable () -> JSONDecoder

    init(lines: TextLines, makeDecoder: @escaping @Sendable () -> JSONDecoder) {
        self.lines = lines
        self.makeDecoder = makeDecoder
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(
            lines: TextLines.Iterator(
                chunks: lines.body.makeAsyncIterator(), splitter: LineSplitter(limit: lines.maximumLength), mapError: nil),
            decoder: makeDecoder(), mapError: lines.mapError)
    }

    /// Reads the values one by one.
    public struct Iterator: AsyncIteratorProtocol {
        var lines: TextLines.Iterator
        let decoder: JSONDecoder
        let mapError: (@Sendable (any Error) -> any Error)?
        var number = 0

        public mutating func next() async throws -> Value? {
            do {
                while let line = try await lines.nextLine() {
                    number += 1
                    guard line.contains(where: { !Self.isJSONWhitespace($0) }) else { continue }
                    do { return try decoder.decode(Value.self, from: Data(line)) } catch {
                        throw JSONLineError(
                            line: number, excerpt: String(String(decoding: line.prefix(200), as: UTF8.self)),
                            underlying: error)
                    }
                }
                return nil
            } catch {
                throw mapError?(error) ?? error
            }
        }

        static func isJSONWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
    }
}
