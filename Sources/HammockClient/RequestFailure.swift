public import Foundation
public import HTTPTypes

/// What every failed request says, whichever road it took: a ``RestError`` (a `RestClient`, an `@API`
/// client, a stream or a download) and a `ResourceError` (an observable resource, HammockResources)
/// both conform, whatever the transport, so one `catch` handles them all.
///
/// ```swift
/// do {
///     let person = try await people.loadIfNeeded()        // or: try await api.person(id: 3)
/// } catch let failure as any RequestFailure {
///     switch failure.kind {
///     case .timedOut: showRetry()
///     case .unacceptableStatus where failure.status == .notFound: showEmptyState()
///     default: log(failure.request, failure.status, failure.bodyExcerpt)
///     }
/// }
/// ```
public protocol RequestFailure: Error, Sendable, CustomStringConvertible {
    /// What went wrong, in one taxonomy for both roads.
    var kind: RequestFailureKind { get }
    /// The request head as it was sent, if it got that far.
    var request: HTTPRequest? { get }
    /// The response status, if a response arrived.
    var status: HTTPResponse.Status? { get }
    /// The response body's first thousand characters as text (bad UTF-8 read as U+FFFD), if one arrived.
    var bodyExcerpt: String? { get }
    /// The error underneath: the transport's, the decoder's, the file system's.
    var underlyingError: (any Error)? { get }
}

/// The kinds of ``RequestFailure``, the same for every road and transport.
public enum RequestFailureKind: String, Sendable, Hashable, CaseIterable {
    /// The request could not be built or its URL is not one to send (never sent).
    case invalidRequest
    /// The body could not be encoded (never sent).
    case encoding
    /// The transport failed before a response arrived (refused, reset, TLS, a cut body).
    case transport
    /// No answer came in time: URLSession's `URLError(.timedOut)`, AsyncHTTPClient's deadlines, the
    /// in-process transport's timeout, or the request's own limit.
    case timedOut
    /// The task, or the request, was cancelled.
    case cancelled
    /// A response arrived with a status it could not be used with (outside 2xx; a 304 with nothing kept).
    case unacceptableStatus
    /// A 2xx body could not be read as the value expected.
    case decoding
    /// A downloaded body could not be saved.
    case saving
    /// The session's token could not be renewed.
    case authentication
}

extension RequestFailure {
    /// Whether no answer came in time.
    public var isTimedOut: Bool { kind == .timedOut }
    /// Whether the request was cancelled.
    public var isCancelled: Bool { kind == .cancelled }

    /// The first thousand characters of `bytes` as text; `nil` when empty.
    package static func excerpt(of bytes: [UInt8]?) -> String? {
        guard let bytes, !bytes.isEmpty else { return nil }
        let text = String(decoding: bytes.prefix(4096), as: UTF8.self)
        return text.count > 1000 ? String(text.prefix(1000)) + "…" : text
    }
}

extension RestError: RequestFailure {
    public var kind: RequestFailureKind {
        switch reason {
        case .invalidRequest: .invalidRequest
        case .encoding: .encoding
        case .transport: .transport
        case .timedOut: .timedOut
        case .cancelled: .cancelled
        case .unacceptableStatus: .unacceptableStatus
        case .decoding: .decoding
        case .saving: .saving
        case .authentication: .authentication
        }
    }

    public var bodyExcerpt: String? { Self.excerpt(of: body) }

    public var underlyingError: (any Error)? {
        switch reason {
        case .encoding(let error), .transport(let error), .timedOut(let error), .decoding(let error), .saving(let error):
            error
        case .authentication(let error): error
        case .invalidRequest, .cancelled, .unacceptableStatus: nil
        }
    }
}
