public import Foundation
import HTTPTypes
import HammockJSON
public import Logging
import Synchronization

/// An embeddable REST server for resources you describe in a few lines.
///
/// ```swift
/// let people = Resource("people", fields: ["name": .string, "numberOfKids": .integer])
/// let server = try await MockServer(resources: [people], store: SQLiteStore(path: "db.sqlite"))
/// let port = try await server.start(port: 0)       // a real socket on 127.0.0.1
/// // ... or without a socket, in process:
/// let response = await server.respond(to: MockRequest(.post, "/people", json: ["name": "john"]))
/// await server.stop()
/// ```
/// Resources, and serializers for them, can be added while the server runs.
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
        /// browser front ends on another origin can call the mock. On by default.
        public var allowsCrossOrigin: Bool

        /// Creates options.
        public init(latency: Latency? = nil, maximumBodySize: Int = 1 << 20, allowsCrossOrigin: Bool = true) {
            self.latency = latency
            self.maximumBodySize = maximumBodySize
            self.allowsCrossOrigin = allowsCrossOrigin
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

    let registry = Mutex(ResourceRegistry())
    let timer: LatencyTimer
    let random: @Sendable () -> Double
    let lifecycle = ServerLifecycle()
    let stopSignal = StopSignal()
    let now: @Sendable () -> Date
    /// When each resource last changed, for `Last-Modified`; resources not listed last changed at `createdAt`.
    let modifications: Mutex<[String: Date]>
    let createdAt: Date

    /// Creates a server and adds `resources` (in any order: parents are added before children).
    /// - Parameters:
    ///   - clock: The clock latency waits on; inject a test clock to control time.
    ///   - random: Uniform numbers in `0..<1` that pick each latency.
    ///   - now: The wall-clock time, for `Last-Modified`.
    /// - Throws: ``SchemaError`` for a resource that cannot be served, or the store's error.
    public init<C: Clock>(
        resources: [Resource] = [],
        store: any MockStore = MemoryStore(),
        controller: any MockController = CRUDController(),
        serializer: any MockSerializer = DefaultSerializer(),
        options: Options = Options(),
        clock: C = ContinuousClock(),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger = Logger(label: "Hammock", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws where C.Duration == Duration {
        self.store = store
        self.controller = controller
        self.defaultSerializer = serializer
        self.options = options
        self.timer = LatencyTimer(clock: clock)
        self.random = random
        self.now = now
        self.createdAt = now()
        self.modifications = Mutex([:])
        self.logger = logger
        for resource in try Self.parentsFirst(resources) { try await addResource(resource) }
    }

    /// Adds a resource, creating its storage; its routes answer at once.
    /// - Throws: ``SchemaError`` if the name is taken, a parent is unknown, or the definition is invalid.
    public func addResource(_ resource: Resource) async throws {
        let schema = try registry.withLock { registry throws(SchemaError) in try registry.resolve(resource) }
        try await store.addResource(schema)
        try registry.withLock { registry throws(SchemaError) in
            // Re-check: another task may have added the same name while the store worked.
            _ = try registry.resolve(resource)
            registry.insert(schema)
        }
    }

    /// The schema of a served resource.
    public func schema(named name: String) -> ResourceSchema? { registry.withLock { $0.schemas[name] } }

    /// Every served resource, in the order added.
    public var schemas: [ResourceSchema] { registry.withLock { $0.orderedSchemas } }

    /// Uses `serializer` for `resource` from the next request on.
    public func setSerializer(_ serializer: any MockSerializer, for resource: String) {
        registry.withLock { $0.serializers[resource] = serializer }
    }

    /// Goes back to the default serializer for `resource`.
    public func removeSerializer(for resource: String) {
        _ = registry.withLock { $0.serializers.removeValue(forKey: resource) }
    }

    /// The route table: methods, path pattern and resource, in the order resources were added.
    public var routeTable: [(methods: String, pattern: String, resource: String)] { registry.withLock { $0.routeTable } }

    /// Orders resources so every parent comes before its children.
    static func parentsFirst(_ resources: [Resource]) throws(SchemaError) -> [Resource] {
        var ordered: [Resource] = []
        var placed = Set<String>()
        var pending = resources
        while !pending.isEmpty {
            let names = Set(pending.map(\.name))
            let ready = pending.filter { resource in
                resource.parents.allSatisfy { placed.contains($0.resource) || !names.contains($0.resource) }
            }
            guard !ready.isEmpty else {
                throw SchemaError(resource: pending.first?.name ?? "?", message: "parents form a cycle")
            }
            ordered += ready
            placed.formUnion(ready.map(\.name))
            pending.removeAll { resource in ready.contains { $0.name == resource.name } }
        }
        return ordered
    }
}
