public import HammockJSON
public import HammockServer
public import Testing

/// Gives each test a mock server of its own, started before the test and stopped after it, whether it
/// passes, fails or throws; the test reaches it as ``TestMock/current``. Tests run in parallel by
/// default, and no two of them share a server, a port or a session.
///
/// ```swift
/// @Test(.mockServer(resources: [people], data: ["people": [["name": "ada"]]]))
/// func listsPeople() async throws {
///     let mock = try #require(TestMock.current)
///     …
/// }
///
/// @Test(.mockServer(.loopback, configuration: "Examples/people.json"))
/// func overASocket() async throws { … }
/// ```
public struct MockServerTrait: TestTrait, TestScoping {
    /// How the test reaches the server.
    public let reach: TestMock.Reach
    private let make: @Sendable () async throws -> MockServer

    init(reach: TestMock.Reach, make: @escaping @Sendable () async throws -> MockServer) {
        self.reach = reach
        self.make = make
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let mock = try await TestMock.start(reach, make)
        do {
            try await TestMock.$current.withValue(mock) { try await function() }
        } catch {
            await mock.stop()
            throw error
        }
        await mock.stop()
    }
}

extension Trait where Self == MockServerTrait {
    /// A server of `make`'s for each test, reached as `reach` says.
    ///
    /// ```swift
    /// @Test(.mockServer { try await MockServer(resources: [people], options: MockServer.Options(basePath: "/api")) })
    /// ```
    public static func mockServer(
        _ reach: TestMock.Reach = .inProcess, _ make: @escaping @Sendable () async throws -> MockServer
    ) -> Self {
        MockServerTrait(reach: reach, make: make)
    }

    /// A server for `resources` for each test, with `data` loaded in the order given (parents first).
    public static func mockServer(
        _ reach: TestMock.Reach = .inProcess, resources: [MockResource], data: KeyValuePairs<String, JSON> = [:],
        options: MockServer.Options = MockServer.Options()
    ) -> Self {
        let seed = data.map { ($0.key, $0.value) }
        return MockServerTrait(reach: reach) {
            try await MockServer.seeded(resources: resources, data: seed, options: options)
        }
    }

    /// A server from a configuration file for each test (a path relative to the working directory, the
    /// package's root under `swift test`), in memory, with its data loaded and generated with `seed`.
    public static func mockServer(
        _ reach: TestMock.Reach = .inProcess, configuration path: String, seed: UInt64 = 1
    ) -> Self {
        MockServerTrait(reach: reach) { try await MockServer.fromFile(path, seed: seed) }
    }
}

extension TestMock {
    /// Checks that the server recorded `count` requests matching `pattern`, and records a test issue at
    /// the caller if not, naming the closest recorded requests and what differed:
    ///
    /// ```text
    /// expected at least 1 request matching POST /orders {body total = 10}, found 0
    /// closest recorded requests:
    ///   #2 POST /orders → 201: body member 'total' is 12, not 10
    /// ```
    /// In XCTest, `try mock.journal.verify(pattern, count: count)` throws the same text.
    public func verify(
        _ pattern: RequestPattern, count: RequestCount = .atLeast(1), sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            try journal.verify(pattern, count: count)
        } catch {
            Issue.record(Comment(rawValue: error.description), sourceLocation: sourceLocation)
        }
    }
}
