import Foundation
import HTTPTypes
import HammockAsyncHTTPClient
import HammockClient
import HammockHTTPServer
import HammockResources
import HammockServer
import HammockTesting
import Testing

/// One `catch` for both roads and every transport: a `RestError` and a `ResourceError` are both a
/// `RequestFailure`, with the same kind for the same failure, and the request, status and body attached.
@Suite("One error taxonomy")
@MainActor
struct ErrorTaxonomyTests {
    struct Person: Decodable, Sendable { var name: String }

    /// A transport reaching `server` by `road`.
    static func transport(
        _ road: StreamingClientTests.Road, to server: MockServer, timeout: Duration = .seconds(60)
    ) async throws -> (URL, any HTTPTransport) {
        switch road {
        case .inProcess:
            return (URL(string: "http://mock")!, MockServerTransport(server: server, timeout: timeout))
        case .urlSession, .asyncHTTPClient:
            let port = try await server.start(host: "127.0.0.1", port: 0)
            let transport: any HTTPTransport =
                road == .urlSession ? URLSessionTransport(timeout: timeout) : AsyncHTTPClientTransport(timeout: timeout)
            return (URL(string: "http://127.0.0.1:\(port)")!, transport)
        }
    }

    /// What one `catch` written for any road sees.
    static func failure(of work: () async throws -> Void) async -> (any RequestFailure)? {
        do {
            try await work()
            return nil
        } catch let failure as any RequestFailure {
            return failure
        } catch {
            Issue.record("not a RequestFailure: \(type(of: error)) \(error)")
            return nil
        }
    }

    @Test(
        "A server that never answers is .timedOut on both roads and every transport",
        arguments: StreamingClientTests.Road.allCases)
    func timeout(road: StreamingClientTests.Road) async throws {
        let server = try await MockServer()
        defer { Task { await server.stop() } }  // also when the test fails part way
        _ = server.addStubs([try StubRoute(.get, "/slow", body: ["name": "late"])])
        server.setFaults([try Fault("GET /slow", effect: .connection(.timeout))])
        let (base, transport) = try await Self.transport(road, to: server, timeout: .milliseconds(400))
        let rest = await Self.failure {
            _ = try await RestClient(baseURL: base, transport: transport).send(RequestBuilder(.get, "/slow"))
        }
        let service = try Service(baseURL: base, transport: transport)
        let resource = await Self.failure { _ = try await service.resource("/slow", as: Person.self).load() }
        await server.stop()
        for failure in [rest, resource] {
            #expect(failure?.kind == .timedOut, "\(road): \(String(describing: failure))")
            #expect(failure?.isTimedOut == true && failure?.status == nil)
            #expect(failure?.request?.path == "/slow")
        }
        #expect(rest is RestError && resource is ResourceError)
    }

    @Test(
        "A 404 is .unacceptableStatus with the status, the request and the body on both roads",
        arguments: StreamingClientTests.Road.allCases)
    func notFound(road: StreamingClientTests.Road) async throws {
        let server = try await MockServer(resources: [MockResource("people", fields: ["name": .string])])
        defer { Task { await server.stop() } }  // also when the test fails part way
        let (base, transport) = try await Self.transport(road, to: server)
        let rest = await Self.failure {
            _ = try await RestClient(baseURL: base, transport: transport).send(RequestBuilder(.get, "/people/42"))
        }
        let service = try Service(baseURL: base, transport: transport)
        let resource = await Self.failure { _ = try await service.resource("/people/42", as: Person.self).load() }
        await server.stop()
        for failure in [rest, resource] {
            #expect(failure?.kind == .unacceptableStatus, "\(road): \(String(describing: failure))")
            #expect(failure?.status == .notFound && failure?.request?.path == "/people/42")
            #expect(failure?.bodyExcerpt?.contains("42") == true, "\(String(describing: failure?.bodyExcerpt))")
        }
    }

    @Test("A 2xx body that is not the value expected is .decoding on both roads, the decoder's error underneath")
    func decoding() async throws {
        let server = try await MockServer()
        defer { Task { await server.stop() } }  // also when the test fails part way
        _ = server.addStubs([try StubRoute(.get, "/odd", body: ["nom": "Ada"])])
        let (base, transport) = try await Self.transport(.inProcess, to: server)
        let rest = await Self.failure {
            _ = try await RestClient(baseURL: base, transport: transport).send(
                RequestBuilder(.get, "/odd"), decoding: Person.self)
        }
        let service = try Service(baseURL: base, transport: transport)
        let resource = await Self.failure { _ = try await service.resource("/odd", as: Person.self).load() }
        await server.stop()
        #expect(rest?.kind == .decoding && rest?.underlyingError is DecodingError)
        #expect(resource?.kind == .decoding, "\(String(describing: resource))")
    }

    @Test("A service refuses a malformed base URL where it is made, saying why")
    func baseURL() throws {
        #expect(throws: InvalidBaseURL.self) { try Service(baseURL: "api.example.com/v1") }
        #expect(throws: InvalidBaseURL.self) { try Service(baseURL: "ftp://api.example.com") }
        #expect(throws: InvalidBaseURL.self) { try Service(baseURL: "https://api.example.com/v1?key=secret") }
        #expect(throws: InvalidBaseURL.self) { try Service(baseURL: "https://user:pw@api.example.com") }
        #expect(throws: InvalidBaseURL.self) { try Service(baseURL: "https:///nohost") }
        let refused = #expect(throws: InvalidBaseURL.self) { try Service(baseURL: "not a url at all") }
        #expect(refused?.description.contains("not a url at all") == true)
        let service = try Service(baseURL: "https://api.example.com/v1")
        #expect(service.baseURL?.absoluteString == "https://api.example.com/v1")
    }
}
