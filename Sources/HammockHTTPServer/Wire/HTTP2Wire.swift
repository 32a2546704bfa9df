import HTTPTypes
import NIOCore
import NIOHTTP1

/// HTTP/2: one stream of a multiplexed connection. The handler writes HTTP/1-shaped parts and NIO's
/// `HTTP2FramePayloadToHTTP1ServerCodec` turns them into HEADERS and DATA frames (lower-casing the
/// names and dropping the fields HTTP/2 forbids, such as `Connection` and `Transfer-Encoding`).
///
/// A stream carries one exchange, so what HTTP/1.1 says by closing the connection, HTTP/2 says by
/// resetting the stream (`RST_STREAM`): a connection fault, a body cut short, an error while the client
/// is still sending. The connection's other streams carry on.
enum HTTP2Wire: ConnectionWire {
    typealias Output = HTTPServerResponsePart
    typealias Context = ChannelHandlerContext

    static let version = HTTPVersion(major: 2, minor: 0)

    static func chunksBodies(version: HTTPVersion) -> Bool { false }

    static func writeAnswer(
        _ response: MockResponse, version: HTTPVersion, keepAlive: Bool, headOnly: Bool, context: ChannelHandlerContext
    ) {
        // The same framing decision as HTTP/1.1's (MockResponse.framing), so a 204 or a 304 carries no
        // body and no length on either protocol.
        let framing = MockResponse.framing(for: response.status)
        let keepsLength = framing == .body || framing == .representationLength
        let body = framing == .body && !headOnly ? response.body : []
        var headers = HTTPHeaders()
        headers.reserveCapacity(response.headerFields.count + 1)
        for field in response.headerFields where field.name != .connection && (keepsLength || field.name != .contentLength) {
            headers.add(name: field.name.rawName, value: field.value)
        }
        switch framing {
        case .body where !headOnly && response.headerFields[.contentLength] == nil:
            headers.add(name: "content-length", value: String(body.count))
        case .empty:
            headers.add(name: "content-length", value: "0")
        case .body, .none, .representationLength:
            break
        }
        let status = HTTPResponseStatus(statusCode: response.status.code, reasonPhrase: response.status.reasonPhrase)
        context.write(
            NIOAny(Output.head(HTTPResponseHead(version: Self.version, status: status, headers: headers))), promise: nil)
        if !headOnly {
            if !body.isEmpty {
                var buffer = context.channel.allocator.buffer(capacity: body.count)
                buffer.writeBytes(body)
                context.write(NIOAny(Output.body(.byteBuffer(buffer))), promise: nil)
            }
            context.write(NIOAny(Output.end(nil)), promise: nil)
        }
        context.flush()
    }

    static func writeChunk(_ bytes: [UInt8], chunked: Bool, context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        var buffer = context.channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        return context.writeAndFlush(NIOAny(Output.body(.byteBuffer(buffer))))
    }

    /// END_STREAM when complete; a body cut short resets the stream, so the client cannot take it for
    /// the whole.
    static func finishBody(chunked: Bool, complete: Bool, context: ChannelHandlerContext) {
        if complete {
            context.writeAndFlush(NIOAny(Output.end(nil)), promise: nil)
        } else {
            context.close(promise: nil)
        }
    }

    static func writeContinue(version: HTTPVersion, context: ChannelHandlerContext) {
        context.writeAndFlush(NIOAny(Output.head(HTTPResponseHead(version: Self.version, status: .continue))), promise: nil)
    }

    /// Every connection fault resets the stream (`RST_STREAM`, CANCEL) after what was sent: HTTP/2 has no
    /// way to half-send a frame, and one exchange must not take the connection's others down with it.
    static func abort(_ fault: ConnectionFault, context: ChannelHandlerContext) {
        context.flush()
        context.close(promise: nil)
    }

    /// The answer has ended the stream on the server's side; resetting the client's side tells it to
    /// stop sending (RFC 9113 §8.1), and nothing can be misread as a next request.
    static func stopInput(context: ChannelHandlerContext) -> Bool {
        context.close(promise: nil)
        return false
    }

    static func switchToWebSocket(
        _ response: MockResponse, session: WebSocketSession, request: MockRequest, server: MockServer,
        limits: ConnectionLimits, activity: ConnectionActivity, context: ChannelHandlerContext
    ) -> Bool { false }
}
