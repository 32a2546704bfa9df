public import Foundation
public import HTTPTypes

/// Every way a call can fail, with how far it got: the request, and the response if there was one.
///
/// ```swift
/// do { _ = try await github.me(etag: nil) }
/// catch let error as RestError {
///     print(error)                 // GET https://api.example.com/v1/user: 401 Unauthorized: {"message":"..."}
///     if case .unacceptableStatus = error.reason { let problem = try error.decodeBody(as: Problem.self) }
/// }
/// ```
public struct RestError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, in the order a call can get there.
    public enum Reason: Sendable {
        /// The request could not be built (a bad path value, a header with a line break, a missing placeholder).
        case invalidRequest(String)
        /// The body could not be encoded.
        case encoding(any Error)
        /// The transport failed before a response arrived.
        case transport(any Error)
        /// No answer came in time: the request's own ``RequestBuilder/timeout``, or the transport's
        /// (`URLError(.timedOut)` from URLSession, AsyncHTTPClient's deadlines), the same case whichever
        /// transport; the associated error is what the transport or the client reported.
        case timedOut(any Error)
        /// The task was cancelled.
        case cancelled
        /// A response arrived with a status outside 200...299.
        case unacceptableStatus
        /// A 2xx response whose body could not be decoded into the expected type.
        case decoding(any Error)
        /// A downloaded body could not be saved to a file.
        case saving(any Error)
        /// The ``Authenticator`` could not renew the session's token (refused: the user is signed out; or
        /// the token endpoint out of reach).
        case authentication(AuthenticationError)
    }

    /// What went wrong.
    public var reason: Reason
    /// The method.
    public var method: HTTPRequest.Method
    /// The URL as far as it was built.
    public var url: String
    /// The request head as it was sent (after interceptors saw it at the transport's door), if it got that far.
    public var request: HTTPRequest?
    /// The response status, if a response arrived.
    public var status: HTTPResponse.Status?
    /// The response header fields, if a response arrived.
    public var headerFields: HTTPFields?
    /// The response body, if a response arrived.
    public var body: [UInt8]?
    /// The error body decoded by the API's `@ErrorBody` type, if it declares one and it decoded.
    public var errorBody: (any Sendable)?
    /// What a download that broke off kept on disk, when the server can send the rest
    /// (`RestClient.download(_:resuming:)`); the file is then yours to resume or remove.
    public var partialDownload: PartialDownload?

    /// Creates an error.
    public init(
        _ reason: Reason, method: HTTPRequest.Method, url: String, status: HTTPResponse.Status? = nil,
        headerFields: HTTPFields? = nil, body: [UInt8]? = nil
    ) {
        self.reason = reason
        self.method = method
        self.url = url
        self.status = status
        self.headerFields = headerFields
        self.body = body
    }

    /// Whether no answer came in time (``Reason/timedOut(_:)``).
    public var isTimeout: Bool {
        if case .timedOut = reason { return true }
        return false
    }

    /// Whether `error` says a transport gave up waiting: `URLError(.timedOut)`, a ``TransportTimedOut``
    /// (AsyncHTTPClient's deadlines, as its transport reports them) or a ``RequestTimeout``.
    public static func isTimeout(_ error: any Error) -> Bool {
        if let error = error as? URLError { return error.code == .timedOut }
        return error is TransportTimedOut || error is RequestTimeout
    }

    /// Decodes the response body (an API's error format, say) as JSON.
    public func decodeBody<T: Decodable>(as type: T.Type, using decoder: JSONDecoder = JSONDecoder()) throws -> T {
        try decoder.decode(T.self, from: Data(body ?? []))
    }

    /// The error body as `T`, if the API declared one and it decoded.
    public func errorBody<T>(as type: T.Type) -> T? { errorBody as? T }

    /// `404 Not Found`, with the standard phrase when the response carried none.
    static func describe(_ status: HTTPResponse.Status) -> String {
        reasonPhrase(for: status).map { "\(status.code) \($0)" } ?? "\(status.code)"
    }

    /// The response's reason phrase, or the standard one when it carried none (`nil` for unknown codes).
    package static func reasonPhrase(for status: HTTPResponse.Status) -> String? {
        if !status.reasonPhrase.isEmpty { return status.reasonPhrase }
        let phrases: [Int: String] = [
            200: "OK", 201: "Created", 202: "Accepted", 204: "No Content", 301: "Moved Permanently", 302: "Found",
            304: "Not Modified", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
            405: "Method Not Allowed", 406: "Not Acceptable", 408: "Request Timeout", 409: "Conflict", 410: "Gone",
            412: "Precondition Failed", 413: "Content Too Large", 415: "Unsupported Media Type",
            422: "Unprocessable Content", 429: "Too Many Requests", 500: "Internal Server Error", 501: "Not Implemented",
            502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
        ]
        return phrases[status.code]
    }

    /// `METHOD URL: what happened`.
    public var description: String {
        let what: String
        switch reason {
        case .invalidRequest(let message): what = "invalid request: \(message)"
        case .encoding(let error): what = "cannot encode the body: \(error)"
        case .transport(let error): what = "transport failed: \(error)"
        case .timedOut(let error): what = "timed out: \(error)"
        case .cancelled: what = "cancelled"
        case .unacceptableStatus:
            let snippet = body.map { String(decoding: $0.prefix(200), as: UTF8.self) } ?? ""
            what = (status.map(Self.describe) ?? "no status") + (snippet.isEmpty ? "" : ": \(snippet)")
        case .decoding(let error):
            what = "\(status.map { "\($0.code)" } ?? "") cannot decode the body: \(error)"
        case .saving(let error):
            what = "cannot save the body to a file: \(error)"
        case .authentication(let error):
            what = "authentication failed: \(error)"
        }
        return "\(method.rawValue) \(url): \(what)"
    }
}

