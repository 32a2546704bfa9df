import Foundation
public import HTTPTypes
import HammockWire
public import Logging

/// Sees every request on its way to the transport and every response on its way back.
///
/// ```swift
/// struct UserAgent: ClientInterceptor {
///     func intercept(_ request: HTTPRequest, body: [UInt8]?, next: Next) async throws -> (HTTPResponse, [UInt8]) {
///         var request = request
///         request.headerFields[.userAgent] = "MyApp/1.0"
///         return try await next(request, body)
///     }
/// }
/// ```
/// A client runs its interceptors in order: the first sees the request first and the response last.
/// A sensible order is logging, then retry, then authentication, so each retry is logged and signed anew.
public protocol ClientInterceptor: Sendable {
    /// The rest of the chain.
    typealias Next = @Sendable (HTTPRequest, [UInt8]?) async throws -> (HTTPResponse, [UInt8])
    /// Handles one request, usually by calling `next`.
    func intercept(_ request: HTTPRequest, body: [UInt8]?, next: Next) async throws -> (HTTPResponse, [UInt8])
}

/// Adds `Authorization: Bearer <token>`, asking for the token on every request.
///
/// ```swift
/// BearerAuthentication { try await tokenStore.currentToken() }
/// ```
public struct BearerAuthentication: ClientInterceptor {
    let token: @Sendable () async throws -> String

    /// Authenticates with the token `token` returns.
    public init(token: @escaping @Sendable () async throws -> String) { self.token = token }

    public func intercept(_ request: HTTPRequest, body: [UInt8]?, next: Next) async throws -> (HTTPResponse, [UInt8]) {
        var request = request
        request.headerFields[.authorization] = "Bearer \(try await token())"
        return try await next(request, body)
    }
}

/// Retries idempotent requests (GET, HEAD, PUT, DELETE, OPTIONS, TRACE) after transport failures and
/// after 429, 502, 503 and 504, waiting longer each time (a ``RetryBackoff`` on an injected clock).
///
/// ```swift
/// RetryPolicy(maximumAttempts: 3, initialDelay: .milliseconds(200))
/// ```
/// A `Retry-After` header (seconds or an HTTP-date) is honoured if it is longer than the backoff, up to the
/// backoff's `maximumDelay`: a server that asks for a longer wait gets its answer returned at once
/// instead of parking the call (retrying sooner than it asked would only be refused again).
public struct RetryPolicy<C: Clock>: ClientInterceptor where C.Duration == Duration {
    /// The attempts and the waits between them.
    public let backoff: RetryBackoff
    /// The most attempts, the first included.
    public var maximumAttempts: Int { backoff.maximumAttempts }
    /// The wait before the second attempt.
    public var initialDelay: Duration { backoff.initialDelay }
    let clock: C

    /// A retry policy on `clock` whose waits double, from `initialDelay` up to 30 seconds.
    public init(maximumAttempts: Int = 3, initialDelay: Duration = .milliseconds(200), clock: C) {
        self.init(backoff: RetryBackoff(maximumAttempts: maximumAttempts, initialDelay: initialDelay), clock: clock)
    }

    /// A retry policy following `backoff` on `clock`.
    public init(backoff: RetryBackoff, clock: C) {
        self.backoff = backoff
        self.clock = clock
    }

