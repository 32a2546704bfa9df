import Foundation
import HammockHTTPServer
import HammockServer
import HammockTestSupport
import Logging
import Synchronization
import Testing

/// The server as a pipeline: middleware of your own around the router, families of routes of your
/// own beside the resources, and requests the transport refuses passing through the same chain.
@Suite("Middleware and routes of your own")
struct PipelineTests {
    static let trace = HTTPField.Name("X-Trace")!

    /// Appends its name to the request's `X-Trace` on the way in and to the response's on the way out.
    struct Tracing: MockMiddleware {
        let name: String

        func handle(_ request: MockRequest, next: (MockRequest) async throws -> MockResponse) async throws -> MockResponse {
            var request = request
            request.headerFields[PipelineTests.trace] = (request.headerFields[PipelineTests.trace].map { $0 + "," } ?? "") + name
            var response = try await next(request)
            response.headerFields[PipelineTests.trace] =
                (response.headerFields[PipelineTests.trace].map { $0 + "," } ?? "") + name
            return response
        }
    }

    /// Answers `/down` itself with a thrown problem, and `/hello` with a JSON body, without the router.
    struct Answering: MockMiddleware {
        func handle(_ request: MockRequest, next: (MockRequest) async throws -> MockResponse) async throws -> MockResponse {
            switch request.path {
            case "/down": throw HTTPProblem(.serviceUnavailable, detail: "Back soon")
            case "/hello": return MockResponse(json: ["hello": "world"])
            default: return try await next(request)
            }
        }
    }

    /// `GET /echo-trace` answers the `X-Trace` it received; `/people` answers a fixed list.
    struct Echo: MockRoutes {
        func endpoint(for request: MockRequest) throws -> MockEndpoint? {
            switch request.path {
            case "/echo-trace":
                return MockEndpoint(methods: [.get, .head]) { request in
                    MockResponse(json: .string(request.headerFields[PipelineTests.trace] ?? ""))
                }
            case "/people":
                return MockEndpoint(methods: [.get]) { _ in MockResponse(json: ["shadowed"]) }
            default:
                return nil
            }
        }

        var routeTable: [RouteTableEntry] {
            [
                RouteTableEntry(methods: [.get, .head], pattern: "/echo-trace"),
                RouteTableEntry(methods: [.get], pattern: "/people"),
            ]
        }
    }

    @Test("Your middleware sees the request in the order given and the response in the reverse order")
    func order() async throws {
        let server = try await MockServer(
            resources: [Fixtures.people], routes: [Echo()], middleware: [Tracing(name: "a"), Tracing(name: "b")])
        let response = await server.respond(to: MockRequest(.get, "/echo-trace"))
        #expect(try response.json() == "a,b")
        #expect(response.headerFields[Self.trace] == "b,a")
        // Inside the server's own: the answer got its validators and CORS headers after yours ran.
        #expect(response.headerFields[.eTag] != nil)
        #expect(response.headerFields[.accessControlAllowOrigin] == "*")
    }

    @Test("Middleware can answer by itself: a thrown problem is problem+json with CORS, a HEAD loses the body")
    func answering() async throws {
        let server = try await MockServer(resources: [Fixtures.people], middleware: [Answering()])
        let down = await server.respond(to: MockRequest(.get, "/down"))
        #expect(down.status == .serviceUnavailable)
        #expect(down.headerFields[.contentType] == "application/problem+json")
        #expect(try down.json()["detail"] == "Back soon")
        #expect(down.headerFields[.accessControlAllowOrigin] == "*")

        let hello = await server.respond(to: MockRequest(.get, "/hello"))
        let head = await server.respond(to: MockRequest(.head, "/hello"))
        #expect(try hello.json() == ["hello": "world"])
        #expect(head.body.isEmpty && head.headerFields[.contentLength] == String(hello.body.count))
        let tag = try #require(hello.headerFields[.eTag])
        #expect(head.headerFields[.eTag] == tag)
        var conditional = MockRequest(.get, "/hello")
        conditional.headerFields[.ifNoneMatch] = tag
        #expect(await server.respond(to: conditional).status == .notModified)
        // Everything else still reaches the resources.
        #expect(await server.respond(to: MockRequest(.post, "/people", json: ["name": "ada"])).status == .created)
    }

