import Foundation
public import HammockStore
public import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

/// A store in a PostgreSQL database, which several servers can share: every read and write goes to
/// the database (nothing is mirrored in a process, so nothing goes stale), each write with its checks
/// is one transaction, and list queries run as SQL.
///
/// ```swift
/// let store = try await PostgresStore.open(
///     PostgresStore.Configuration(host: "127.0.0.1", port: 5432, username: "hammock", password: nil, database: "mocks"))
/// let server = try await MockServer(resources: [people], store: store)
/// ```
///
/// Each namespace is a PostgreSQL schema of its own (created on first use), so developers and CI jobs
/// can share one database without seeing each other's records. A resource is a table `r:NAME` holding
/// its key (`k`) and one column per field (`f:FIELD`; strings as their UTF-8 bytes, so that order and
/// equality are byte for byte, with a lowercased copy `l:FIELD` for `_like` and `q`).
public final class PostgresStore: MockStore {
    /// Where the database is and how to sign in.
    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        public var username: String
        /// The password, or `nil` for none (trust or peer authentication). Never logged or printed.
        public var password: String?
        public var database: String
        /// The PostgreSQL schema that holds this store's tables.
        public var namespace: String
        /// How long a connection attempt may take before the store answers "unavailable".
        public var connectTimeout: Duration
        /// How long any one store call may wait on the database before it fails as timed out.
        public var operationTimeout: Duration

        public init(
            host: String, port: Int = 5432, username: String, password: String?, database: String,
            namespace: String = "public", connectTimeout: Duration = .seconds(3), operationTimeout: Duration = .seconds(10)
        ) {
            self.host = host
            self.port = port
            self.username = username
            self.password = password
            self.database = database
            self.namespace = namespace
            self.connectTimeout = connectTimeout
            self.operationTimeout = operationTimeout
        }

