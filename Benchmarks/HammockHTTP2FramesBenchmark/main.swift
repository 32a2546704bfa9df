// What HTTP/2 could cost this server if streams were answered from NIOHTTP2Handler's frames in one
// connection-level handler, with no channel and no HTTP/1 codec per stream: the measurement behind the
// design of issue 43's HTTP/2 goal (100 streams on one connection at least as fast as 100 HTTP/1.1
// connections). Not a server: it reads only HEADERS, ignores request bodies, flow control beyond NIO's own,
// limits and timeouts, which is what makes it a floor. `scripts/bench http2-frames` runs it beside
// `hammock serve --https` in alternating rounds.
//
// usage: hammock-http2-frames MODE PORT CERTIFICATE_PEM KEY_PEM [CONFIGURATION]
//   fixed          every stream answered with one fixed JSON body (SwiftNIO's HTTP/2 and TLS alone)
//   engine         the engine (`MockServer.respond(to:)`, CONFIGURATION in memory) answers each stream in a
//                  task on the connection's event loop, as `hammock serve` answers an HTTP/1.1 request
//   engine-spread  the same, the tasks on the shared concurrency pool, so one connection's streams use
//                  every core; answers are written back on the connection's loop
import Foundation
import HTTPTypes
import HammockHTTPServer
import HammockServer
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL

enum Mode: String {
    case fixed, engine
    case engineSpread = "engine-spread"
}

/// Answers every stream whose HEADERS arrive; one flush per turn of the loop, as `hammock serve`'s
/// HTTP/2 connections coalesce theirs.
final class FrameAnswerer: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    static let fixedBody = ByteBuffer(
        string: #"{"id":1,"name":"Amy Lee","numberOfKids":2,"kilometersWalked":412.5,"avatar":null}"#)

    let mode: Mode
    let server: MockServer?
    private var executor: EventLoopTaskExecutor?
    private var isFlushPending = false

    init(mode: Mode, server: MockServer?) {
        self.mode = mode
        self.server = server
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard case .headers(let headers) = frame.payload else { return }
        let stream = frame.streamID
        guard let server, mode != .fixed else {
            let head: HPACKHeaders = [
                ":status": "200", "content-type": "application/json",
                "content-length": "\(Self.fixedBody.readableBytes)",
            ]
            write(head: head, body: Self.fixedBody, stream: stream, context: context)
            return
        }
        var fields = HTTPFields()
        var method = HTTPRequest.Method.get
        var path = "/"
        for (name, value, _) in headers.headers {
            switch name {
            case ":method": method = HTTPRequest.Method(value) ?? .get
            case ":path": path = value
            default:
                if !name.hasPrefix(":"), let fieldName = HTTPField.Name(name) {
                    fields.append(HTTPField(name: fieldName, value: value))
                }
            }
        }
        let request = MockRequest(method, path, headerFields: fields)
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let loop = context.eventLoop
        if mode == .engineSpread {
            Task {
                let response = await server.respond(to: request)
                loop.execute { FrameAnswerer.answer(response, stream: stream, bound: bound) }
            }
        } else {
            let executor = self.executor ?? EventLoopTaskExecutor(loop)
            self.executor = executor
            Task(executorPreference: executor) {
                let response = await server.respond(to: request)
                FrameAnswerer.answer(response, stream: stream, bound: bound)
            }
        }
    }

    static func answer(
        _ response: MockResponse, stream: HTTP2StreamID, bound: NIOLoopBound<(FrameAnswerer, ChannelHandlerContext)>
    ) {
        let (handler, context) = bound.value
        var head: HPACKHeaders = [":status": "\(response.status.code)"]
        for field in response.headerFields { head.add(name: field.name.canonicalName, value: field.value) }
        head.add(name: "content-length", value: "\(response.body.count)")
        handler.write(head: head, body: ByteBuffer(bytes: response.body), stream: stream, context: context)
    }

    func write(head: HPACKHeaders, body: ByteBuffer, stream: HTTP2StreamID, context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(HTTP2Frame(streamID: stream, payload: .headers(.init(headers: head)))), promise: nil)
        let data = HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(body), endStream: true))
        context.write(wrapOutboundOut(HTTP2Frame(streamID: stream, payload: data)), promise: nil)
        guard !isFlushPending else { return }
        isFlushPending = true
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let (handler, context) = bound.value
            handler.isFlushPending = false
            context.flush()
        }
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 5, let mode = Mode(rawValue: arguments[1]), let port = Int(arguments[2]),
    mode == .fixed || arguments.count >= 6
else {
    FileHandle.standardError.write(
        Data("usage: hammock-http2-frames fixed|engine|engine-spread PORT CERTIFICATE_PEM KEY_PEM [CONFIGURATION]\n".utf8))
    exit(2)
}
let certificates = try NIOSSLCertificate.fromPEMFile(arguments[3])
let key = try NIOSSLPrivateKey(file: arguments[4], format: .pem)
var tls = TLSConfiguration.makeServerConfiguration(
    certificateChain: certificates.map { .certificate($0) }, privateKey: .privateKey(key))
tls.applicationProtocols = ["h2"]
let tlsContext = try NIOSSLContext(configuration: tls)
let engineServer: MockServer? =
    mode == .fixed ? nil : try await MockServer.inMemory(try ServerConfiguration(contentsOfFile: arguments[5]))
let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
    .serverChannelOption(.backlog, value: 256)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(NIOSSLServerHandler(context: tlsContext))
            var connection = NIOHTTP2Handler.ConnectionConfiguration()
            // hammock serve's limit, so h2load's 100 streams fit on one connection in both.
            connection.initialSettings = [HTTP2Setting(parameter: .maxConcurrentStreams, value: 100)]
            try pipeline.addHandler(NIOHTTP2Handler(mode: .server, connectionConfiguration: connection))
            try pipeline.addHandler(FrameAnswerer(mode: mode, server: engineServer))
        }
    }
    .bind(host: "127.0.0.1", port: port).get()
FileHandle.standardError.write(Data("Listening at: https://127.0.0.1:\(port)\n".utf8))
try await listener.closeFuture.get()
