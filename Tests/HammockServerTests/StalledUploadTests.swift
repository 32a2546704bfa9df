import HTTPTypes
import HammockHTTPServer
import HammockJSON
import HammockServer
import Synchronization
import Testing

/// A body over the limit, handed to a route that takes it as it arrives (the proxy), from a client that
/// stops sending half way and keeps the connection open: the request timeout bounds the silence, not the
/// whole upload (a large one may rightly take minutes).
@Suite("An upload that stops arriving", .timeLimit(.minutes(1)))
struct StalledUploadTests {
    /// Reads the streamed body and notes how it ended; rethrows a cut, which answers for itself.
    struct Reading: MockRoutes {
        let ended: @Sendable (String) -> Void
        func endpoint(for request: MockRequest) throws -> MockEndpoint? {
            guard request.path == "/upload" else { return nil }
            return MockEndpoint(methods: [.post], takesStreamedBody: true) { request in
                var count = 0
                do {
                    for try await piece in request.bodyStream ?? RequestBodyStream(length: 0) { count += piece.count }
                } catch let cut as RequestBodyStream.Cut {
                    ended(cut.stalled == nil ? "cut at \(cut.received)" : "stalled at \(cut.received)")
                    throw cut
                }
                ended("whole \(count)")
                return MockResponse(status: .noContent)
            }
        }
        var routeTable: [RouteTableEntry] { [] }
        var mayTakeStreamedBodies: Bool { true }
    }

    @Test(
        "Nothing more for the request timeout: the route's body ends as stalled, the client gets 408 problem+json with Connection: close, and the connection closes"
    )
    func stalledUploadGets408() async throws {
        let endings = Mutex<[String]>([])
        let server = try await MockServer(
            resources: [], options: MockServer.Options(maximumBodySize: 1024),
            routes: [Reading { note in endings.withLock { $0.append(note) } }])
        let limits = ConnectionLimits(idleTimeout: .seconds(5), requestTimeout: .seconds(1), lingerTimeout: .seconds(1))
        try await server.whileServing(limits: limits) { port in
            let connection = try RawConnection(port: port)
            // The head and a fifth of the body in one write (two could be a second apart on a loaded machine,
            // a stall of the test's own), then silence: the answer comes at the request timeout. That a
            // piece arriving within the timeout starts the wait again is HTTPConnectionStateMachineTests'.
            let head = Array("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n".utf8)
            #expect(await connection.send(head + [UInt8](repeating: 0x75, count: 20_000)))
            let read = await connection.readToEnd(timeout: .seconds(20))
            let text = String(decoding: read.bytes, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 408"), "\(text.prefix(200))")
            #expect(text.lowercased().contains("connection: close"))
            #expect(text.contains("application/problem+json") && text.contains("stopped arriving after 20000 bytes"))
            #expect(read.end != .silent, "the connection closes after the answer")
            #expect(endings.withLock { $0 } == ["stalled at 20000"])
        }
    }
}
