public import HTTPTypes
public import HammockJSON

/// One answer a stub gives: a status (with an optional reason phrase), header fields, and a body that
/// is JSON, text or bytes. JSON strings and text may hold placeholders that read the request.
///
/// ```swift
/// let paid = try StubAnswer(status: 402, reasonPhrase: "Card Declined", body: .text("declined: {{body.card}}"))
/// ```
public struct StubAnswer: Sendable {
    /// A stub's body.
    public enum Body: Sendable, Hashable {
        /// JSON, served as `application/json` unless the headers say otherwise; strings may hold placeholders.
        case json(JSON)
        /// Text, served as `text/plain; charset=utf-8` unless the headers say otherwise; may hold placeholders.
        case text(String)
        /// Bytes as they are, served as `application/octet-stream` unless the headers say otherwise.
        case bytes([UInt8])
        /// The file at this path, streamed from disk as the client reads it (any size, flat memory), typed
        /// by its extension unless the headers say otherwise.
        case file(String)
        /// Server-Sent Events (`text/event-stream`), each sent after its delay; then the stream ends, or
        /// with `repeats` starts over until the client goes away or the server stops.
        case events([ServerSentEvent], repeats: Bool = false)
        /// A WebSocket: the request's upgrade is answered `101 Switching Protocols` and the script runs on
        /// the socket; a request that is no upgrade gets `426 Upgrade Required`. Only on `GET` routes.
        case webSocket(WebSocketScript)
    }

    /// The status.
    public var status: HTTPResponse.Status
    /// Whether the headers and body are served exactly as written, `{{` included, and with no
    /// `Content-Type` the headers do not give: what a recording holds (an upstream's answer is data,
    /// not a template).
    public let isVerbatim: Bool
    /// Header fields; values may hold placeholders (unless ``isVerbatim``).
    public var headers: [(name: HTTPField.Name, value: String)] {
        didSet { fixedHeaders = Self.fixedFields(headers, verbatim: isVerbatim) }
    }
    /// The body, if any.
    public var body: Body? {
        didSet { fixedBody = Self.fixedBytes(body, verbatim: isVerbatim) }
    }
    /// The header fields, made once, when no value has a placeholder.
    private var fixedHeaders: HTTPFields?
    /// The body's bytes, made once, when it has no placeholder: most stubs answer the same bytes every
    /// time, and walking the body for placeholders cost more than the rest of the answer.
    private var fixedBody: [UInt8]?

