public import Foundation
public import HTTPTypes
import HammockJSON
public import HammockServer
import Synchronization

extension ProxyRecording {
    /// A WebSocket session the proxy relayed, redacted: what each side sent, in order, with when.
    public struct WebSocketSession: Sendable, Hashable {
        /// What happened on the socket.
        public enum Event: Sendable, Hashable {
            /// The client sent a message (redacted as a body is: JSON members by name).
            case fromClient(WebSocketMessage)
            /// The backend sent a message.
            case fromUpstream(WebSocketMessage)
            /// The backend closed, with the code the client was given.
            case upstreamClosed(WebSocketClose)
            /// The backend cut its connection without a close frame.
            case upstreamDropped
        }

        /// An event and when it came, from the session's start (the `101`).
        public struct Moment: Sendable, Hashable {
            public var event: Event
            public var at: Duration
        }

        /// The handshake's path as sent, percent-encoded.
        public var path: String
        /// The handshake's query after `?`, redacted.
        public var query: String?
        /// The handshake's header fields, redacted.
        public var requestHeaders: [HTTPField]
        /// The backend's own fields on its `101` (a cookie, a server name), redacted; not the handshake's.
        public var responseHeaders: [HTTPField]
        /// The subprotocol the backend agreed, if any.
        public var subprotocol: String?
        /// What happened, in order. A session the backend did not end (the client left, the mock stopped)
        /// ends without an `upstreamClosed` or `upstreamDropped`.
        public var moments: [Moment]
        /// When the session opened (the recording's clock).
        public var startedAt: Date
    }

    /// The WebSocket sessions kept so far, in the order they ended.
    public var webSockets: [WebSocketSession] { state.withLock { $0.sessions } }

    /// Keeps a session once it has ended, redacted; one whose messages passed ``maximumBodySize`` in all
    /// was given up as it passed it (counted as left out).
    func add(_ session: WebSocketSession, secrets: Set<String>) {
        state.withLock { state in
            state.sessions.append(session)
            state.secrets.formUnion(secrets)
        }
    }

    /// Starts recording a session whose handshake was `request`, answered by the backend with its own
    /// `fields` and `subprotocol`: events go to the recorder, and its `finish()` keeps the session.
    func startSession(request: MockRequest, fields: [HTTPField], subprotocol: String?) -> WebSocketRecorder {
        var secrets: Set<String> = []
        let requestHeaders = request.headerFields.map {
            HTTPField(name: $0.name, value: redaction.header($0.name.canonicalName, $0.value, secrets: &secrets))
        }
        let responseHeaders = fields.map {
            HTTPField(name: $0.name, value: redaction.header($0.name.canonicalName, $0.value, secrets: &secrets))
        }
        let query = request.query.map { redaction.formEncoded($0, secrets: &secrets) }
        let now = ContinuousClock.now
        let session = WebSocketSession(
            path: request.path, query: query, requestHeaders: requestHeaders, responseHeaders: responseHeaders,
            subprotocol: subprotocol, moments: [],
            startedAt: base.date.addingTimeInterval(Self.seconds(base.instant.duration(to: now))))
        return WebSocketRecorder(recording: self, session: session, secrets: secrets, start: now)
    }

    /// A message redacted as a body of JSON is, when it is JSON text, or its quoted members when it holds
    /// some; any other as it is (the secrets found elsewhere are scrubbed from it when the recording is
    /// written).
    func redacted(_ message: WebSocketMessage, secrets: inout Set<String>) -> WebSocketMessage {
        guard case .text(let text) = message else { return message }
        guard let value = try? JSON(parsing: Array(text.utf8)) else {
            // Not one JSON document (a batch, a prefix such as Socket.IO's `42[...]`): its quoted members.
            return redaction.jsonMembers(inText: Array(text.utf8), secrets: &secrets).map {
                .text(String(decoding: $0, as: UTF8.self))
            } ?? message
        }
        let redacted = redaction.json(value, secrets: &secrets)
        return redacted == value ? message : .text(String(decoding: redacted.serialized(), as: UTF8.self))
    }

