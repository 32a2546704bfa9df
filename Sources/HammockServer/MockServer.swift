public import Foundation
import HTTPTypes
import HammockJSON
import HammockStore
public import Logging
package import Synchronization

/// An embeddable REST server for resources you describe in a few lines.
///
/// ```swift
/// let people = MockResource("people", fields: ["name": .string, "numberOfKids": .integer])
/// let server = try await MockServer(resources: [people])
/// let response = await server.respond(to: MockRequest(.post, "/people", json: ["name": "john"]))
/// ```
/// `import HammockHTTPServer` to serve it on a socket (`try await server.start(port: 0)`), and
/// `import HammockSQLite` for a store that survives a restart.
///
/// A request passes through a pipeline: the server's middleware (the request journal, request logging,
/// simulated latency, CORS, problem mapping, `HEAD`, conditional requests), then yours
/// (``MockMiddleware``), then the router, which asks each family of routes (``MockRoutes``; the admin
/// API's first, outside the base path, then yours, then the resources) for the request's path. The
/// admin API's routes (`/__hammock/…`) take only the steps made for them: the log line, problem
/// mapping, `HEAD` and the admin guard. Resources, routes and serializers can be added and removed
/// while the server runs.
public final class MockServer: Sendable {
    /// Options that hold for the server's whole life.
    ///
    /// ```swift
    /// let options = MockServer.Options(latency: Latency(.milliseconds(100)...(.milliseconds(300))), maximumBodySize: 64 << 10)
    /// ```
    public struct Options: Sendable {
        /// Simulated response times; none by default.
        public var latency: Latency?
        /// The largest request body accepted; larger ones get 413. 1 MiB by default.
        public var maximumBodySize: Int
        /// Whether responses carry permissive CORS headers and `OPTIONS` answers preflights, so that
        /// browser front ends on another origin can call the mock. On by default. The admin API never
        /// grants CORS, whatever this says.
        public var allowsCrossOrigin: Bool

        /// A path prefix every route is served under (`/api/v1`), if any: `GET /api/v1/people` lists
        /// people, `Location` and `Link` headers carry the prefix, and paths outside it are 404.
        public var basePath: String?

        /// How much the request journal (``MockServer/journal``) keeps; ``RequestJournal/Limits/off``
        /// turns it off.
        public var journal: RequestJournal.Limits

        /// Where the admin API is served (`/__hammock`), outside the base path; `nil` turns it off. A
        /// path the admin API owns is never answered by a resource or route.
        public var adminPath: String?
        /// The bearer token the admin API requires (`Authorization: Bearer TOKEN`), if any; the rest of
        /// the API does not need it. An empty one, or one with spaces or control characters, is refused
        /// when the server is made (an empty token would let in a request that sends none).
        public var adminToken: String?
        /// Whether a request may ask for its own delay (`?_delay=500`, `Prefer: delay=500`) or status
        /// (`Prefer: status=503`). On by default; off is `hammock serve --strict`.
        public var allowsOverrides: Bool
        /// Host names the admin API answers besides `localhost`, names under it and IP addresses (a
        /// machine's own name, when teammates reach the mock by it): a request addressed to any other
        /// name is refused, so that no web page can re-point its own name at the mock (DNS rebinding).
        public var adminHosts: [String]
        /// Header fields whose values the admin API hides when it serves the journal, besides
        /// `Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie`, `X-Api-Key` and `X-Auth-Token`.
        public var redactedHeaders: [String]
        /// What signs and checks access tokens, for a login (``MockServer/setAuth(_:)``, a configuration's
        /// `auth`): the HammockJWT product's `JWTAccessTokens()`. `nil` (the default) keeps the engine
        /// free of cryptography, and a login is refused with a message saying what to pass.
        public var tokenSigner: (any AccessTokenSigner)?

