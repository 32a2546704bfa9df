import Foundation
import HammockClient
import HTTPTypes

/// What the network said, before the resource records it.
enum NetworkOutcome: Sendable {
    /// A 2xx response, through the pipeline.
    case entity(Entity)
    /// A 304 response, with its header fields.
    case notModified(HTTPFields)
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

    /// Sends the request (retrying as configured), and runs the response through the pipeline.
    /// Runs off the main actor.
    func execute(client: RestClient, clock: ServiceClock) async -> NetworkOutcome {
        guard let head = makeHead() else {
            return .failure(failure(.invalidURL(url.absoluteString), message: "'\(url.absoluteString)' is not an http or https URL."))
        }
        let attempts = retry?.maximumAttempts ?? 1
        var attempt = 1
        while true {
            let outcome = await attemptOnce(head, client: client)
            guard attempt < attempts, let retry, let delay = Self.retryDelay(for: outcome, retry: retry, attempt: attempt)
            else { return outcome }
            do { try await clock.sleep(delay) } catch { return .failure(failure(.cancelled, message: "The request was cancelled.")) }
            attempt += 1
        }
    }

    private func attemptOnce(_ head: HTTPRequest, client: RestClient) async -> NetworkOutcome {
        let response: HTTPResponse
        let bytes: [UInt8]
        do {
            try Task.checkCancellation()
            if let tracker {
                tracker.reset()
                (response, bytes) = try await TransferProgress.$reporter.withValue(TransferReporter { tracker.record($0) }) {
                    try await client.perform(head, body: body)
                }
            } else {
                (response, bytes) = try await client.perform(head, body: body)
            }
        } catch {
            if error is CancellationError || Task.isCancelled {
                return .failure(failure(.cancelled, message: "The request was cancelled."))
            }
            return .failure(failure(.transport(error), message: "The server could not be reached: \(Self.describe(error))"))
        }
        if Task.isCancelled { return .failure(failure(.cancelled, message: "The request was cancelled.")) }
        if response.status.code == 304 { return .notModified(response.headerFields) }
        let raw = Self.entity(bytes: bytes, headerFields: response.headerFields)
        guard response.status.kind == .successful else {
            let processed = (try? pipeline.process(raw, isError: true)) ?? raw
            let message = ResourceError.message(in: processed.jsonContent)
                ?? (processed.content as? String).flatMap { $0.count <= 200 && !$0.isEmpty ? $0 : nil }
                ?? ResourceError.phrase(for: response.status)
            var error = failure(.unacceptableStatus, message: message)
            error.status = response.status
            error.entity = processed
            return .failure(error)
        }
        do {
            return .entity(try pipeline.process(raw))
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

    /// The wait before the next attempt, or `nil` if this outcome is final.
    static func retryDelay(for outcome: NetworkOutcome, retry: RetryBackoff, attempt: Int) -> Duration? {
        guard case .failure(let error) = outcome else { return nil }
        let backoff = retry.delay(afterAttempt: attempt)
        switch error.cause {
        case .transport: return backoff
        case .unacceptableStatus:
            guard let status = error.status, RetryBackoff.isRetryable(status) else { return nil }
            let retryAfter = error.entity?.header("Retry-After").flatMap(Int.init).map { Duration.seconds($0) }
            return max(backoff, retryAfter ?? .zero)
        default: return nil
        }
    }

    /// The request head for the URL, or `nil` if it is not an http(s) URL.
    func makeHead() -> HTTPRequest? {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.host, !host.isEmpty
        else { return nil }
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let authority = components.port.map { "\(bracketed):\($0)" } ?? bracketed
        var path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { path += "?" + query }
        return HTTPRequest(method: method, scheme: scheme, authority: authority, path: path, headerFields: headerFields)
    }

    /// An entity for raw response bytes, with its media type and charset taken apart.
    static func entity(bytes: [UInt8], headerFields: HTTPFields) -> Entity {
        let (type, charset) = mediaType(headerFields[.contentType])
        return Entity(content: bytes, contentType: type, charset: charset, headerFields: headerFields, bytes: bytes)
    }

    /// `("application/json", "utf-8")` for `"Application/JSON; charset=UTF-8"`.
    static func mediaType(_ header: String?) -> (String, String?) {
        guard let header, !header.isEmpty else { return ("application/octet-stream", nil) }
        let parts = header.split(separator: ";")
        let type = parts.first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? "application/octet-stream"
        var charset: String?
        for parameter in parts.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0].lowercased() == "charset" {
                charset = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")).lowercased()
            }
        }
        return (type, charset)
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? RestError { return error.description }
        return String(describing: error)
    }
}
