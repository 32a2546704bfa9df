import Logging
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The listening socket, made here rather than by SwiftNIO's bootstrap so that the server knows its
/// descriptor: when the process runs out of descriptors, only draining the accept queue stops the loop
/// from spinning (see ``DescriptorExhaustionHandler``).
enum ListeningSocket {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// A bound, listening, non-blocking, close-on-exec socket for `host:port`, as a descriptor that the
    /// caller hands to SwiftNIO (which then owns and closes it).
    static func make(host: String, port: Int, backlog: Int32 = 256) throws -> Int32 {
        let address = try SocketAddress.makeAddressResolvingHost(host, port: port)
        #if canImport(Darwin)
        let type = SOCK_STREAM
        #else
        let type = Int32(SOCK_STREAM.rawValue)
        #endif
        let descriptor = socket(Int32(address.protocol.rawValue), type, 0)
        guard descriptor >= 0 else { throw Failure(description: String(cString: strerror(errno))) }
        func fail() -> Failure {
            let failure = Failure(description: String(cString: strerror(errno)))
            close(descriptor)
            return failure
        }
        var on: Int32 = 1
        guard setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size)) == 0,
            fcntl(descriptor, F_SETFD, FD_CLOEXEC) == 0,
            fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK) == 0,
            address.withSockAddr({ bind(descriptor, $0, socklen_t($1)) }) == 0,
            listen(descriptor, backlog) == 0
        else { throw fail() }
        return descriptor
    }
}

/// Keeps serving when the process runs out of descriptors.
///
/// When `accept` fails with EMFILE or ENFILE the waiting connection stays in the listening socket's
/// queue, so the socket stays readable and the event loop would retry at once, for as long as the
/// shortage lasts (a core at 100%: SwiftNIO's `AcceptBackoffHandler` cannot pause it, because a failed
/// accept leaves the channel's read pending). This handler keeps one spare descriptor; on a shortage it
/// frees it, accepts and closes every waiting connection (those clients see the connection close
/// rather than hang), and takes the spare back. Connections that arrive once descriptors are free
/// again are served as usual. The approach libuv and nginx take.
final class DescriptorExhaustionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel

    let listening: Int32
    let logger: Logger
    private var spare: Int32
    private var lastWarning: NIODeadline?

    init(listening: Int32, logger: Logger) {
        self.listening = listening
        self.logger = logger
        spare = open("/dev/null", O_RDONLY | O_CLOEXEC)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let ioError = error as? IOError, ioError.errnoCode == EMFILE || ioError.errnoCode == ENFILE else {
            context.fireErrorCaught(error)
            return
        }
        if spare >= 0 {
            close(spare)
            spare = -1
        }
        var refused = 0
        while true {
            let accepted = accept(listening, nil, nil)
            guard accepted >= 0 else { break }  // EAGAIN: the queue is empty (or still no descriptor)
            close(accepted)
            refused += 1
        }
        spare = open("/dev/null", O_RDONLY | O_CLOEXEC)
        let now = NIODeadline.now()
        if lastWarning.map({ now - $0 > .seconds(5) }) ?? true {
            lastWarning = now
            logger.warning(
                "out of file descriptors: closed \(refused) waiting connection(s); raise the limit (ulimit -n) or close idle clients"
            )
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if spare >= 0 {
            close(spare)
            spare = -1
        }
    }
}