        /// Creates options.
        public init(
            latency: Latency? = nil, maximumBodySize: Int = 1 << 20, allowsCrossOrigin: Bool = true, basePath: String? = nil,
            journal: RequestJournal.Limits = RequestJournal.Limits(), adminPath: String? = "/__hammock",
            adminToken: String? = nil, allowsOverrides: Bool = true, adminHosts: [String] = [], redactedHeaders: [String] = [],
            tokenSigner: (any AccessTokenSigner)? = nil
        ) {
            self.adminHosts = adminHosts
            self.redactedHeaders = redactedHeaders
            self.tokenSigner = tokenSigner
            self.allowsOverrides = allowsOverrides
            self.latency = latency
            self.maximumBodySize = maximumBodySize
            self.allowsCrossOrigin = allowsCrossOrigin
            self.basePath = basePath.flatMap(Self.normalizedBasePath)
            self.journal = journal
            self.adminPath = adminPath.flatMap(Self.normalizedBasePath)
            self.adminToken = adminToken
        }

        /// Why `token` cannot protect the admin API (empty, spaces or control characters), or `nil` when
        /// it can.
        public static func problem(withAdminToken token: String) -> String? { AdminGuard.problem(withToken: token) }

        /// `text` as a base path: with a leading slash and without a trailing one; `nil` for the root
        /// (`""` or `/`) or for text that is not a path (no leading `/`, an empty segment, `?`, `#`, `%`
        /// or whitespace).
        public static func normalizedBasePath(_ text: String) -> String? {
            var path = Substring(text)
            while path.hasSuffix("/") { path = path.dropLast() }
            guard !path.isEmpty, path.hasPrefix("/"), !path.contains("//") else { return nil }
            guard !path.contains(where: { "?#% ".contains($0) || $0.isWhitespace }) else { return nil }
            return String(path)
        }

        /// Whether `text` is a usable base path (the root counts as none).
        public static func isValidBasePath(_ text: String) -> Bool {
            let trimmed = text.drop { $0 == "/" }
            return trimmed.isEmpty || normalizedBasePath(text) != nil
        }
    }

    /// The store records live in.
    public let store: any MockStore
    /// The controller that carries out actions.
    public let controller: any MockController
    /// The serializer for resources without one of their own.
    public let defaultSerializer: any MockSerializer
    /// The options given at creation.
    public let options: Options
    /// Where each request is logged (at `info`, one line per request).
    public let logger: Logger

    let resources: ResourceRoutes
    /// Routes added with ``route(_:_:_:)`` and ``addStubs(_:)``, asked first.
    let customRoutes: CustomRoutes
    let router: MockRouter
    /// The latency and its chains (rebuilt when it changes: no request pays for a latency step while
    /// there is none), the faults and the routes of your own, as one value swapped whole.
    let runtimeCell = RuntimeCell()
    /// Every request and its answer, for tests to query and wait on.
    public let journal: RequestJournal
    /// Where writes are announced to WebSocket routes' live feeds.
    let changes: ResourceChanges
    /// The sessions of WebSockets opened in process, ended by ``stop()``.
    let inProcessSockets = InProcessSockets()
    /// Every WebSocket open now, for ``sendToWebSockets(_:path:)`` and ``closeWebSockets(path:with:)``.
    let openSocketList = OpenWebSockets()
    /// Sends the webhooks that follow answers.
    let webhookDispatcher: WebhookDispatcher
    /// The admin API's family of routes, when ``Options/adminPath`` is set.
    let admin: AdminRoutes?
    /// The data to go back to on ``reset()``; taken before the first request is answered.
    let baseline = Baseline()
    /// Snapshots saved by name.
    let snapshots = Mutex<[String: StoreSnapshot]>([:])
    /// The configuration the server runs (``reload(_:)`` replaces it), the numbers of the routes it
    /// added, and the latency ``reset()`` returns to.
    let loaded = Mutex<LoadedConfiguration>(LoadedConfiguration())
    /// What decides and applies faults and a request's own asks; the faults in force are in the runtime
    /// (``setFaults(_:)``).
    let interventions: Interventions
    /// Raised while the server stops, to release responses held back by latency.
    let stopSignal: StopSignal
    /// The time access tokens are issued and checked at: `now` when the server was made, moved on by its
    /// clock since.
    let tokenClock: @Sendable () -> Date
    /// The number of the latest request given a context.
    let requestNumbers = Atomic<UInt64>(0)
    /// What serves this server on a socket (HammockHTTPServer), told to stop by ``stop()``.
    package let listener = Mutex<(any MockServerListener)?>(nil)

