import Foundation
import HTTPTypes
import HammockAsyncHTTPClient
import HammockClient
import HammockHTTPServer
import HammockServer
import HammockTesting
import Testing

/// A redirect policy per client, the same on every transport: follow, same origin only, never.
@Suite("Redirect policies")
struct RedirectPolicyTests {
    /// A transport by `road` following `policy`, and the base URL reaching `server` that way.
    static func client(
        _ road: StreamingClientTests.Road, _ policy: RedirectPolicy, to server: MockServer
    ) async throws
        -> RestClient
    {
        switch road {
        case .inProcess:
            return RestClient(
                baseURL: URL(string: "http://mock")!, transport: MockServerTransport(server: server, redirects: policy))
        case .urlSession, .asyncHTTPClient:
            let port = try await server.start(host: "127.0.0.1", port: 0)
            let transport: any HTTPTransport =
                road == .urlSession ? URLSessionTransport(redirects: policy) : AsyncHTTPClientTransport(redirects: policy)
            return RestClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!, transport: transport)
        }
    }

    static let cases: [(StreamingClientTests.Road, RedirectPolicy)] = StreamingClientTests.Road.allCases.flatMap { road in
        [RedirectPolicy.follow, .sameOrigin, .never].map { (road, $0) }
    }

    @Test("Within the origin: followed unless the policy is never, which answers the 302 itself", arguments: Self.cases)
    func sameOrigin(road: StreamingClientTests.Road, policy: RedirectPolicy) async throws {
        let server = try await MockServer()
        defer { Task { await server.stop() } }  // also when the test fails part way
        _ = server.addStubs([
            try StubRoute(.get, "/old", status: .found, headers: [(.location, "/new")]),
            try StubRoute(.get, "/new", body: ["where": "new"]),
        ])
        let client = try await Self.client(road, policy, to: server)
        let answer = try await client.send(RequestBuilder(.get, "/old"), acceptingAnyStatus: true)
        await server.stop()
        if policy == .never {
            #expect(answer.status.code == 302 && answer.headerFields[.location] == "/new", "\(road)")
        } else {
            #expect(answer.status.code == 200 && String(decoding: answer.body, as: UTF8.self).contains("new"), "\(road)")
        }
    }

    @Test(
        "To another origin: followed only under follow; sameOrigin and never answer the 302 itself",
        arguments: [StreamingClientTests.Road.urlSession, .asyncHTTPClient].flatMap { road in
            [RedirectPolicy.follow, .sameOrigin, .never].map { (road, $0) }
        })
    func otherOrigin(road: StreamingClientTests.Road, policy: RedirectPolicy) async throws {
        let elsewhere = try await MockServer()
        defer { Task { await elsewhere.stop() } }  // also when the test fails part way
        _ = elsewhere.addStubs([try StubRoute(.get, "/there", body: ["server": "elsewhere"])])
        let elsewherePort = try await elsewhere.start(host: "127.0.0.1", port: 0)
        let server = try await MockServer()
        defer { Task { await server.stop() } }
        let target = "http://127.0.0.1:\(elsewherePort)/there"
        _ = server.addStubs([try StubRoute(.get, "/away", status: .found, headers: [(.location, target)])])
        let client = try await Self.client(road, policy, to: server)
        let answer = try await client.send(RequestBuilder(.get, "/away"), acceptingAnyStatus: true)
        await server.stop()
        await elsewhere.stop()
        if policy == .follow {
            #expect(answer.status.code == 200 && String(decoding: answer.body, as: UTF8.self).contains("elsewhere"), "\(road)")
        } else {
            #expect(answer.status.code == 302 && answer.headerFields[.location] == target, "\(road) \(policy)")
        }
    }

    @Test("In process, a redirect out of the server answers the 302 under sameOrigin instead of failing")
    func inProcessOut() async throws {
        let server = try await MockServer()
        defer { Task { await server.stop() } }  // also when the test fails part way
        _ = server.addStubs([try StubRoute(.get, "/away", status: .found, headers: [(.location, "https://example.com/x")])])
        let follow = try await Self.client(.inProcess, .follow, to: server)
        await #expect(throws: RestError.self) { try await follow.send(RequestBuilder(.get, "/away"), acceptingAnyStatus: true) }
        let same = try await Self.client(.inProcess, .sameOrigin, to: server)
        #expect(try await same.send(RequestBuilder(.get, "/away"), acceptingAnyStatus: true).status.code == 302)
        await server.stop()
    }
}
