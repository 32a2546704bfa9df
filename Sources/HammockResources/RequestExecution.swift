import Foundation
import HTTPTypes
import HammockClient
import HammockWire
import Synchronization

/// What the network said, before the resource records it.
enum NetworkOutcome: Sendable {
    /// A 2xx response, through the pipeline, and the header fields of the request it answered (as
    /// sent, interceptors included).
    case entity(Entity, sent: HTTPFields)
    /// A 304 response, with its header fields, and those of the request it answered.
    case notModified(HTTPFields, sent: HTTPFields)
    /// A failure; its timestamp is filled in by the resource.
    case failure(ResourceError)
}

/// Everything a request needs off the main actor.
struct RequestPlan: Sendable {
    var method: HTTPRequest.Method
    var url: URL
    var headerFields: HTTPFields
    var body: [UInt8]?
    var pipeline: ResponsePipeline
    var retry: RetryBackoff?
    /// Where the transport's progress reports go.
    var tracker: TransferTracker?

    /// Sends the request (retrying as configured, through the client's `RetryPolicy`), and runs the
    /// response through the pipeline. Runs off the main actor.
    func execute(transport: InterceptedTransport, clock: ServiceClock) async -> NetworkOutcome {
        guard let head = makeHead() else {
            if let (text, reason) = ResourceURL.invalidParts(url) {
                return .failure(
                    failure(
                        .invalidURL(text),
                        message: reason.map { "The URL cannot be used: \($0)." } ?? "'\(text)' is not an http or https URL."))
            }
            return .failure(
                failure(.invalidURL(url.absoluteString), message: "'\(url.absoluteString)' is not an http or https URL."))
        }
        let sent = SentFields(head.headerFields)
        let outcome = await send(head, sent: sent, transport: transport, clock: clock)
        guard case .failure(var error) = outcome else { return outcome }
        // The request as the transport last saw it, interceptors included, for whoever reads the error.
        var asSent = head
        asSent.headerFields = sent.fields
        error.request = asSent
        return .failure(error)
    }

    /// Sends `head` (retrying as configured) and reads the answer.
    private func send(
        _ head: HTTPRequest, sent: SentFields, transport: InterceptedTransport, clock: ServiceClock
    ) async
        -> NetworkOutcome
    {
        let response: HTTPResponse
        let bytes: [UInt8]
        do {
            try Task.checkCancellation()
            let send: ClientInterceptor.Next = { head, body in
                try await transport.send(head, body: body) { sent.record($0.headerFields) }
            }
            let call: ClientInterceptor.Next =
                retry.map { retry in
                    let policy = clock.retryPolicy(retry)
                    return { head, body in try await policy.intercept(head, body: body, next: send) }
                } ?? send
            if let tracker {
                (response, bytes) = try await TransferProgress.$reporter.withValue(TransferReporter { tracker.record($0) }) {
                    try await call(head, body)
                }
            } else {
                (response, bytes) = try await call(head, body)
            }
        } catch {
            if error is CancellationError || Task.isCancelled {
                return .failure(.cancelled(at: ServiceInstant(sinceStart: .zero)))
            }
            if let refused = error as? AuthenticationError {
                // The session's token could not be renewed: the cause stays the transport's (the request
                // got no answer), the message says what the app should do.
                return .failure(failure(.transport(refused), message: "The session could not be renewed: \(refused.detail)"))
            }
            return .failure(failure(.transport(error), message: "The server could not be reached: \(Self.describe(error))"))
        }
        if Task.isCancelled { return .failure(.cancelled(at: ServiceInstant(sinceStart: .zero))) }
        let sentFields = sent.fields
        if response.status.code == 304 { return .notModified(response.headerFields, sent: sentFields) }
        let raw = Self.entity(bytes: bytes, headerFields: response.headerFields)
        guard response.status.kind == .successful else {
            let processed = (try? pipeline.process(raw, isError: true)) ?? raw
            let message =
                ResourceError.message(in: processed.jsonContent)
                ?? (processed.content as? String).flatMap { $0.count <= 200 && !$0.isEmpty ? $0 : nil }
                ?? ResourceError.phrase(for: response.status)
            var error = failure(.unacceptableStatus, message: message)
            error.status = response.status
            error.entity = processed
            return .failure(error)
        }
        // HEAD, 204 and 205 carry no representation to parse.
        if method == .head || response.status.code == 204 || response.status.code == 205 {
            return .entity(raw, sent: sentFields)
        }
        do {
            return .entity(try pipeline.process(raw), sent: sentFields)
        } catch {
            var failure = failure(.pipeline(error), message: "The response could not be read: \(Self.describe(error))")
            failure.status = response.status
            failure.entity = raw
            return .failure(failure)
        }
    }

    private func failure(_ cause: ResourceError.Cause, message: String) -> ResourceError {
        ResourceError(userMessage: message, cause: cause, timestamp: ServiceInstant(sinceStart: .zero))
    }

    /// The request head for the URL, or `nil` if it is not an absolute http(s) URL.
    func makeHead() -> HTTPRequest? {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else { return nil }
        return HTTPRequest(method: method, url: url, headerFields: headerFields)
    }

    /// An entity for raw response bytes, with its media type and charset taken apart.
    static func entity(bytes: [UInt8], headerFields: HTTPFields) -> Entity {
        let (type, charset) = mediaType(headerFields[.contentType])
        return Entity(content: bytes, contentType: type, charset: charset, headerFields: headerFields, bytes: bytes)
    }

    /// `("application/json", "utf-8")` for `"Application/JSON; charset=UTF-8"`.
    static func mediaType(_ header: String?) -> (String, String?) {
        guard let header, !header.isEmpty else { return ("application/octet-stream", nil) }
        let parsed = HeaderValue(parsing: header)
        let type = parsed.value.lowercased()
        return (type.isEmpty ? "application/octet-stream" : type, parsed.parameter("charset")?.lowercased())
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? RestError { return error.description }
        return String(describing: error)
    }
}

/// The header fields of the last attempt's request as it went to the transport.
final class SentFields: Sendable {
    private let latest: Mutex<HTTPFields>

    init(_ fields: HTTPFields) { latest = Mutex(fields) }

    func record(_ fields: HTTPFields) { latest.withLock { $0 = fields } }

    var fields: HTTPFields { latest.withLock { $0 } }
}