    /// `Retry-After` in delay-seconds (RFC 9110 §10.2.3), surrounding whitespace allowed; at most ten
    /// digits, so that no value overflows.
    static func seconds(_ value: String) -> Int? {
        let isSpace: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        let digits = value.utf8.drop(while: isSpace).reversed().drop(while: isSpace).reversed()
        guard (1...10).contains(digits.count), digits.allSatisfy({ $0 &- UInt8(ascii: "0") < 10 }) else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 &- UInt8(ascii: "0")) }
    }

    /// The wait a response's `Retry-After` asks for: delay-seconds, or an HTTP-date measured from the
    /// response's own `Date` (so that a skewed device clock does not matter), or from now without one.
    /// A date in the past asks for no wait.
    static func retryAfter(in fields: HTTPFields) -> Duration? {
        guard let value = fields[.retryAfter] else { return nil }
        if let seconds = seconds(value) { return .seconds(seconds) }
        let now = Date()
        guard let date = HTTPDate.parse(value, now: now) else { return nil }
        let reference = fields[.date].flatMap { HTTPDate.parse($0, now: now) } ?? now
        return .seconds(max(0, Int(date.timeIntervalSince(reference).rounded(.up))))
    }

    static var idempotent: Set<HTTPRequest.Method> { [.get, .head, .put, .delete, .options, .trace] }
    static var retryableStatuses: Set<Int> { [429, 502, 503, 504] }

    public func intercept(_ request: HTTPRequest, body: [UInt8]?, next: Next) async throws -> (HTTPResponse, [UInt8]) {
        guard Self.idempotent.contains(request.method) else { return try await next(request, body) }
        for attempt in 1..<maximumAttempts {
            let delay = backoff.delay(afterAttempt: attempt)
            do {
                let (response, responseBody) = try await next(request, body)
                guard Self.retryableStatuses.contains(response.status.code) else { return (response, responseBody) }
                let retryAfter = Self.retryAfter(in: response.headerFields) ?? .zero
                guard retryAfter <= backoff.maximumDelay else { return (response, responseBody) }
                try await clock.sleep(for: max(delay, retryAfter).clampedForSleep)
            } catch let error where !(error is CancellationError) {
                try await clock.sleep(for: delay.clampedForSleep)
            }
        }
        return try await next(request, body)  // the last attempt: its response or error is final
    }
}

extension RetryPolicy where C == ContinuousClock {
    /// A retry policy on the continuous clock.
    public init(maximumAttempts: Int = 3, initialDelay: Duration = .milliseconds(200)) {
        self.init(maximumAttempts: maximumAttempts, initialDelay: initialDelay, clock: ContinuousClock())
    }

    /// A retry policy following `backoff` on the continuous clock.
    public init(backoff: RetryBackoff) {
        self.init(backoff: backoff, clock: ContinuousClock())
    }
}

/// Logs each request and response through swift-log, with secrets redacted: every header value but
/// those of ``visibleHeaders`` (content negotiation, framing, validators, `User-Agent`: an API key in a
/// header of the app's own is secret by default), query items whose names suggest secrets (`token`,
/// `password`, `key`, `sig`, `code`, `credential`…), also in URLs inside logged errors.
///
/// ```swift
/// RequestLogging(logger: Logger(label: "api"))
/// RequestLogging(logger: logger, visibleHeaders: RequestLogging.defaultVisibleHeaders.union([.init("X-Request-Id")!]))
/// ```
public struct RequestLogging: ClientInterceptor {
    let logger: Logger
    /// The header fields whose values are logged; every other value shows as `<redacted>`.
    public let visibleHeaders: Set<HTTPField.Name>

    /// Logs to `logger` at `debug` for requests and `info` for responses, showing the values of
    /// `visibleHeaders` only.
    public init(logger: Logger, visibleHeaders: Set<HTTPField.Name> = Self.defaultVisibleHeaders) {
        self.logger = logger
        self.visibleHeaders = visibleHeaders.subtracting(Self.secretHeaders)
    }

    /// Fields that describe a request without identifying anyone.
    public static let defaultVisibleHeaders: Set<HTTPField.Name> = [
        .accept, .acceptEncoding, .acceptLanguage, .contentType, .contentLength, .contentEncoding, .userAgent,
        .cacheControl, .ifNoneMatch, .ifModifiedSince, .ifMatch, .ifUnmodifiedSince, .range,
    ]

    /// Fields never shown, whatever `visibleHeaders` says.
    static let secretHeaders: Set<HTTPField.Name> = [.authorization, .proxyAuthorization, .cookie, .setCookie]
    static let secretWords = [
        "token", "password", "passwd", "secret", "key", "sig", "auth", "session", "code", "credential",
    ]

    public func intercept(_ request: HTTPRequest, body: [UInt8]?, next: Next) async throws -> (HTTPResponse, [UInt8]) {
        let target = Self.redactedPath(request.path ?? "/")
        logger.debug(
            "→ \(request.method.rawValue) \(target)",
            metadata: ["headers": .string(Self.redactedHeaderText(request.headerFields, visible: visibleHeaders))])
        let start = ContinuousClock.now
        do {
            let (response, responseBody) = try await next(request, body)
            logger.info("← \(response.status.code) \(request.method.rawValue) \(target) (\(ContinuousClock.now - start))")
            return (response, responseBody)
        } catch {
            logger.warning("✕ \(request.method.rawValue) \(target): \(Self.redactedURLs(in: String(describing: error)))")
            throw error
        }
    }

