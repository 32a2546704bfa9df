import Synchronization

/// What the server knows of a request beyond its bytes: its number, when it arrived, from where, and
/// which route answered it. Middleware reads it; what runs outside the router sees ``route`` once
/// `next` has returned (as Hummingbird's request context and swift-openapi-runtime's operation ID do).
///
/// ```swift
/// struct RouteTiming: MockMiddleware {
///     func handle(_ request: MockRequest, next: (MockRequest) async throws -> MockResponse) async throws -> MockResponse {
///         let response = try await next(request)
///         let route = request.context?.route.map { "\($0.kind) \($0.pattern)" } ?? "no route"
///         print(request.context?.id ?? 0, route, ContinuousClock.now - (request.context?.arrival ?? .now))
///         return response
///     }
/// }
/// ```
/// The server gives every request one: the HTTP transport when the head arrives (with the peer's
/// address), ``MockServer/respond(to:)`` for a request handed in without one.
public final class MockRequestContext: Sendable {
    /// The request's number on its server: 1 for the first, each next one higher.
    public let id: UInt64
    /// When the request arrived: its head over HTTP, the call in process.
    public let arrival: ContinuousClock.Instant
    /// The client's address and port (`127.0.0.1:52144`) over HTTP; `nil` in process.
    public let peer: String?
    /// Whether the request came over TLS (`hammock serve --https`): what a proxied request's `Forwarded`
    /// element gives as its `proto`. `false` in process.
    public let isSecure: Bool
    private let matched = Mutex<(route: MatchedRoute?, fault: String?)>((nil, nil))

    package init(id: UInt64, arrival: ContinuousClock.Instant, peer: String?, isSecure: Bool = false) {
        self.id = id
        self.arrival = arrival
        self.peer = peer
        self.isSecure = isSecure
    }

    /// The route whose path the request matched, once the router has found it (also when the route
    /// answers `OPTIONS` or 405 for the method); `nil` before, and for a request no route matched (a
    /// 404, a request the transport refused).
    public var route: MatchedRoute? { matched.withLock { $0.route } }

    /// The fault injected into the answer, in its compact form (`GET /people/:id 503 20%`), or the
    /// login's switch that shaped it (`auth: 401 forced (answerUnauthorized)`), if any.
    public var fault: String? { matched.withLock { $0.fault } }

    func match(_ route: MatchedRoute?) { matched.withLock { $0.route = route } }

    func noteFault(_ fault: Fault) { matched.withLock { $0.fault = fault.description } }

    /// Notes a switch a test turned on (the login's) as what shaped the answer, where a fault would be.
    func noteSwitch(_ description: String) { matched.withLock { $0.fault = description } }
}

/// Which route answered a request: what a journal, a fault rule or a log line names it by.
public struct MatchedRoute: Sendable, Hashable {
    /// The kinds of route.
    public enum Kind: String, Sendable, Hashable {
        /// A resource's route (collection, item or nested list).
        case resource
        /// A described route (`StubRoute`, a configuration file's `routes`).
        case stub
        /// A route written in Swift (`MockServer.route(_:_:_:)`).
        case swift
        /// A route of a family of your own (`MockRoutes`).
        case custom
        /// An endpoint of the admin API (`/__hammock/faults/:name`): no journal entry, latency, fault,
        /// override, CORS grant or middleware of yours; the admin guard instead.
        case admin
        /// An endpoint of the mock's login (`POST /auth/token`, the JWKS, the discovery document): never
        /// protected by the access rules; journal, latency and faults as for any route.
        case auth
        /// A request forwarded to the real backend (`--proxy`, `ProxyRoutes`): the answer is the backend's as
        /// it gave it, so the mock adds no `ETag` and answers no `304` of its own (the client's conditional
        /// fields go to the backend); journal, latency, faults and CORS as for any route.
        case proxy
    }

    /// The kind of route.
    public var kind: Kind
    /// Its path pattern, as the route table shows it (`/people/:id`), without the base path; for a
    /// family of your own whose endpoint names no route, the request's path.
    public var pattern: String
    /// The resource it acts on, for a resource's route.
    public var resource: String?
    /// Whether the answer is one given as it was: a backend's through the proxy, or a recorded one a stub
    /// replays `verbatim`. The mock then adds no `ETag` and answers no `304` of its own: the backend
    /// decided (a backend that ignores `If-None-Match` answered 200, and so does its replay).
    public var answersAsGiven: Bool

    /// Names a route; `answersAsGiven` is true for ``Kind/proxy`` unless given.
    public init(kind: Kind, pattern: String, resource: String? = nil, answersAsGiven: Bool? = nil) {
        self.kind = kind
        self.pattern = pattern
        self.resource = resource
        self.answersAsGiven = answersAsGiven ?? (kind == .proxy)
    }
}
