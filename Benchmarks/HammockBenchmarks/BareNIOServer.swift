import HammockServer
import NIOCore
import NIOHTTP1
import NIOPosix

/// The floor: a plain NIOHTTP1 channel handler on one event loop, answering fixed bytes (what the mock
/// answered for the same request, headers included). Nothing can serve HTTP/1.1 on SwiftNIO for less.
struct BareNIOServer {
    let port: Int
    let stop: @Sendable () async -> Void

    /// A response ready to write: its head and its body.
    struct Fixed: Sendable {
        var head: HTTPResponseHead
        var body: ByteBuffer

        init(_ response: MockResponse) {
            var headers = HTTPHeaders()
            for field in response.headerFields { headers.add(name: field.name.rawName, value: field.value) }
            if response.headerFields[.contentLength] == nil {
                headers.add(name: "Content-Length", value: String(response.body.count))
            }
            head = HTTPResponseHead(
                version: .http1_1, status: HTTPResponseStatus(statusCode: Int(response.status.code)), headers: headers)
            body = ByteBuffer(bytes: response.body)
        }
    }

    /// GET of a path with a second segment answers `one`, GET of anything else `list`, POST `created`.
    final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let one: Fixed
        let list: Fixed
        let created: Fixed
        var current: Fixed?

        init(one: Fixed, list: Fixed, created: Fixed) {
            self.one = one
            self.list = list
            self.created = created
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                if head.method == .POST {
                    current = created
                } else {
                    current = head.uri.utf8.dropFirst().contains(UInt8(ascii: "/")) ? one : list
                }
            case .body:
                break
            case .end:
                guard let response = current else { return }
                context.write(wrapOutboundOut(.head(response.head)), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(response.body))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }

    static func start(one: MockResponse, list: MockResponse, created: MockResponse) async throws -> BareNIOServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let responses = (Fixed(one), Fixed(list), Fixed(created))
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(
                        Handler(one: responses.0, list: responses.1, created: responses.2))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 0
        return BareNIOServer(
            port: port,
            stop: {
                try? await channel.close()
                try? await group.shutdownGracefully()
            })
    }
}
