public import Foundation
public import HTTPTypes
import HammockJSON
import HammockWire

/// Sends requests to one base URL through a transport and its interceptors, and decodes responses.
///
/// ```swift
/// let client = RestClient(baseURL: URL(string: "https://api.example.com/v1")!)   // URLSession transport
/// var request = RequestBuilder(.get, "/users/{user}")
/// request.setPathValue("octocat", for: "user")
/// let user = try await client.send(request, decoding: User.self)
/// ```
/// Interceptors run in the order given: the first sees the request first and the response last.
/// JSON bodies are encoded with sorted keys, so the same value always gives the same bytes; dates are
/// ISO 8601 both ways.
public struct RestClient: Sendable {
    /// The URL every request template is relative to; its path is kept (`/v1` + `/users` → `/v1/users`).
    public let baseURL: URL
    /// The transport.
    public let transport: any HTTPTransport
    /// The interceptors, outermost first.
    public let interceptors: [any ClientInterceptor]
    /// Header fields sent with every request unless a request overrides them.
    public let defaultHeaders: [(String, String?)]
    /// Makes the encoder for `Encodable` bodies.
    public let makeEncoder: @Sendable () -> JSONEncoder
    /// Makes the decoder for responses.
    public let makeDecoder: @Sendable () -> JSONDecoder
    /// The transport with its interceptors, without the base URL: what ``perform(_:body:)`` uses.
    public let intercepted: InterceptedTransport
    /// Told of every write that succeeded: a `Service` of HammockResources, whose resources it touched are then invalidated.
    public let writeObservers: [any WriteObserver]
    /// The clock requests' own timeouts run on.
    public let clock: any Clock<Duration>
    let base: Base

    /// Creates a client.
    public init(
        baseURL: URL,
        transport: any HTTPTransport = URLSessionTransport(),
        interceptors: [any ClientInterceptor] = [],
        defaultHeaders: [String: String] = [:],
        makeEncoder: @escaping @Sendable () -> JSONEncoder = RestClient.defaultEncoder,
        makeDecoder: @escaping @Sendable () -> JSONDecoder = RestClient.defaultDecoder,
        writeObservers: [any WriteObserver] = [],
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.writeObservers = writeObservers
        self.clock = clock
        self.baseURL = baseURL
        self.transport = transport
        self.interceptors = interceptors
        self.defaultHeaders = defaultHeaders.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        self.makeEncoder = makeEncoder
        self.makeDecoder = makeDecoder
        self.base = Base(baseURL)
        self.intercepted = InterceptedTransport(transport, interceptors: interceptors)
    }

