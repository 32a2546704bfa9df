import HTTPTypes
import HammockHTTPServer
import HammockJSON
import HammockServer
import Synchronization
import Testing

/// Every request has a context (number, arrival, peer, matched route) that middleware reads, and an
/// app's middleware goes inside or outside the server's own.
@Suite("Request context")
struct RequestContextTests {
    /// Records what it saw of each request's context after the rest of the chain answered.
    final class Recorder: MockMiddleware {
        struct Seen: Sendable {
            var id: UInt64?
            var route: MatchedRoute?
            var peer: String?
            var status: Int
            var headers: HTTPFields
        }

        let seen = Mutex<[Seen]>([])

        func handle(_ request: MockRequest, next: (MockRequest) async throws -> MockResponse) async throws -> MockResponse {
            let response: MockResponse
            do {
                response = try await next(request)
            } catch let problem as HTTPProblem {
                seen.withLock {
                    $0.append(
                        Seen(
                            id: request.context?.id, route: request.context?.route, peer: request.context?.peer,
                            status: problem.status.code, headers: [:]))
                }
                throw problem
            }
            seen.withLock {
                $0.append(
                    Seen(
                        id: request.context?.id, route: request.context?.route, peer: request.context?.peer,
                        status: response.status.code, headers: response.headerFields))
            }
            return response
        }

        var all: [Seen] { seen.withLock { $0 } }
    }

    func server(inner: Recorder? = nil, outer: Recorder? = nil) async throws -> MockServer {
        let people = MockResource("people", fields: ["name": .string])
        let cars = MockResource("cars", fields: ["name": .string], parents: ["people"])
        let server = try await MockServer(
            resources: [people, cars], middleware: inner.map { [$0] } ?? [], outerMiddleware: outer.map { [$0] } ?? [])
        server.addStubs([try StubRoute(.post, "/login", body: ["token": "t"])])
        try server.route(.get, "/health") { _ in MockResponse(json: ["ok": true]) }
        _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": "ada"]))
        return server
    }

    @Test(
        "Middleware sees which route answered: a resource's collection, item or nested list, a stub, a Swift route; none for a 404",
        arguments: [
            ("/people", MatchedRoute(kind: .resource, pattern: "/people", resource: "people")),
            ("/people/1", MatchedRoute(kind: .resource, pattern: "/people/:id", resource: "people")),
            ("/people/1/cars", MatchedRoute(kind: .resource, pattern: "/people/:id/cars", resource: "cars")),
            ("/health", MatchedRoute(kind: .swift, pattern: "/health")),
            ("/nowhere", nil),
        ])
    func matchedRoute(path: String, expected: MatchedRoute?) async throws {
        let recorder = Recorder()
        let server = try await server(inner: recorder)
        _ = await server.respond(to: MockRequest(.get, path))
        #expect(recorder.all.last?.route == expected)
        let login = await server.respond(to: MockRequest(.post, "/login"))
        #expect(login.status == .ok)
        #expect(recorder.all.last?.route == MatchedRoute(kind: .stub, pattern: "/login"))
        // A method the route lacks is a 405 that still names the route whose path matched.
        #expect(await server.respond(to: MockRequest(.delete, "/health")).status == .methodNotAllowed)
        #expect(recorder.all.last?.route == MatchedRoute(kind: .swift, pattern: "/health"))
    }

    @Test("Every request gets its own number, in order, also when many arrive at once")
    func numbers() async throws {
        let recorder = Recorder()
        let server = try await server(inner: recorder)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<200 { group.addTask { _ = await server.respond(to: MockRequest(.get, "/people")) } }
        }
        // The setup's POST was number 1.
        let ids = recorder.all.compactMap(\.id)
        #expect(ids.count == 201)
        #expect(Set(ids) == Set(1...201))
    }

    @Test("Over HTTP, the context names the peer; outer middleware sees refusals and the answer as it leaves, with CORS")
    func overHTTP() async throws {
        let outer = Recorder()
        let inner = Recorder()
        let server = try await server(inner: inner, outer: outer)
        try await server.whileServing { port in
            let connection = try RawConnection(port: port)
            _ = await connection.send("GET /people/1 HTTP/1.1\r\nHost: x\r\nOrigin: http://app.example\r\n\r\n")
            let answers = await connection.readResponses(1)
            #expect(answers.first?.status == 200)
            let refused = try RawConnection(port: port)
            _ = await refused.send("GET /people HTTP/1.1\r\n\r\n")  // no Host: the transport refuses it
            #expect(await refused.readResponses(1).first?.status == 400)
        }
        // The first entry of each is the setup's POST, in process.
        #expect(outer.all.first?.peer == nil)
        let served = try #require(outer.all.dropFirst().first)
        #expect(served.peer?.hasPrefix("127.0.0.1:") == true)
        #expect(served.route == MatchedRoute(kind: .resource, pattern: "/people/:id", resource: "people"))
        #expect(served.headers[.accessControlAllowOrigin] != nil, "outside CORS: the answer as it left")
        #expect(inner.all.dropFirst().first?.headers[.accessControlAllowOrigin] == nil, "inside CORS: before it was added")
        #expect(outer.all.count == 3, "the refusal went through the outer middleware too")
        #expect(outer.all.last?.status == 400 && outer.all.last?.route == nil)
        // Inside problem mapping, the refusal reaches the inner middleware as a thrown problem, unrouted.
        #expect(inner.all.count == 3)
        #expect(inner.all.last?.status == 400 && inner.all.last?.route == nil)
    }
}
