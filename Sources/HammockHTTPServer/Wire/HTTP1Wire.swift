import HTTPTypes
import HammockServer
import NIOCore
import NIOHTTP1
import NIOWebSocket

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// HTTP/1.1 (and 1.0) as bytes this server writes itself, not as parts for NIO's encoder: a response is
/// one buffer, one write and one flush.
enum HTTP1Wire: ConnectionWire {
    typealias Output = ByteBuffer
    typealias Context = ChannelHandlerContext

    static func chunksBodies(version: HTTPVersion) -> Bool { version != .http1_0 }

    /// Writes a response: status line, header fields, framing headers, body (unless `headOnly`). HTTPTypes
    /// has already made every name a token and every value free of CR, LF and NUL, so the fields are
    /// written as they are.
    static func writeAnswer(
        _ response: MockResponse, version: HTTPVersion, keepAlive: Bool, headOnly: Bool, context: ChannelHandlerContext
    ) {
        // One decision for the engine and the wire (MockResponse.framing): the engine already takes the
        // body off the statuses that forbid one; a body written here would be read as the next response.
        let framing = MockResponse.framing(for: response.status)
        let body = framing == .body && !headOnly ? response.body : []
        // A 204's or 205's own Content-Length is not written: the framing says what it must be.
        let keepsLength = framing == .body || framing == .representationLength
        var size = 64 + body.count
        for field in response.headerFields { size += field.name.rawName.utf8.count + field.value.utf8.count + 4 }
        var buffer = context.channel.allocator.buffer(capacity: size)
        writeStatusLine(version: version, status: response.status, into: &buffer)
        for field in response.headerFields where field.name != .connection && (keepsLength || field.name != .contentLength) {
            buffer.writeString(field.name.rawName)
            buffer.writeStaticString(": ")
            buffer.writeString(field.value)
            buffer.writeStaticString("\r\n")
        }
        switch framing {
        case .body where !headOnly && response.headerFields[.contentLength] == nil:
            buffer.writeStaticString("Content-Length: ")
            buffer.writeString(String(body.count))
            buffer.writeStaticString("\r\n")
        case .empty:
            buffer.writeStaticString("Content-Length: 0\r\n")
        case .body, .none, .representationLength:
            break
        }
        if !keepAlive {
            buffer.writeStaticString("Connection: close\r\n")
        } else if version == .http1_0 {
            buffer.writeStaticString("Connection: keep-alive\r\n")
        }
        buffer.writeStaticString("\r\n")
        buffer.writeBytes(body)
        context.writeAndFlush(NIOAny(buffer), promise: nil)
    }

    static func writeChunk(_ bytes: [UInt8], chunked: Bool, context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        var buffer = context.channel.allocator.buffer(capacity: bytes.count + 16)
        if chunked {
            buffer.writeString(String(bytes.count, radix: 16))
            buffer.writeStaticString("\r\n")
        }
        buffer.writeBytes(bytes)
        if chunked { buffer.writeStaticString("\r\n") }
        return context.writeAndFlush(NIOAny(buffer))
    }

    /// The last chunk if the body is complete; a body cut short has none, and the close that follows
    /// tells the client so.
    static func finishBody(chunked: Bool, complete: Bool, context: ChannelHandlerContext) {
        guard chunked, complete else { return }
        var buffer = context.channel.allocator.buffer(capacity: 5)
        buffer.writeStaticString("0\r\n\r\n")
        context.writeAndFlush(NIOAny(buffer), promise: nil)
    }

    static func writeContinue(version: HTTPVersion, context: ChannelHandlerContext) {
        var buffer = context.channel.allocator.buffer(capacity: 32)
        writeStatusLine(version: version, status: .continue, into: &buffer)
        buffer.writeStaticString("\r\n")
        context.writeAndFlush(NIOAny(buffer), promise: nil)
    }

