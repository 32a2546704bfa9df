import Foundation
public import HTTPTypes
public import HammockJSON
import HammockWire

/// Describes one request: method, path template, parameters, headers and body. Generated API clients
/// build one per call; you can build them by hand too.
///
/// ```swift
/// var request = RequestBuilder(.get, "/users/{user}/repos?type=owner")
/// request.setPathValue("octocat", for: "user")
/// request.addQuery("sort", sort)                  // nil is omitted, arrays repeat the key
/// request.setHeader("Accept", "application/json")
/// let repos = try await client.send(request, decoding: [Repo].self)
/// ```
/// Problems (a path value of `..`, a header with a line break) are reported when the request is
/// made, as a ``RestError`` with ``RestError/Reason/invalidRequest(_:)``.
public struct RequestBuilder: Sendable {
    /// A body, encoded when the request is made.
    public enum Body: Sendable {
        /// Bytes with their media type.
        case bytes([UInt8], contentType: String)
        /// A JSON value.
        case json(JSON)
        /// An `Encodable` value, encoded by the client's encoder.
        case encodable(any Encodable & Sendable)
        /// Form fields, `application/x-www-form-urlencoded`.
        case form([(String, String)])
        /// Multipart form data.
        case multipart([MultipartPart])
        /// A file's contents, read from disk as they are sent (never held whole), with their media type.
        case file(URL, contentType: String)
    }

    /// The method.
    public var method: HTTPRequest.Method
    /// The path template, relative to the client's base URL, with `{name}` placeholders and an
    /// optional static query.
    public var template: String
    /// The body, if any.
    public var body: Body?
    // Pairs, not dictionaries: a request fills one to three placeholders, and a dictionary's storage and
    // hashing cost more than a scan of so few (part of the generated call's 1.8 µs over a hand-written
    // one in process; scripts/bench client).
    private(set) var pathValues = PlaceholderValues()
    private(set) var queryValues = PlaceholderValues()
    private(set) var query: [(String, String)] = []
    private(set) var headers: [(String, String?)] = []
    /// Path templates of what a successful request changes besides its own URL (`@Invalidates`), filled
    /// from the same path values: a `Service` (HammockResources) told of the write invalidates those resources.
    public var invalidates: [String] = []
    /// How long the call may take, interceptors and retries included, on the client's clock; `nil` for
    /// the transport's own limit only. A call past it throws ``RestError/Reason/timedOut(_:)`` with a
    /// ``RequestTimeout``, and the transport's work is cancelled.
    public var timeout: Duration?
    /// The largest response body this request accepts, in bytes; `nil` for the transport's own limit
    /// (16 MiB by default on this package's transports; none for ``RestClient/download(_:)`` and
    /// ``RestClient/stream(_:)``). Checked as the body arrives, on every transport: a body past it fails
    /// with ``BodyStreamError/tooLarge(limit:)`` as the transport error, before it is held whole.
    public var maximumResponseSize: Int?

    /// A request for `method` at `template`.
    public init(_ method: HTTPRequest.Method, _ template: String) {
        self.method = method
        self.template = template
    }

    /// Fills the `{name}` placeholder (percent-encoded as one segment: `/` becomes `%2F`).
    public mutating func setPathValue(_ value: some ParameterValue, for name: String) {
        pathValues.set(value.parameterStrings, for: name)
    }

    /// Fills the `{name}` placeholder of the template's static query (`/search?q={query}`), strictly
    /// encoded. `nil` drops the item; an array repeats it once per element.
    public mutating func setQueryValue(_ value: some ParameterValue, for name: String) {
        queryValues.set(value.parameterStrings, for: name)
    }

    /// Adds query items (none for `nil`, one per element for arrays).
    public mutating func addQuery(_ name: String, _ value: some ParameterValue) {
        for text in value.parameterStrings { query.append((name, text)) }
    }

    /// Adds a query item per pair of `map`, keys in sorted order (an array value repeats its key, `nil`
    /// adds none); `name` is the parameter's and is not sent. What an `@API` method's dictionary
    /// parameter becomes: `func search(filters: [String: String])` sends `?a=1&b=2`.
    public mutating func addQuery<Value: ParameterValue>(_ name: String, _ map: [String: Value]?) {
        for (key, value) in Self.sortedPairs(map) { addQuery(key, value) }
    }

    /// Sets a header per pair of `map` (an `@API` method's `@HeaderMap` parameter); a `nil` value removes
    /// that header, a `nil` map sets none.
    public mutating func setHeaders<Value: ParameterValue>(_ map: [String: Value]?) {
        for (name, value) in Self.sortedPairs(map) { setHeader(name, value) }
    }

    /// A dictionary parameter's pairs, keys in sorted order (a dictionary's own order changes from run to
    /// run); none for `nil`.
    private static func sortedPairs<Value>(_ map: [String: Value]?) -> [(key: String, value: Value)] {
        (map ?? [:]).sorted { $0.key < $1.key }
    }