    /// Sorted keys and ISO 8601 dates in UTC, with milliseconds when there are any (as JavaScript
    /// writes them), so a date read from a server goes back unchanged.
    @Sendable public static func defaultEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.parameterStrings[0])
        }
        return encoder
    }

    /// ISO 8601 dates.
    @Sendable public static func defaultDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    /// A raw response: status, header fields and body bytes.
    public struct RawResponse: Sendable {
        /// The status.
        public var status: HTTPResponse.Status
        /// The header fields.
        public var headerFields: HTTPFields
        /// The body.
        public var body: [UInt8]
    }

    /// Builds `request`, sends it through the interceptors and the transport, and returns the response.
    /// - Parameter acceptingAnyStatus: Return non-2xx responses instead of throwing.
    /// - Throws: ``RestError`` for a request that cannot be built or sent, a non-2xx status, or cancellation.
    public func send(_ request: RequestBuilder, acceptingAnyStatus: Bool = false) async throws(RestError) -> RawResponse {
        let (head, body, file) = try prepare(request)
        // The URL for messages is built only when something fails.
        func failure(_ reason: RestError.Reason) -> RestError {
            var error = RestError(reason, method: request.method, url: request.describeURL(baseURL: baseURL))
            error.request = head
            return error
        }
        let response: HTTPResponse
        let responseBody: [UInt8]
        do {
            try Task.checkCancellation()
            if request.maximumResponseSize != nil || file != nil {
                // Streamed and counted as it arrives, so the limit holds on every transport, above or
                // below the transport's own; a file is read as it is sent (16 MiB for the answer, as
                // the transports' own default, unless the request says).
                let limit = request.maximumResponseSize ?? 16 << 20
                let exchange: @Sendable () async throws -> (HTTPResponse, [UInt8]) = { [intercepted] in
                    let (response, stream) = try await intercepted.stream(head, body: file ?? body.map(BodyStream.init))
                    return (response, try await stream.collect(upTo: max(0, limit)))
                }
                if let timeout = request.timeout {
                    (response, responseBody) = try await Self.within(timeout, on: clock, exchange)
                } else {
                    (response, responseBody) = try await exchange()
                }
            } else if let timeout = request.timeout {
                (response, responseBody) = try await Self.within(timeout, on: clock) { [intercepted] in
                    try await intercepted.send(head, body: body)
                }
            } else {
                (response, responseBody) = try await intercepted.send(head, body: body)
            }
        } catch {
            throw Self.failure(for: error, failure)
        }
        Self.reportSent(body)
        guard acceptingAnyStatus || (200...299).contains(response.status.code) else {
            var error = RestError(
                .unacceptableStatus, method: request.method, url: request.describeURL(baseURL: baseURL),
                status: response.status, headerFields: response.headerFields, body: responseBody)
            error.request = head
            throw error
        }
        if !writeObservers.isEmpty, (200...299).contains(response.status.code), ClientWrite.isWrite(request.method) {
            await tell(writeObservers, of: request, head: head, status: response.status)
        }
        return RawResponse(status: response.status, headerFields: response.headerFields, body: responseBody)
    }

    /// Tells a progress listener that a body of bytes went whole (a file body reports as it is read).
    static func reportSent(_ body: [UInt8]?) {
        if let body, !body.isEmpty { TransferProgress.report(.requestBytesSent(total: body.count, expected: body.count)) }
    }

    /// The error a call reports for `error`, met on its way out or back (the transport, an interceptor,
    /// the wait), made by `make` with the call's context: one classification for every road.
    static func failure(for error: any Error, _ make: (RestError.Reason) -> RestError) -> RestError {
        switch error {
        case let error as RestError: return error
        case is CancellationError: return make(.cancelled)
        case let error as AuthenticationError: return make(.authentication(error))
        default:
            // A transport may report the caller's cancellation as its own error (URLError.cancelled).
            if Task.isCancelled { return make(.cancelled) }
            return make(RestError.isTimeout(error) ? .timedOut(error) : .transport(error))
        }
    }

    /// Runs `body`, or throws ``RequestTimeout`` once `limit` passed on `clock` first (cancelling it).
    static func within<T: Sendable>(
        _ limit: Duration, on clock: any Clock<Duration>, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await clock.sleep(for: limit.clampedForSleep)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else { throw RequestTimeout(limit: limit) }
            return value
        }
    }

    /// Tells the observers of a write that succeeded, with the absolute URLs it touched.
    func tell(_ observers: [any WriteObserver], of request: RequestBuilder, head: HTTPRequest, status: HTTPResponse.Status) async
    {
        guard let scheme = head.scheme, let authority = head.authority, let path = head.path,
            let url = URL(string: "\(scheme)://\(authority)\(path)")
        else { return }
        let invalidates = request.resolvedInvalidations(basePath: base.path).compactMap {
            URL(string: "\(scheme)://\(authority)\($0)")
        }
        let write = ClientWrite(method: request.method, url: url, status: status, invalidates: invalidates)
        for observer in observers { await observer.clientDidWrite(write) }
    }

    /// Sends a finished request head through the interceptors and the transport, and returns what came
    /// back, whatever the status. Higher layers (observable resources) build their own requests and
    /// read every status themselves.
    ///
    /// ```swift
    /// let head = HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: "/profile")
    /// let (response, body) = try await client.perform(head, body: nil)
    /// ```
    public func perform(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8]) {
        try await intercepted.send(request, body: body)
    }

    /// Sends `request` and decodes a 2xx body as `T`.
    @inlinable
    public func send<T: Decodable>(_ request: RequestBuilder, decoding type: T.Type) async throws(RestError) -> T {
        let raw = try await send(request)
        return try decode(T.self, from: raw, request: request)
    }

    /// Sends `request` and decodes a 2xx body as `T`, or returns `nil` for 204 or an empty body.
    public func sendOptional<T: Decodable>(_ request: RequestBuilder, decoding type: T.Type) async throws(RestError) -> T? {
        let raw = try await send(request)
        if raw.status.code == 204 || raw.body.isEmpty { return nil }
        return try decode(T.self, from: raw, request: request)
    }

    /// Sends a conditional request (one carrying `If-None-Match` or `If-Modified-Since`) and returns the
    /// new representation, or ``ConditionalResponse/notModified(headerFields:)`` for a 304: the expected
    /// outcome of revalidation, not an error. Other statuses throw as usual.
    public func sendConditional<T: Decodable>(
        _ request: RequestBuilder, decoding type: T.Type
    ) async throws(RestError)
        -> ConditionalResponse<T>
    {
        let raw: RawResponse
        do {
            raw = try await send(request)
        } catch {
            if case .unacceptableStatus = error.reason, error.status == .notModified {
                return .notModified(headerFields: error.headerFields ?? [:])
            }
            throw error
        }
        return .modified(
            Response(status: raw.status, headerFields: raw.headerFields, value: try decode(T.self, from: raw, request: request)))
    }

    /// Sends `request` and returns the decoded body with the status and header fields.
    public func sendForResponse<T: Decodable>(
        _ request: RequestBuilder, decoding type: T.Type
    ) async throws(RestError)
        -> Response<T>
    {
        let raw = try await send(request)
        return Response(
            status: raw.status, headerFields: raw.headerFields, value: try decode(T.self, from: raw, request: request))
    }

    /// `error` with its body decoded as `E` in ``RestError/errorBody``, if it is a non-2xx response
    /// whose body decodes. Generated clients call this for APIs marked `@ErrorBody(E.self)`.
    public func attachingErrorBody<E: Decodable & Sendable>(to error: RestError, as type: E.Type) -> RestError {
        guard case .unacceptableStatus = error.reason, let body = error.body, !body.isEmpty else { return error }
        var error = error
        error.errorBody = try? makeDecoder().decode(E.self, from: Data(body))
        return error
    }

    /// Decodes a response body, reporting failures with the call's context.
    ///
    /// `Data` and `[UInt8]` are the body's bytes as they came, never JSON: whether the method returns
    /// them plainly, optionally or inside a ``Response``.
    ///
    /// Inlinable, so that the caller specializes it for `T`: unspecialized, its type tests looked up
    /// generic metadata on every call (part of a generated call's overhead in process; scripts/bench client).
    @inlinable
    public func decode<T: Decodable>(_ type: T.Type, from raw: RawResponse, request: RequestBuilder) throws(RestError) -> T {
        if T.self == Data.self, let bytes = Data(raw.body) as? T { return bytes }
        if T.self == [UInt8].self, let bytes = raw.body as? T { return bytes }
        if T.self == JSON.self || T.self == JSON?.self {
            do {
                let value = try JSON(parsing: raw.body)
                if let typed = value as? T { return typed }
            } catch {
                throw decodingFailure(error, raw: raw, request: request)
            }
        }
        do {
            return try makeDecoder().decode(T.self, from: Data(raw.body))
        } catch {
            throw decodingFailure(error, raw: raw, request: request)
        }
    }

    @usableFromInline
    func decodingFailure(_ error: any Error, raw: RawResponse, request: RequestBuilder) -> RestError {
        RestError(
            .decoding(error), method: request.method, url: request.describeURL(baseURL: baseURL), status: raw.status,
            headerFields: raw.headerFields, body: raw.body)
    }

    /// The request head and body: bytes, or a file read as it is sent.
    func prepare(_ request: RequestBuilder) throws(RestError) -> (HTTPRequest, [UInt8]?, BodyStream?) {
        func failure(_ reason: RestError.Reason) -> RestError {
            RestError(reason, method: request.method, url: request.describeURL(baseURL: baseURL))
        }
        let target: String
        var fields: HTTPFields
        do {
            target = try request.resolvedTarget(basePath: base.path)
            fields = try request.resolvedHeaderFields(defaults: defaultHeaders)
        } catch {
            throw failure(.invalidRequest(error.message))
        }
        if let problem = base.problem { throw failure(.invalidRequest(problem)) }
        guard let scheme = base.scheme, let authority = base.authority else {
            throw failure(.invalidRequest("the base URL '\(baseURL.absoluteString)' is not an absolute http(s) URL"))
        }
        var body: [UInt8]?
        var file: BodyStream?
        var contentType: String?
        switch request.body {
        case nil: break
        case .file(let url, let type):
            do {
                file = try BodyStream(contentsOf: url, reporter: TransferProgress.reporter)
            } catch {
                throw failure(.encoding(error))
            }
            contentType = type
            if let length = file?.expectedLength { fields[.contentLength] = String(length) }
        case .bytes(let bytes, let type):
            body = bytes
            contentType = type
        case .json(let json):
            body = json.serialized(options: .sortedKeys)
            contentType = "application/json"
        case .encodable(let value):
            do {
                body = [UInt8](try makeEncoder().encode(value))
            } catch {
                throw failure(.encoding(error))
            }
            contentType = "application/json"
        case .form(let items):
            body = Array(
                items.map { PercentEncoding.encodeForm($0.0) + "=" + PercentEncoding.encodeForm($0.1) }
                    .joined(separator: "&").utf8)
            contentType = "application/x-www-form-urlencoded"
        case .multipart(let parts):
            // A part's header values go on header lines: a line break would add headers of its own.
            for case .file(let name, let file) in parts
            where file.contentType.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) {
                throw failure(.invalidRequest("the content type of the part '\(name)' contains a line break"))
            }
            let (bytes, boundary) = Multipart.encode(parts) {
                "hammock-" + (0..<4).map { _ in String(UInt64.random(in: 0...UInt64.max), radix: 36) }.joined()
            }
            body = bytes
            contentType = "multipart/form-data; boundary=\(boundary)"
        }
        if let contentType, fields[.contentType] == nil { fields[.contentType] = contentType }
        let head = HTTPRequest(method: request.method, scheme: scheme, authority: authority, path: target, headerFields: fields)
        return (head, body, file)
    }

    /// The base URL's parts, taken apart once.
    struct Base: Sendable {
        let scheme: String?
        let authority: String?
        /// The percent-encoded path without a trailing slash ("" for the root).
        let path: String
        /// Why the URL cannot be a base, if it cannot.
        let problem: String?

        init(_ url: URL) {
            let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
            problem = Self.problem(with: components, text: url.absoluteString)
            scheme = components?.scheme
            authority = components?.host.map { host in
                let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
                return components?.port.map { "\(bracketed):\($0)" } ?? bracketed
            }
            var path = components?.percentEncodedPath ?? ""
            while path.hasSuffix("/") { path.removeLast() }
            self.path = path
        }

        /// Base URLs are a scheme, a host, a port and a path: a query or user info would be dropped
        /// by some requests and kept by others, so they are refused (observable resources refuse
        /// them the same way).
        static func problem(with components: URLComponents?, text: String) -> String? {
            guard let components else { return "the base URL '\(text)' is not a URL" }
            if components.percentEncodedQuery != nil {
                return "the base URL '\(text)' has a query; add query items per request, or in an interceptor"
            }
            if components.user != nil || components.password != nil {
                return "the base URL '\(text)' has user info; send credentials in an Authorization header (BearerAuthentication)"
            }
            if components.fragment != nil { return "the base URL '\(text)' has a fragment" }
            return nil
        }
    }
}