    @Test("Your routes are asked before the resources, and the router answers OPTIONS, 405 and 404 for them")
    func routes() async throws {
        let server = try await MockServer(resources: [Fixtures.people, Fixtures.cars], routes: [Echo()])
        #expect(try await server.respond(to: MockRequest(.get, "/people")).json() == ["shadowed"])
        // The resources' other routes are untouched.
        #expect(await server.respond(to: MockRequest(.post, "/cars", json: ["name": "mini"])).status == .created)

        let options = await server.respond(to: MockRequest(.options, "/echo-trace"))
        #expect(options.status == .noContent && options.headerFields[.allow] == "GET, HEAD, OPTIONS")
        let notAllowed = await server.respond(to: MockRequest(.delete, "/echo-trace"))
        #expect(notAllowed.status == .methodNotAllowed && notAllowed.headerFields[.allow] == "GET, HEAD")
        #expect(await server.respond(to: MockRequest(.get, "/nowhere")).status == .notFound)

        let table = server.routeTable.map { "\($0.methodList) \($0.pattern) \($0.resource ?? "-")" }
        #expect(
            table == [
                "GET, HEAD /echo-trace -", "GET /people -",
                "GET, HEAD, POST /people people", "GET, HEAD, PUT, PATCH, DELETE /people/:id people",
                "GET, HEAD, POST /cars cars", "GET, HEAD, PUT, PATCH, DELETE /cars/:id cars",
                "GET, HEAD, POST /people/:id/cars cars",
            ])
    }

    @Test("Routes added while the server runs answer at once, in front of the others or behind them")
    func addedRoutes() async throws {
        let server = try await MockServer(resources: [Fixtures.people])
        #expect(await server.respond(to: MockRequest(.get, "/echo-trace")).status == .notFound)
        server.addRoutes(Echo(), first: false)
        #expect(await server.respond(to: MockRequest(.get, "/echo-trace")).status == .ok)
        #expect(try await server.respond(to: MockRequest(.get, "/people")).json() == [])  // behind the resources
        server.addRoutes(Echo())
        #expect(try await server.respond(to: MockRequest(.get, "/people")).json() == ["shadowed"])
    }

    @Test("A body over the limit passes through the same pipeline over HTTP: your middleware, latency, CORS, one log line")
    func refusedBodies() async throws {
        let lines = LogRecorder()
        let draws = Shared(0)
        let seen = Shared<[String]>([])
        let server = try await MockServer(
            resources: [Fixtures.people],
            options: MockServer.Options(latency: Latency(.zero ... .zero), maximumBodySize: 64),
            middleware: [Recording(seen: seen)],
            random: {
                draws.withLock { $0 += 1 }
                return 0
            },
            logger: Logger(label: "test") { _ in lines.handler() })
        try await server.whileServing { port in
            let body = String(repeating: "x", count: 500)
            let connection = try RawConnection(port: port)
            await connection.send(
                "POST /people HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
            )
            let response = try #require(RawResponse.parse(await connection.readUntilClosed().bytes).first)
            #expect(response.status == 413)
            #expect(response.header("Access-Control-Allow-Origin") == "*")
        }
        #expect(seen.withLock { $0 } == ["POST /people"])
        #expect(draws.withLock { $0 } == 1)  // the latency middleware drew a delay for it
        #expect(lines.messages.filter { $0.hasSuffix(" 413") } == ["POST /people 413"])
    }

    /// Records the method and path of every request it sees.
    struct Recording: MockMiddleware {
        let seen: Shared<[String]>

        func handle(_ request: MockRequest, next: (MockRequest) async throws -> MockResponse) async throws -> MockResponse {
            seen.withLock { $0.append("\(request.method.rawValue) \(request.path)") }
            return try await next(request)
        }
    }
}

/// A value shared between the test and the server's tasks.
final class Shared<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>

    init(_ value: Value) { storage = Mutex(value) }

    func withLock<T>(_ body: (inout Value) -> T) -> T { storage.withLock { body(&$0) } }
}

/// Collects the messages logged through the handlers it makes.
final class LogRecorder: Sendable {
    private let storage = Mutex<[String]>([])

    var messages: [String] { storage.withLock { $0 } }

    func handler() -> Handler { Handler(recorder: self) }

    struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            recorder.storage.withLock { $0.append(event.message.description) }
        }
    }
}
