import Synchronization

/// What ``MockServer/reload(_:)``, the admin API and the setters change (the latency and the chains
/// assembled for it, the faults in force, the routes of your own) as one immutable value.
///
/// A request reads the value once, when ``MockServer/respond(to:)`` takes it in, and carries it
/// (``MockRequest/runtime``): the chain, the router's faults and the stubs it meets all come from that
/// one value. A change builds a new value and swaps it in whole (``RuntimeCell/change(_:)``), so a
/// request sees all of a change or none of it: a reload between two configurations never answers with
/// one's routes and the other's faults, nor with neither's routes (issue 40, part 3). The resources,
/// whose changes are the store's, are not part of it.
final class ServerRuntime: Sendable {
    /// The values a change edits.
    struct Settings: Sendable {
        var latency: Latency?
        /// The faults in force, in the order tried, each named.
        var faults: [Fault] = []
        /// The routes of your own in the order tried, each with the number it was added under.
        var routes: [(id: Int, entry: CustomRoutes.Entry)] = []
        /// The API document's checks of requests, if the server has one.
        var requestChecks: RequestChecks?
        /// The webhooks that follow answers.
        var webhooks: [Webhook] = []
        /// The login (the `auth` section): its endpoints answer and its rules protect routes while set.
        var authority: MockAuthority?
    }

    let settings: Settings
    /// The chains for ``Settings/latency``.
    let pipelines: Pipelines

    init(settings: Settings, pipelines: Pipelines) {
        self.settings = settings
        self.pipelines = pipelines
    }
}

/// Holds the runtime in force: one lock, taken once per request to read a reference, and by each change
/// to swap one in.
final class RuntimeCell: Sendable {
    private let current: Mutex<ServerRuntime>
    /// Builds the chains for a latency; set once the router they end in exists.
    private let assemble = Mutex<(@Sendable (Latency?) -> Pipelines)?>(nil)

    /// A cell whose chains answer 503 until ``start(_:assemble:)``: the server is assembled around it.
    init() {
        let starting: MiddlewareChain.Responder = { _ in
            throw HTTPProblem(.serviceUnavailable, detail: "The server is being made")
        }
        let unassembled = Pipelines([], around: starting, admin: starting)
        current = Mutex(ServerRuntime(settings: ServerRuntime.Settings(), pipelines: unassembled))
    }

    /// Puts the first runtime in force.
    func start(_ settings: ServerRuntime.Settings, assemble: @escaping @Sendable (Latency?) -> Pipelines) {
        self.assemble.withLock { $0 = assemble }
        current.withLock { $0 = ServerRuntime(settings: settings, pipelines: assemble(settings.latency)) }
    }

    /// The runtime in force.
    var runtime: ServerRuntime { current.withLock { $0 } }

    /// Changes the settings in one step and puts the result in force; changes made at once are applied
    /// one after the other. The chains are assembled again only when the latency changed.
    @discardableResult
    func change<T: Sendable, E: Error>(_ body: (inout ServerRuntime.Settings) throws(E) -> T) throws(E) -> T {
        let assemble = self.assemble.withLock { $0 }
        return try current.withLock { (current) throws(E) -> T in
            var settings = current.settings
            let result = try body(&settings)
            var pipelines = current.pipelines
            if settings.latency != current.settings.latency, let assemble { pipelines = assemble(settings.latency) }
            current = ServerRuntime(settings: settings, pipelines: pipelines)
            return result
        }
    }
}