    /// Header fields as text, every value but those of `visible` replaced by `<redacted>` (what the log
    /// shows).
    public static func redactedHeaderText(_ fields: HTTPFields, visible: Set<HTTPField.Name> = defaultVisibleHeaders) -> String {
        fields.map { field in
            let shown = visible.contains(field.name) && !secretHeaders.contains(field.name)
            return "\(field.name): \(shown ? field.value : "<redacted>")"
        }
        .joined(separator: "; ")
    }

    /// A path with the values of secret-looking query items replaced by `<redacted>` (what the log shows),
    /// and path segments that carry a secret: the one after a segment named like a secret's holder
    /// (`/reset/{token}`, `/invite/{code}`, `/api-keys/{key}`), and any that looks like a token (a JWT,
    /// or 32 or more characters of base64url that are not a UUID).
    public static func redactedPath(_ target: String) -> String {
        let mark = target.firstIndex(of: "?")
        let path = redactedSegments(target[..<(mark ?? target.endIndex)])
        guard let mark else { return path }
        let items = target[target.index(after: mark)...].split(separator: "&").map { item -> String in
            let name = item.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            let isSecret = secretWords.contains { name.lowercased().contains($0) }
            return isSecret ? "\(name)=<redacted>" : String(item)
        }
        return path + "?" + items.joined(separator: "&")
    }

    /// Words of a path segment after which the next segment is a secret (`reset`, `invite`, `token`…).
    static let secretPathWords: Set<String> = Set(secretWords).union([
        "reset", "invite", "invitation", "verify", "verification", "confirm", "confirmation", "magic", "activate",
        "activation", "unsubscribe", "keys", "tokens", "sessions", "codes",
    ])

    static func redactedSegments(_ path: Substring) -> String {
        var previousHoldsSecret = false
        return path.split(separator: "/", omittingEmptySubsequences: false).map { segment -> String in
            let words = segment.lowercased().split(whereSeparator: { !$0.isLetter })
            // A holder's name after a holder (`/password/reset/…`) is a name, not the secret.
            let isToken = looksLikeToken(segment)
            let holdsSecret = !isToken && words.contains { secretPathWords.contains(String($0)) }
            defer { previousHoldsSecret = holdsSecret }
            if !segment.isEmpty, isToken || (previousHoldsSecret && !holdsSecret) { return "<redacted>" }
            return String(segment)
        }
        .joined(separator: "/")
    }

    /// A JWT (three base64url parts), or 32 or more characters of base64url that are not a UUID.
    static func looksLikeToken(_ segment: Substring) -> Bool {
        guard segment.count >= 32,
            segment.unicodeScalars.allSatisfy({
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.~%=".unicodeScalars.contains($0))
            })
        else { return false }
        return UUID(uuidString: String(segment)) == nil
    }

    /// `text` with the secret-looking query items of every `http://` or `https://` URL in it redacted,
    /// and user info (`user:password@`) too: an error's description often quotes the URL it failed on.
    public static func redactedURLs(in text: String) -> String {
        var result = ""
        var rest = Substring(text)
        while let range = rest.range(of: "http", options: .caseInsensitive) {
            result += rest[..<range.lowerBound]
            let candidate = rest[range.lowerBound...]
            let end = candidate.firstIndex { $0.isWhitespace || "\"'<>,)".contains($0) } ?? candidate.endIndex
            var url = String(candidate[..<end])
            let lower = url.lowercased()
            if lower.hasPrefix("http://") || lower.hasPrefix("https://") {
                let schemeEnd = url.index(url.startIndex, offsetBy: lower.hasPrefix("https") ? 8 : 7)
                let authorityEnd = url[schemeEnd...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? url.endIndex
                if let at = url[schemeEnd..<authorityEnd].lastIndex(of: "@") {
                    url = String(url[..<schemeEnd]) + "<redacted>" + String(url[at...])
                }
                url = redactedPath(url)
            }
            result += url
            rest = candidate[end...]  // `end` is past "http": the loop always moves on
        }
        return result + rest
    }
}
