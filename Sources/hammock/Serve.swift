import ArgumentParser
import Foundation
import HammockConsole
import HammockHTTPServer
import HammockJWT
import HammockOpenAPI
import HammockPostgres
import HammockProxy
import HammockSQLite
import HammockServer
import Logging
import UnixSignals

/// `hammock serve CONFIG`: loads the configuration, opens the store, loads sample data, listens.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the resources described in a configuration file.",
        discussion: """
            The store defaults to an SQLite file next to the configuration (people.json → people.sqlite).
            The file's "data" section is loaded only when the store is empty; its "generate" section then
            fills the resources that are still empty with made-up records (--seed repeats a run).
            """
    )

    @Argument(
        help:
            "The configuration file (JSON, or YAML by its .yaml or .yml extension), an OpenAPI 3.0 or 3.1 document, or a HAR file (.har, served as recorded); with --proxy it may be left out (nothing mocked, a memory store)."
    )
    var config: String?

    @Option(help: "The address to bind (default: the file's host, else 127.0.0.1).")
    var host: String?

    // Unconditional, so that `--port -1` is read as a (bad) port rather than as an unknown flag.
    @Option(parsing: .unconditional, help: "The port to bind; 0 picks a free one (default: the file's port, else 8888).")
    var port: Int?

    @Option(
        help:
            "Where records live: memory, sqlite:PATH or postgres://USER@HOST:PORT/DATABASE (password in the URL or $PGPASSWORD).")
    var store: String?

    @Option(
        help:
            "A PostgreSQL store's namespace (a schema of its own, made on first use): one database, separate data per developer or CI job."
    )
    var namespace: String?

    @Option(help: "Simulated response time in seconds: MIN..MAX, or one value.")
    var latency: String?

    @Option(help: "A path prefix every route is served under, such as /api/v1 (default: the file's basePath, else none).")
    var basePath: String?

    @Option(help: "Seconds a connection may stay idle before it is closed (default: the file's idleTimeout, else 60).")
    var idleTimeout: Double?

    @Option(
        help: "Seconds a client may take to send one request before it gets 408 (default: the file's requestTimeout, else 30).")
    var requestTimeout: Double?

    @Option(
        help:
            "The seed of the file's generated records, of stubs answering at random, of latencies and of faults: the same seed repeats a run (default: a random one, printed)."
    )
    var seed: UInt64?

    @Option(help: "The admin API's path prefix (default: the file's adminPath, else /__hammock).")
    var adminPath: String?

    @Option(
        help: ArgumentHelp(
            "A token the admin API then requires as 'Authorization: Bearer TOKEN' (default: $HAMMOCK_ADMIN_TOKEN, else none).",
            valueName: "token"))
    var adminToken: String?

    @Option(
        parsing: .unconditional,
        help:
            "How many requests the journal keeps for GET <admin>/requests (default: the file's journalSize, else 1000; 0 turns it off)."
    )
    var journalSize: Int?

    @Flag(
        help:
            "Ignore what a request asks for itself: ?_delay=MS, Prefer: delay=MS, Prefer: status=CODE (default: the file's strict, else off)."
    )
    var strict = false

    @Option(
        help: ArgumentHelp(
            "A failure to inject, after the file's faults; repeatable: 'GET /people/:id 503 20%', 'POST /orders 503 retry-after=2', '* delay=300', '/search delay=50..400', 'GET /photos/* bandwidth=3g', 'POST /orders drop 10%', '* reset' (kinds: drop, empty, reset, timeout, truncate, malformed; docs/server.md).",
            valueName: "fault"))
    var fault: [String] = []

    @Option(
        help: ArgumentHelp(
            "A host name the admin API and console answer besides localhost and IP addresses (the machine's own name, when teammates reach the mock by it); repeatable.",
            valueName: "name"))
    var allowHost: [String] = []

    @Option(
        help: ArgumentHelp(
            "A header field whose values the admin API hides in the journal, besides Authorization, Cookie and the usual credentials; repeatable.",
            valueName: "name"))
    var redactHeader: [String] = []

    @Flag(
        help:
            "Answer requests an OpenAPI document describes without checking them against it (parameters 400, media type 415, body 422)."
    )
    var noValidation = false

    @Option(
        help: ArgumentHelp(
            "A login for the mock (what a configuration's auth section holds, in a JSON or YAML file of its own): its token endpoint, users, and the routes it protects; an OpenAPI document's bearer requirements are then checked against its tokens, and it replaces the demo login made from the document's OAuth flows (docs/auth.md).",
            valueName: "file"))
    var auth: String?

    @Option(
        help: ArgumentHelp(
            "A real backend (http:// or https://, with a path prefix if it has one) that what no resource, stub or route answers is forwarded to (docs/proxy.md).",
            valueName: "url"))
    var proxy: String?

    @Option(
        help: ArgumentHelp(
            "Certificates (PEM) an https backend's may chain to besides the system's roots: a staging backend's own CA, a corporate one.",
            valueName: "file"))
    var upstreamCa: String?

    @Option(
        help: ArgumentHelp(
            "A host the configuration file's proxy rules and webhooks may send to besides this machine's loopback (a file from someone else must not send the app's credentials elsewhere unasked); repeatable.",
            valueName: "host"))
    var allowUpstream: [String] = []

    @Option(
        help: ArgumentHelp(
            "With --proxy: write what passed through it, redacted, as a configuration to this file when the server stops (collections as resources, the rest as stubs), or as HAR 1.2 when its name ends in .har (docs/proxy.md).",
            valueName: "file"))
    var record: String?

    @Flag(
        help:
            "With --record: write every exchange as a stub (a replay answers exactly what was recorded, in order), no resources.")
    var recordStubs = false

    @Option(
        help: ArgumentHelp(
            "A JSON member, form field or query item whose values --record redacts, besides passwords, tokens and secrets by their usual names; repeatable. --redact-header names header fields.",
            valueName: "name"))
    var redactMember: [String] = []

    @Flag(
        help:
            "Serve HTTPS with a certificate from this machine's own certificate authority, made on first use in the user's configuration folder (hammock trust shows how to trust it; docs/https.md)."
    )
    var https = false

    @Option(
        help: ArgumentHelp(
            "With --https: a name the certificate covers besides localhost, 127.0.0.1, ::1 and the host bound; repeatable.",
            valueName: "name"))
    var httpsName: [String] = []

    @Option(
        help: ArgumentHelp(
            "Serve HTTPS with this certificate (PEM, the chain after it) instead of the local authority's; with --key.",
            valueName: "file"))
    var cert: String?

    @Option(help: ArgumentHelp("The private key of --cert (PEM, unencrypted).", valueName: "file"))
    var key: String?

    @Flag(
        inversion: .prefixedNo,
        help: "Over HTTPS, speak HTTP/2 to clients that offer it (ALPN) besides HTTP/1.1; --no-http2 for HTTP/1.1 only.")
    var http2 = true

    @Flag(help: "Watch the configuration file and put changes in force without a restart.")
    var watch = false

    @Flag(help: "Do not log each request.")
    var quiet = false

    /// The process whose end stops this server: `HAMMOCK_PARENT_PID`, which HammockTestSupport's
    /// `ChildProcess` sets to the test process, when it names this process's parent. A test run that
    /// crashes then leaves no server behind holding a port and memory. The variable is ignored when it
    /// names another process: a shell the test started passes it on to the servers it starts.
    static func parentToOutlive(_ environment: [String: String]) -> Int32? {
        guard let value = environment["HAMMOCK_PARENT_PID"], let parent = Int32(value), parent > 1,
            getppid() == parent
        else { return nil }
        return parent
    }

    /// Returns true once this process's parent is no longer `parent` (it ended, and another process
    /// inherited this one), false when cancelled first. Checked every half second: a check costs a
    /// system call, and a server left half a second longer harms nothing.
    static func waitForExit(ofParent parent: Int32, clock: some Clock<Duration>) async -> Bool {
        while !Task.isCancelled {
            if getppid() != parent { return true }
            try? await clock.sleep(for: .milliseconds(500))
        }
        return false
    }

    /// Exit status 2: the configuration or the command line is wrong. Exit status 1: they are right,
    /// but the server cannot run now (the port or the store file is taken).
    func run() async throws {
        // Read first, while the process that started this one is surely still there.
        let parent = Self.parentToOutlive(ProcessInfo.processInfo.environment)
        var configuration: ServerConfiguration
        let openAPI: OpenAPIImport?
        var archive: HTTPArchive.Read?
        let config = self.config ?? "(no configuration)"
        do {
            if let file = self.config, Self.isArchive(file) {
                guard !watch else {
                    throw ConfigurationError(
                        file: "--watch", keyPath: "", message: "a HAR file is served as read; --watch takes a configuration file")
                }
                let read = try Self.readArchive(file)
                configuration = read.configuration
                archive = read.archive
                openAPI = nil
            } else if let file = self.config {
                let loaded = try ConfigurationFile.load(file)
                configuration = loaded.configuration
                openAPI = loaded.openAPI
            } else {
                // Only a proxy may run without a file: it has something to answer.
                guard proxy != nil else {
                    throw ConfigurationError(
                        file: "hammock serve", keyPath: "",
                        message: "give a configuration file, or --proxy URL to forward everything")
                }
                guard !watch else {
                    throw ConfigurationError(file: "--watch", keyPath: "", message: "there is no configuration file to watch")
                }
                configuration = ServerConfiguration()
                openAPI = nil
            }
            try applyFlags(to: &configuration, fromDocument: openAPI != nil)
            if proxy == nil, configuration.proxies.isEmpty,
                let flag = [record.map { _ in "--record" }, recordStubs ? "--record-stubs" : nil].compactMap({ $0 }).first
            {
                throw ConfigurationError(
                    file: flag, keyPath: "",
                    message: "records what --proxy (or the file's proxy rules) passes on; give --proxy URL")
            }
            if record == nil, recordStubs {
                throw ConfigurationError(
                    file: "--record-stubs", keyPath: "", message: "says how --record writes; give --record FILE")
            }
        } catch let error as ConfigurationError {
            Self.printError(error.description)
            throw ExitCode(2)
        }
        // A wrong upstream is a wrong command line (exit 2), found before the store is opened.
        var proxyRoutes: [ProxyRoutes] = []
        let recording =
            record == nil ? nil : ProxyRecording(redaction: RecordingRedaction(headers: redactHeader, members: redactMember))
        var allowedUpstreams = Set(allowUpstream.map { $0.lowercased() })
        var upstreamRoots: String?
        if let upstreamCa {
            do {
                upstreamRoots = try String(contentsOfFile: upstreamCa, encoding: .utf8)
            } catch {
                Self.printError("hammock: --upstream-ca: \(error.localizedDescription)")
                throw ExitCode(2)
            }
        }
        if let proxy {
            do {
                guard let url = URL(string: proxy) else {
                    throw ProxyRoutes.ConfigurationError(description: "'\(proxy.prefix(200))' is not a URL")
                }
                // The file's rules come first (narrower); the command line's catches the rest.
                let routes = try ProxyRoutes(upstream: url, recording: recording, upstreamRootsPEM: upstreamRoots)
                if let host = url.host { allowedUpstreams.insert(host.lowercased()) }
                proxyRoutes.append(routes)
            } catch {
                Self.printError("hammock: --proxy: \(error)")
                throw ExitCode(2)
            }
        }
        for (index, rule) in configuration.proxies.enumerated().reversed() {
            // A file from someone else must not send the app's credentials off this machine unasked.
            let host = rule.upstream.host ?? ""
            guard ProxyRule.isLoopback(host) || allowedUpstreams.contains(host.lowercased()) else {
                Self.printError(
                    "\(config): proxy[\(index)].to: \(host.prefix(200)) is not this machine; a configuration file forwards requests "
                        + "(and the app's credentials with them) off the machine only to a host the command line allows: --allow-upstream \(host.prefix(200))"
                )
                throw ExitCode(2)
            }
            do {
                proxyRoutes.insert(try ProxyRoutes(rule, recording: recording, upstreamRootsPEM: upstreamRoots), at: 0)
            } catch {
                Self.printError("\(config): proxy[\(index)].to: \(error)")
                throw ExitCode(2)
            }
        }
        if let record {
            // Found now, not after an hour of recording: the folder must exist and be writable.
            let folder = URL(fileURLWithPath: record).deletingLastPathComponent().path
            guard FileManager.default.isWritableFile(atPath: folder) else {
                Self.printError("hammock: --record: cannot write into \(folder)")
                throw ExitCode(2)
            }
        }
        // TLS is settled before anything is opened: a certificate that cannot be read is a wrong command line.
        var tls: (identity: TLSIdentity, authority: String?)?
        do {
            tls = try makeTLS(host: configuration.host ?? "127.0.0.1")
        } catch {
            Self.printError("hammock: \(error)")
            throw ExitCode(2)
        }
        let token: String?
        do {
            token = try Self.adminToken(flag: adminToken, environment: ProcessInfo.processInfo.environment)
        } catch {
            Self.printError("hammock: \(error.description)")
            throw ExitCode(2)
        }
        let location = configuration.store ?? .sqlite(path: Self.defaultStorePath(for: config))
        let store: any MockStore
        // The stores this program links; another store module registers its scheme here.
        var drivers = StoreDrivers.withSQLite
        drivers.registerPostgres()
        guard drivers.schemes.contains(location.scheme) else {
            Self.printError("\(config): store: \(StoreError.unknownScheme(location.scheme, known: drivers.schemes))")
            throw ExitCode(2)
        }
        if location.scheme == "postgres" || location.scheme == "postgresql" {
            // A malformed URL is a wrong command line (exit 2), found before any connection is tried.
            do {
                _ = try PostgresStore.Configuration(location: location)
            } catch {
                Self.printError("\(config): store: \(error)")
                throw ExitCode(2)
            }
        }
        do {
            store = try await drivers.open(location)
        } catch StoreError.unavailable(let reason) {
            // A database that cannot be reached, or refuses the sign-in: the command line is wrong.
            Self.printError("hammock: \(reason)")
            throw ExitCode(2)
        } catch {
            Self.printError("hammock: \(error)")
            throw ExitCode(1)
        }
        // A line per request, written by a thread of its own: a request never waits for the terminal.
        let logOutput = BufferedLogOutput.standardOutput
        var logger = Logger(label: "hammock", factory: { BufferedLogHandler(label: $0, output: logOutput) })
        logger.logLevel = quiet ? .warning : .info
        let server: MockServer
        let reports: [(resource: String, report: LoadReport)]
        var generated: (seed: UInt64, reports: [(resource: String, report: LoadReport)])?
        let host = configuration.host ?? "127.0.0.1"
        let port: Int
        do {
            do {
                let random: @Sendable () -> Double =
                    if let seed { MockServer.seededRandom(seed) } else { { Double.random(in: 0..<1) } }
                server = try await MockServer(
                    configuration: configuration, store: store, adminToken: token, tokenSigner: JWTAccessTokens(), random: random,
                    logger: logger)
            } catch {
                Self.printError("\(config): \(error)")
                throw ExitCode(2)
            }
            server.serveConsole()
            // Asked last: only what the mock does not answer goes to the backend.
            for routes in proxyRoutes { server.addRoutes(routes, first: false) }
            // Webhooks go to this machine, and off it only to the hosts the command line allows (as the
            // file's proxy rules do), trusting --upstream-ca's roots beside the system's.
            do {
                server.setWebhookTransport(try WebhookClient(trustedRootsPEM: upstreamRoots))
            } catch {
                Self.printError("hammock: --upstream-ca: \(error)")
                throw ExitCode(2)
            }
            server.allowWebhookHosts(allowedUpstreams)
            server.serveOpenAPIDocument(
                title: openAPI.map { $0.title.isEmpty ? Self.documentTitle(for: config) : $0.title }
                    ?? Self.documentTitle(for: config))
            let total = configuration.data.reduce(0) { $0 + ($1.records.arrayValue?.count ?? 0) }
            reports = try await server.loadData(from: configuration) { resource, done, count in
                if total >= 1000 { Self.printError("loading \(resource): \(done)/\(count)") }
            }
            if let generation = configuration.generate {
                let seed = self.seed ?? UInt64.random(in: 0...999_999)
                generated = (seed, try await server.generateData(generation, seed: seed))
            }
            // The baseline `reset()` returns to, taken before listening rather than by the first request,
            // which waited for it: on PostgreSQL it reads every record back (30 s after generating a
            // million people, docs/benchmarks.md, "Fourth step"). Nothing can change the data in between.
            try await server.takeBaseline()
            do {
                if let tls {
                    port = try await server.start(
                        host: host, port: configuration.port ?? 8443, limits: configuration.connectionLimits,
                        tls: tls.identity)
                } else {
                    port = try await server.start(
                        host: host, port: configuration.port ?? 8888, limits: configuration.connectionLimits)
                }
            } catch {
                Self.printError("hammock: \(error)")
                throw ExitCode(1)
            }
        } catch {
            await store.abandon()
            throw error
        }
        // Signals are trapped before the banner announces the server, so a supervisor that stops it
        // as soon as it reads the banner gets a clean stop.
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        printBanner(
            server: server, url: Self.url(host: host, port: port, secure: tls != nil), store: location, reports: reports,
            generated: generated, openAPI: openAPI, proxyRules: configuration.proxies)
        if let tls {
            let protocols = tls.identity.offersHTTP2 ? "HTTP/2 and HTTP/1.1" : "HTTP/1.1"
            if let authority = tls.authority {
                Self.printLine(
                    "https: \(protocols), a certificate from the local authority \(authority) (hammock trust shows how to trust it)"
                )
            } else {
                Self.printLine("https: \(protocols), the certificate in \(cert ?? "")")
            }
        }
        if let archive {
            let summary = archive.summary
            let entries = summary.exchanges + summary.webSockets
            var line = "har: \(entries) entr\(entries == 1 ? "y" : "ies") of \(archive.origin ?? "no origin")"
            line += " as \(summary.stubs) stub\(summary.stubs == 1 ? "" : "s")"
            if summary.webSockets > 0 {
                line += " and \(summary.webSockets) WebSocket session\(summary.webSockets == 1 ? "" : "s")"
            }
            if summary.skipped > 0 {
                line += "; \(summary.skipped) left out (another origin, or no URL, status or body a stub can give)"
            }
            Self.printLine(line)
        }
        if !Self.isLoopback(host) {
            Self.printError(
                "warning: listening on \(host), reachable from other machines: anyone who can reach this one can "
                    + "read and change the data, and CORS lets any web page call it. Use --host 127.0.0.1 to stay local.")
            if token == nil {
                Self.printError(
                    "warning: the admin API at \(configuration.effectiveAdminPath) is open to them too (it reads every "
                        + "request and can reset the data); give it a token with --admin-token or HAMMOCK_ADMIN_TOKEN.")
            }
        }
        var watcher: Task<Void, Never>?
        if watch {
            let flags = self
            let watching = ConfigurationWatcher(path: config, server: server) { configuration, fromDocument in
                try flags.applyFlags(to: &configuration, fromDocument: fromDocument)
            }
            let baseline = ConfigurationWatcher.contents(of: config)
            watcher = Task { await watching.run(from: baseline) }
            Self.printLine("watching \(config) for changes")
        }
        let orphaned = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await _ in signals { break }
                return false
            }
            if let parent {
                group.addTask { await Self.waitForExit(ofParent: parent, clock: ContinuousClock()) }
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        if orphaned, let parent {
            Self.printLine("the process that started this server (HAMMOCK_PARENT_PID=\(parent)) has ended")
        }
        watcher?.cancel()
        await logOutput.flush()
        Self.printLine("stopping")
        await server.stop()
        if let record, let recording {
            do {
                let summary = try recording.write(toFile: record, inferringResources: !recordStubs)
                Self.printLine(summary.leftFileAlone ? "recorded \(summary) (\(record))" : "recorded \(summary) into \(record)")
            } catch {
                Self.printError("hammock: --record: \(error)")
            }
        }
        do {
            try await store.close()
        } catch {
            Self.printError("hammock: \(error)")
        }
        await logOutput.flush()
    }

    /// `http://127.0.0.1:8888`, or `http://[::1]:8888` for an IPv6 address (`https` when `secure`).
    static func url(host: String, port: Int, secure: Bool = false) -> String {
        let scheme = secure ? "https" : "http"
        return host.contains(":") ? "\(scheme)://[\(host)]:\(port)" : "\(scheme)://\(host):\(port)"
    }

    /// The identity `--https` or `--cert`/`--key` ask for, and the local authority's certificate file when
    /// it issued it; `nil` for plain HTTP.
    func makeTLS(host: String) throws -> (identity: TLSIdentity, authority: String?)? {
        guard var made = try makeIdentity(host: host) else {
            if !http2 { throw TLSIdentity.Failure(description: "--no-http2 is about HTTPS; give --https or --cert/--key") }
            return nil
        }
        made.identity.offersHTTP2 = http2
        return made
    }

    func makeIdentity(host: String) throws -> (identity: TLSIdentity, authority: String?)? {
        if cert != nil || key != nil {
            guard let cert, let key else { throw TLSIdentity.Failure(description: "--cert and --key go together") }
            guard !https else {
                throw TLSIdentity.Failure(description: "--https makes a certificate; --cert brings one: give one of them")
            }
            let chain: String
            let privateKey: String
            do {
                chain = try String(contentsOfFile: cert, encoding: .utf8)
                privateKey = try String(contentsOfFile: key, encoding: .utf8)
            } catch {
                throw TLSIdentity.Failure(description: "--cert/--key: \(error.localizedDescription)")
            }
            return (try TLSIdentity(certificateChainPEM: chain, privateKeyPEM: privateKey), nil)
        }
        guard https else {
            if !httpsName.isEmpty {
                throw TLSIdentity.Failure(description: "--https-name names what --https covers; give --https")
            }
            return nil
        }
        let folder = LocalCertificateAuthority.defaultFolder()
        let authority = try LocalCertificateAuthority.loadOrCreate(in: folder)
        // Every name the mock is reached by on this machine, the address bound (unless every one), and the ones given.
        var names = ["localhost", "127.0.0.1", "::1"]
        let bound = host == "0.0.0.0" || host == "::" ? [] : [host]
        for name in bound + httpsName where !names.contains(name) { names.append(name) }
        return (try authority.issue(for: names), folder + "/" + LocalCertificateAuthority.certificateFile)
    }

    static func isLoopback(_ host: String) -> Bool { ProxyRule.isLoopback(host) }

    /// Applies the command line's flags to a configuration read from the file; `fromDocument` when an
    /// OpenAPI document made it, whose login `--auth` replaces.
    func applyFlags(to configuration: inout ServerConfiguration, fromDocument: Bool) throws {
        if noValidation { configuration.requestChecks = nil }
        if let auth {
            guard configuration.auth == nil || fromDocument else {
                throw ConfigurationError(file: "--auth", keyPath: "", message: "the configuration has an auth section already")
            }
            configuration.auth = try ConfigurationFile.readAuth(auth)
        }
        if let host { configuration.host = host }
        if let port {
            guard (0...65535).contains(port) else {
                throw ConfigurationError(
                    file: "--port", keyPath: "", message: "\(port) is not a port; use 0 to 65535 (0 picks a free one)")
            }
            configuration.port = port
        }
        if let store {
            guard let location = StoreLocation(parsing: store) else {
                throw ConfigurationError(
                    file: "--store", keyPath: "",
                    message: "expected memory, sqlite:PATH or another SCHEME:ADDRESS, found \(store.prefix(200))")
            }
            configuration.store = location
        }
        if let namespace {
            guard let location = configuration.store?.inNamespace(namespace) else {
                throw ConfigurationError(
                    file: "--namespace", keyPath: "", message: "namespaces are a PostgreSQL store's; give --store postgres://…")
            }
            configuration.store = location
        }
        for (flag, value, keyPath) in [
            ("--idle-timeout", idleTimeout, \ServerConfiguration.idleTimeout),
            ("--request-timeout", requestTimeout, \ServerConfiguration.requestTimeout),
        ] {
            guard let value else { continue }
            guard value > 0, value <= 3600 else {
                throw ConfigurationError(file: flag, keyPath: "", message: "expected 0 to 3600 seconds, found \(value)")
            }
            configuration[keyPath: keyPath] = value
        }
        if let basePath {
            guard MockServer.Options.isValidBasePath(basePath) else {
                throw ConfigurationError(
                    file: "--base-path", keyPath: "", message: "expected a path such as /api/v1, found \(basePath)")
            }
            configuration.basePath = MockServer.Options.normalizedBasePath(basePath)
        }
        if let adminPath {
            guard let path = MockServer.Options.normalizedBasePath(adminPath) else {
                throw ConfigurationError(
                    file: "--admin-path", keyPath: "", message: "expected a path such as /__hammock, found \(adminPath)")
            }
            configuration.adminPath = path
        }
        if let journalSize {
            guard (0...1_000_000).contains(journalSize) else {
                throw ConfigurationError(
                    file: "--journal-size", keyPath: "", message: "expected 0 to 1000000 requests, found \(journalSize)")
            }
            configuration.journalSize = journalSize
        }
        if strict { configuration.strict = true }
        for name in allowHost {
            guard ServerConfiguration.isHostName(name) else {
                throw ConfigurationError(
                    file: "--allow-host", keyPath: "",
                    message: "expected a host name such as mock.test, found \(name.prefix(200))")
            }
            configuration.allowedHosts.append(name)
        }
        // A name given to bind is one the mock is reached by.
        if let host = configuration.host, ServerConfiguration.isHostName(host), !host.allSatisfy({ $0.isNumber || $0 == "." }) {
            configuration.allowedHosts.append(host)
        }
        for name in redactHeader {
            guard ServerConfiguration.isFieldName(name) else {
                throw ConfigurationError(
                    file: "--redact-header", keyPath: "", message: "expected a header field name, found \(name.prefix(200))")
            }
            configuration.redactedHeaders.append(name)
        }
        for text in fault {
            do {
                configuration.faults.append(try Fault(parsing: text))
            } catch {
                throw ConfigurationError(file: "--fault", keyPath: "", message: "\(text): \(error.message)")
            }
        }
        // Flags may have moved the base path or the admin path: check again what the file checked.
        try configuration.checkAdminPath(file: config ?? "--admin-path")
        if let latency {
            guard let range = Self.parseLatency(latency) else {
                throw ConfigurationError(
                    file: "--latency", keyPath: "", message: "expected seconds as MIN..MAX or one value, found \(latency)")
            }
            configuration.latency = range
        }
    }

    /// The admin token from `--admin-token`, else `$HAMMOCK_ADMIN_TOKEN`; `nil` for none.
    /// - Throws: When the one given cannot protect anything: empty (it would compare equal to a request
    ///   that sends none), or spaces and control characters. An empty variable counts: a CI job that
    ///   meant to set it from a missing secret must not start an open admin API.
    static func adminToken(flag: String?, environment: [String: String]) throws(ConfigurationError) -> String? {
        let given: String?
        let source: String
        if let flag {
            (given, source) = (flag, "--admin-token")
        } else {
            (given, source) = (environment["HAMMOCK_ADMIN_TOKEN"], "HAMMOCK_ADMIN_TOKEN")
        }
        guard let given else { return nil }
        if let problem = MockServer.Options.problem(withAdminToken: given) {
            throw ConfigurationError(file: source, keyPath: "", message: problem)
        }
        return given
    }

    static func parseLatency(_ text: String) -> Latency? {
        let parts = text.components(separatedBy: "..")
        let numbers = parts.compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard numbers.count == parts.count, (1...2).contains(numbers.count), numbers.allSatisfy({ $0 >= 0 && $0 <= 3600 }),
            let minimum = numbers.first, let maximum = numbers.last, minimum <= maximum
        else { return nil }
        return Latency(minimumSeconds: minimum, maximumSeconds: maximum)
    }

    /// `dir/people.json` → `dir/people.sqlite`.
    static func defaultStorePath(for config: String) -> String {
        let url = URL(fileURLWithPath: config)
        return url.deletingPathExtension().appendingPathExtension("sqlite").path
    }

    func printBanner(
        server: MockServer, url: String, store: StoreLocation, reports: [(resource: String, report: LoadReport)],
        generated: (seed: UInt64, reports: [(resource: String, report: LoadReport)])?, openAPI: OpenAPIImport?,
        proxyRules: [ProxyRule] = []
    ) {
        Self.printLine("Hammock is serving \(config ?? "nothing of its own") at \(url)")
        if let openAPI { Self.printOpenAPISummary(openAPI) }
        if let checks = server.requestChecks { Self.printRequestChecks(checks) }
        Self.printLine("store: \(store)")
        for rule in proxyRules {
            let methods = rule.methods.map { $0.map(\.rawValue).sorted().joined(separator: ", ") + " " } ?? ""
            Self.printLine("proxy: \(methods)\(rule.path?.description ?? "/**") goes to \(rule.upstream.absoluteString)")
        }
        if let proxy { Self.printLine("proxy: what the mock does not answer goes to \(proxy)") }
        if let record { Self.printLine("record: what the proxy passes on is written to \(record) when the server stops") }
        Self.printLine("version: \(MockServer.version)")
        if let admin = server.options.adminPath {
            Self.printLine("console: \(url)\(admin)/ (in a browser)")
            Self.printLine("admin: \(url)\(admin) (requests, reset, snapshots, latency, routes)")
        }
        for fault in server.faultsInForce { Self.printLine("fault: \(fault) (named \(fault.name ?? "-"))") }
        if let auth = server.auth {
            let users = auth.users.count == 1 ? "1 user" : "\(auth.users.count) users"
            let clients = auth.clients.count == 1 ? "1 client" : "\(auth.clients.count) clients"
            Self.printLine(
                "auth: tokens at POST \(url)\(server.options.basePath ?? "")\(auth.tokenPath) (\(users), \(clients), \(auth.algorithm.name)); "
                    + (auth.rules.isEmpty && server.requestChecks != nil
                        ? "the API document's requirements say which routes need a token"
                        : "\(auth.rules.count) access rule\(auth.rules.count == 1 ? "" : "s")"))
        }
        for (resource, report) in reports { Self.printLine("data: \(resource): \(report)") }
        if let generated, !generated.reports.isEmpty {
            let counts = generated.reports.map { "\($0.resource) \($0.report.loaded)" }.joined(separator: ", ")
            Self.printLine("generated: \(counts) (--seed \(generated.seed) makes the same records)")
        }
        Self.printLine(RouteTable.render(server.routeTable))
    }

    /// What the mock made from an OpenAPI document is, and each thing it does not do as documented.
    static func printOpenAPISummary(_ openAPI: OpenAPIImport) {
        let resources = openAPI.resources.isEmpty ? "no resources" : "resources \(openAPI.resources.joined(separator: ", "))"
        let stubs = openAPI.stubs.count == 1 ? "1 stub" : "\(openAPI.stubs.count) stubs"
        printLine("from OpenAPI \(openAPI.version) \"\(openAPI.title)\": \(resources); \(stubs)")
        for note in openAPI.notes { printLine("not as documented: \(note)") }
    }

    /// How many operations the document's checks cover, and what in them is not checked.
    static func printRequestChecks(_ checks: RequestChecks) {
        printLine(
            "checked against the document: \(checks.count) operation\(checks.count == 1 ? "" : "s") (--no-validation turns the checks off)"
        )
        // A document with hundreds of unreadable patterns would bury the banner: the first ten, then a count.
        for note in checks.notes.prefix(10) { printLine("not checked: \(note)") }
        if checks.notes.count > 10 { printLine("not checked: \(checks.notes.count - 10) more") }
    }

    /// A configuration's server in memory, for commands that describe it rather than serve it (`routes`,
    /// `openapi`, `generate`), with its data when the examples matter; exit status 2 naming the file if
    /// the server cannot be made.
    static func describedServer(_ configuration: ServerConfiguration, file: String, withData: Bool) async throws -> MockServer {
        do {
            return
                try await withData
                ? MockServer.inMemory(configuration, tokenSigner: JWTAccessTokens())
                : MockServer(configuration: configuration, store: MemoryStore(), tokenSigner: JWTAccessTokens())
        } catch {
            printError("\(file): \(error)")
            throw ExitCode(2)
        }
    }

    /// The configuration in `path`; exit status 2 with its error (file, key, what is wrong) if it has one.
    static func readConfiguration(_ path: String) throws -> ServerConfiguration {
        try loadConfiguration(path).configuration
    }

    /// The configuration in `path` with the mock made from it when it is an OpenAPI document; exit status 2
    /// with its error (file, key, what is wrong) if it has one.
    static func loadConfiguration(_ path: String) throws -> ConfigurationFile.Loaded {
        do {
            if isArchive(path) { return ConfigurationFile.Loaded(configuration: try readArchive(path).configuration) }
            return try ConfigurationFile.load(path)
        } catch {
            printError(error.description)
            throw ExitCode(2)
        }
    }

    /// Whether `path` names a HAR file (by its extension, as `.yaml` names YAML).
    static func isArchive(_ path: String) -> Bool { path.lowercased().hasSuffix(".har") }

    /// A HAR file as a configuration of stubs answering its requests in order.
    static func readArchive(
        _ path: String
    ) throws(ConfigurationError) -> (configuration: ServerConfiguration, archive: HTTPArchive.Read) {
        let read: HTTPArchive.Read
        do {
            read = try HTTPArchive.read(contentsOfFile: path)
        } catch {
            throw ConfigurationError(
                file: path, keyPath: "", message: error.description.replacingOccurrences(of: "\(path): ", with: ""))
        }
        // A browser's HAR filtered to its sockets has no plain stub and is still something to serve.
        guard read.summary.stubs + read.summary.webSockets > 0 else {
            throw ConfigurationError(
                file: path, keyPath: "log.entries", message: "no entry a stub can answer (\(read.summary.skipped) left out)")
        }
        return (try ServerConfiguration(root: read.configuration, file: path), read)
    }

    /// An OpenAPI document's title for a configuration file: its name without the extension.
    static func documentTitle(for path: String) -> String {
        let file = path.split(separator: "/").last.map(String.init) ?? path
        return file.split(separator: ".").first.map(String.init) ?? file
    }

    /// Writes a line to standard output at once (no buffering), so a supervising process sees it.
    static func printLine(_ message: String) {
        FileHandle.standardOutput.write(Data((terminalSafe(message) + "\n").utf8))
    }

    static func printError(_ message: String) {
        FileHandle.standardError.write(Data((terminalSafe(message) + "\n").utf8))
    }

    /// `text` with control characters other than line breaks and tabs written as `\u{1B}`: names and
    /// notes come from files someone else wrote, and an escape sequence printed as it is drives the
    /// terminal (moves the cursor, rewrites the screen, sets its title).
    static func terminalSafe(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var safe = ""
        for scalar in text.unicodeScalars {
            if isUnsafe(scalar) {
                safe += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            } else {
                safe.unicodeScalars.append(scalar)
            }
        }
        return safe
    }

    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        (scalar.value < 0x20 && scalar != "\n" && scalar != "\t") || (0x7F...0x9F).contains(scalar.value)
    }
}

/// `hammock routes CONFIG`: prints the route table without serving.
struct Routes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the routes a configuration file defines.")

    @Argument(help: "The configuration file (JSON, or YAML by its .yaml or .yml extension), or an OpenAPI 3.0 or 3.1 document.")
    var config: String

    func run() async throws {
        let loaded = try Serve.loadConfiguration(config)
        let server = try await Serve.describedServer(loaded.configuration, file: config, withData: false)
        if let openAPI = loaded.openAPI { Serve.printOpenAPISummary(openAPI) }
        print(Serve.terminalSafe(RouteTable.render(server.routeTable)))
    }
}

enum RouteTable {
    static func render(_ rows: [RouteTableEntry]) -> String {
        let header = ("Verbs", "URI Pattern", "MockResource")
        let verbWidth = max(header.0.count, rows.map(\.methodList.count).max() ?? 0)
        let patternWidth = max(header.1.count, rows.map(\.pattern.count).max() ?? 0)
        func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: width - text.count) }
        var lines = ["\(pad(header.0, verbWidth))  \(pad(header.1, patternWidth))  \(header.2)"]
        for row in rows {
            lines.append("\(pad(row.methodList, verbWidth))  \(pad(row.pattern, patternWidth))  \(row.resource ?? "")")
        }
        return lines.joined(separator: "\n")
    }
}

/// `hammock openapi CONFIG`: prints the OpenAPI 3.1 document of the mock a configuration file describes.
struct OpenAPI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "openapi", abstract: "Print the OpenAPI 3.1 document of the mock a configuration file describes.")

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case json, yaml
    }

    @Argument(help: "The configuration file (JSON, or YAML by its .yaml or .yml extension).")
    var config: String

    @Option(help: "json or yaml.")
    var format: Format = .json

    @Option(help: "The document's title (info.title); the file's name without its extension by default.")
    var title: String?

    func run() async throws {
        // In memory, with the file's data, so that its records give the examples.
        let server = try await Serve.describedServer(Serve.readConfiguration(config), file: config, withData: true)
        let document = await OpenAPIDocument.make(for: server, title: title ?? Serve.documentTitle(for: config))
        switch format {
        case .json: Serve.printLine(document.serializedString(options: [.prettyPrinted]))
        case .yaml: FileHandle.standardOutput.write(Data(YAMLText.text(from: document).utf8))
        }
    }
}

/// `hammock record URL FILE`: a proxy to URL that writes what passed through it to FILE when stopped.
struct Record: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Forward every request to a real backend and write what passed, redacted, as a configuration.",
        discussion: """
            The same as `hammock serve --proxy URL --record FILE` with nothing mocked: point the app at the
            printed address, use it, stop with Ctrl-C, then `hammock serve FILE` answers without the backend.
            Collections become resources holding the records seen; everything else stubs (docs/proxy.md).
            """
    )

    @Argument(help: "The backend (http:// or https://, with a path prefix if it has one).")
    var url: String

    @Argument(help: "The configuration file to write when the server stops (HAR 1.2 when its name ends in .har).")
    var file: String

    @Option(help: "The address to bind (default: 127.0.0.1).")
    var host: String?

    @Option(parsing: .unconditional, help: "The port to bind; 0 picks a free one (default: 8888).")
    var port: Int?

    @Flag(help: "Write every exchange as a stub (a replay answers exactly what was recorded, in order), no resources.")
    var stubs = false

    @Option(
        help: ArgumentHelp(
            "A header field whose values are redacted, besides Authorization, Cookie and the usual credentials; repeatable.",
            valueName: "name"))
    var redactHeader: [String] = []

    @Option(
        help: ArgumentHelp(
            "A JSON member, form field or query item whose values are redacted, besides passwords, tokens and secrets by their usual names; repeatable.",
            valueName: "name"))
    var redactMember: [String] = []

    @Flag(help: "Do not log each request.")
    var quiet = false

    func run() async throws {
        var arguments = ["--proxy", url, "--record", file, "--store", "memory"]
        if let host { arguments += ["--host", host] }
        if let port { arguments += ["--port", String(port)] }
        if stubs { arguments.append("--record-stubs") }
        for name in redactHeader { arguments += ["--redact-header", name] }
        for name in redactMember { arguments += ["--redact-member", name] }
        if quiet { arguments.append("--quiet") }
        let serve: Serve
        do {
            serve = try Serve.parse(arguments)
        } catch {
            Serve.printError("hammock record: \(Serve.message(for: error))")
            throw ExitCode(2)
        }
        try await serve.run()
    }
}