    /// Creates an answer.
    /// - Parameter reasonPhrase: The status line's phrase, when not the standard one (`402 Card Declined`):
    ///   up to 100 visible ASCII characters and spaces.
    /// - Throws: ``StubError`` for a status outside 200 to 599, a body with a status that forbids one
    ///   (204, 304), a bad reason phrase, or a placeholder that names nothing it could read.
    public init(
        status: Int = 200, reasonPhrase: String? = nil, headers: [(name: HTTPField.Name, value: String)] = [],
        body: Body? = nil, verbatim: Bool = false
    ) throws(StubError) {
        isVerbatim = verbatim
        guard (100...999).contains(status) else { throw StubError("the status \(status) is not a status code") }
        if let reasonPhrase {
            guard reasonPhrase.utf8.count <= 100,
                reasonPhrase.utf8.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || (0x21...0x7E).contains($0) }
                )
            else {
                throw StubError("the reason phrase must be up to 100 visible ASCII characters and spaces")
            }
            self.status = HTTPResponse.Status(code: status, reasonPhrase: reasonPhrase)
        } else {
            self.status = HTTPResponse.Status(code: status)
        }
        self.headers = headers
        self.body = body
        if self.status.kind == .informational {
            throw StubError("the status \(status) is informational, not a final answer; a stub answers 200 to 599")
        }
        if body != nil, !MockResponse.allowsBody(self.status) {
            throw StubError("a \(status) answer has no body (RFC 9110); remove the body or choose another status")
        }
        switch body {
        case .json(let json)? where !verbatim: try StubTemplate.validate(json)
        case .text(let text)? where !verbatim: _ = try StubTemplate.pieces(of: text)
        case .json?, .text?: break
        case .events(let events, let repeats)?:
            guard !events.isEmpty else { throw StubError("an event stream needs at least one event") }
            if repeats, events.allSatisfy({ $0.delay <= .zero }) {
                throw StubError(
                    "a repeating event stream needs a delay on at least one event, or it sends as fast as it can for ever")
            }
            for event in events { try StubTemplate.validate(event.data) }
        case .webSocket?:
            guard status == 200, reasonPhrase == nil else {
                throw StubError("a WebSocket route answers 101 Switching Protocols; leave out status and reason")
            }
        case .bytes?, .file?, nil: break
        }
        if !verbatim {
            for header in headers { _ = try StubTemplate.pieces(of: header.value) }
        }
        fixedHeaders = Self.fixedFields(headers, verbatim: verbatim)
        fixedBody = Self.fixedBytes(body, verbatim: verbatim)
    }

    /// Whether the headers or the body hold placeholders (events always may).
    var hasPlaceholders: Bool {
        switch body {
        case .events?, .webSocket?: return true
        case .json?, .text?: if fixedBody == nil { return true }
        case .bytes?, .file?, nil: break
        }
        return fixedHeaders == nil
    }

    static func fixedFields(_ headers: [(name: HTTPField.Name, value: String)], verbatim: Bool) -> HTTPFields? {
        guard verbatim || !headers.contains(where: { StubTemplate.mayHavePlaceholder($0.value) }) else { return nil }
        var fields = HTTPFields()
        for header in headers { fields.append(HTTPField(name: header.name, value: header.value)) }
        if verbatim, let type = fields[.contentType]?.lowercased(), activeTypes.contains(where: type.hasPrefix) {
            // A recorded page (a browser's HAR holds other sites' pages) runs on the mock's origin, where the
            // admin API answers its own origin: sandboxed, its scripts run in an opaque origin (`Origin:
            // null`, which the admin API refuses) and cannot drive or read the mock.
            fields[Self.policyField] = "sandbox allow-scripts allow-forms allow-popups"
        }
        return fields
    }

    /// A literal valid field name: the unwrap cannot fail.
    static let policyField = HTTPField.Name("Content-Security-Policy")!

    /// Types a browser runs scripts in.
    static let activeTypes = ["text/html", "application/xhtml+xml", "image/svg+xml", "text/xml", "application/xml"]

    static func fixedBytes(_ body: Body?, verbatim: Bool) -> [UInt8]? {
        switch body {
        case .json(let json)?: !verbatim && StubTemplate.hasPlaceholder(json) ? nil : json.serialized()
        case .text(let text)?: !verbatim && StubTemplate.mayHavePlaceholder(text) ? nil : Array(text.utf8)
        case .bytes(let bytes)?: bytes
        case .file?, .events?, .webSocket?, nil: nil
        }
    }

    static let textContentType = HTTPField(name: .contentType, value: "text/plain; charset=utf-8")
    static let bytesContentType = HTTPField(name: .contentType, value: "application/octet-stream")

    static let eventStreamFields: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-cache"]

    /// A type for a file's extension: the common ones a mock serves; `application/octet-stream` else.
    static func contentType(ofFile path: String) -> HTTPField {
        let name = path.split(separator: "/").last ?? ""
        let suffix = name.contains(".") ? name.split(separator: ".").last.map { $0.lowercased() } ?? "" : ""
        let types = [
            "json": "application/json; charset=utf-8", "txt": "text/plain; charset=utf-8", "html": "text/html; charset=utf-8",
            "csv": "text/csv; charset=utf-8", "xml": "application/xml", "png": "image/png", "jpg": "image/jpeg",
            "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp", "svg": "image/svg+xml", "pdf": "application/pdf",
            "mp4": "video/mp4", "mp3": "audio/mpeg", "zip": "application/zip",
        ]
        return HTTPField(name: .contentType, value: types[suffix] ?? "application/octet-stream")
    }

    /// A file's validators and `Accept-Ranges` added to `fields` (unless the stub set its own), and for a
    /// `GET` with a `Range` the part it asked for (206) or a 416; `nil` to answer the whole file.
    static func rangedFile(_ path: String, _ context: StubTemplate.Context, _ fields: inout HTTPFields) -> MockResponse? {
        guard let file = ByteRange.validators(ofFile: path) else { return nil }
        if fields[.acceptRanges] == nil { fields[.acceptRanges] = "bytes" }
        if fields[.eTag] == nil { fields[.eTag] = file.etag }
        if fields[.lastModified] == nil { fields[.lastModified] = file.lastModified }
        guard context.method == .get else { return nil }
        let asked = ByteRange.read(
            range: context.headers[.range], ifRange: context.headers[.ifRange], size: file.size,
            etag: fields[.eTag] ?? file.etag, lastModified: fields[.lastModified] ?? file.lastModified)
        switch asked {
        case .whole:
            return nil
        case .part(let range):
            fields[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(file.size)"
            return MockResponse(status: .partialContent, headerFields: fields, stream: StreamingBody.file(at: path, range: range))
        case .unsatisfiable:
            var problem = HTTPProblem(
                .rangeNotSatisfiable, detail: "The range \(context.headers[.range] ?? "") is past the end of \(file.size) bytes",
                extensions: ["size": .integer(file.size)]
            ).response
            problem.headerFields[.contentRange] = "bytes */\(file.size)"
            return problem
        }
    }

    /// The answer to a request, placeholders filled from `context`; event delays wait on `timer`.
    func response(in context: StubTemplate.Context, timer: LatencyTimer) throws -> MockResponse {
        var fields: HTTPFields
        if let fixedHeaders {
            fields = fixedHeaders
        } else {
            fields = HTTPFields()
            for header in headers {
                fields.append(HTTPField(name: header.name, value: StubTemplate.renderText(header.value, context)))
            }
        }
        guard let body else { return MockResponse(status: status, headerFields: fields) }
        switch body {
        case .file(let path):
            if fields[.contentType] == nil { fields.append(Self.contentType(ofFile: path)) }
            if status == .ok, [.get, .head].contains(context.method), let ranged = Self.rangedFile(path, context, &fields) {
                return ranged
            }
            do {
                return MockResponse(status: status, headerFields: fields, stream: try StreamingBody.file(at: path))
            } catch {
                // The file was there when the stub was made: it went away or changed since.
                throw HTTPProblem(.internalServerError, detail: "The stub's file \(error)")
            }
        case .events(let events, let repeats):
            for field in Self.eventStreamFields where fields[field.name] == nil { fields.append(field) }
            let rendered = events.map { event in
                var event = event
                event.data = StubTemplate.render(event.data, context)
                return event
            }
            let stream = StreamingBody { writer in
                repeat {
                    for event in rendered {
                        if event.delay > .zero { await timer.markArrival()(event.delay) }
                        try await writer.write(event.encoded)
                    }
                } while repeats
            }
            return MockResponse(status: status, headerFields: fields, stream: stream)
        case .webSocket:
            // Answered by `webSocketResponse`, which has the request; a 426 for a caller that got here.
            return HTTPProblem(.upgradeRequired, detail: "This route speaks WebSocket").response
        case .json, .text, .bytes:
            break
        }
        let bytes: [UInt8]
        let type: HTTPField
        switch body {
        case .json(let json):
            bytes = fixedBody ?? StubTemplate.render(json, context).serialized()
            type = MockResponse.jsonContentType
        case .text(let text):
            bytes = fixedBody ?? Array(StubTemplate.renderText(text, context).utf8)
            type = Self.textContentType
        case .bytes(let raw):
            bytes = raw
            type = Self.bytesContentType
        case .file, .events, .webSocket:
            return MockResponse(status: status, headerFields: fields)  // answered above
        }
        // A verbatim answer has the fields written and no other: a recorded answer without a type stays so.
        if fields[.contentType] == nil, !isVerbatim { fields.append(type) }
        return MockResponse(status: status, headerFields: fields, body: bytes)
    }

    /// The answer to a request for this WebSocket route: the `101` that runs `script` on the socket (its
    /// feed subscribed now, so no change after the handshake is missed), or the handshake's refusal. The
    /// route's headers go on the `101`.
    func webSocketResponse(
        _ script: WebSocketScript, request: MockRequest, context: StubTemplate.Context, timer: LatencyTimer,
        changes: ResourceChanges
    ) -> MockResponse {
        var response = MockResponse.webSocket(answering: request, protocols: script.protocols) { _ in }
        guard response.webSocket != nil else { return response }
        for header in headers {
            let value = isVerbatim ? header.value : StubTemplate.renderText(header.value, context)
            response.headerFields.append(HTTPField(name: header.name, value: value))
        }
        let lease =
            script.feed.isEmpty ? nil : FeedLease(changes.subscribe(to: script.feed.contains("*") ? nil : Set(script.feed)))
        response.webSocket = WebSocketSession(subprotocol: response.webSocket?.subprotocol) { connection in
            try await script.run(on: connection, context: context, timer: timer, feed: lease?.feed)
            withExtendedLifetime(lease) {}
        }
        return response
    }
}
