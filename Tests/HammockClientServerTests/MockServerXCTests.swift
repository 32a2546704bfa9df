import Foundation
import HammockHTTPServer
import HammockJSON
import HammockServer
import HammockServerTesting
import XCTest

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The same mock in XCTest: started in `setUp`, stopped in `tearDown`.
final class MockServerXCTests: XCTestCase {
    static let people = MockResource("people", fields: ["name": .string])
    var mock: TestMock?

    override func setUp() async throws {
        mock = try await TestMock.start(.loopback, resources: [Self.people], data: ["people": [["name": "ada"]]])
    }

    override func tearDown() async throws {
        await mock?.stop()
        let port = await mock?.server.port
        XCTAssertNil(port, "the port is closed after tearDown")
    }

    func testEachTestGetsItsOwnSeededServerOnALoopbackPort() async throws {
        let mock = try XCTUnwrap(mock)
        XCTAssertEqual(mock.baseURL.host, "127.0.0.1")
        let (data, response) = try await mock.session.data(from: mock.url("people"))
        XCTAssertEqual((response as? HTTPURLResponse)?.statusCode, 200)
        XCTAssertEqual(try JSON(parsing: [UInt8](data)).arrayValue?.count, 1)
        XCTAssertNoThrow(try mock.journal.verify(RequestPattern(.get, "/people"), count: .once))
    }

    func testAFailedVerificationThrowsTheClosestRequestAsText() async throws {
        let mock = try XCTUnwrap(mock)
        _ = try await mock.session.data(from: mock.url("people/1"))
        XCTAssertThrowsError(try mock.journal.verify(RequestPattern(.delete, "/people/1"))) { error in
            XCTAssertEqual(
                String(describing: error),
                """
                expected at least 1 request matching DELETE /people/1, found 0
                closest recorded requests:
                  #1 GET /people/1 → 200: method is GET, not DELETE
                """)
        }
    }
}