        /// `host:port/database`, for messages: never the password.
        public var displayName: String { "\(username)@\(host):\(port)/\(database) (namespace \(namespace))" }
    }

    public let configuration: Configuration
    let client: PostgresClient
    let logger: Logger
    private let running: Task<Void, Never>
    /// The schemas of the added resources, by name: which children a delete orphans.
    let schemas = Mutex<[String: ResourceSchema]>([:])
    /// Whether the database is known to be unreachable, and the probe that finds it back.
    let outage = Outage()

    private init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        var clientConfiguration = PostgresClient.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.username,
            password: configuration.password, database: configuration.database, tls: .disable)
        clientConfiguration.options.connectTimeout = .milliseconds(Self.milliseconds(configuration.connectTimeout))
        // The server ends a statement that runs too long: a bound on every call that costs nothing here.
        clientConfiguration.options.additionalStartupParameters = [
            // At least 1 ms: 0 would mean no limit at all.
            ("statement_timeout", "\(max(1, Self.milliseconds(configuration.operationTimeout)))"),
            // Which mock a connection belongs to, in `pg_stat_activity` (the database keeps printable
            // ASCII and 63 bytes of it).
            ("application_name", Self.applicationName(namespace: configuration.namespace)),
        ]
        // Why 16: a server answers on a few event loops; more connections than that only queue in the database.
        // One pool on the shared event loops: a pool per loop (so a statement would not leave the loop
        // that read its request) and a pool on one loop were measured too, and neither was better at
        // both GET and POST (docs/benchmarks.md).
        clientConfiguration.options.maximumConnections = 16
        let client = PostgresClient(configuration: clientConfiguration, backgroundLogger: logger)
        self.client = client
        // The client's connections live as long as this task; `close()` ends it, and so does dropping the
        // store (the task holds the client, never the store).
        running = Task { await client.run() }
    }

    deinit { running.cancel() }

    /// `hammock:NAMESPACE` as PostgreSQL shows it: printable ASCII (anything else is `?`), 63 bytes at most.
    static func applicationName(namespace: String) -> String {
        let printable = ("hammock:" + namespace).unicodeScalars.map { (32...126).contains($0.value) ? Character($0) : "?" }
        return String(printable.prefix(63))
    }

    /// Connects, creates the namespace and the store's own tables if they are missing, and returns the store.
    /// - Throws: `StoreError.unavailable(_:)` naming the server (never the password) if it cannot be
    ///   reached or refuses the sign-in.
    public static func open(
        _ configuration: Configuration,
        logger: Logger = Logger(label: "Hammock.PostgresStore", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws -> PostgresStore {
        try Names.checkNamespace(configuration.namespace)
        try await probe(configuration, logger: logger)
        let store = PostgresStore(configuration: configuration, logger: logger)
        do {
            try await store.prepare()
        } catch {
            await store.shutDown()
            throw error
        }
        return store
    }

    /// A duration in whole milliseconds, from 0 up to a day: a limit set in code to a negative or an
    /// enormous value is held there rather than overflowing (or asking PostgreSQL for a negative timeout).
    static func milliseconds(_ duration: Duration) -> Int64 {
        let seconds = min(max(duration.components.seconds, 0), 86_400)
        return seconds * 1000 + (duration.components.seconds < 0 ? 0 : duration.components.attoseconds / 1_000_000_000_000_000)
    }

    /// A duration in nanoseconds, held within 0 and a day like ``milliseconds(_:)``.
    static func nanoseconds(_ duration: Duration) -> Int64 { milliseconds(duration) * 1_000_000 }

    /// One connection, made and closed, before the pool: the pool retries a server it cannot reach
    /// without end, while a start should fail at once saying why.
    static func probe(_ configuration: Configuration, logger: Logger) async throws {
        var connection = PostgresConnection.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.username,
            password: configuration.password, database: configuration.database, tls: .disable)
        connection.options.connectTimeout = .nanoseconds(nanoseconds(configuration.connectTimeout))
        do {
            let opened = try await PostgresConnection.connect(configuration: connection, id: 0, logger: logger)
            try? await opened.close()
        } catch let error as PSQLError {
            throw StoreError.unavailable(
                "cannot reach PostgreSQL at \(configuration.displayName): \(reason(for: error, configuration))")
        } catch {
            throw StoreError.unavailable("cannot reach PostgreSQL at \(configuration.displayName): \(error)")
        }
    }

    /// A plain sentence for a failed sign-in or connection (never the password).
    static func reason(for error: PSQLError, _ configuration: Configuration) -> String {
        switch error.code {
        case .authMechanismRequiresPassword:
            return "the server wants a password: put it in the URL or in PGPASSWORD"
        case .server:
            return error.serverInfo?[.message] ?? "the server refused the connection"
        case .connectionError:
            return error.underlying.map { String(describing: $0) } ?? "no connection"
        default:
            return String(describing: error.code)
        }
    }

    /// Creates the namespace and the tables of field types and change dates, one server at a time.
    private func prepare() async throws {
        let namespace = Names.quote(configuration.namespace)
        try await transaction { connection in
            try await connection.query(Self.lock(self.configuration.namespace), logger: self.logger)
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \(namespace)"), logger: self.logger)
            for statement in [
                "CREATE TABLE IF NOT EXISTS \(self.meta("hammock_fields")) (resource text NOT NULL, field text NOT NULL, "
                    + "type text NOT NULL, PRIMARY KEY (resource, field))",
                "CREATE TABLE IF NOT EXISTS \(self.meta("hammock_changes")) (resource text PRIMARY KEY, "
                    + "second bigint NOT NULL, served boolean NOT NULL)",
                // Each resource's references to parents, as the server that made its table declared them:
                // a server that declares them otherwise is refused, and every server nulls the references
                // to a record it deletes, even of resources it does not serve itself.
                "CREATE TABLE IF NOT EXISTS \(self.meta("hammock_relations")) (resource text PRIMARY KEY, "
                    + "relations text NOT NULL)",
            ] {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: self.logger)
            }
            try await self.prepareCounts(on: connection)
        }
    }

    /// A transaction-scoped advisory lock on the namespace: DDL and first loads, one server at a time.
    static func lock(_ namespace: String) -> PostgresQuery {
        var binds = PostgresBindings()
        binds.append("hammock:" + namespace)
        return PostgresQuery(unsafeSQL: "SELECT pg_advisory_xact_lock(hashtext($1))", binds: binds)
    }

    /// One of the store's own tables, in the namespace.
    func meta(_ name: String) -> String { Names.quote(configuration.namespace) + "." + Names.quote(name) }

    /// A resource's key sequence, in the namespace, as text for a `regclass` parameter.
    func sequence(_ schema: ResourceSchema) -> String { Names.quote(configuration.namespace) + "." + Names.sequence(schema.name) }

    /// A resource's table, in the namespace.
    func table(_ schema: ResourceSchema) -> String { table(named: schema.name) }

    /// The table of the resource `name`, in the namespace.
    func table(named name: String) -> String { Names.quote(configuration.namespace) + "." + Names.table(name) }

    /// Runs `body` on `connection` with no limit on a statement's time, then puts the session's limit
    /// back, whether `body` throws or not (the connection returns to the pool after).
    func withoutStatementLimit<T>(
        on connection: PostgresConnection, _ body: () async throws -> T
    ) async throws -> T {
        try await connection.query("SET statement_timeout = 0", logger: logger)
        do {
            let value = try await body()
            try await connection.query("RESET statement_timeout", logger: logger)
            return value
        } catch {
            _ = try? await connection.query("RESET statement_timeout", logger: logger)
            throw error
        }
    }

    /// Runs `body` holding a session advisory lock on the namespace: of servers starting together, one
    /// checks for and loads the seed data while the others wait, then find it loaded.
    public func exclusively<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        var binds = PostgresBindings()
        binds.append("hammock-exclusive:" + configuration.namespace)
        let lock = PostgresQuery(unsafeSQL: "SELECT pg_advisory_lock(hashtext($1))", binds: binds)
        let unlock = PostgresQuery(unsafeSQL: "SELECT pg_advisory_unlock(hashtext($1))", binds: binds)
        do {
            return try await client.withConnection { connection in
                // Another server's load may take longer than any statement should: wait for it without limit.
                try await self.withoutStatementLimit(on: connection) {
                    try await connection.query(lock, logger: self.logger)
                    do {
                        let value = try await body()
                        try await connection.query(unlock, logger: self.logger)
                        return value
                    } catch {
                        // A session lock outlives a failed statement: give it back, or the connection keeps it.
                        _ = try? await connection.query(unlock, logger: self.logger)
                        throw error
                    }
                }
            }
        } catch let error as PSQLError {
            throw Self.classify(error)
        }
    }

    // MARK: Lifecycle

    public func health() async -> StoreHealth {
        do {
            _ = try await run { try await self.client.query("SELECT 1", logger: self.logger).collect() }
            return .available
        } catch {
            return .unavailable(String(describing: error))
        }
    }

    /// Closes the connections; later calls fail.
    public func close() async throws { await shutDown() }

    private func shutDown() async {
        await outage.stop()
        running.cancel()
        await running.value
    }

    // MARK: Running statements

    /// Runs `body` within the time limit, and classifies what fails.
    ///
    /// Every call races the limit: a call cannot know in advance that the database just went away, and
    /// waiting for a connection from a pool that cannot make one lasts until the pool gives up (60 s).
    /// Running calls bare while the last one succeeded hung the first request after an outage for that
    /// long. The server also ends statements past the limit (`statement_timeout`), so that a call given up
    /// on here does not keep running there.
    ///
    /// While the database is known to be unreachable (see ``Outage``), a call fails at once.
    func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        if outage.isDown { throw StoreError.unavailable("PostgreSQL at \(configuration.displayName) is unreachable") }
        do {
            return try await withTimeLimit(body)
        } catch {
            let classified = Self.classify(any: error)
            switch classified {
            case .unavailable, .timedOut: outage.suspect { await self.isReachable() }
            default: break
            }
            throw classified ?? error
        }
    }

    /// Whether a new connection can be made and signed in now (the pool's own retries are not asked),
    /// within twice the connect timeout: a paused server (a stopped VM, a network black hole) accepts the
    /// TCP connection and then never answers the sign-in, and a probe waiting on it would never say no.
    func isReachable() async -> Bool {
        let race = Race<Bool>()
        let configuration = self.configuration
        let logger = self.logger
        let attempt = Task {
            do {
                try await Self.probe(configuration, logger: logger)
                race.finish(.success(true))
            } catch {
                race.finish(.success(false))
            }
        }
        let timer = Task {
            try? await Task.sleep(for: .nanoseconds(Self.nanoseconds(configuration.connectTimeout) * 2))
            race.finish(.success(false))
        }
        defer {
            attempt.cancel()
            timer.cancel()
        }
        return (try? await race.outcome()) ?? false
    }

    /// `body` in a task of its own, raced against two timers: at the time limit the call has timed out;
    /// at the connect timeout, a probe asks whether the database can be reached at all, and if not the
    /// call fails at once as unavailable (a lease from a pool that cannot connect would otherwise wait out
    /// the whole limit). On an event loop the timers are the loop's own, so nothing leaves its thread:
    /// racing a second child that slept on the global timer instead cost four context switches and 38 µs
    /// per `GET /people/:id` (two calls), measured with `perf stat`. Off any loop they are sleeping tasks.
    ///
    /// The call is answered at the limit whatever the driver does: the task that lost is cancelled and
    /// abandoned, never waited for. A cancelled query waits for the server to acknowledge it, so with the
    /// server paused (`SIGSTOP`, a frozen VM) waiting for it held every request until the outage ended
    /// (25 s in the hostile review, against a 10 s limit). The abandoned task keeps its pooled connection
    /// until the server answers or the connection dies; the outage breaker stops new calls from piling
    /// onto the pool meanwhile.
    private func withTimeLimit<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let limit = configuration.operationTimeout
        let timedOut = StoreError.timedOut("no answer from PostgreSQL within \(limit)")
        let unreachable = StoreError.unavailable("PostgreSQL at \(configuration.displayName) is unreachable")
        let race = Race<T>()
        let work = Task {
            do {
                race.finish(.success(try await body()))
            } catch {
                race.finish(.failure(error))
            }
        }
        let check: @Sendable () -> Void = {
            Task {
                guard !race.isFinished, await !self.isReachable() else { return }
                self.outage.suspect { await self.isReachable() }
                race.finish(.failure(unreachable))
            }
        }
        let loop = MultiThreadedEventLoopGroup.currentEventLoop
        let cancelTimer = Self.schedule(after: limit, on: loop) { race.finish(.failure(timedOut)) }
        let cancelProbe = Self.schedule(after: configuration.connectTimeout, on: loop, check)
        defer {
            cancelTimer()
            cancelProbe()
            work.cancel()
        }
        return try await withTaskCancellationHandler {
            try await race.outcome()
        } onCancel: {
            race.finish(.failure(CancellationError()))
        }
    }

    /// Runs `action` after `delay` on `loop`'s own timer, or off any loop in a sleeping task; returns what
    /// cancels it.
    static func schedule(
        after delay: Duration, on loop: (any EventLoop)?, _ action: @escaping @Sendable () -> Void
    ) -> @Sendable () -> Void {
        if let loop {
            let scheduled = loop.scheduleTask(in: .nanoseconds(nanoseconds(delay))) { action() }
            return { scheduled.cancel() }
        }
        let task = Task {
            try await Task.sleep(for: .milliseconds(milliseconds(delay)))
            action()
        }
        return { task.cancel() }
    }

    /// Any error as the store's, or `nil` for a cancellation (passed on as it is).
    static func classify(any error: any Error) -> StoreError? {
        switch error {
        case let error as StoreError: return error
        case let error as PSQLError: return classify(error)
        case is CancellationError: return nil
        default:
            // The pool's own errors (its circuit breaker, a closed pool) mean no connection can be had.
            if String(reflecting: type(of: error)).contains("ConnectionPoolError") {
                return .unavailable(String(describing: error))
            }
            return .storageFailure(String(describing: error))
        }
    }

    /// Runs `body` in one transaction (committed if it returns, rolled back if it throws), with the time limit.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        try await run {
            try await self.client.withConnection { connection in
                try await connection.query("BEGIN", logger: self.logger)
                do {
                    let value = try await body(connection)
                    try await connection.query("COMMIT", logger: self.logger)
                    return value
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: self.logger)
                    throw error
                }
            }
        }
    }

    /// PostgreSQL's errors as the store's classes (SQLSTATE, PostgreSQL manual appendix A): a connection that
    /// failed or closed, an admin shutdown or a server out of resources is unavailable (retry later); a
    /// cancelled statement timed out; a serialization failure or deadlock is a conflict; an integrity
    /// violation Hammock did not check is a constraint; the rest is a failure. The text goes to the log only.
    static func classify(_ error: PSQLError) -> StoreError {
        let text = String(reflecting: error)
        switch error.code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .poolClosed, .uncleanShutdown:
            return .unavailable(text)
        case .queryCancelled:
            return .timedOut(text)
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            if state.hasPrefix("08") || state.hasPrefix("53") || state.hasPrefix("57P") || state == "28P01" || state == "28000"
                || state == "3D000"
            {
                return .unavailable(text)
            }
            if state == "57014" { return .timedOut(text) }
            if state == "40001" || state == "40P01" { return .conflict(text) }
            if state.hasPrefix("23") { return .constraint(text) }
            return .storageFailure(text)
        default:
            return .storageFailure(text)
        }
    }
}