    /// Sets a header; a `nil` optional removes it. Later settings win; names compare case-insensitively.
    public mutating func setHeader(_ name: String, _ value: some ParameterValue) {
        let strings = value.parameterStrings
        // Several values make one field: a list joins with ", ", but cookies with "; " (RFC 6265
        // §5.4: `a=1, b=2` would be one cookie named `a` with the value `1, b=2`).
        let separator = name.lowercased() == "cookie" ? "; " : ", "
        headers.append((name, strings.isEmpty ? nil : strings.joined(separator: separator)))
    }

    /// Removes a header set earlier (or by the client's defaults).
    public mutating func removeHeader(_ name: String) { headers.append((name, nil)) }

    /// Adds a form field (one per element for arrays, none for `nil`); the body becomes a form.
    public mutating func addFormField(_ name: String, _ value: some ParameterValue) {
        var fields: [(String, String)] = []
        if case .form(let existing) = body { fields = existing }
        for text in value.parameterStrings { fields.append((name, text)) }
        body = .form(fields)
    }

    /// Adds a form field per pair of `map`, keys in sorted order; `name` is the parameter's and is not sent.
    public mutating func addFormField<Value: ParameterValue>(_ name: String, _ map: [String: Value]?) {
        for (key, value) in Self.sortedPairs(map) { addFormField(key, value) }
    }

    /// Adds a text part per pair of `map`, keys in sorted order; `name` is the parameter's and is not sent.
    public mutating func addPart<Value: ParameterValue>(_ name: String, _ map: [String: Value]?) {
        for (key, value) in Self.sortedPairs(map) { addPart(key, value) }
    }

    /// Adds a multipart part; the body becomes multipart.
    public mutating func addPart(_ part: MultipartPart) {
        var parts: [MultipartPart] = []
        if case .multipart(let existing) = body { parts = existing }
        parts.append(part)
        body = .multipart(parts)
    }

    /// Adds a text part for each value (none for `nil`).
    public mutating func addPart(_ name: String, _ value: some ParameterValue) {
        for text in value.parameterStrings { addPart(.field(name: name, value: text)) }
    }

    /// Adds a file part.
    public mutating func addPart(_ name: String, _ file: FilePart) { addPart(.file(name: name, file)) }

    /// Adds a file part if there is one.
    public mutating func addPart(_ name: String, _ file: FilePart?) {
        if let file { addPart(.file(name: name, file)) }
    }

    /// Sets an `Encodable` body, encoded as JSON by the client. `Data` and `[UInt8]` are sent as they
    /// are (`application/octet-stream`), a `String` as UTF-8 text (`text/plain; charset=utf-8`), and a
    /// file URL as the file's contents, read from disk as they are sent (`application/octet-stream`):
    /// never as JSON. A `Content-Type` header of the request wins over these.
    public mutating func setBody(_ value: some Encodable & Sendable) {
        if let json = value as? JSON {
            body = .json(json)
        } else if let text = value as? String {
            body = .bytes(Array(text.utf8), contentType: "text/plain; charset=utf-8")
        } else if let url = value as? URL, url.isFileURL {
            body = .file(url, contentType: "application/octet-stream")
        } else if let data = value as? Data {
            body = .bytes([UInt8](data), contentType: "application/octet-stream")
        } else if let bytes = value as? [UInt8] {
            body = .bytes(bytes, contentType: "application/octet-stream")
        } else {
            body = .encodable(value)
        }
    }
}

extension RequestBuilder {
    /// The URL this request goes to from `baseURL`, for messages (never throws; unfilled placeholders stay).
    func describeURL(baseURL: URL) -> String {
        var base = baseURL.absoluteString
        if let mark = base.firstIndex(where: { $0 == "?" || $0 == "#" }) { base = String(base[..<mark]) }
        while base.hasSuffix("/") { base.removeLast() }
        let target = (try? resolvedTarget(basePath: "")) ?? (template.hasPrefix("/") ? template : "/" + template)
        return base + target
    }

    /// The targets of ``invalidates`` under `basePath`, placeholders filled from the path values; a
    /// template whose placeholders have no value is left out.
    func resolvedInvalidations(basePath: String) -> [String] {
        invalidates.compactMap { template in
            var copy = RequestBuilder(method, String(template.prefix { $0 != "?" }))
            copy.pathValues = pathValues
            return try? copy.resolvedTarget(basePath: basePath)
        }
    }

