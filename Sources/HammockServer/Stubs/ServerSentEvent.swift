public import HammockJSON

/// One event of a `text/event-stream` answer (Server-Sent Events), as a stub sends it and as the
/// journal's `/__hammock/events` does.
///
/// ```swift
/// let ticks = try StubRoute(.get, "/ticks", answers: [StubAnswer(body: .events([
///     ServerSentEvent(event: "tick", data: ["n": 1], delay: .milliseconds(100)),
///     ServerSentEvent(event: "tick", data: ["n": 2], delay: .milliseconds(100)),
/// ], repeats: false))])
/// ```
public struct ServerSentEvent: Sendable, Hashable {
    /// The event's type (`event:`); a client's `onmessage` gets those without one.
    public var event: String?
    /// The data: a string is sent as it is (a line per line), anything else as JSON. A stub's data may
    /// hold placeholders, filled from the request.
    public var data: JSON
    /// The event's id (`id:`), which a reconnecting client sends back as `Last-Event-ID`.
    public var id: String?
    /// How long the client should wait before reconnecting (`retry:`), in milliseconds.
    public var retry: Int?
    /// How long after the previous event (or the answer's head) this one is sent.
    public var delay: Duration

    public init(event: String? = nil, data: JSON, id: String? = nil, retry: Int? = nil, delay: Duration = .zero) {
        self.event = event
        self.data = data
        self.id = id
        self.retry = retry
        self.delay = delay
    }

    /// The event as it goes on the wire: its fields, a `data:` line per line of data, a blank line.
    /// A line break inside `event` or `id` would end the field early; it becomes a space.
    public var encoded: [UInt8] {
        var text = ""
        if let event { text += "event: \(Self.oneLine(event))\n" }
        if let id { text += "id: \(Self.oneLine(id))\n" }
        if let retry { text += "retry: \(retry)\n" }
        let data =
            if case .string(let string) = self.data { string } else { String(decoding: self.data.serialized(), as: UTF8.self) }
        for line in data.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) { text += "data: \(line)\n" }
        return Array((text + "\n").utf8)
    }

    static func oneLine(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 })
    }
}
