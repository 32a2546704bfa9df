public import Foundation
public import HTTPTypes
public import HammockJSON
package import HammockServer
import HammockStore
import Synchronization

/// What a proxy passed on, kept to be written as a Hammock configuration: collections become typed
/// resources holding the records seen, everything else stubs that answer as the backend did.
///
/// ```swift
/// let recording = ProxyRecording()
/// server.addRoutes(try ProxyRoutes(upstream: backend, recording: recording), first: false)
/// // … the app runs against the mock …
/// let summary = try recording.write(toFile: "recorded.json")
/// // hammock serve recorded.json   answers those requests without the backend
/// ```
/// Secrets are redacted as each exchange is kept (``RecordingRedaction``): the recording never holds
/// them, so neither does the file. An exchange whose body (either way) passes ``maximumBodySize`` is left
/// out and counted.
public final class ProxyRecording: Sendable {
    /// One request and its answer, redacted.
    public struct Exchange: Sendable, Hashable {
        /// The method.
        public var method: HTTPRequest.Method
        /// The path as sent, percent-encoded.
        public var path: String
        /// The query after `?`, redacted.
        public var query: String?
        /// The request's header fields, redacted.
        public var requestHeaders: [HTTPField] = []
        /// The request's content type, if it had one.
        public var requestContentType: String?
        /// The request's body, redacted.
        public var requestBody: [UInt8]
        /// The status answered.
        public var status: Int
        /// The answer's header fields, redacted, without the framing ones (length, encoding of the transfer,
        /// connection) and `Date`.
        public var responseHeaders: [HTTPField]
        /// The answer's body, redacted.
        public var responseBody: [UInt8]
        /// When the request arrived (the recording's clock).
        public var startedAt = Date(timeIntervalSince1970: 0)
        /// From the request's arrival to the answer's end, in seconds.
        public var duration = 0.0
    }

    /// How a recording was written.
    public struct Summary: Sendable, Hashable, CustomStringConvertible {
        /// The exchanges written.
        public var exchanges: Int
        /// The resources made, by name.
        public var resources: [String]
        /// The stubs made.
        public var stubs: Int
        /// Exchanges left out: a body over the limit, or a path no stub can name.
        public var skipped: Int
        /// The WebSocket sessions written (as routes that play them back).
        public var webSockets = 0
        /// Nothing was recorded that a mock could serve, so ``ProxyRecording/write(toFile:inferringResources:)``
        /// left the file as it was: a session that saw no traffic does not replace an earlier recording with
        /// a configuration `hammock serve` refuses.
        public var leftFileAlone = false

        public var description: String {
            var text = "\(exchanges) exchange\(exchanges == 1 ? "" : "s")"
            if leftFileAlone { return text + ": nothing to serve, the file was left as it was" }
            if resources.isEmpty, stubs == 0, exchanges > 0 {
                return text + (skipped > 0 ? "; \(skipped) left out (a body over the limit)" : "")
            }
            text +=
                resources.isEmpty
                ? "" : ", \(resources.count) resource\(resources.count == 1 ? "" : "s") (\(resources.joined(separator: ", ")))"
            text += ", \(stubs) stub\(stubs == 1 ? "" : "s")"
            if webSockets > 0 { text += ", \(webSockets) WebSocket session\(webSockets == 1 ? "" : "s")" }
            if skipped > 0 { text += "; \(skipped) left out (a body over the limit, or a path no stub can name)" }
            return text
        }
    }

    /// Why a recording could not be written.
    public struct WriteError: Error, Sendable, CustomStringConvertible {
        /// Where, and what went wrong.
        public var description: String
    }

    struct State {
        var exchanges: [Exchange] = []
        var sessions: [WebSocketSession] = []
        var skipped = 0
        /// Values redacted so far, searched for everywhere when the file is written. Held in memory only.
        var secrets: Set<String> = []
    }

