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
    }

    /// The status.
    public var status: HTTPResponse.Status
    /// Header fields; values may hold placeholders.
    public var headers: [(name: HTTPField.Name, value: String)] {
        didSet { fixedHeaders = Self.fixedFields(headers) }
    }
    /// The body, if any.
    public var body: Body? {
        didSet { fixedBody = Self.fixedBytes(body) }
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
        body: Body? = nil
    ) throws(StubError) {
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
        case .json(let json)?: try StubTemplate.validate(json)
        case .text(let text)?: _ = try StubTemplate.pieces(of: text)
        case .bytes?, nil: break
        }
        for header in headers { _ = try StubTemplate.pieces(of: header.value) }
        fixedHeaders = Self.fixedFields(headers)
        fixedBody = Self.fixedBytes(body)
    }

    static func fixedFields(_ headers: [(name: HTTPField.Name, value: String)]) -> HTTPFields? {
        guard !headers.contains(where: { StubTemplate.mayHavePlaceholder($0.value) }) else { return nil }
        var fields = HTTPFields()
        for header in headers { fields.append(HTTPField(name: header.name, value: header.value)) }
        return fields
    }

    static func fixedBytes(_ body: Body?) -> [UInt8]? {
        switch body {
        case .json(let json)?: StubTemplate.hasPlaceholder(json) ? nil : json.serialized()
        case .text(let text)?: StubTemplate.mayHavePlaceholder(text) ? nil : Array(text.utf8)
        case .bytes(let bytes)?: bytes
        case nil: nil
        }
    }

    static let textContentType = HTTPField(name: .contentType, value: "text/plain; charset=utf-8")
    static let bytesContentType = HTTPField(name: .contentType, value: "application/octet-stream")

    /// The answer to a request, placeholders filled from `context`.
    func response(in context: StubTemplate.Context) -> MockResponse {
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
        }
        if fields[.contentType] == nil { fields.append(type) }
        return MockResponse(status: status, headerFields: fields, body: bytes)
    }
}
