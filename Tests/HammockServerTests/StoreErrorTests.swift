import HTTPTypes
import HammockJSON
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