    /// What is redacted.
    public let redaction: RecordingRedaction
    /// The largest body kept, either way; an exchange with a larger one is counted, not kept.
    public let maximumBodySize: Int
    /// The most bytes being copied at once for exchanges still under way, all of them together: streamed
    /// answers and open WebSocket sessions, each kept up to ``maximumBodySize`` until it ends. Past it, the
    /// one that would pass it is left out and counted, as one over ``maximumBodySize`` is. Without it, N
    /// large downloads at once while recording held N times 8 MiB (the reliability suite's endless answer
    /// showed the 8 MiB).
    public let maximumInFlight: Int
    let state = Mutex(State())
    /// The bytes ``maximumInFlight`` bounds, now.
    private let inFlight = Atomic<Int>(0)
    /// The wall-clock time, read once at creation; each exchange's time follows from the monotonic clock.
    let base: (date: Date, instant: ContinuousClock.Instant)

    /// A recording that redacts what `redaction` names and keeps bodies up to `maximumBodySize` bytes;
    /// `now` is the wall clock a HAR file's times are written in.
    public init(
        redaction: RecordingRedaction = RecordingRedaction(), maximumBodySize: Int = 8 << 20,
        maximumInFlight: Int = 64 << 20, now: @Sendable () -> Date = { Date() }
    ) {
        self.redaction = redaction
        self.maximumBodySize = max(0, maximumBodySize)
        self.maximumInFlight = max(0, maximumInFlight)
        base = (now(), ContinuousClock.now)
    }

    /// The exchanges kept so far, in the order their answers ended.
    public var exchanges: [Exchange] { state.withLock { $0.exchanges } }

    /// How many exchanges were left out.
    public var skipped: Int { state.withLock { $0.skipped } }

    /// Forgets every exchange.
    public func clear() {
        state.withLock { $0 = State() }
    }

    /// Counts an exchange left out.
    func skip() { state.withLock { $0.skipped += 1 } }

