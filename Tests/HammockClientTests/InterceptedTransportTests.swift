import Foundation
import HTTPTypes
import HammockClient
import Synchronization
import Testing

@Suite("The transport chain without a base URL")
struct InterceptedTransportTests {
    /// Adds its name to `X-Trace` on the way out and to the response's on the way back.
    struct Tracing: ClientInterceptor {
        let name: String

        func intercept(_ request: HTTPRequest, body: [UInt8]?, next: Next) async throws -> (HTTPResponse, [UInt8]) {
            var request = request
            let trace = HTTPField.Name("X-Trace")!
            request.headerFields[trace] = (request.headerFields[trace].map { $0 + "," } ?? "") + name
            var (response, bytes) = try await next(request, body)
            response.headerFields[trace] = (response.headerFields[trace].map { $0 + "," } ?? "") + name
            return (response, bytes)
        }
    }

    @Test("Interceptors run in the order given around the transport, for any absolute request head")
    func order() async throws {
        let transport = MockTransport { request, _ in
            (HTTPResponse(status: .ok), Array((request.headerFields[HTTPField.Name("X-Trace")!] ?? "").utf8))
        }
        let chain = InterceptedTransport(transport, interceptors: [Tracing(name: "a"), Tracing(name: "b")])
        let head = HTTPRequest(method: .get, scheme: "https", authority: "elsewhere.example", path: "/x")
        let (response, body) = try await chain.send(head, body: nil)
        #expect(String(decoding: body, as: UTF8.self) == "a,b")
        #expect(response.headerFields[HTTPField.Name("X-Trace")!] == "b,a")
    }

    @Test("A client's perform goes through the same chain as its requests")
    func clientUsesChain() async throws {
        let seen = Mutex<[String]>([])
        let transport = MockTransport { request, _ in
            seen.withLock { $0.append(request.headerFields[HTTPField.Name("X-Trace")!] ?? "") }
            return (HTTPResponse(status: .ok), Array("{}".utf8))
        }
        let client = RestClient(
            baseURL: try #require(URL(string: "https://api.example.com/v1")), transport: transport,
            interceptors: [Tracing(name: "a")])
        _ = try await client.send(RequestBuilder(.get, "/users"))
        _ = try await client.perform(
            HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: "/"), body: nil)
        _ = try await client.intercepted.send(
            HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: "/"), body: nil)
        #expect(seen.withLock { $0 } == ["a", "a", "a"])
    }
}
