import AsyncHTTPClient
public import Foundation
import HTTPTypes
public import HammockServer
import HammockWire
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// Forwards what no resource, stub or route of the mock answers to a real backend, and streams its answer
/// back: the half of an API that exists is reached through the mock that stands in for the rest.
///
/// ```swift
/// let server = try await MockServer(resources: [orders])        // orders are mocked
/// server.addRoutes(try ProxyRoutes(upstream: URL(string: "http://127.0.0.1:8080/api")!), first: false)
/// // GET /orders/3 is the mock's; GET /customers/7 is http://127.0.0.1:8080/api/customers/7's
/// ```
/// `hammock serve config.json --proxy URL` does the same. Asked last (`first: false`), it takes every path
/// and method the mock does not: a path the mock serves with other methods is forwarded for the rest.
///
/// What is forwarded: the method, the path after the upstream URL's own path, the query as sent, the
/// body (one over the server's body limit as it arrives, which the mock's own routes refuse with 413),
/// and the header fields but the hop-by-hop ones (RFC 9110 §7.6.1: `Connection` and the fields it
/// names, `Keep-Alive`, `Proxy-*`, `TE`, `Trailer`, `Transfer-Encoding`, `Upgrade`); `Host` becomes the
/// upstream's, and `Via` and `Forwarded` (RFC 7239) say a proxy was on the way and for whom. The answer
/// comes back as the upstream gave it (no redirect followed, no body decompressed), its body streamed as it
/// arrives, through the mock's chain: the journal, latency and faults apply to it as to any route. An
/// upstream that cannot be reached is a 502, one that does not answer in ``timeout`` a 504, each
/// problem+json naming the upstream. A WebSocket handshake (`GET` with `Upgrade: websocket`) opens a socket
/// on the upstream, and the two are relayed message by message (docs/proxy.md#websockets).
public struct ProxyRoutes: MockRoutes {
    /// Why an upstream URL cannot be proxied to.
    public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
        /// What is wrong with it.
        public var description: String

