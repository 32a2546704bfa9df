public import HTTPTypes
public import HammockClient
import HammockJSON

/// Why a request for a resource failed, in words for people and in detail for code.
///
/// ```swift
/// errorLabel.text = resource.latestError?.userMessage      // "No person with id 42."
/// if resource.latestError?.status == .notFound { showEmptyState() }
/// ```
/// The previous data stays in `latestData`; an error never erases it.
public struct ResourceError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, in the order a request can get there.
    public enum Cause: Sendable {
        /// The resource's URL cannot be requested (not http or https, or malformed).
        case invalidURL(String)
        /// The transport failed before a response came (connection refused, timeout, TLS…).
        case transport(any Error)
        /// The server answered with a status outside 200...299 (other than a handled 304).
        case unacceptableStatus
        /// The server answered 304 but there was no local data to keep.
        case notModifiedWithoutData
        /// The response pipeline could not turn the body into content.
        case pipeline(any Error)
        /// The request was cancelled.
        case cancelled
    }

    /// A sentence for the user: the server's own message when its error body has one (`detail`,
    /// `message`, `error` or `title` of a JSON body), else a description of the failure.
    public var userMessage: String
    /// The response status, if a response came.
    public var status: HTTPResponse.Status?
    /// What caused it.
    public var cause: Cause
    /// The error response's body, through the pipeline (often JSON), if a response came.
    public var entity: Entity?
    /// When the error happened.
    public var timestamp: ServiceInstant
    /// The request head as it was last sent (interceptors included), if it was sent.
    public var request: HTTPRequest?

    /// An error.
    public init(
        userMessage: String, status: HTTPResponse.Status? = nil, cause: Cause, entity: Entity? = nil,
        timestamp: ServiceInstant
    ) {
        self.userMessage = userMessage
        self.status = status
        self.cause = cause
        self.entity = entity
        self.timestamp = timestamp
    }

    /// The error of a cancelled request (or of a cancelled wait for one).
    static func cancelled(at timestamp: ServiceInstant) -> ResourceError {
        ResourceError(userMessage: "The request was cancelled.", cause: .cancelled, timestamp: timestamp)
    }

    /// Whether this is the error of a cancelled request.
    public var isCancellation: Bool {
        if case .cancelled = cause { return true }
        return false
    }

    /// Whether the server may have carried out the request although it failed: the transport broke
    /// off or the request was cancelled (either may come after the request was sent), or the server
    /// failed (5xx, a 502, 503 or 504 from a proxy included), or a 2xx could not be read. A refusal
    /// (4xx), a 304 without data and a URL that was never sent are known to have changed nothing.
    public var mayHaveChangedServer: Bool {
        switch cause {
        case .invalidURL, .notModifiedWithoutData: return false
        case .transport, .cancelled, .pipeline: return true
        case .unacceptableStatus: return status.map { $0.kind != .clientError } ?? true
        }
    }

    public var description: String {
        let code = status.map { "\($0.code) " } ?? ""
        return "\(code)\(userMessage)"
    }

    /// The message a JSON error body carries, if it has one.
    static func message(in json: JSON?) -> String? {
        guard case .object(let object)? = json else { return nil }
        for key in ["detail", "message", "error", "title"] {
            if case .string(let text)? = object[key], !text.isEmpty { return text }
            if case .object(let inner)? = object[key], case .string(let text)? = inner["message"], !text.isEmpty {
                return text
            }
        }
        return nil
    }

    /// A readable phrase for a status when the server gave no message.
    static func phrase(for status: HTTPResponse.Status) -> String {
        if let phrase = RestError.reasonPhrase(for: status) { return "\(phrase)." }
        switch status.kind {
        case .clientError: return "The request was refused (\(status.code))."
        case .serverError: return "The server failed (\(status.code))."
        default: return "Unexpected response (\(status.code))."
        }
    }
}

extension ResourceError: RequestFailure {
    /// The kind in the taxonomy `RestError` shares: a transport's timeout is `.timedOut` here too, a token
    /// that could not be renewed `.authentication`, a body the pipeline could not read `.decoding`.
    public var kind: RequestFailureKind {
        switch cause {
        case .invalidURL: .invalidRequest
        case .transport(let error):
            if error is AuthenticationError {
                .authentication
            } else if let error = error as? RestError {
                error.kind
            } else {
                RestError.isTimeout(error) ? .timedOut : .transport
            }
        case .unacceptableStatus, .notModifiedWithoutData: .unacceptableStatus
        case .pipeline: .decoding
        case .cancelled: .cancelled
        }
    }

    public var bodyExcerpt: String? {
        guard let entity else { return nil }
        return Self.excerpt(of: entity.bytes)
    }

    public var underlyingError: (any Error)? {
        switch cause {
        case .transport(let error), .pipeline(let error): error
        case .invalidURL, .unacceptableStatus, .notModifiedWithoutData, .cancelled: nil
        }
    }
}