/// Identifiers: quoted, and refused where PostgreSQL would cut them (63 bytes) and so confuse two names.
enum Names {
    static let limit = 63

    static func quote(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// The name of `resource`'s table, unquoted (as the catalog and `hammock_counts` hold it).
    static func tableName(_ resource: String) -> String { "r:" + resource }
    static func table(_ resource: String) -> String { quote(tableName(resource)) }
    static func sequence(_ resource: String) -> String { quote("s:" + resource) }
    static func field(_ name: String) -> String { quote("f:" + name) }
    static func lowered(_ name: String) -> String { quote("l:" + name) }

    /// Refuses a namespace PostgreSQL cannot take as a schema's name, in a sentence: longer than 63 bytes
    /// (PostgreSQL would cut it, and two namespaces could become one), with a NUL, or starting with
    /// `pg_`, which PostgreSQL keeps for its own schemas.
    static func checkNamespace(_ name: String) throws {
        guard !name.isEmpty, name.utf8.count <= limit, !name.utf8.contains(0) else {
            throw StoreError.storageFailure(
                "the namespace '\(name.prefix(80))' cannot be a PostgreSQL schema name: 1 to \(limit) bytes, no NUL")
        }
        guard !name.hasPrefix("pg_") else {
            throw StoreError.storageFailure(
                "the namespace '\(name.prefix(80))' cannot be a PostgreSQL schema name: names starting with pg_ are "
                    + "PostgreSQL's own")
        }
    }

    static func check(_ name: String, what: String) throws {
        guard name.utf8.count + 2 <= limit, !name.isEmpty, !name.utf8.contains(0) else {
            throw StoreError.constraint(
                "the \(what) '\(name.prefix(80))' cannot be a PostgreSQL name: at most \(limit - 2) bytes, no NUL")
        }
    }
}

/// The first of two outcomes (the call's, the timer's), handed to the one waiting for it, whichever
/// comes first: the outcome before the wait, or the wait before the outcome.
final class Race<T: Sendable>: Sendable {
    private enum State {
        case pending
        case waiting(CheckedContinuation<T, any Error>)
        case finished(Result<T, any Error>)
        case delivered
    }

