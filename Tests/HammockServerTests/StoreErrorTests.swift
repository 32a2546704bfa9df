import Foundation
import HTTPTypes
import HammockJSON
import HammockSQLite
import HammockServer
import Testing

/// A store's failures are answered by class, in the server's words: never the driver's.
@Suite("Store errors by class")
struct StoreErrorTests {
    static let secret = "SQLSTATE 08006 connection to db.internal:5432 user=admin failed"

    @Test(
        "Each class of store error has its status, Retry-After when retrying helps, and no driver text",
        arguments: [
            (StoreError.unavailable(secret), 503, true), (.timedOut(secret), 503, true), (.constraint(secret), 409, false),
            (.conflict(secret), 409, true), (.storageFailure(secret), 500, false),
            (.fileInUse(path: "/srv/" + secret), 500, false),
            (.schemaChanged(resource: "people", field: "name", stored: "string", declared: secret), 500, false),
        ])
    func classes(error: StoreError, status: Int, transient: Bool) async throws {
        let server = try await MockServer()
        try server.route(.get, "/fails") { _ in throw error }
        let response = await server.respond(to: MockRequest(.get, "/fails"))
        #expect(response.status.code == status)
        #expect(response.headerFields[.contentType] == "application/problem+json")
        #expect((response.headerFields[.retryAfter] == "1") == (status == 503))
        #expect(!String(decoding: response.body, as: UTF8.self).contains("SQLSTATE"))
        #expect(!String(decoding: response.body, as: UTF8.self).contains("db.internal"))
        #expect(error.isTransient == transient)
    }
}

/// Open, health, close and abandon through the protocol, as `hammock serve` uses them.
@Suite("Store lifecycle")
struct StoreLifecycleTests {
    @Test("Closing an SQLite store through the protocol releases its file; abandoning removes a file it created")
    func closeThroughProtocol() async throws {
        let path = TemporaryDirectory.make().appending("life.sqlite")
        let store: any MockStore = try SQLiteStore(path: path)
        #expect(await store.health() == .available)
        // Held: a second store on the file is refused until the first is closed through the protocol.
        #expect(throws: StoreError.fileInUse(path: path)) { _ = try SQLiteStore(path: path) }
        try await store.close()
        let second: any MockStore = try SQLiteStore(path: path)
        await second.abandon()  // the file was there before this store: it stays
        #expect(FileManager.default.fileExists(atPath: path))

        let fresh = TemporaryDirectory.make().appending("fresh.sqlite")
        let created: any MockStore = try SQLiteStore(path: fresh)
        await created.abandon()
        #expect(!FileManager.default.fileExists(atPath: fresh))
        #expect(await MemoryStore().health() == .available)
    }

    @Test("The admin API's health says 200 while the store answers and 503 with Retry-After once it does not")
    func healthEndpoint() async throws {
        let path = TemporaryDirectory.make().appending("health.sqlite")
        let store = try SQLiteStore(path: path)
        let server = try await MockServer(resources: [Fixtures.people], store: store)
        let healthy = await server.respond(to: MockRequest(.get, "/__hammock/health"))
        #expect(try healthy.status == .ok && healthy.json() == ["status": "available"])
        try store.close()
        let closed = await server.respond(to: MockRequest(.get, "/__hammock/health"))
        #expect(closed.status == .serviceUnavailable && closed.headerFields[.retryAfter] == "1")
        #expect(!String(decoding: closed.body, as: UTF8.self).contains("health.sqlite"))
    }
}

/// Stores named by location and opened by the drivers a program links.
@Suite("Store locations and drivers")
struct StoreDriverTests {
    @Test("Locations parse memory and SCHEME:ADDRESS, refuse what is neither, and never show a password")
    func locations() throws {
        #expect(StoreLocation(parsing: "memory") == .memory)
        #expect(StoreLocation(parsing: "sqlite:db/data.sqlite") == .sqlite(path: "db/data.sqlite"))
        let postgres = try #require(StoreLocation(parsing: "postgres://ada:s3cret@db.internal:5432/app"))
        #expect(postgres.scheme == "postgres" && postgres.address == "//ada:s3cret@db.internal:5432/app")
        #expect(postgres.description == "postgres://ada:***@db.internal:5432/app")
        #expect(StoreLocation(parsing: "POSTGRES://db/app")?.scheme == "postgres")
        for bad in ["postgres", ":x", "1db:x", "sqlite:", "sq lite:x", "ünï:x"] {
            #expect(StoreLocation(parsing: bad) == nil, "\(bad)")
        }
    }

    @Test("Drivers open their schemes; an unknown one names the known ones; a program adds its own")
    func drivers() async throws {
        var drivers = StoreDrivers.withSQLite
        #expect(drivers.schemes == ["memory", "sqlite"])
        #expect(try await drivers.open(.memory) is MemoryStore)
        let location = try #require(StoreLocation(parsing: "postgres://ada:s3cret@db/app"))
        let error = await #expect(throws: StoreError.self) { try await drivers.open(location) }
        #expect(error == .unknownScheme("postgres", known: ["memory", "sqlite"]))
        #expect(error?.description == "no store opens 'postgres:' here; this program knows memory:, sqlite:")
        drivers.register(scheme: "postgres") { _ in MemoryStore() }
        #expect(try await drivers.open(location) is MemoryStore)
    }
}
