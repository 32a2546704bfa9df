import NIOCore
import NIOHTTP1

/// NIO's HTTP/1.1 request decoder (llhttp), with what a server that must never fall out of step with
/// its client needs around it. It is the connection's only view of raw input, so it also:
///
/// - notes when the first byte of a request arrives, which the decoder cannot say until the whole head
///   is in (a client sending its head one byte a minute would otherwise never start the request
///   timeout), and whether part of a head is still waiting after a decode;
/// - drops everything once the connection has stopped taking requests (after an error, or `CONNECT`),
///   so a client cannot make the server hold what it sends while the connection lingers;
/// - replaces the decoder after a request that asked for an upgrade. llhttp stops parsing after such a
///   request for good, expecting the other protocol to take over; Hammock speaks none, ignores the
///   `Upgrade` (RFC 9110 §7.8 lets a server) and answers the request, so a fresh decoder reads on from
///   the byte after it. Without this the connection answered nothing more, and buffered everything the
///   client sent until the request timeout.
struct RequestDecoder: ByteToMessageDecoder {
    typealias InboundOut = HTTPServerRequestPart

    private var decoder: HTTPRequestDecoder
    private let limits: NIOHTTPDecoderLimitConfiguration
    let activity: ConnectionActivity

    init(limits: NIOHTTPDecoderLimitConfiguration, activity: ConnectionActivity) {
        self.limits = limits
        self.activity = activity
        decoder = HTTPRequestDecoder(limitConfiguration: limits)
    }

    mutating func decoderAdded(context: ChannelHandlerContext) { decoder.decoderAdded(context: context) }

    mutating func decoderRemoved(context: ChannelHandlerContext) { decoder.decoderRemoved(context: context) }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if activity.switchedProtocols {
            // WebSocket frames, for the frame decoder after this one (the HTTP handler has left).
            if let bytes = buffer.readSlice(length: buffer.readableBytes), bytes.readableBytes > 0 {
                context.fireChannelRead(NIOAny(bytes))
            }
            return .needMoreData
        }
        guard !activity.isInputDone else {
            buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            return .needMoreData
        }
        if activity.phase == .idle, buffer.readableBytes > 0 { activity.enter(.reading) }
        _ = try decoder.decode(context: context, buffer: &buffer)
        if activity.decoderStopped {
            // The request that stopped it has ended (the connection handler saw its end): what is left
            // in the buffer is the next request, for a decoder that starts at a message boundary.
            activity.decoderStopped = false
            decoder.decoderRemoved(context: context)
            decoder = HTTPRequestDecoder(limitConfiguration: limits)
            decoder.decoderAdded(context: context)
            return buffer.readableBytes > 0 ? .continue : .needMoreData
        }
        // NIO's decoder leaves the bytes of a head's unfinished URL or field in the buffer: part of a
        // request has arrived, whatever the phase says (the answer to the request before it may have
        // set it back to idle since).
        activity.notePartialHead(buffer.readableBytes > 0)
        return .needMoreData
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        if activity.switchedProtocols { return try decode(context: context, buffer: &buffer) }
        guard !activity.isInputDone else {
            buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            return .needMoreData
        }
        return try decoder.decodeLast(context: context, buffer: &buffer, seenEOF: seenEOF)
    }
}

extension HTTPRequestHead {
    /// Whether llhttp stops parsing after this request: `CONNECT`, or an `Upgrade` field together with
    /// the token `upgrade` in `Connection` (or `Proxy-Connection`, which llhttp reads the same way),
    /// in any case. This must be exactly llhttp's rule (`llhttp__before_headers_complete`): a decoder
    /// replaced when it had not stopped would lose the part of the next request it had already read.
    /// `ConnectionFramingTests` sends near misses to hold it to that.
    var stopsDecoder: Bool {
        if method == .CONNECT { return true }
        guard headers.contains(name: "upgrade") else { return false }
        for (name, value) in headers {
            let lowered = name.lowercased()
            guard lowered == "connection" || lowered == "proxy-connection" else { continue }
            for token in value.split(separator: ",") {
                if token.trimmingWhitespace().lowercased() == "upgrade" { return true }
            }
        }
        return false
    }
}

extension Substring {
    /// Without the spaces and tabs around it (optional whitespace, RFC 9110 §5.6.3).
    func trimmingWhitespace() -> Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
