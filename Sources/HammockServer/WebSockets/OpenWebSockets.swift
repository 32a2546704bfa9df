public import Foundation
import HammockJSON
import Synchronization

/// A WebSocket open on the server now, as ``MockServer/openWebSockets`` lists it.
public struct OpenWebSocket: Sendable, Hashable {
    /// Its number, from 1, in the order opened.
    public var id: Int
    /// The path it was opened on, as the client sent it.
    public var path: String
    /// The handshake's query, if any.
    public var query: String?
    /// The subprotocol agreed, if any.
    public var subprotocol: String?
    /// When its handshake was answered (the server's wall clock).
    public var openedAt: Date

    var json: JSON {
        [
            "id": .integer(id), "path": .string(path), "query": query.map(JSON.string) ?? .null,
            "subprotocol": subprotocol.map(JSON.string) ?? .null, "openedAt": .string(JournalJSON.formatTime(openedAt)),
        ]
    }
}

/// The WebSockets a server has open, over a socket and in process alike, so that a test (or the admin
/// API) can push a message to them or close them when it chooses.
final class OpenWebSockets: Sendable {
    private struct State {
        var lastID = 0
        var open: [Int: (socket: OpenWebSocket, outbound: any WebSocketOutbound)] = [:]
    }

    private let state = Mutex(State())

    func add(_ request: MockRequest, subprotocol: String?, outbound: any WebSocketOutbound, at now: Date) -> Int {
        state.withLock { state in
            state.lastID += 1
            let socket = OpenWebSocket(
                id: state.lastID, path: request.path, query: request.query, subprotocol: subprotocol, openedAt: now)
            state.open[state.lastID] = (socket, outbound)
            return state.lastID
        }
    }

    func remove(_ id: Int) { state.withLock { _ = $0.open.removeValue(forKey: id) } }

    /// The open sockets whose path `pattern` matches (every one for `nil`), oldest first.
    func matching(_ pattern: PathPattern?) -> [(socket: OpenWebSocket, outbound: any WebSocketOutbound)] {
        state.withLock { state in
            state.open.values.filter { pattern?.match($0.socket.path) != nil || pattern == nil }.sorted {
                $0.socket.id < $1.socket.id
            }
        }
    }
}

extension MockServer {
    /// Runs a WebSocket's session on a connection a transport opened, listed in ``openWebSockets`` while
    /// it runs. Both transports (HammockHTTPServer's and ``connectWebSocket(_:headers:)``) call it.
    package func serveWebSocket(
        _ session: WebSocketSession, request: MockRequest, inbound: WebSocketInbound, outbound: any WebSocketOutbound
    ) async {
        let id = openSocketList.add(request, subprotocol: session.subprotocol, outbound: outbound, at: customRoutes.now())
        await session.serve(request, inbound: inbound, outbound: outbound)
        openSocketList.remove(id)
    }

    /// The WebSockets open now, over a socket or in process, oldest first.
    public var openWebSockets: [OpenWebSocket] { openSocketList.matching(nil).map(\.socket) }

    /// Sends `message` on every open WebSocket whose path matches `path` (a pattern: `/ws/rooms/*`; every
    /// socket when `nil`), beside what their sessions send: the push a test makes when it chooses.
    /// Returns how many took it: a socket closing meanwhile, or whose client has stopped reading (64 KiB
    /// wait to be written to it), is skipped, so that one stalled client holds up neither the others
    /// nor the caller.
    ///
    /// ```swift
    /// try await server.sendToWebSockets(.text(#"{"type": "price", "value": 99.5}"#), path: "/ws/prices")
    /// ```
    /// - Throws: ``StubError`` for a path that is not a pattern.
    @discardableResult
    public func sendToWebSockets(_ message: WebSocketMessage, path: String? = nil) async throws(StubError) -> Int {
        var sent = 0
        for (_, outbound) in openSocketList.matching(try Self.socketPattern(path)) where await outbound.offer(message) {
            sent += 1
        }
        return sent
    }

    /// Closes every open WebSocket whose path matches `path` (every one for `nil`) with `close`; returns
    /// how many. Their sessions end as when they close themselves.
    @discardableResult
    public func closeWebSockets(path: String? = nil, with close: WebSocketClose = .goingAway) async throws(StubError) -> Int {
        let sockets = openSocketList.matching(try Self.socketPattern(path))
        for (_, outbound) in sockets { await outbound.close(close) }
        return sockets.count
    }

    static func socketPattern(_ path: String?) throws(StubError) -> PathPattern? {
        guard let path else { return nil }
        do {
            return try PathPattern(path)
        } catch {
            throw StubError(error.description)
        }
    }
}
