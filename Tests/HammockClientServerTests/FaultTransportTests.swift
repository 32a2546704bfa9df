import Foundation
import HammockClient
import HammockHTTPServer
import HammockServer
import HammockTesting
import Testing

/// A connection fault fails a call in process the way it fails over a socket: the same `URLError`
/// from `MockServerTransport` as from `URLSessionTransport` over loopback.
@Suite("Connection faults through the client's transports")
struct FaultTransportTests {
    struct Person: Codable, Sendable {
        var id: Int?
        var name: String
    }

    static func server() async throws -> MockServer {
        let server = try await MockServer(resources: [MockResource("people", fields: ["name": .string])])
        try await server.addData(["name": "ada"], for: "people")
        return server
    }

    /// The URLError under the client's error, if the call failed in the transport.
    static func transportError(_ client: RestClient) async -> URLError? {
        do {
            _ = try await client.send(RequestBuilder(.get, "/people/1"), decoding: Person.self)
            return nil
        } catch {
            // A timeout is its own case (the same on every transport); the rest are transport failures.
            switch error.reason {
            case .transport(let underlying), .timedOut(let underlying): return underlying as? URLError
            default: return nil
            }
        }
    }

    @Test(
        "Each kind fails a call in process with the URLError URLSession meets over loopback",
        arguments: [ConnectionFault.drop, .empty, .reset, .truncate, .malformed, .timeout])
    func sameError(kind: ConnectionFault) async throws {
        let server = try await Self.server()
        server.setFaults([try Fault("GET /people/:id", effect: .connection(kind))])
        let wait = Duration.milliseconds(1500)
        let inProcess = RestClient(
            baseURL: try #require(URL(string: "http://mock")), transport: MockServerTransport(server: server, timeout: wait))
        let local = await Self.transportError(inProcess)
        let remote = try await server.whileServing { port in
            let client = RestClient(
                baseURL: try #require(URL(string: "http://127.0.0.1:\(port)")), transport: URLSessionTransport(timeout: wait))
            return await Self.transportError(client)
        }
        #expect(remote != nil && local != nil)
        #expect(
            local?.code == remote?.code, "in process \(String(describing: local)), over loopback \(String(describing: remote))")
        #expect(local?.code == MockServerTransport.urlError(for: kind).code)
        // Both reached the server and were journaled with the fault.
        #expect(server.journal.entries.count == 2)
        #expect(server.journal.entries.allSatisfy { $0.fault == "GET /people/:id \(kind.rawValue)" })
    }
}
