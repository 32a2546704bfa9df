public import HammockJSON

/// What a WebSocket route of the configuration does once a client has connected: any of an echo, a
/// scripted sequence of messages with delays, and a live feed of resources' changes, together.
///
/// ```swift
/// let ticker = try StubRoute(.get, "/ws/ticker", answers: [StubAnswer(body: .webSocket(WebSocketScript(
///     messages: [.send(.json(["price": 101.5]), delay: .milliseconds(500))], repeats: true)))])
/// let people = try StubRoute(.get, "/ws/people", answers: [StubAnswer(body: .webSocket(WebSocketScript(feed: ["people"])))])
/// ```
/// A step may wait for the client's next message (``Step/receive``), so a conversation plays back as it
/// went: a recording of a proxied socket is written so (docs/proxy.md#websockets).
/// The session ends when the client closes, when a step closes or drops it, when the server stops
/// (1001), or, for a script with neither `echo`, `feed` nor `keepsOpen`, after its last step (1000).
public struct WebSocketScript: Sendable, Hashable {
    /// Whether `name` can be a subprotocol in `Sec-WebSocket-Protocol`: visible ASCII without a comma
    /// (the list's separator), as a route's `protocols` must be.
    public static func isSubprotocolName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { (0x21...0x7E).contains($0) && $0 != UInt8(ascii: ",") }
    }

    /// A message's content. Text and JSON may hold a stub's placeholders, filled from the request that
    /// opened the socket (`{{query.room}}`, `{{headers.x-user}}`, `{{now}}`, …).
    public enum Content: Sendable, Hashable {
        /// Sent as a text message.
        case text(String)
        /// Sent as a text message holding the JSON.
        case json(JSON)
        /// Sent as a binary message.
        case binary([UInt8])
    }

    /// One step of the scripted sequence, each after its delay (from the step before, or the opening).
    public enum Step: Sendable, Hashable {
        /// Sends a message.
        case send(Content, delay: Duration = .zero)
        /// Closes with a code and reason: the session ends.
        case close(WebSocketClose, delay: Duration = .zero)
        /// Cuts the connection without a close frame, as a lost network does: the session ends.
        case drop(delay: Duration = .zero)
        /// Waits for the client's next message (one it sent earlier and no step has waited for counts);
        /// the next step's delay runs from its arrival. A client that leaves first ends the session.
        case receive

        var delay: Duration {
            switch self {
            case .send(_, let delay), .close(_, let delay), .drop(let delay): delay
            case .receive: .zero
            }
        }
    }

    /// The scripted steps, sent from the opening.
    public var steps: [Step]
    /// Whether the steps start over after the last (until the client closes or the server stops).
    public var repeats: Bool
    /// Whether each message the client sends is sent back to it.
    public var echo: Bool
    /// The resources whose changes are sent as they happen (`["*"]` for every resource), each as a
    /// text message of JSON: `{"type": "created", "resource": "people", "record": {...}}` (see
    /// ``ResourceChange``).
    public var feed: [String]
    /// The subprotocols the route speaks (`Sec-WebSocket-Protocol`).
    public var protocols: [String]
    /// Whether the socket stays open after the last step, until the client closes or the server stops
    /// (as with `echo` or `feed`), instead of closing with 1000.
    public var keepsOpen: Bool
    /// Whether text and JSON are sent as written, `{{` included, instead of filled from the request
    /// (what a recording writes).
    public var isVerbatim: Bool

    /// - Throws: ``StubError`` for a script that does nothing (no steps, echo, feed or `keepsOpen`), a repeating
    ///   script with no delay and no ``Step/receive`` (it would send as fast as it can for ever), a close
    ///   code a server may not send, or a placeholder that names nothing.
    public init(
        steps: [Step] = [], repeats: Bool = false, echo: Bool = false, feed: [String] = [], protocols: [String] = [],
        keepsOpen: Bool = false, verbatim: Bool = false
    ) throws(StubError) {
        guard !steps.isEmpty || echo || !feed.isEmpty || keepsOpen else {
            throw StubError("a WebSocket route needs messages, echo, a feed or keepOpen")
        }
        if repeats, steps.allSatisfy({ $0.delay <= .zero && $0 != .receive }) {
            throw StubError(
                "repeating messages need a delay or a receive on at least one step, or they are sent as fast as possible for ever"
            )
        }
        for step in steps {
            switch step {
            case .send(.json(let json), _) where !verbatim: try StubTemplate.validate(json)
            case .send(.text(let text), _) where !verbatim: _ = try StubTemplate.pieces(of: text)
            case .close(let close, _):
                guard WebSocketClose.isSendable(Int(close.code)) else {
                    throw StubError(
                        "\(close.code) is not a close code a server sends: 1000 to 1003, 1007 to 1014, or 3000 to 4999")
                }
            case .send, .drop, .receive: break
            }
        }
        self.steps = steps
        self.repeats = repeats
        self.echo = echo
        self.feed = feed
        self.protocols = protocols
        self.keepsOpen = keepsOpen
        isVerbatim = verbatim
    }

    /// How the session ended, from the task that ended it.
    private enum Ending: Sendable {
        /// The client closed, or the connection went.
        case clientLeft
        /// The scripted steps are done (without a close or drop).
        case stepsDone
        /// A step closed or dropped the connection, or the feed overflowed.
        case ended
    }

    /// Runs the script on an opened connection; `feed` is the subscription made at the handshake.
    func run(
        on connection: WebSocketConnection, context: StubTemplate.Context, timer: LatencyTimer, feed: ChangeFeed?
    )
        async throws
    {
        let steps = self.steps
        let repeats = self.repeats
        let echo = self.echo
        let verbatim = isVerbatim
        // Each message the client sends, counted for the receive steps: a signal without the message (a
        // step waits for one, not for what it says), so a client that sends ahead costs a byte a message.
        let listens = steps.contains(.receive)
        let (arrivals, arrived) = AsyncStream<Void>.makeStream()
        try await withThrowingTaskGroup(of: Ending.self) { group in
            group.addTask {
                defer { arrived.finish() }
                for await message in connection.inbound {
                    if echo { try await connection.send(message) }
                    if listens { arrived.yield(()) }
                }
                return .clientLeft
            }
            if !steps.isEmpty {
                group.addTask {
                    var wait = timer.markArrival()
                    var elapsed = Duration.zero
                    var messages = arrivals.makeAsyncIterator()
                    repeat {
                        for step in steps {
                            if case .receive = step {
                                guard await messages.next() != nil else { return .clientLeft }
                                // The steps after it are timed from the message, as the recorded ones were.
                                wait = timer.markArrival()
                                elapsed = .zero
                                continue
                            }
                            elapsed += step.delay
                            if step.delay > .zero { await wait(elapsed) }
                            try Task.checkCancellation()
                            switch step {
                            case .send(let content, _):
                                try await connection.send(verbatim ? Self.verbatim(content) : Self.render(content, context))
                            case .close(let close, _):
                                await connection.close(close)
                                return .ended
                            case .drop:
                                await connection.drop()
                                return .ended
                            case .receive: continue
                            }
                        }
                    } while repeats
                    return .stepsDone
                }
            }
            if let feed {
                group.addTask {
                    while let item = await feed.next() {
                        switch item {
                        case .change(let change):
                            try await connection.send(.text(String(decoding: change.json.serialized(), as: UTF8.self)))
                        case .overflowed(let reason):
                            await connection.close(WebSocketClose(code: 1008, reason: reason))
                            return .ended
                        }
                    }
                    return .ended
                }
            }
            // The steps alone keep the socket open only while they run; an echo, a feed or `keepsOpen`, until
            // the client goes.
            let stays = echo || feed != nil || keepsOpen
            while let ending = try await group.next() {
                if case .stepsDone = ending, stays { continue }
                break
            }
            group.cancelAll()
        }
    }

    /// A step's message as written.
    static func verbatim(_ content: Content) -> WebSocketMessage {
        switch content {
        case .text(let text): .text(text)
        case .json(let json): .text(String(decoding: json.serialized(), as: UTF8.self))
        case .binary(let bytes): .binary(bytes)
        }
    }

    /// A step's message with the request's placeholders filled.
    static func render(_ content: Content, _ context: StubTemplate.Context) -> WebSocketMessage {
        switch content {
        case .text(let text): .text(StubTemplate.renderText(text, context))
        case .json(let json): .text(String(decoding: StubTemplate.render(json, context).serialized(), as: UTF8.self))
        case .binary(let bytes): .binary(bytes)
        }
    }
}

/// Holds a live feed's subscription for a session: made at the handshake (so that no change between the
/// `101` and the session's start is missed) and cancelled when the session ends, or when its answer is
/// dropped without ever running (a fault, a client gone).
final class FeedLease: Sendable {
    let feed: ChangeFeed
    init(_ feed: ChangeFeed) { self.feed = feed }
    deinit { feed.cancel() }
}
