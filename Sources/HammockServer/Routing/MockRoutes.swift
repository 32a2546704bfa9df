public import HTTPTypes

/// A family of routes: the router asks each family, in order, whether it serves a request's path.
///
/// The resources are one family. Another is a few lines:
///
/// ```swift
/// /// `GET /health` answers `{"ok": true}`.
/// struct Health: MockRoutes {
///     func endpoint(for request: MockRequest) throws -> MockEndpoint? {
///         guard request.path == "/health" else { return nil }
///         return MockEndpoint(methods: [.get, .head]) { _ in MockResponse(json: ["ok": true]) }
///     }
///     var routeTable: [RouteTableEntry] { [RouteTableEntry(methods: [.get, .head], pattern: "/health")] }
/// }
/// let server = try await MockServer(resources: [people], routes: [Health()])
/// ```
public protocol MockRoutes: Sendable {
    /// What answers `request`'s path, or `nil` if this family has no route for it (the router then
    /// asks the next one). Throw an ``HTTPProblem`` for a path that is this family's but wrong, such as
    /// a record that does not exist.
    func endpoint(for request: MockRequest) throws -> MockEndpoint?

    /// This family's rows of the server's route table.
    var routeTable: [RouteTableEntry] { get }

    /// Whether any of this family's endpoints may take streamed bodies
    /// (``MockEndpoint/takesStreamedBody``). The transport asks the router about a body over the limit only
    /// when some family says so; the default is `false`.
    var mayTakeStreamedBodies: Bool { get }
}

extension MockRoutes {
    public var mayTakeStreamedBodies: Bool { false }
}

/// What answers one path: the methods it allows and the handler for them.
///
/// The router answers `OPTIONS` (with `Allow`) and methods outside ``methods`` (405) itself; the
/// handler sees only the methods it listed.
public struct MockEndpoint: Sendable {
    /// The methods the path answers, in the order `Allow` lists them; list `HEAD` beside `GET`.
    public var methods: [HTTPRequest.Method]
    /// Answers a request with one of ``methods``.
    public var handler: @Sendable (MockRequest) async throws -> MockResponse
    /// The route this is, for the request's context (``MockRequestContext/route``); `nil` leaves it
    /// unnamed.
    public var route: MatchedRoute?
    /// Whether the handler reads a body larger than the server's body limit as it arrives
    /// (``MockRequest/bodyStream``) rather than having it refused with 413, as the proxy does. Bodies within
    /// the limit still arrive whole in ``MockRequest/body``.
    public var takesStreamedBody: Bool
    /// Whether the handler answers `OPTIONS` itself, CORS preflights included (the proxy: the backend's
    /// own grant must reach the browser), instead of the router's `204` with `Allow`, on a path no family
    /// asked before serves. Such an `OPTIONS` meets no 405, login rule or fault, as the router's own
    /// answer does not.
    package var answersOptions = false

    /// Creates an endpoint.
    public init(
        methods: [HTTPRequest.Method], route: MatchedRoute? = nil, takesStreamedBody: Bool = false,
        handler: @escaping @Sendable (MockRequest) async throws -> MockResponse
    ) {
        self.methods = methods
        self.route = route
        self.takesStreamedBody = takesStreamedBody
        self.handler = handler
    }
}

/// One row of the route table: `GET, HEAD, POST  /people  people`.
public struct RouteTableEntry: Sendable, Hashable {
    /// The methods the pattern answers, as `Allow` lists them (`OPTIONS` is implied).
    public var methods: [HTTPRequest.Method]
    /// The path pattern, with `:name` for a variable segment.
    public var pattern: String
    /// The resource the routes act on, if any.
    public var resource: String?

    /// Creates a row.
    public init(methods: [HTTPRequest.Method], pattern: String, resource: String? = nil) {
        self.methods = methods
        self.pattern = pattern
        self.resource = resource
    }

    /// `GET, HEAD, POST`.
    public var methodList: String { methods.map(\.rawValue).joined(separator: ", ") }
}