    private let state = Mutex(State.pending)

    /// Whether an outcome is in.
    var isFinished: Bool {
        state.withLock { state in
            switch state {
            case .pending, .waiting: false
            case .finished, .delivered: true
            }
        }
    }

    /// Records an outcome; the later of two is ignored.
    func finish(_ outcome: Result<T, any Error>) {
        let waiter: CheckedContinuation<T, any Error>? = state.withLock { state in
            switch state {
            case .pending:
                state = .finished(outcome)
                return nil
            case .waiting(let continuation):
                state = .delivered
                return continuation
            case .finished, .delivered:
                return nil
            }
        }
        waiter?.resume(with: outcome)
    }

    /// Waits for the first outcome.
    func outcome() async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<T, any Error>? = state.withLock { state in
                switch state {
                case .pending:
                    state = .waiting(continuation)
                    return nil
                case .finished(let outcome):
                    state = .delivered
                    return outcome
                case .waiting, .delivered:
                    return .failure(StoreError.storageFailure("a call waited twice"))
                }
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}

/// A breaker of the store's own. When a call finds the database unreachable or slow, a probe tries a new
/// connection; if it fails, calls fail at once (503) instead of each waiting out the time limit for a
/// connection the pool cannot make, and the probe tries again every second until the database answers.
/// Measured in the outage test: the requests after the first answer 503 at once, and the first one after
/// the database is back succeeds within a second of it.
final class Outage: Sendable {
    private struct State {
        var isDown = false
        var prober: Task<Void, Never>?
        /// The store closed: no more probes (a closed pool's errors look like an outage).
        var isStopped = false
    }

    private let state = Mutex(State())

    var isDown: Bool { state.withLock { $0.isDown } }

    /// Starts probing with `reachable`, unless a probe runs already.
    func suspect(_ reachable: @escaping @Sendable () async -> Bool) {
        state.withLock { state in
            guard state.prober == nil, !state.isStopped else { return }
            state.prober = Task {
                while !Task.isCancelled {
                    let up = await reachable()
                    let done = self.state.withLock { state in
                        state.isDown = !up
                        if up { state.prober = nil }
                        return up
                    }
                    if done { return }
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
    }

    /// Stops probing (the store closes).
    func stop() async {
        let prober = state.withLock { state in
            defer {
                state.prober = nil
                state.isStopped = true
            }
            return state.prober
        }
        prober?.cancel()
        await prober?.value
    }
}
