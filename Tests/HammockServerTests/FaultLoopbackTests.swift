import Foundation
import HTTPTypes
import HammockHTTPServer
import HammockJSON
import HammockServer
import HammockTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Every connection fault as a real client meets it over loopback: URLSession (the errors
/// `MockServerTransport` throws in process are these) and raw sockets for the exact bytes.
@Suite("Connection faults over loopback")
struct FaultLoopbackTests {
    func server(_ fault: String) async throws -> MockServer {
        let server = try await MockServer(resources: [Fixtures.people])
        try await server.addData(["name": "ada"], for: "people")
        server.setFaults([try Fault(parsing: fault)])
        return server
    }

    @Test(
        "URLSession meets each kind as the URLError MockServerTransport throws in process",
        arguments: [ConnectionFault.drop, .empty, .reset, .truncate, .malformed])
    func urlSession(kind: ConnectionFault) async throws {
        let server = try await server("GET /people/:id \(kind.rawValue)")
        try await server.whileServing { port async throws in
            let error = await #expect(throws: URLError.self) { () async throws in
                _ = try await LoopbackClient(port: port).send("GET", "/people/1")
            }
            print("KIND", kind, error?.code.rawValue as Any, error as Any)
            // The fault fired after routing: the list is untouched.
            #expect(try await LoopbackClient(port: port).send("GET", "/people").status == 200)
        }
    }
}