    /// The request target: the base path, the template's path with values filled in, the static query
    /// and the query items.
    func resolvedTarget(basePath: String) throws(RequestProblem) -> String {
        // Scanned as UTF-8: `?`, `{` and `}` are ASCII, so every byte found is a character boundary, and
        // no step pays for grapheme breaking (a `Character` scan was 1.1 µs of a 12.6 µs in-process call;
        // scripts/bench client, docs/benchmarks.md).
        let utf8 = template.utf8
        let pathEnd = utf8.firstIndex(of: UInt8(ascii: "?")) ?? utf8.endIndex
        var path = basePath
        path.reserveCapacity(basePath.utf8.count + utf8.count + 16)
        if pathEnd != utf8.startIndex && utf8.first != UInt8(ascii: "/") { path += "/" }
        var index = utf8.startIndex
        while index < pathEnd {
            guard let open = utf8[index..<pathEnd].firstIndex(of: UInt8(ascii: "{")) else {
                path += template[index..<pathEnd]
                break
            }
            path += template[index..<open]
            guard let close = utf8[open..<pathEnd].firstIndex(of: UInt8(ascii: "}")) else {
                throw RequestProblem("the template has an unclosed '{'")
            }
            let name = String(template[utf8.index(after: open)..<close])
            guard let values = pathValues[name] else { throw RequestProblem("no value for the placeholder {\(name)}") }
            guard values.count == 1, let value = values.first else {
                throw RequestProblem("the path value for {\(name)} must be exactly one value, not \(values.count)")
            }
            guard !value.isEmpty, value != ".", value != ".." else {
                throw RequestProblem("the path value for {\(name)} may not be empty, '.' or '..'")
            }
            path += PercentEncoding.encode(value)
            index = utf8.index(after: close)
        }
        if path.isEmpty { path = "/" }
        var items: [String] = []
        if pathEnd < utf8.endIndex { items = try staticQueryItems(String(template[utf8.index(after: pathEnd)...])) }
        for (name, value) in query { items.append(PercentEncoding.encode(name) + "=" + PercentEncoding.encode(value)) }
        if !items.isEmpty { path += "?" + items.joined(separator: "&") }
        return path
    }

    /// The template's static query, items with placeholders filled (or dropped for `nil`), and every
    /// character a query may not hold (braces, spaces, non-ASCII) percent-encoded.
    func staticQueryItems(_ query: String) throws(RequestProblem) -> [String] {
        var items: [String] = []
        for item in query.split(separator: "&", omittingEmptySubsequences: true) {
            guard let placeholders = Placeholders.find(in: item) else {
                throw RequestProblem("the template's query has an unclosed '{'")
            }
            guard !placeholders.isEmpty else {
                items.append(Self.encodeQueryText(item))
                continue
            }
            var variants: [String] = [String(item)]
            for name in Set(placeholders) {
                guard let values = queryValues[name] else { throw RequestProblem("no value for the placeholder {\(name)}") }
                guard values.count <= 1 || Set(placeholders).count == 1 else {
                    throw RequestProblem("the query value for {\(name)} has \(values.count) values; give it an item of its own")
                }
                variants = variants.flatMap { variant in
                    values.map {
                        variant.replacingOccurrences(of: "{\(name)}", with: "\u{0}" + PercentEncoding.encode($0) + "\u{0}")
                    }
                }
            }
            // Static text is made safe; substituted values (between NUL marks) are already encoded.
            for variant in variants {
                let pieces = variant.split(separator: "\u{0}", omittingEmptySubsequences: false)
                items.append(
                    pieces.enumerated().map { $0.offset % 2 == 0 ? Self.encodeQueryText($0.element) : String($0.element) }
                        .joined())
            }
        }
        return items
    }

    /// Static query text with what RFC 3986 does not allow in a query percent-encoded; `%XX` escapes
    /// already there are kept.
    static func encodeQueryText(_ text: Substring) -> String { PercentEncoding.encodeQueryText(text) }

    /// The header fields, checked: names must be tokens and values free of line breaks.
    func resolvedHeaderFields(defaults: [(String, String?)]) throws(RequestProblem) -> HTTPFields {
        var fields = HTTPFields()
        for (name, value) in defaults + headers {
            guard let fieldName = HTTPField.Name(name) else { throw RequestProblem("'\(name)' is not a valid header name") }
            guard let value else {
                fields[fieldName] = nil
                continue
            }
            guard !value.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
                throw RequestProblem("the value of header '\(name)' contains a line break")
            }
            fields[fieldName] = value
        }
        return fields
    }
}

/// Why a request could not be built.
struct RequestProblem: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// The values of a template's placeholders, by name; a name set again replaces its values.
struct PlaceholderValues: Sendable {
    private var entries: [(name: String, values: [String])] = []

    subscript(name: String) -> [String]? {
        entries.first { $0.name == name }?.values
    }

    /// Sets `name`'s values, replacing what it had.
    mutating func set(_ values: [String], for name: String) {
        if let index = entries.firstIndex(where: { $0.name == name }) {
            entries[index].values = values
        } else {
            entries.append((name, values))
        }
    }
}
