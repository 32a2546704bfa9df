import Foundation
import HammockPostgres
import HammockSQLite
import HammockServer
import HammockTestSupport

enum StoreKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case memory
    case sqlite
    case postgres

    var description: String { rawValue }

    /// An empty store: for PostgreSQL, a namespace of its own on the test process's throwaway cluster.
    func makeStore() async throws -> any MockStore {
        switch self {
        case .memory: MemoryStore()
        case .sqlite: try SQLiteStore(path: TemporaryDirectory.make().appending("store.sqlite"))
        case .postgres: try await PostgresStore.open(Self.postgresConfiguration())
        }
    }

    /// An empty store whose tables keep indexes from `indexingFrom` records (memory and SQLite: their
    /// shared engine plans queries over indexes; PostgreSQL plans in SQL and has no such threshold).
    func makeStore(indexingFrom: Int) async throws -> any MockStore {
        switch self {
        case .memory: MemoryStore(indexingFrom: indexingFrom)
        case .sqlite: try SQLiteStore(path: TemporaryDirectory.make().appending("store.sqlite"), indexingFrom: indexingFrom)
        case .postgres: try await makeStore()
        }
    }

    /// The throwaway cluster's address with a fresh namespace (or `namespace`, to share one).
    static func postgresConfiguration(namespace: String? = nil) async throws -> PostgresStore.Configuration {
        let cluster = try await ThrowawayPostgres.shared()
        // Why 60 s, not the default 10: in 3 of about 12 full runs every PostgreSQL call of the test process
        // failed "no answer within 10 s" at the same instant (73 calls, all at 48.0 s of the run), while
        // the database answered other processes. Timers all firing together is what a stalled process
        // gives (its two concurrency threads or event loops busy with other tests on a 2-core machine),
        // not a slow database; the limit is not what these tests test (SharedStoreTests' outage test
        // sets its own).
        // The connect limit too (3 s by default): two clean-clone CI runs of 2026-11-29 had every test's
        // connect time out at one instant while the process stalled, as above.
        return PostgresStore.Configuration(
            host: "127.0.0.1", port: cluster.port, username: cluster.username, password: cluster.password,
            database: "postgres", namespace: namespace ?? "test_" + UUID().uuidString.prefix(12).lowercased(),
            connectTimeout: .seconds(30), operationTimeout: .seconds(60))
    }
}

enum TemporaryDirectory {
    /// A fresh directory under the system temporary directory; its path ends with a slash.
    static func make() -> String {
        TemporaryFiles.directory("store")
    }
}

extension String {
    func appending(_ component: String) -> String { self + component }
}

enum Fixtures {
    static let people = MockResource(
        "people", fields: ["name": .string, "numberOfKids": .integer, "kilometersWalked": .float, "avatar": .blob])
    static let cars = MockResource("cars", fields: ["name": .string, "color": .string], parents: ["people"])
    static let categories = MockResource(
        "categories", fields: ["slug": .string, "title": .string], primaryKey: "slug")
    static let products = MockResource(
        "products",
        fields: ["name": .string, "price": .float, "inStock": .boolean, "releasedOn": .date, "details": .json],
        parents: ["categories"])

    /// The route table rows of ``server(_:resources:options:)`` with the default resources.
    static let serverRouteCount = 5

    static func server(
        _ kind: StoreKind = .memory, resources: [MockResource] = [people, cars],
        options: MockServer.Options = MockServer.Options()
    ) async throws -> MockServer {
        try await MockServer(resources: resources, store: await kind.makeStore(), options: options)
    }
}

extension MockServer {
    /// Sends a request in process and parses the JSON body, if any.
    func send(_ method: HTTPRequest.Method, _ path: String, json: JSON? = nil) async -> (MockResponse, JSON?) {
        let request = json.map { MockRequest(method, path, json: $0) } ?? MockRequest(method, path)
        let response = await respond(to: request)
        return (response, try? response.json())
    }
}