/// A decoded value with the response's status and header fields.
///
/// ```swift
/// let response: Response<User> = try await github.me(etag: nil)
/// response.headerFields[.eTag]
/// ```
public struct Response<Value> {
    /// The status.
    public var status: HTTPResponse.Status
    /// The header fields.
    public var headerFields: HTTPFields
    /// The decoded body.
    public var value: Value

    /// The header fields (the same as ``headerFields``).
    public var headers: HTTPFields { headerFields }

    /// Creates a response.
    public init(status: HTTPResponse.Status, headerFields: HTTPFields, value: Value) {
        self.status = status
        self.headerFields = headerFields
        self.value = value
    }
}

extension Response: Sendable where Value: Sendable {}

/// The answer to a conditional request (`If-None-Match`, `If-Modified-Since`): a new representation,
/// or "not modified", which is the expected success of revalidation rather than an error.
///
/// ```swift
/// @Headers(["If-None-Match": "{etag}"])
/// @GET("/user")
/// func me(etag: String?) async throws -> ConditionalResponse<User>
///
/// switch try await github.me(etag: cached?.etag) {
/// case .modified(let response): cached = (response.value, response.headerFields[.eTag])
/// case .notModified: break                       // keep what you have
/// }
/// ```
public enum ConditionalResponse<Value> {
    /// 2xx: the representation changed (or nothing was cached).
    case modified(Response<Value>)
    /// 304: what the request's validators name is still current.
    case notModified(headerFields: HTTPFields)

    /// The new value, or `nil` when not modified.
    public var value: Value? {
        if case .modified(let response) = self { return response.value }
        return nil
    }

    /// The response's header fields (the validators among them).
    public var headerFields: HTTPFields {
        switch self {
        case .modified(let response): response.headerFields
        case .notModified(let fields): fields
        }
    }

    /// Whether the server answered 304.
    public var isNotModified: Bool {
        if case .notModified = self { return true }
        return false
    }
}

extension ConditionalResponse: Sendable where Value: Sendable {}

/// A transport gave up waiting for an answer (its own deadline); what it reported is `underlying`.
/// Transports other than URLSession report their timeouts this way, so every transport's timeout is
/// the same ``RestError/Reason/timedOut(_:)``.
public struct TransportTimedOut: Error, CustomStringConvertible {
    /// The transport's own error (`HTTPClientError.deadlineExceeded`, say).
    public let underlying: any Error

    public init(_ underlying: any Error) { self.underlying = underlying }

    public var description: String { "the transport's deadline passed (\(underlying))" }
}

/// A request's own ``RequestBuilder/timeout`` passed before the answer came.
public struct RequestTimeout: Error, Hashable, CustomStringConvertible {
    /// The limit the request gave.
    public let limit: Duration

    public init(limit: Duration) { self.limit = limit }

    public var description: String { "no answer within the request's timeout of \(limit)" }
}
