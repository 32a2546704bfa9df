import Foundation
public import HammockJSON
public import HTTPTypes
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
    }

    /// The method.
    public var method: HTTPRequest.Method
    /// The path template, relative to the client's base URL, with `{name}` placeholders and an
    /// optional static query.
    public var template: String
    /// The body, if any.
    public var body: Body?
    private(set) var pathValues: [String: [String]] = [:]
    private(set) var query: [(String, String)] = []
    private(set) var headers: [(String, String?)] = []

    /// A request for `method` at `template`.
    public init(_ method: HTTPRequest.Method, _ template: String) {
        self.method = method
        self.template = template
    }

    /// Fills the `{name}` placeholder (percent-encoded as one segment: `/` becomes `%2F`).
    public mutating func setPathValue(_ value: some ParameterValue, for name: String) {
        pathValues[name] = value.parameterStrings
    }

    /// Adds query items (none for `nil`, one per element for arrays).
    public mutating func addQuery(_ name: String, _ value: some ParameterValue) {
        for text in value.parameterStrings { query.append((name, text)) }
    }

    /// Sets a header; a `nil` optional removes it. Later settings win; names compare case-insensitively.
    public mutating func setHeader(_ name: String, _ value: some ParameterValue) {
        let strings = value.parameterStrings
        headers.append((name, strings.isEmpty ? nil : strings.joined(separator: ", ")))
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

    /// Sets an `Encodable` body, encoded as JSON by the client.
    public mutating func setBody(_ value: some Encodable & Sendable) {
        if let json = value as? JSON { body = .json(json) } else { body = .encodable(value) }
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

    /// The request target: the base path, the template's path with values filled in, the static query
    /// and the query items.
    func resolvedTarget(basePath: String) throws(RequestProblem) -> String {
        let parts = template.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let templatePath = parts.first ?? ""
        var path = basePath
        if !templatePath.isEmpty && !templatePath.hasPrefix("/") { path += "/" }
        var index = templatePath.startIndex
        while index < templatePath.endIndex {
            guard let open = templatePath[index...].firstIndex(of: "{") else {
                path += templatePath[index...]
                break
            }
            path += templatePath[index..<open]
            guard let close = templatePath[open...].firstIndex(of: "}") else {
                throw RequestProblem("the template has an unclosed '{'")
            }
            let name = String(templatePath[templatePath.index(after: open)..<close])
            guard let values = pathValues[name] else { throw RequestProblem("no value for the placeholder {\(name)}") }
            guard values.count == 1, let value = values.first else {
                throw RequestProblem("the path value for {\(name)} must be exactly one value, not \(values.count)")
            }
            guard !value.isEmpty, value != ".", value != ".." else {
                throw RequestProblem("the path value for {\(name)} may not be empty, '.' or '..'")
            }
            path += PercentEncoding.encode(value)
            index = templatePath.index(after: close)
        }
        if path.isEmpty { path = "/" }
        var items = parts.count > 1 && !parts[1].isEmpty ? [String(parts[1])] : []
        for (name, value) in query { items.append(PercentEncoding.encode(name) + "=" + PercentEncoding.encode(value)) }
        if !items.isEmpty { path += "?" + items.joined(separator: "&") }
        return path
    }

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