    /// The sessions with every secret redacted so far replaced wherever it appears.
    func scrubbedSessions() -> [WebSocketSession] {
        let (sessions, secrets) = state.withLock { ($0.sessions, $0.secrets) }
        let sorted = RecordingRedaction.replacementOrder(secrets)
        guard !sorted.isEmpty else { return sessions }
        return sessions.map { session in
            var session = session
            session.path = RecordingRedaction.scrub(session.path, sorted)
            session.query = session.query.map { RecordingRedaction.scrub($0, sorted) }
            session.requestHeaders = RecordingRedaction.scrub(session.requestHeaders, sorted)
            session.responseHeaders = RecordingRedaction.scrub(session.responseHeaders, sorted)
            session.moments = session.moments.map { moment in
                var moment = moment
                switch moment.event {
                case .fromClient(.text(let text)): moment.event = .fromClient(.text(RecordingRedaction.scrub(text, sorted)))
                case .fromUpstream(.text(let text)):
                    moment.event = .fromUpstream(.text(RecordingRedaction.scrub(text, sorted)))
                case .upstreamClosed(let close):
                    moment.event = .upstreamClosed(
                        WebSocketClose(code: close.code, reason: RecordingRedaction.scrub(close.reason, sorted)))
                case .fromClient(.binary), .fromUpstream(.binary), .upstreamDropped: break
                }
                return moment
            }
            return session
        }
    }
}

/// Collects one relayed session's events as they happen, then hands the session to its recording. Its
/// messages together are bound by the recording's ``ProxyRecording/maximumBodySize``, and by what all
/// copies under way may hold (``ProxyRecording/maximumInFlight``): a session that passes either stops
/// being collected and is counted as left out.
final class WebSocketRecorder: Sendable {
    private struct State {
        var session: ProxyRecording.WebSocketSession
        var secrets: Set<String>
        var bytes = 0
        /// Given up (over the limit) or already kept.
        var done = false
    }

    private let recording: ProxyRecording
    private let start: ContinuousClock.Instant
    private let state: Mutex<State>

    init(
        recording: ProxyRecording, session: ProxyRecording.WebSocketSession, secrets: Set<String>,
        start: ContinuousClock.Instant
    ) {
        self.recording = recording
        self.start = start
        state = Mutex(State(session: session, secrets: secrets))
    }

    /// Notes an event now.
    func note(_ event: ProxyRecording.WebSocketSession.Event) {
        let at = start.duration(to: .now)
        let recording = self.recording
        // Given up: the bytes it held, to give back to the recording's bound on copies under way.
        let overflowed = state.withLock { state -> Int? in
            guard !state.done else { return nil }
            var event = event
            var size = 0
            switch event {
            case .fromClient(let message):
                size = Self.size(message)
                event = .fromClient(recording.redacted(message, secrets: &state.secrets))
            case .fromUpstream(let message):
                size = Self.size(message)
                event = .fromUpstream(recording.redacted(message, secrets: &state.secrets))
            case .upstreamClosed, .upstreamDropped: break
            }
            guard state.bytes + size <= recording.maximumBodySize, recording.reserve(size) else {
                state.done = true
                state.session.moments = []
                return state.bytes
            }
            state.bytes += size
            state.session.moments.append(.init(event: event, at: at))
            return nil
        }
        if let held = overflowed {
            recording.release(held)
            recording.skip()
        }
    }

    /// Keeps the session (once; later calls and a session given up do nothing).
    func finish() {
        let kept = state.withLock { state -> (ProxyRecording.WebSocketSession, Set<String>, Int)? in
            guard !state.done else { return nil }
            state.done = true
            return (state.session, state.secrets, state.bytes)
        }
        if let kept {
            recording.add(kept.0, secrets: kept.1)
            recording.release(kept.2)
        }
    }

    static func size(_ message: WebSocketMessage) -> Int {
        switch message {
        case .text(let text): text.utf8.count
        case .binary(let bytes): bytes.count
        }
    }
}
