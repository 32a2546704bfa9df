import Foundation
import HTTPTypes
import HammockServer
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

extension ProxyRoutes {
    /// The client's handshake fields a hop makes its own: the key and version (the upstream's handshake
    /// has its own key), and extensions (each hop compresses or not on its own; the relay offers none).
    static let webSocketHopFields: Set<String> = [
        "sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions", "sec-websocket-accept",
    ]

    /// The most of a refusal's body passed on (an upstream's 401 or 404 to a handshake is a problem
    /// document, not a download).
    static let refusalBodyLimit = 64 << 10

    /// A WebSocket handshake forwarded: the upstream's socket opened with the client's fields (its
    /// subprotocols, cookies, token and `Origin`), then the client's `101` with the subprotocol the
    /// upstream agreed and a session that relays messages both ways (``UpstreamWebSocket``). An upstream
    /// that refuses the handshake has its answer passed on as it gave it; one that cannot be reached is a
    /// 502, one that does not answer in ``timeout`` a 504.
    func forwardWebSocket(_ request: MockRequest) async throws -> MockResponse {
        // A handshake the client got wrong is answered by the mock, as its own WebSocket routes answer it,
        // before anything is sent upstream.
        let checked = MockResponse.webSocket(answering: request) { _ in }
        guard checked.status == .switchingProtocols else { return checked }
        guard let host = upstream.host, let loop = MultiThreadedEventLoopGroup.currentEventLoop ?? Self.clients.first?.loop
        else {
            throw HTTPProblem(
                .badGateway, detail: "The upstream \(origin) names no host", extensions: ["upstream": .string(origin)])
        }
        let secure = upstream.scheme?.lowercased() == "https"
        let tls: NIOSSLContext?
        do {
            tls = secure ? try webSocketTLSContext() : nil
        } catch {
            throw HTTPProblem(
                .badGateway, detail: "TLS to the upstream \(origin) cannot be set up: \(error)",
                extensions: ["upstream": .string(origin)])
        }
        let target = prefix + request.path + (request.query.map { "?" + $0 } ?? "")
        let pending = UpstreamWebSocket.Pending()
        let deadline = loop.scheduleTask(in: Self.timeAmount(timeout)) { pending.timeOut() }
        defer { deadline.cancel() }
        do {
            let opening = try await withTaskCancellationHandler {
                try await UpstreamWebSocket.open(
                    host: host, port: upstream.port ?? (secure ? 443 : 80), tls: tls, target: target,
                    headers: upstreamHeaders(for: request, leaving: Self.webSocketHopFields), on: loop, pending: pending)
            } onCancel: {
                pending.timeOut()
            }
            switch opening {
            case .refused(let channel):
                let (head, body) = try await UpstreamWebSocket.readRefusal(
                    channel, limit: Self.refusalBodyLimit, pending: pending)
                let status = HTTPResponse.Status(code: Int(head.status.code), reasonPhrase: head.status.reasonPhrase)
                let fields = answerFields(head.headers).fields
                // Recorded as any answer is: a replay refuses the handshake as the backend did.
                recording?.add(request: request, status: status, fields: fields, body: body)
                return MockResponse(status: status, headerFields: fields, body: body)
            case .upgraded(let channel, let head):
                let socket = UpstreamSocket(channel)
                let agreed = head.headers["Sec-WebSocket-Protocol"].first
                // The upstream's own fields (a cookie, a server name) reach the client; the handshake's are the mock's.
                let own = answerFields(head.headers).fields.filter {
                    !Self.webSocketHopFields.contains($0.name.canonicalName) && $0.name != .secWebSocketProtocol
                }
                let recording = self.recording
                var response = MockResponse.webSocket(answering: request, protocols: agreed.map { [$0] } ?? []) { connection in
                    // Timed from here, the session's start: what the upstream sent with its 101 is read after it.
                    let recorder = recording?.startSession(request: request, fields: Array(own), subprotocol: agreed)
                    defer { recorder?.finish() }
                    try await UpstreamWebSocket.relay(connection, socket, recorder: recorder)
                }
                response.headerFields.append(contentsOf: own)
                return response
            }
        } catch is UpstreamWebSocket.TimedOut {
            if Task.isCancelled { throw CancellationError() }
            throw HTTPProblem(
                .gatewayTimeout, detail: "The upstream \(origin) did not answer the WebSocket handshake within \(timeout)",
                extensions: ["upstream": .string(origin)])
        } catch let problem as HTTPProblem {
            throw problem
        } catch {
            throw HTTPProblem(
                .badGateway,
                detail: "The upstream \(origin) could not open the WebSocket: \(String(describing: error).prefix(300))",
                extensions: ["upstream": .string(origin)])
        }
    }

    /// TLS to an `https` upstream's WebSocket: the system's roots, and ``upstreamRootsPEM``'s. Made once per
    /// set of roots and kept for the process, as the HTTP clients are: a context reads the system's roots
    /// from disk when it is made.
    func webSocketTLSContext() throws -> NIOSSLContext {
        let key = upstreamRootsPEM ?? ""
        return try Self.webSocketTLSContexts.withLock { contexts in
            if let made = contexts[key] { return made }
            var tls = TLSConfiguration.makeClientConfiguration()
            if let upstreamRoots, !upstreamRoots.isEmpty { tls.additionalTrustRoots = [.certificates(upstreamRoots)] }
            let made = try NIOSSLContext(configuration: tls)
            contexts[key] = made
            return made
        }
    }

    static let webSocketTLSContexts = Mutex<[String: NIOSSLContext]>([:])
}