    /// Takes `count` bytes of ``maximumInFlight`` for an exchange being copied; `false`, taking nothing,
    /// when they would pass it.
    func reserve(_ count: Int) -> Bool {
        guard count > 0 else { return true }
        // Never past the bound, even for a moment: `current` stays at most `maximumInFlight`, so neither
        // the difference nor the sum below can overflow, whatever bound was set.
        var current = inFlight.load(ordering: .relaxed)
        while true {
            guard count <= maximumInFlight - current else { return false }
            let (exchanged, original) = inFlight.compareExchange(
                expected: current, desired: current + count, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    /// Gives back bytes ``reserve(_:)`` took: the exchange ended, kept or not.
    func release(_ count: Int) {
        if count > 0 { inFlight.subtract(count, ordering: .relaxed) }
    }

    /// The bytes being copied now, for the tests.
    var bytesInFlight: Int { inFlight.load(ordering: .relaxed) }

    /// Keeps an exchange, redacted.
    package func add(request: MockRequest, status: HTTPResponse.Status, fields: HTTPFields, body: [UInt8]) {
        // A body streamed past the server's limit was never held, so it can be neither matched nor
        // redacted: the exchange is left out, as one over the recording's own limit is.
        guard request.bodyStream == nil, request.body.count <= maximumBodySize, body.count <= maximumBodySize else {
            return skip()
        }
        var secrets: Set<String> = []
        var requestHeaders: [HTTPField] = []
        for field in request.headerFields {
            let value = redaction.header(field.name.canonicalName, field.value, secrets: &secrets)
            requestHeaders.append(HTTPField(name: field.name, value: value))
        }
        let query = request.query.map { redaction.formEncoded($0, secrets: &secrets) }
        let requestType = request.headerFields[.contentType]
        let requestBody = redactedBody(request.body, type: requestType, secrets: &secrets)
        var headers: [HTTPField] = []
        for field in fields
        where !Self.unrecorded.contains(field.name.canonicalName.lowercased()) || Self.keepsLength(field, request.method) {
            let value = redaction.header(field.name.canonicalName, field.value, secrets: &secrets)
            headers.append(HTTPField(name: field.name, value: value))
        }
        let responseBody = redactedBody(body, type: fields[.contentType], secrets: &secrets)
        let end = ContinuousClock.now
        let arrival = request.context?.arrival ?? end
        let exchange = Exchange(
            method: request.method, path: request.path, query: query, requestHeaders: requestHeaders,
            requestContentType: requestType, requestBody: requestBody, status: Int(status.code), responseHeaders: headers,
            responseBody: responseBody,
            startedAt: base.date.addingTimeInterval(Self.seconds(base.instant.duration(to: arrival))),
            duration: Self.seconds(arrival.duration(to: end)))
        state.withLock { state in
            state.exchanges.append(exchange)
            state.secrets.formUnion(secrets)
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// The fields a replay makes its own: framing, the connection's, and the time of the answer.
    static let unrecorded: Set<String> = ["content-length", "transfer-encoding", "connection", "keep-alive", "date"]

    /// Whether `field` is a `HEAD` answer's `Content-Length`: the length a `GET` would bring, which its
    /// empty body cannot say on replay, so it is kept.
    static func keepsLength(_ field: HTTPField, _ method: HTTPRequest.Method) -> Bool {
        method == .head && field.name == .contentLength
    }

    /// A JSON or form body with the named members redacted; any other text with its quoted JSON members
    /// of those names redacted (JSON Lines, JSON that does not parse, JSON in a page); bytes that are not
    /// UTF-8 as they are.
    func redactedBody(_ bytes: [UInt8], type: String?, secrets: inout Set<String>) -> [UInt8] {
        guard !bytes.isEmpty else { return bytes }
        let media = Self.mediaType(type)
        if Self.isJSON(media), let value = try? JSON(parsing: bytes) {
            let redacted = redaction.json(value, secrets: &secrets)
            return redacted == value ? bytes : redacted.serialized()
        }
        if media == "application/x-www-form-urlencoded", let text = String(validating: bytes, as: UTF8.self) {
            return Array(redaction.formEncoded(text, secrets: &secrets).utf8)
        }
        // A quote is the least a member needs; most binary bodies have none worth scanning for.
        guard bytes.contains(UInt8(ascii: "\"")), String(validating: bytes, as: UTF8.self) != nil else { return bytes }
        return redaction.jsonMembers(inText: bytes, secrets: &secrets) ?? bytes
    }

    /// `application/json` from `application/json; charset=utf-8`, lowercased.
    static func mediaType(_ type: String?) -> String {
        guard let type else { return "" }
        return (type.split(separator: ";").first.map(String.init) ?? "").trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// `application/json`, and `application/problem+json` and the like.
    static func isJSON(_ media: String) -> Bool {
        media == "application/json" || (media.hasPrefix("application/") && media.hasSuffix("+json"))
    }

    /// The recording as a Hammock configuration (a memory store), with resources inferred from the
    /// exchanges that look like a collection unless `inferringResources` is false (then every exchange
    /// is a stub: a replay answers exactly what was recorded, in order).
    public func configuration(inferringResources: Bool = true) -> (configuration: JSON, summary: Summary) {
        let (scrubbed, skipped) = scrubbedExchanges()
        var builder = RecordingBuilder(exchanges: scrubbed, sessions: scrubbedSessions())
        if inferringResources { builder.inferResources() }
        let (configuration, resources, stubs, unnamed) = builder.build()
        var summary = Summary(exchanges: exchanges.count, resources: resources, stubs: stubs, skipped: skipped + unnamed)
        summary.webSockets = builder.webSocketsWritten
        return (configuration, summary)
    }

    /// The recording as an HTTP Archive 1.2 document (``HTTPArchive``), redacted as the configuration is;
    /// its requests are addressed to the mock, as the app sent them.
    public func archive() -> (archive: JSON, summary: Summary) {
        let (scrubbed, skipped) = scrubbedExchanges()
        let sessions = scrubbedSessions()
        let document = HTTPArchive.document(of: scrubbed, sessions: sessions, creatorVersion: MockServer.version)
        var summary = Summary(exchanges: scrubbed.count, resources: [], stubs: 0, skipped: skipped)
        summary.webSockets = sessions.count
        return (document, summary)
    }

    /// The exchanges with every secret redacted so far replaced wherever it appears, and the count left out.
    func scrubbedExchanges() -> (exchanges: [Exchange], skipped: Int) {
        let (exchanges, skipped, secrets) = state.withLock { ($0.exchanges, $0.skipped, $0.secrets) }
        let ordered = RecordingRedaction.replacementOrder(secrets)
        return (exchanges.map { Self.scrub($0, ordered) }, skipped)
    }

    /// Writes ``configuration(inferringResources:)`` to `path` (or ``archive()`` when `path` ends in
    /// `.har`), pretty-printed, readable by its owner only (it holds what the backend answered), replacing
    /// the file whole. When nothing was recorded that a mock could serve (no exchange, or none a stub can
    /// name), the file is left as it was and the summary says so (``Summary/leftFileAlone``).
    /// - Throws: ``WriteError`` if the file cannot be written.
    @discardableResult
    public func write(toFile path: String, inferringResources: Bool = true) throws(WriteError) -> Summary {
        let isArchive = path.lowercased().hasSuffix(".har")
        var (configuration, summary) = isArchive ? archive() : self.configuration(inferringResources: inferringResources)
        let servesNothing =
            isArchive
            ? summary.exchanges == 0 && summary.webSockets == 0
            : configuration["resources"] == nil && configuration["routes"] == nil
        if servesNothing {
            summary.leftFileAlone = true
            return summary
        }
        try Self.writePrivately(configuration, toFile: path)
        return summary
    }

    /// Writes `value` pretty-printed to `path`, readable by its owner only, replacing the file whole (a
    /// reader sees the old file or the new one, never half of one).
    static func writePrivately(_ value: JSON, toFile path: String) throws(WriteError) {
        var bytes = value.serialized(options: .prettyPrinted)
        bytes.append(UInt8(ascii: "\n"))
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(
            ".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw WriteError(description: "cannot write \(path): cannot create a file in \(url.deletingLastPathComponent().path)")
        }
        do {
            let handle = try FileHandle(forWritingTo: temporary)
            try handle.write(contentsOf: Data(bytes))
            try handle.close()
            // rename(2) replaces the old file in one step (FileManager's replaceItemAt fails on Linux).
            guard rename(temporary.path, url.path) == 0 else {
                throw WriteError(description: "cannot write \(path): cannot rename \(temporary.lastPathComponent) onto it")
            }
        } catch let error as WriteError {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw WriteError(description: "cannot write \(path): \(error.localizedDescription)")
        }
    }

    /// An exchange with every secret replaced in its path, query, header values and text bodies.
    static func scrub(_ exchange: Exchange, _ secrets: [String]) -> Exchange {
        guard !secrets.isEmpty else { return exchange }
        var exchange = exchange
        exchange.path = RecordingRedaction.scrub(exchange.path, secrets)
        exchange.query = exchange.query.map { RecordingRedaction.scrub($0, secrets) }
        exchange.responseHeaders = RecordingRedaction.scrub(exchange.responseHeaders, secrets)
        exchange.requestHeaders = RecordingRedaction.scrub(exchange.requestHeaders, secrets)
        exchange.requestBody = scrub(exchange.requestBody, secrets)
        exchange.responseBody = scrub(exchange.responseBody, secrets)
        return exchange
    }

    /// A body's secrets replaced when it is UTF-8 text (JSON included); binary bodies stay as they are.
    static func scrub(_ body: [UInt8], _ secrets: [String]) -> [UInt8] {
        guard !body.isEmpty, let text = String(validating: body, as: UTF8.self) else { return body }
        guard secrets.contains(where: { text.contains($0) }) else { return body }
        return Array(RecordingRedaction.scrub(text, secrets).utf8)
    }
}
