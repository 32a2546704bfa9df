import HammockStore
public import Logging
import Synchronization

extension MockServer {
    /// Creates a server from a configuration file's contents, with `store` already opened; `adminToken`
    /// protects the admin API (see ``Options/adminToken``), and `random` draws latencies and the answers
    /// of stubs in random order (``seededRandom(_:)`` repeats a run); `clock` is what latency, faults and
    /// event delays wait on.
    ///
    /// ```swift
    /// let configuration = try ServerConfiguration(contentsOfFile: "Examples/people.json")
    /// let server = try await MockServer(configuration: configuration, store: SQLiteStore(path: "people.sqlite"))
    /// ```
    public convenience init<C: Clock>(
        configuration: ServerConfiguration,
        store: any MockStore,
        controller: any MockController = CRUDController(),
        serializer: any MockSerializer = DefaultSerializer(),
        routes: [any MockRoutes] = [],
        middleware: [any MockMiddleware] = [],
        adminToken: String? = nil,
        tokenSigner: (any AccessTokenSigner)? = nil,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        clock: C = ContinuousClock(),
        logger: Logger = Logger(label: "Hammock", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws where C.Duration == Duration {
        let options = Options(
            latency: configuration.latency,
            maximumBodySize: configuration.maximumBodySize ?? (1 << 20),
            allowsCrossOrigin: configuration.allowsCrossOrigin ?? true, basePath: configuration.basePath,
            journal: configuration.journalSize.map { RequestJournal.Limits(entries: $0) } ?? RequestJournal.Limits(),
            adminPath: configuration.effectiveAdminPath, adminToken: adminToken,
            allowsOverrides: !(configuration.strict ?? false), adminHosts: configuration.allowedHosts,
            redactedHeaders: configuration.redactedHeaders, tokenSigner: tokenSigner)
        try await self.init(
            resources: configuration.resources, store: store, controller: controller, serializer: serializer,
            options: options, routes: routes, middleware: middleware, clock: clock, random: random, logger: logger)
        let ids = addStubs(configuration.routes)
        setFaults(configuration.faults)
        setRequestChecks(configuration.requestChecks)
        runtimeCell.change { $0.webhooks = configuration.webhooks }
        try await setAuth(configuration.auth)
        loaded.withLock {
            $0 = LoadedConfiguration(
                configuration: configuration, routeIDs: ids, latency: configuration.latency, faults: configuration.faults)
        }
    }

    /// A server for `configuration` in memory, its `data` loaded and its `generate` section generated with
    /// `seed`: the same records on every call (what `hammock openapi` describes, and what a test starts).
    public static func inMemory(
        _ configuration: ServerConfiguration, seed: UInt64 = 1, tokenSigner: (any AccessTokenSigner)? = nil
    ) async throws -> MockServer {
        let server = try await MockServer(
            configuration: configuration, store: MemoryStore(), tokenSigner: tokenSigner, random: seededRandom(seed))
        _ = try await server.loadData(from: configuration)
        if let generation = configuration.generate { try await server.generateData(generation, seed: seed) }
        return server
    }

    /// Loads the configuration's `data` section if every resource is still empty, so a restart with a
    /// persistent store does not load it twice, nor do two servers starting together on a shared one.
    /// Returns a report per resource (empty if nothing loaded).
    public func loadData(
        from configuration: ServerConfiguration,
        progress: (@Sendable (_ resource: String, _ done: Int, _ total: Int) -> Void)? = nil
    ) async throws -> [(resource: String, report: LoadReport)] {
        guard !configuration.data.isEmpty else { return [] }
        // Servers starting together on one shared store: one checks and loads, the others then find data.
        return try await store.exclusively {
            for schema in self.schemas where try await self.store.count(of: schema) > 0 { return [] }
            var reports: [(resource: String, report: LoadReport)] = []
            for (resource, records) in configuration.data {
                let report = try await self.addData(records, for: resource) { done, total in progress?(resource, done, total) }
                reports.append((resource, report))
            }
            return reports
        }
    }

    /// Uniform numbers in `0..<1` from a seed: the same seed draws the same numbers, so stubs answering
    /// at random and simulated latencies repeat a run (`hammock serve --seed`).
    public static func seededRandom(_ seed: UInt64) -> @Sendable () -> Double {
        let generator = Mutex(SeededRandom(seed: seed))
        return { generator.withLock { Double($0.next() >> 11) * 0x1.0p-53 } }
    }
}
