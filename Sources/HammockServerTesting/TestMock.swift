public import Foundation
import HammockHTTPServer
public import HammockJSON
import HammockJWT
public import HammockServer
import HammockURLSession
import HammockWire

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A mock server as one test reaches it: the server, the URL its routes answer under, a session that
/// reaches it, and its journal. The `.mockServer(…)` trait starts one per test and hands it over as
/// ``current``; in XCTest, ``start(_:_:)`` in `setUp` and ``stop()`` in `tearDown`.
///
/// ```swift
/// @Test(.mockServer(resources: [people], data: ["people": [["name": "ada"]]]))
/// func listsPeople() async throws {
///     let mock = try #require(TestMock.current)
///     let (data, _) = try await mock.session.data(from: mock.url("people"))
///     mock.verify(RequestPattern(.get, "/people"), count: .once)
/// }
/// ```
public struct TestMock: Sendable {
    /// How the test reaches the server.
    public enum Reach: Sendable, Hashable, CustomStringConvertible {
        /// No socket: ``TestMock/session`` answers requests to ``TestMock/baseURL`` from the server in
        /// process (`MockServer.urlSessionConfiguration`). Fast, and nothing to clash with; only
        /// URLSession code (and HammockClient through its URLSession transport) reaches it.
        case inProcess
        /// A socket on a free loopback port (`127.0.0.1`, port 0): any HTTP client reaches it, another
        /// process too (a UI test's app, a browser).
        case loopback

        public var description: String { self == .inProcess ? "in process" : "loopback" }
    }

    /// The server, to drive from the test (its admin methods, `reset()`, `setFaults(_:)`).
    public let server: MockServer
    /// How the test reaches it.
    public let reach: Reach
    /// The URL its routes answer under, with the server's base path: `http://<id>.hammock.invalid` in
    /// process, `http://127.0.0.1:PORT` on loopback.
    public let baseURL: URL
    /// A session that reaches the server (in process: configured for it; on loopback: an ephemeral one).
    public let session: URLSession

    /// The environment variable a launched app reads its server from (``launchEnvironment``).
    public static let baseURLVariable = "HAMMOCK_BASE_URL"

    /// The server's request journal, to verify and wait on.
    public var journal: RequestJournal { server.journal }

    /// What to add to a launched app's environment so that it calls this server:
    /// `["HAMMOCK_BASE_URL": "http://127.0.0.1:PORT"]`.
    /// - Throws: ``LaunchEnvironmentError`` for a mock reached in process: its URL means nothing to
    ///   another process (the app would fail with "cannot find host"); start it with ``Reach/loopback``.
    public var launchEnvironment: [String: String] {
        get throws(LaunchEnvironmentError) {
            guard reach == .loopback else { throw LaunchEnvironmentError() }
            return [Self.baseURLVariable: baseURL.absoluteString]
        }
    }

    /// ``TestMock/launchEnvironment`` of a mock reached in process.
    public struct LaunchEnvironmentError: Error, Sendable, CustomStringConvertible {
        public var description: String {
            "an in-process mock has no URL another process can reach: start it with .loopback "
                + "(.mockServer(.loopback, …) or TestMock.start(.loopback)) to hand it to a launched app"
        }
    }

    /// The URL of `path` under ``baseURL`` (`"people/1"`, `"/people?name=ada"`; a query is kept).
    /// Characters a URL cannot hold are percent-encoded (`"people?name=Amy Lee"`).
    public func url(_ path: String) -> URL {
        let trimmed = String(path.drop { $0 == "/" })
        let base = baseURL.absoluteString + "/"
        // What a URL cannot hold as it is (`f[x]`, `Amy Lee`) is escaped here, once: left to `URL(string:)`,
        // the whole text was escaped again when one character needed it, `%20` becoming `%2520`.
        if let url = URL(string: PercentEncoding.encodeURLText(base + trimmed)) { return url }
        if let encoded = trimmed.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed),
            let url = URL(string: base + encoded)
        {
            return url
        }
        // Never the base URL itself: the whole text as one path segment, which the server answers 404.
        return baseURL.appendingPathComponent(trimmed)
    }

    /// The mock the `.mockServer(…)` trait started for the running test; `nil` outside one.
    @TaskLocal public static var current: TestMock?

    /// Starts `make`'s server, reachable as `reach` asks: in process at once, on loopback once it
    /// listens on a free port.
    ///
    /// ```swift
    /// override func setUp() async throws {
    ///     mock = try await TestMock.start(.loopback) { try await MockServer(resources: [people]) }
    /// }
    /// override func tearDown() async throws { await mock.stop() }
    /// ```
    /// - Throws: `make`'s error, or `MockServerError` if the server cannot listen.
    public static func start(
        _ reach: Reach = .inProcess, _ make: () async throws -> MockServer
    ) async throws -> TestMock {
        let server = try await make()
        switch reach {
        case .inProcess:
            let session = URLSession(configuration: server.urlSessionConfiguration())
            return TestMock(server: server, reach: reach, baseURL: server.inProcessURL, session: session)
        case .loopback:
            try await server.start(host: "127.0.0.1", port: 0)
            guard let baseURL = await server.baseURL else {
                // Stopped by someone else between the two calls.
                await server.stop()
                throw MockServerError.cannotListen(host: "127.0.0.1", port: 0, reason: "stopped while starting")
            }
            return TestMock(
                server: server, reach: reach, baseURL: baseURL, session: URLSession(configuration: .ephemeral))
        }
    }

    /// Starts a server for `resources` with `data` loaded, in the order given (parents before children).
    ///
    /// ```swift
    /// let mock = try await TestMock.start(resources: [people], data: ["people": [["name": "ada"]]])
    /// ```
    public static func start(
        _ reach: Reach = .inProcess, resources: [MockResource], data: KeyValuePairs<String, JSON> = [:],
        options: MockServer.Options = MockServer.Options()
    ) async throws -> TestMock {
        let seed = data.map { ($0.key, $0.value) }
        return try await start(reach) {
            try await MockServer.seeded(resources: resources, data: seed, options: options)
        }
    }

    /// Starts a server from a configuration file (`hammock serve`'s), in memory, with its `data` loaded
    /// and its `generate` section generated with `seed`: the same records in every run.
    public static func start(
        _ reach: Reach = .inProcess, configuration path: String, seed: UInt64 = 1
    ) async throws -> TestMock {
        try await start(reach) { try await MockServer.fromFile(path, seed: seed) }
    }

    /// Stops the server (its listener on loopback; in process, its streamed answers and held responses
    /// end, as a socket's would) and lets the session go. The server's records stay readable.
    public func stop() async {
        await server.stop()
        session.finishTasksAndInvalidate()
    }
}

extension MockServer {
    /// A server for `resources` with `data` loaded in the order given.
    static func seeded(
        resources: [MockResource], data: [(String, JSON)], options: MockServer.Options
    ) async throws -> MockServer {
        var options = options
        // A login works in a test as in `hammock serve`.
        if options.tokenSigner == nil { options.tokenSigner = JWTAccessTokens() }
        let server = try await MockServer(resources: resources, options: options)
        for (resource, records) in data { try await server.addData(records, for: resource) }
        return server
    }

    /// A server from a configuration file, in memory, its data loaded and generated.
    static func fromFile(_ path: String, seed: UInt64) async throws -> MockServer {
        try await inMemory(ServerConfiguration(contentsOfFile: path), seed: seed, tokenSigner: JWTAccessTokens())
    }
}