    /// Creates a server and adds `resources` (in any order: parents are added before children).
    /// - Parameters:
    ///   - routes: Families of routes of your own, asked before the resources'.
    ///   - middleware: Your middleware, outermost first, inside the server's own (see ``MockMiddleware``):
    ///     it sees what the router will see, and answers before CORS, latency and problem mapping.
    ///   - outerMiddleware: Your middleware placed outside the server's own, outermost first: it sees
    ///     every request first (refusals of the transport included) and every answer as it leaves
    ///     (with CORS headers, after latency, errors already problem+json), as a request journal must.
    ///   - clock: The clock latency waits on; inject a test clock to control time.
    ///   - random: Uniform numbers in `0..<1` that pick each latency.
    ///   - now: The wall-clock time, for `Last-Modified`.
    /// - Throws: `SchemaError` for a resource that cannot be served, ``ConfigurationError`` for an
    ///   admin token that cannot protect anything (empty, or not visible ASCII), or the store's error.
    public init<C: Clock>(
        resources: [MockResource] = [],
        store: any MockStore = MemoryStore(),
        controller: any MockController = CRUDController(),
        serializer: any MockSerializer = DefaultSerializer(),
        options: Options = Options(),
        routes: [any MockRoutes] = [],
        middleware: [any MockMiddleware] = [],
        outerMiddleware: [any MockMiddleware] = [],
        clock: C = ContinuousClock(),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger = Logger(label: "Hammock", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws where C.Duration == Duration {
        if let token = options.adminToken, let problem = Options.problem(withAdminToken: token) {
            throw ConfigurationError(file: "MockServer.Options", keyPath: "adminToken", message: problem)
        }
        self.store = store
        self.controller = controller
        self.defaultSerializer = serializer
        self.options = options
        self.logger = logger
        // Writes go through a store that tells the live feeds (WebSocket routes) what changed: a write
        // request's (ResourceRoutes wraps its store), and the stubs' and Swift routes' (RouteRecords).
        let changes = ResourceChanges()
        self.changes = changes
        let routedStore = WriteScopedStore(base: store, second: nil, precondition: nil, changes: changes)
        let resourceRoutes = ResourceRoutes(
            store: store, controller: controller, serializer: serializer, maximumBodySize: options.maximumBodySize,
            modifications: ModificationDates(store: store, now: now), changes: changes)
        self.resources = resourceRoutes
        let records = RouteRecords(
            store: routedStore, schema: { name in resourceRoutes.registry.withLock { $0.schemas[name] } },
            second: { resourceRoutes.modifications.second() })
        // One timer for every hold: latency, stubs' latency, `_delay` and delay faults.
        let timer = LatencyTimer(clock: clock)
        let customRoutes = CustomRoutes(
            records: records, timer: timer, random: random, now: now, allowsAsking: options.allowsOverrides, runtime: runtimeCell,
            changes: changes)
        self.customRoutes = customRoutes
        let stopSignal = StopSignal()
        self.stopSignal = stopSignal
        let interventions = Interventions(
            random: random, timer: timer, stopSignal: stopSignal, allowsAsking: options.allowsOverrides)
        self.interventions = interventions
        let admin = options.adminPath.map { AdminRoutes(path: $0, options: options) }
        self.admin = admin
        // Token times start at `now()` and move with the server's clock, so a test clock moves them too.
        let started = (clock.now, now())
        self.tokenClock = { started.1.addingTimeInterval(RequestJournal.seconds(started.0.duration(to: clock.now))) }
        let router = MockRouter(
            [AuthRoutes(basePath: options.basePath, runtime: runtimeCell), customRoutes] + routes + [resourceRoutes],
            admin: admin,
            basePath: options.basePath, interventions: interventions)
        self.router = router
        let journal = RequestJournal(limits: options.journal, clock: clock, now: now)
        self.journal = journal
        let webhookDispatcher = WebhookDispatcher(journal: journal, basePath: options.basePath)
        self.webhookDispatcher = webhookDispatcher
        let assemble: @Sendable (Latency?) -> Pipelines = { latency in
            // One list of steps, outermost first; each says which kinds of route take it. Webhooks outside
            // the journal: the answer they follow is journaled before their first attempt.
            var steps: [Pipelines.Step] = [.api(WebhookStep(dispatcher: webhookDispatcher))]
            if journal.isEnabled { steps.append(.api(JournalMiddleware(journal: journal))) }
            steps += outerMiddleware.map(Pipelines.Step.api) + [.both(LogMiddleware(logger: logger))]
            if let latency {
                steps.append(.api(LatencyMiddleware(latency: latency, timer: timer, random: random, stopSignal: stopSignal)))
            }
            steps.append(.api(options.allowsCrossOrigin ? CORSMiddleware() as any MockMiddleware : SameOriginWebSocketStep()))
            steps += [.both(ProblemMiddleware(logger: logger)), .both(FinalAnswerStep()), .both(HeadMiddleware())]
            if let admin { steps.append(.admin(AdminGuardMiddleware(admin: admin))) }
            steps += [.api(ConditionalRequestMiddleware(now: now))] + middleware.map(Pipelines.Step.api)
            return Pipelines(steps, around: router.respond(to:), admin: router.respondAsAdmin(to:))
        }
        runtimeCell.start(ServerRuntime.Settings(latency: options.latency), assemble: assemble)
        loaded.withLock { $0.latency = options.latency }
        admin?.attach(to: self)
        for resource in try MockResource.parentsFirst(resources) { try await addResource(resource) }
    }

    /// Adds a resource, creating its storage; its routes answer at once.
    /// - Throws: `SchemaError` if the name is taken, a parent is unknown, or the definition is invalid.
    public func addResource(_ resource: MockResource) async throws { try await resources.add(resource) }

    /// Adds a family of routes while the server runs, asked before the others (`first`, the default) or
    /// after them.
    public func addRoutes(_ routes: any MockRoutes, first: Bool = true) { router.add(routes, first: first) }

    /// The schema of a served resource.
    public func schema(named name: String) -> ResourceSchema? { resources.registry.withLock { $0.schemas[name] } }

    /// Every served resource, in the order added.
    public var schemas: [ResourceSchema] { resources.registry.withLock { $0.orderedSchemas } }

    /// Uses `serializer` for `resource` from the next request on.
    public func setSerializer(_ serializer: any MockSerializer, for resource: String) {
        resources.registry.withLock { $0.serializers[resource] = serializer }
    }

    /// Goes back to the default serializer for `resource`.
    public func removeSerializer(for resource: String) {
        _ = resources.registry.withLock { $0.serializers.removeValue(forKey: resource) }
    }

    /// The route table, derived from the routes themselves: your families of routes first, then each
    /// resource's, in the order added.
    public var routeTable: [RouteTableEntry] { router.routeTable }

    /// Loads sample data into a resource.
    ///
    /// Each object is harvested: fields the resource declares are kept (values of the wrong type are
    /// dropped), unknown members are ignored, and objects without any known field are skipped.
    /// Generated keys are assigned anew; client-supplied keys must be present and not taken.
    ///
    /// ```swift
    /// let report = try await server.addData(try JSON(parsing: fixture), for: "people")
    /// print(report)   // loaded 120, skipped 2
    /// ```
    /// - Parameters:
    ///   - data: An array of objects, or a single object.
    ///   - progress: Called after each batch with the objects processed so far and the total.
    /// - Throws: ``HTTPProblem`` (404) for an unknown resource, or the store's error.
    @discardableResult
    public func addData(
        _ data: JSON, for resource: String, progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil
    ) async throws -> LoadReport {
        try await resources.addData(data, for: resource, progress: progress)
    }
}
