import HammockServer
import Hummingbird
import Logging
import NIOCore
import NIOPosix

/// A Hummingbird router on one event loop that returns fixed bytes: the ceiling for any server built on it.
struct BareHummingbirdServer {
    let port: Int
    let stop: @Sendable () async -> Void

    static func start(one: MockResponse, list: MockResponse, created: MockResponse) async throws -> BareHummingbirdServer {
        let router = Router()
        @Sendable func response(_ mock: MockResponse) -> Response {
            Response(
                status: mock.status, headers: mock.headerFields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: mock.body)))
        }
        router.get("/people/:id") { _, _ in response(one) }
        router.get("/people") { _, _ in response(list) }
        router.post("/people") { request, _ in
            _ = try await request.body.collect(upTo: 1 << 20)
            return response(created)
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let application = Application(
            router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) },
            eventLoopGroupProvider: .shared(group),
            logger: Logger(label: "bare", factory: { _ in SwiftLogNoOpLogHandler() }))
        let task = Task { try await application.run() }
        var port = 0
        for await value in ports {
            port = value
            break
        }
        return BareHummingbirdServer(
            port: port,
            stop: {
                task.cancel()
                _ = await task.result
                try? await group.shutdownGracefully()
            })
    }
}