    static func abort(_ fault: ConnectionFault, context: ChannelHandlerContext) {
        switch fault {
        case .reset:
            // SO_LINGER with a zero timeout makes close() send RST instead of FIN.
            guard let socket = context.channel as? any SocketOptionProvider else {
                context.close(promise: nil)
                return
            }
            socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).hop(to: context.eventLoop).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        case .malformed:
            var buffer = context.channel.allocator.buffer(capacity: ConnectionFault.malformedBytes.count)
            buffer.writeBytes(ConnectionFault.malformedBytes)
            context.writeAndFlush(NIOAny(buffer), promise: nil)
            context.close(promise: nil)
        case .drop, .empty, .timeout, .truncate:
            context.close(promise: nil)
        }
    }

    /// Writes the `101` (with `Connection: Upgrade`, which ``writeAnswer`` leaves to the framing), then
    /// puts NIO's WebSocket frame decoder and encoder and a ``WebSocketHandler`` in place of the HTTP
    /// handlers. Bytes that arrive meanwhile (a client that did not wait for the `101`) pass through the
    /// request decoder untouched to the frame decoder.
    static func switchToWebSocket(
        _ response: MockResponse, session: WebSocketSession, request: MockRequest, server: MockServer,
        limits: ConnectionLimits, activity: ConnectionActivity, context: ChannelHandlerContext
    ) -> Bool {
        var buffer = context.channel.allocator.buffer(capacity: 256)
        writeStatusLine(version: .http1_1, status: response.status, into: &buffer)
        for field in response.headerFields where field.name != .connection && field.name != .contentLength {
            buffer.writeString(field.name.rawName)
            buffer.writeStaticString(": ")
            buffer.writeString(field.value)
            buffer.writeStaticString("\r\n")
        }
        buffer.writeStaticString("Connection: Upgrade\r\n\r\n")
        context.writeAndFlush(NIOAny(buffer), promise: nil)
        activity.switchedProtocols = true
        let pipeline = context.pipeline.syncOperations
        let size = server.options.maximumBodySize
        do {
            try pipeline.addHandlers(
                [
                    WebSocketFrameEncoder(), ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: size)),
                    WebSocketHandler(
                        server: server, session: session, request: request, maximumMessageSize: size,
                        lingerTimeout: limits.lingerTimeout, idleTimeout: limits.idleTimeout),
                ], position: .after(context.handler))
            let decoder = try pipeline.context(handlerType: ByteToMessageHandler<RequestDecoder>.self)
            pipeline.removeHandler(context: context, promise: nil)
            pipeline.removeHandler(context: decoder, promise: nil)
        } catch {
            context.close(promise: nil)
        }
        return true
    }

    /// Closing at once could reset the connection before the client reads the error: the output is
    /// closed (FIN) and what still arrives is read and discarded.
    static func stopInput(context: ChannelHandlerContext) -> Bool {
        context.close(mode: .output, promise: nil)
        return true
    }

    /// `HTTP/1.1 200 OK`: the request's version (1.0 or 1.1; the decoder accepts no other), the code and
    /// its reason phrase.
    static func writeStatusLine(version: HTTPVersion, status: HTTPResponse.Status, into buffer: inout ByteBuffer) {
        let isOneZero = version.major == 1 && version.minor == 0
        if status.code == 200 && status.reasonPhrase == "OK" {
            buffer.writeStaticString(isOneZero ? "HTTP/1.0 200 OK\r\n" : "HTTP/1.1 200 OK\r\n")
            return
        }
        if isOneZero {
            buffer.writeStaticString("HTTP/1.0 ")
        } else {
            buffer.writeStaticString("HTTP/1.1 ")
        }
        buffer.writeString(String(status.code))
        buffer.writeStaticString(" ")
        // A status made from its code alone (a stub's 202, `Prefer: status=418`) has no phrase of its own.
        buffer.writeString(status.reasonPhrase.isEmpty ? standardReasonPhrases[status.code] ?? "" : status.reasonPhrase)
        buffer.writeStaticString("\r\n")
    }

    /// The phrases of RFC 9110 (and 6585's, 7538's, 8297's, 8470's, 2518/4918's that clients meet).
    static let standardReasonPhrases: [Int: String] = [
        100: "Continue", 101: "Switching Protocols", 103: "Early Hints",
        200: "OK", 201: "Created", 202: "Accepted", 203: "Non-Authoritative Information", 204: "No Content",
        205: "Reset Content", 206: "Partial Content", 207: "Multi-Status",
        300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
        307: "Temporary Redirect", 308: "Permanent Redirect",
        400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found",
        405: "Method Not Allowed", 406: "Not Acceptable", 407: "Proxy Authentication Required", 408: "Request Timeout",
        409: "Conflict", 410: "Gone", 411: "Length Required", 412: "Precondition Failed", 413: "Content Too Large",
        414: "URI Too Long", 415: "Unsupported Media Type", 416: "Range Not Satisfiable", 417: "Expectation Failed",
        418: "I'm a teapot", 421: "Misdirected Request", 422: "Unprocessable Content", 423: "Locked", 425: "Too Early",
        426: "Upgrade Required", 428: "Precondition Required", 429: "Too Many Requests",
        431: "Request Header Fields Too Large", 451: "Unavailable For Legal Reasons",
        500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
        504: "Gateway Timeout", 505: "HTTP Version Not Supported", 507: "Insufficient Storage",
        511: "Network Authentication Required",
    ]
}