        /// An error saying `description`.
        public init(description: String) { self.description = description }
    }

    /// Where requests go: scheme, host, port and a path that prefixes each forwarded path.
    public let upstream: URL
    /// How long the upstream may take to answer a request's head (its body may then stream for longer).
    public let timeout: Duration
    /// Where the exchanges passed on are kept, if they are recorded.
    public let recording: ProxyRecording?
    /// The requests forwarded: every one, or those a configuration's rule names (path, methods).
    public let rule: ProxyRule
    /// Roots an `https` upstream's certificate may chain to besides the system's, PEM (`nil`: the system's).
    public let upstreamRootsPEM: String?
    let upstreamRoots: [NIOSSLCertificate]?
    /// `scheme://host:port` and the path prefix, without a trailing `/`.
    let origin: String
    let prefix: String
    /// `host:port` as `Forwarded` and `Via` do not say it, but the upstream's `Host` does.
    let authority: String
    /// This proxy's name in `Via` (RFC 9110 §7.6.3 allows a pseudonym): `hammock-` and 8 random hex digits,
    /// so that a request that comes back through it is known (``loopDetected(in:)``), while one passing
    /// through another mock, even in the same process, is not taken for one.
    let hop: String

    /// Process-wide clients, as `HTTPClient.shared` is (never shut down, so never one per server), one per
    /// event loop of the group the server answers on, each following no redirect and decompressing
    /// nothing: a proxy hands the client what it got. A request goes out on the loop that received it:
    /// with one client for the whole group, half the answers came back on the other loop's thread, and a
    /// proxied request cost 148 µs of CPU where it costs 92 on one loop (docs/benchmarks.md).
    static let clients: [(loop: any EventLoop, client: HTTPClient)] = makeClients(trusting: [])

    /// The clients that also trust extra roots, by the roots' PEM text: made once per set of roots and kept
    /// for the process (a client must be shut down before it goes, and these never go).
    static let trustingClients = Mutex<[String: [(loop: any EventLoop, client: HTTPClient)]]>([:])

    static func makeClients(trusting roots: [NIOSSLCertificate]) -> [(loop: any EventLoop, client: HTTPClient)] {
        MultiThreadedEventLoopGroup.singleton.makeIterator().map { loop in (loop, makeClient(on: loop, trusting: roots)) }
    }

    static func makeClient(on loop: any EventLoop, trusting roots: [NIOSSLCertificate]) -> HTTPClient {
        var pool = HTTPClient.Configuration.ConnectionPool()
        // A kept connection lives at most 1 s unused: gunicorn closes its side after 2 s (its keepalive
        // default), and a request sent on a connection the server is closing fails (a CI run's 502).
        pool.idleTimeout = .seconds(1)
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            // A backend beside the mock connects in milliseconds; a refused one is reported in 3 s, not
            // after the 10 s the client would otherwise keep trying.
            timeout: HTTPClient.Configuration.Timeout(connect: .seconds(3)), connectionPool: pool,
            decompression: .disabled)
        // No spans: AsyncHTTPClient otherwise takes the process's tracer, a no-op one unless an app set
        // another, and still starts and ends a span per request, with its attributes: 10% of the CPU of a
        // proxied request under wrk -c8 (docs/benchmarks.md).
        configuration.tracing.tracer = nil
        if !roots.isEmpty {
            // Beside the system's roots, not instead: a staging backend's own CA, a corporate one.
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.additionalTrustRoots = [.certificates(roots)]
            configuration.tlsConfiguration = tls
        }
        return HTTPClient(eventLoopGroupProvider: .shared(loop), configuration: configuration)
    }

    /// The client of the event loop this runs on, and that loop (the first one elsewhere: in process, a
    /// test's task), among those that trust the system's roots and `upstreamRootsPEM`.
    var clientAndLoop: (HTTPClient, any EventLoop) {
        let set: [(loop: any EventLoop, client: HTTPClient)]
        if let upstreamRoots, !upstreamRoots.isEmpty {
            set = Self.trustingClients.withLock { sets in
                if let existing = sets[upstreamRootsPEM ?? ""] { return existing }
                let made = Self.makeClients(trusting: upstreamRoots)
                sets[upstreamRootsPEM ?? ""] = made
                return made
            }
        } else {
            set = Self.clients
        }
        if let current = MultiThreadedEventLoopGroup.currentEventLoop, let match = set.first(where: { $0.loop === current }) {
            return (match.client, match.loop)
        }
        return (set[0].client, set[0].loop)
    }

    /// The largest answer read whole before it is passed on (with a `Content-Length`): 64 KiB, most API
    /// answers; larger ones, and those without a length, stream through.
    static let readWhole = 64 << 10

    /// The methods a failed attempt may be sent again for (RFC 9110 §9.2.2): sending them twice does what
    /// sending them once does.
    static let idempotent: Set<HTTPRequest.Method> = [.get, .head, .put, .delete]

    /// Whether `error` says a kept-alive connection was already closed by the upstream when the request
    /// went out: AsyncHTTPClient reports it as `remoteConnectionClosed`, or, when the close lands while
    /// the request is being written, as NIO's `ioOnClosedChannel` (gunicorn after a chunked answer, under
    /// load: a fresh clone's test run met the second, which the retry did not cover).
    static func isStaleConnection(_ error: any Error) -> Bool {
        (error as? HTTPClientError) == .remoteConnectionClosed || (error as? ChannelError) == .ioOnClosedChannel
    }

    /// The methods forwarded: all that HTTP routes have (the router answers `OPTIONS` itself).
    static let methods: [HTTPRequest.Method] = [.get, .head, .post, .put, .patch, .delete]

    /// A proxy to `upstream` (`http://` or `https://`, a host, optionally a port and a path) that keeps
    /// each exchange whose answer ended whole in `recording`, if given.
    /// - Throws: ``ConfigurationError`` for another scheme, no host, or a query or fragment in the URL.
    public init(
        upstream: URL, timeout: Duration = .seconds(30), recording: ProxyRecording? = nil, upstreamRootsPEM: String? = nil
    ) throws(ConfigurationError) {
        try self.init(ProxyRule(upstream: upstream), timeout: timeout, recording: recording, upstreamRootsPEM: upstreamRootsPEM)
    }

    /// A proxy that forwards what `rule` names (its path and methods) to its upstream; an `https` upstream's
    /// certificate may chain to `upstreamRootsPEM`'s certificates as well as the system's roots.
    /// - Throws: ``ConfigurationError`` for an upstream that is not an http(s) URL with a host, or roots
    ///   that are not PEM certificates.
    public init(
        _ rule: ProxyRule, timeout: Duration = .seconds(30), recording: ProxyRecording? = nil, upstreamRootsPEM: String? = nil
    ) throws(ConfigurationError) {
        let upstream = rule.upstream
        guard let scheme = upstream.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw ConfigurationError(
                description: "the upstream '\(upstream.absoluteString.prefix(200))' is not an http:// or https:// URL")
        }
        guard let host = upstream.host, !host.isEmpty else {
            throw ConfigurationError(description: "the upstream '\(upstream.absoluteString.prefix(200))' names no host")
        }
        guard upstream.query == nil, upstream.fragment == nil else {
            throw ConfigurationError(
                description:
                    "the upstream '\(upstream.absoluteString.prefix(200))' has a query or fragment; give the scheme, host, port and path only"
            )
        }
        self.upstream = upstream
        self.timeout = timeout
        self.recording = recording
        self.rule = rule
        self.upstreamRootsPEM = upstreamRootsPEM
        if let upstreamRootsPEM {
            do {
                upstreamRoots = try NIOSSLCertificate.fromPEMBytes(Array(upstreamRootsPEM.utf8))
            } catch {
                throw ConfigurationError(description: "the upstream's roots cannot be read as PEM certificates: \(error)")
            }
            guard !(upstreamRoots?.isEmpty ?? true) else {
                throw ConfigurationError(description: "the upstream's roots hold no certificate")
            }
        } else {
            upstreamRoots = nil
        }
        let bracketed = host.contains(":") ? "[\(host)]" : host
        let port = upstream.port.map { ":\($0)" } ?? ""
        authority = bracketed + port
        origin = "\(scheme)://\(bracketed)\(port)"
        var path = upstream.path
        while path.hasSuffix("/") { path.removeLast() }
        prefix = path
        let tag = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        hop = "hammock-" + String(repeating: "0", count: 8 - tag.count) + tag
    }

    /// A problem when `request` has passed through this proxy already (its `Via` names ``hop``): an
    /// upstream that leads back to the mock (`--proxy` at its own port, or two mocks proxying to each
    /// other). Forwarded again, each round took a connection until the client's pool ran dry and a 502
    /// came 3 s later, naming the pool instead of the loop.
    func loopDetected(in request: MockRequest) -> HTTPProblem? {
        let vias = request.headerFields[values: .via]
        let looped = vias.contains { value in
            value.split(separator: ",").contains { element in
                // `1.1 hammock-3f9a1c2e`, perhaps with a comment: the second word is who received it.
                element.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first == Substring(hop)
            }
        }
        guard looped else { return nil }
        return HTTPProblem(
            HTTPResponse.Status(code: 508, reasonPhrase: "Loop Detected"),
            detail: "The request came back to this mock through its upstream \(origin): the proxy leads to itself",
            extensions: ["upstream": .string(origin)])
    }

    public func endpoint(for request: MockRequest) throws -> MockEndpoint? {
        // A path the rule does not name is left to the families after this one.
        if let path = rule.path, path.match(request.path) == nil { return nil }
        let methods = forwardedMethods
        var endpoint = MockEndpoint(
            methods: methods, route: MatchedRoute(kind: .proxy, pattern: pattern), takesStreamedBody: true
        ) { request in
            if let loop = loopDetected(in: request) { throw loop }
            if request.method == .options { return try await forwardOptions(request, methods: methods) }
            if request.asksForWebSocket { return try await forwardWebSocket(request) }
            return try await forward(request)
        }
        // `OPTIONS` goes to the backend too when the rule forwards every method: a browser's preflight
        // must meet the backend's own CORS grant (a credentialed one above all), as the request after it does.
        endpoint.answersOptions = rule.methods == nil
        return endpoint
    }

    /// An `OPTIONS` forwarded: the backend's answer, unless it is a CORS preflight the backend grants
    /// nothing (no `Access-Control-Allow-Origin`: a backend with no CORS, or none for `OPTIONS`); that one
    /// gets the router's own answer, which the mock's CORS grants, so the request after it is made.
    func forwardOptions(_ request: MockRequest, methods: [HTTPRequest.Method]) async throws -> MockResponse {
        let answer = try await forward(request)
        let isPreflight = request.headerFields[.origin] != nil && request.headerFields[.accessControlRequestMethod] != nil
        guard isPreflight, answer.headerFields[.accessControlAllowOrigin] == nil else { return answer }
        return .options(allowing: methods)
    }

    /// A body over the server's limit is forwarded as it arrives (``MockRequest/bodyStream``).
    public var mayTakeStreamedBodies: Bool { true }

    /// The methods forwarded, in the order routes list them.
    var forwardedMethods: [HTTPRequest.Method] { Self.methods.filter { rule.methods?.contains($0) ?? true } }

    /// The rule's path, or `/**`.
    var pattern: String { rule.path?.description ?? "/**" }

    public var routeTable: [RouteTableEntry] { [RouteTableEntry(methods: forwardedMethods, pattern: pattern)] }

    /// The header fields no proxy passes on (RFC 9110 §7.6.1), lowercased.
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te", "trailer",
        "trailers", "transfer-encoding", "upgrade",
    ]

    /// `fields` without the hop-by-hop ones and those `Connection` names, each with its name lowercased
    /// once (it was lowercased two or three times per field).
    static func endToEnd(_ fields: [(name: String, value: String)]) -> [(name: String, lowercased: String, value: String)] {
        let named = fields.map { (name: $0.name, lowercased: $0.name.lowercased(), value: $0.value) }
        var namedByConnection: Set<String> = []
        for field in named where field.lowercased == "connection" {
            for token in field.value.split(separator: ",") {
                namedByConnection.insert(token.trimmingCharacters(in: .whitespaces).lowercased())
            }
        }
        return named.filter { !hopByHop.contains($0.lowercased) && !namedByConnection.contains($0.lowercased) }
    }

    /// The upstream's URL for `request`: the prefix, the path, the query as sent, but for what a URL cannot
    /// hold as it is (`|`, `{`, `[`), which is escaped here: left to `URL(string:)`, the whole URL was escaped
    /// again, `%20` becoming `%2520` (found by fuzz-proxy).
    func target(of request: MockRequest) -> String {
        origin + prefix + PercentEncoding.encodeURLTarget(request.path + (request.query.map { "?" + $0 } ?? ""))
    }

    /// The header fields sent upstream for `request`: its end-to-end ones but those in `leaving`
    /// (lowercased), `Host` the upstream's, and this hop in `Via` and `Forwarded`.
    func upstreamHeaders(for request: MockRequest, leaving: Set<String> = []) -> HTTPHeaders {
        let sent = request.headerFields.map { (name: $0.name.canonicalName, value: $0.value) }
        var headers = HTTPHeaders()
        var via: [String] = []
        var forwarded: [String] = []
        for field in Self.endToEnd(sent) {
            switch field.lowercased {
            // The client's framing is not the upstream's: the client sets its own length, and Host.
            case "host", "content-length": continue
            case "via": via.append(field.value)
            case "forwarded": forwarded.append(field.value)
            default:
                if leaving.isEmpty || !leaving.contains(field.lowercased) { headers.add(name: field.name, value: field.value) }
            }
        }
        headers.add(name: "Host", value: authority)
        headers.add(name: "Via", value: (via + ["1.1 " + hop]).joined(separator: ", "))
        headers.add(name: "Forwarded", value: (forwarded + [Self.forwardedElement(for: request)]).joined(separator: ", "))
        return headers
    }

    func forward(_ request: MockRequest) async throws -> MockResponse {
        let headers = upstreamHeaders(for: request)
        let (client, loop) = clientAndLoop
        let body: HTTPClient.Body?
        if let stream = request.bodyStream {
            // Larger than the server's body limit: sent upstream as it arrives, with the length the client
            // declared (else chunked), so memory holds a window of it, never the whole.
            body = .stream(contentLength: stream.length.map(Int64.init)) { writer in
                let done = loop.makePromise(of: Void.self)
                done.completeWithTask {
                    for try await chunk in stream { try await writer.write(.byteBuffer(ByteBuffer(bytes: chunk))).get() }
                }
                return done.futureResult
            }
        } else if !request.body.isEmpty {
            body = .bytes(request.body)
        } else {
            body = nil
        }
        let outgoing: HTTPClient.Request
        do {
            outgoing = try HTTPClient.Request(
                url: target(of: request), method: HTTPMethod(rawValue: request.method.rawValue), headers: headers, body: body)
        } catch {
            throw HTTPProblem(
                .badGateway, detail: "The upstream URL for '\(request.path.prefix(200))' cannot be made: \(error)",
                extensions: ["upstream": .string(origin)])
        }
        let answer: UpstreamExchange.Head
        do {
            do {
                answer = try await send(outgoing, isHead: request.method == .head, client: client, loop: loop)
            } catch
                where Self.idempotent.contains(request.method) && Self.isStaleConnection(error) && request.bodyStream == nil
            {
                // Once more on a fresh connection: a kept one may have been closed by the upstream between
                // requests, before this one reached it. Not a streamed body: it cannot be sent twice.
                answer = try await send(outgoing, isHead: request.method == .head, client: client, loop: loop)
            }
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            throw HTTPProblem(
                .gatewayTimeout, detail: "The upstream \(origin) did not answer within \(timeout)",
                extensions: ["upstream": .string(origin)])
        } catch is CancellationError {
            throw CancellationError()
        } catch let error as HTTPClientError where error == .cancelled {
            throw CancellationError()
        } catch let cut as RequestBodyStream.Cut {
            // The client's side failed, not the upstream's (its answer, if any, finds the connection gone):
            // 400 for a body cut short, 408 for one that stopped arriving (its problem says which).
            throw cut
        } catch let brokeOff as UpstreamExchange.BrokeOff {
            throw HTTPProblem(
                .badGateway,
                detail: "The upstream \(origin) broke off its answer: \(String(describing: brokeOff.error).prefix(300))",
                extensions: ["upstream": .string(origin)])
        } catch let error as HTTPParserError {
            // It was reached: what came back is not an HTTP/1.1 answer (a status line that is not one, a
            // field value with a control character, framing that contradicts itself).
            throw HTTPProblem(
                .badGateway, detail: "The upstream \(origin) answered with what is not HTTP/1.1: \(error)",
                extensions: ["upstream": .string(origin)])
        } catch {
            throw HTTPProblem(
                .badGateway, detail: "The upstream \(origin) could not be reached: \(String(describing: error).prefix(300))",
                extensions: ["upstream": .string(origin)])
        }
        guard answer.head.status.code >= 200 else {
            // AsyncHTTPClient passes interim answers (100, 103) by; one that ends the exchange is a 101 to a
            // request that asked for no upgrade (an upgrade goes through the WebSocket route), whose bytes
            // after it are no HTTP. A mock answer cannot be informational either (FinalAnswerStep).
            throw HTTPProblem(
                .badGateway,
                detail:
                    "The upstream \(origin) answered \(answer.head.status.code) to a request that asked to switch no protocol",
                extensions: ["upstream": .string(origin)])
        }
        let (fields, length) = answerFields(answer.head.headers)
        let status = HTTPResponse.Status(code: Int(answer.head.status.code), reasonPhrase: answer.head.status.reasonPhrase)
        if let whole = answer.whole {
            // No body for a HEAD, a 204 or a 304 (RFC 9110 §6.4.1), whatever its length says; a small answer of
            // known length was read whole and is answered as any mock answer is: streaming it cost more than
            // the rest of the hop (docs/benchmarks.md).
            // An OPTIONS is left out: a preflight the backend granted nothing got the router's own answer
            // here (`forwardOptions`), which a replay's router gives too where no stub answers OPTIONS.
            if request.method != .options {
                var recorded = fields
                // A HEAD's length is kept with it: its replay has no body to say it.
                if request.method == .head, let length { recorded[.contentLength] = String(length) }
                recording?.add(request: request, status: status, fields: recorded, body: whole)
            }
            if request.method == .head, let length {
                // The length of what a GET would bring, as the backend said it: HEAD's answer keeps it
                // (the HEAD step writes a body's length, and this one carries none). Nothing is streamed.
                return MockResponse(status: status, headerFields: fields, stream: StreamingBody(length: length) { _ in })
            }
            return MockResponse(status: status, headerFields: fields, body: whole)
        }
        guard let pipe = answer.stream else { return MockResponse(status: status, headerFields: fields) }
        let recording = request.method == .options ? nil : self.recording
        let answered = fields
        let reader = UpstreamReader(pipe)
        let stream = StreamingBody(length: length) { writer in
            // A copy for the recording, up to its limit and within what all copies under way may hold: a
            // larger answer streams on and is counted as left out.
            var kept: [UInt8]? = recording == nil ? nil : []
            defer { recording?.release(kept?.count ?? 0) }
            while let buffer = try await reader.next() {
                let bytes = Array(buffer.readableBytesView)
                if let recording, let count = kept?.count {
                    if count + bytes.count > recording.maximumBodySize || !recording.reserve(bytes.count) {
                        recording.release(count)
                        kept = nil
                        recording.skip()
                    } else {
                        kept?.append(contentsOf: bytes)
                    }
                }
                try await writer.write(bytes)
            }
            // Only an answer that ended whole is kept: one cut short would replay as if it were complete.
            if let kept { recording?.add(request: request, status: status, fields: answered, body: kept) }
        }
        return MockResponse(status: status, headerFields: fields, stream: stream)
    }

    /// The end-to-end fields of an upstream's answer, with a reference to the upstream made the mock's
    /// (``localReference(_:)``), and its `Content-Length` apart.
    func answerFields(_ headers: HTTPHeaders) -> (fields: HTTPFields, length: Int?) {
        var fields = HTTPFields()
        var length: Int?
        for (name, lowercased, value) in Self.endToEnd(headers.map { (name: $0.name, value: $0.value) }) {
            if lowercased == "content-length" {
                length = Int(value)
                continue
            }
            guard let fieldName = HTTPField.Name(name) else { continue }
            fields.append(HTTPField(name: fieldName, value: value))
        }
        for name in [HTTPField.Name.location, .contentLocation] {
            if let value = fields[name], let local = localReference(value) { fields[name] = local }
        }
        return (fields, length)
    }

    /// Sends `outgoing` on this event loop's client and waits for the answer's head (or, for a small answer,
    /// all of it), at most ``timeout``; cancelling the calling task cancels the request.
    func send(
        _ outgoing: HTTPClient.Request, isHead: Bool, client: HTTPClient, loop: any EventLoop
    ) async throws -> UpstreamExchange.Head {
        let exchange = UpstreamExchange(eventLoop: loop, readWhole: Self.readWhole, isHead: isHead)
        let task = client.execute(request: outgoing, delegate: exchange, eventLoop: .delegate(on: loop))
        // The timeout covers the head only: a body may then stream for as long as the upstream sends it.
        let deadline = loop.scheduleTask(in: Self.timeAmount(timeout)) { task.fail(reason: HTTPClientError.deadlineExceeded) }
        exchange.head.whenComplete { _ in deadline.cancel() }
        return try await withTaskCancellationHandler {
            try await exchange.head.get()
        } onCancel: {
            task.cancel()
        }
    }

    /// A reference to the upstream itself (`http://127.0.0.1:8080/api/people/3`, a backend writing its own
    /// absolute URL in `Location`) made one to the mock (`/people/3`), as nginx's `proxy_redirect default`
    /// does: the client's next request then comes back through the proxy (its recording, faults and CORS)
    /// instead of going around it. Any other reference is `nil`, left as the backend wrote it. The scheme
    /// and host compare without case, the path exactly, and only at a segment's end (`/apix` is not `/api`);
    /// a rest that starts `//` is left too, since a client reads `//evil.test/x` as another host.
    func localReference(_ value: String) -> String? {
        let base = Array((origin.lowercased() + prefix).utf8)
        let bytes = Array(value.utf8)
        guard bytes.count >= base.count else { return nil }
        let originLength = origin.lowercased().utf8.count
        for index in 0..<base.count {
            let byte = bytes[index]
            let lowered = index < originLength && byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
            guard lowered == base[index] else { return nil }
        }
        let rest = bytes[base.count...]
        switch rest.first {
        case nil: return "/"
        case UInt8(ascii: "/"):
            // `//host/...` would be read as another host (a network-path reference): left as written.
            if rest.dropFirst().first == UInt8(ascii: "/") { return nil }
            return String(decoding: rest, as: UTF8.self)
        case UInt8(ascii: "?"), UInt8(ascii: "#"): return "/" + String(decoding: rest, as: UTF8.self)
        default: return nil
        }
    }

    /// `duration` as NIO's `TimeAmount`, in whole nanoseconds (saturating: a century is as good as forever).
    static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        guard seconds < 3_000_000_000 else { return .seconds(3_000_000_000) }
        return .nanoseconds(max(0, seconds) * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// `Host`, made once (HTTPTypes marks its own `.host` unavailable, for `HTTPRequest.authority`).
    static let hostField = HTTPField.Name("Host")

    /// This hop's `Forwarded` element: for whom (the client's address, `unknown` in process), the host it
    /// asked for, and the scheme it used.
    static func forwardedElement(for request: MockRequest) -> String {
        let peer = request.context?.peer.map { peer -> String in
            // `127.0.0.1:52144` as is; an IPv6 address with its port quoted, as RFC 7239 §6 wants.
            peer.firstIndex(of: ":") != peer.lastIndex(of: ":")
                ? "\"[\(peer.split(separator: ":").dropLast().joined(separator: ":"))]\"" : "\"\(peer)\""
        }
        var element = "for=\(peer ?? "unknown")"
        if let name = Self.hostField, let host = request.headerFields[name] {
            element += ";host=\"\(host.contains("\"") ? host.filter { $0 != "\"" } : host)\""
        }
        return element + (request.context?.isSecure == true ? ";proto=https" : ";proto=http")
    }
}

/// The one reader of a streamed answer's ``UpstreamBody``: held only by the answer's body, so that an
/// answer dropped unsent (its client gone before the body started) stops the upstream's request as it goes,
/// instead of leaving a connection of the pool waiting for a reader.
final class UpstreamReader: Sendable {
    let pipe: UpstreamBody

    init(_ pipe: UpstreamBody) { self.pipe = pipe }

    func next() async throws -> ByteBuffer? {
        do {
            return try await pipe.next()
        } catch {
            pipe.stop()
            throw error
        }
    }

    deinit { pipe.stop() }
}
