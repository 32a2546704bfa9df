public import Foundation
import HTTPTypes
public import HammockServer
import Synchronization

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

extension MockServer {
    /// The URL under which ``urlSessionConfiguration(_:)`` reaches this server in process:
    /// `http://<id>.hammock.invalid` (with the base path), a host of this server's own. `.invalid`
    /// never resolves (RFC 6761), so a request that escapes the configuration fails at once instead of
    /// reaching a network.
    public var inProcessURL: URL {
        var components = URLComponents()
        components.scheme = "http"
        components.host = InProcessServers.shared.host(for: self)
        // A normalized base path (a leading slash, no `?`, `#`, `%` or spaces), encoded where it must be.
        components.path = options.basePath ?? ""
        // A UUID's hex digits as the host and a path that starts with `/` always form a URL; never a
        // `file:` one in its place, which a request that escaped the configuration would read.
        guard let url = components.url else { preconditionFailure("no in-process URL for \(components)") }
        return url
    }

    /// A session configuration whose requests to ``inProcessURL`` this server answers in process, with no
    /// socket: any code built on `URLSession` (the app's own, a generated OpenAPI client) talks to it.
    /// Nothing is registered globally: two tests with two servers, running in parallel, each reach their
    /// own. Requests to other hosts go to the network as usual.
    ///
    /// ```swift
    /// let session = URLSession(configuration: server.urlSessionConfiguration())
    /// let (data, _) = try await session.data(from: server.inProcessURL.appendingPathComponent("people"))
    /// ```
    public func urlSessionConfiguration(_ base: URLSessionConfiguration = .ephemeral) -> URLSessionConfiguration {
        _ = InProcessServers.shared.host(for: self)
        let configuration = base
        configuration.protocolClasses = [HammockURLProtocol.self] + (base.protocolClasses ?? [])
        return configuration
    }
}

/// The servers reachable in process, by host. Held weakly: a server that is gone answers no more.
package final class InProcessServers: Sendable {
    package static let shared = InProcessServers()
    static let suffix = ".hammock.invalid"

    private struct Entry {
        weak var server: MockServer?
    }

    private let entries = Mutex<(byHost: [String: Entry], byServer: [ObjectIdentifier: String])>(([:], [:]))

    /// The host of `server`, made on first use.
    func host(for server: MockServer) -> String {
        entries.withLock { entries in
            if let host = entries.byServer[ObjectIdentifier(server)], entries.byHost[host]?.server === server { return host }
            let host = UUID().uuidString.lowercased() + Self.suffix
            // Servers that are gone leave both tables (the second grew by one entry per server a test
            // process ever made).
            entries.byHost = entries.byHost.filter { $0.value.server != nil }
            let live = Set(entries.byHost.keys)
            entries.byServer = entries.byServer.filter { live.contains($0.value) }
            entries.byHost[host] = Entry(server: server)
            entries.byServer[ObjectIdentifier(server)] = host
            return host
        }
    }

    /// How many hosts and servers the table holds (for tests: they stay equal).
    package var counts: (hosts: Int, servers: Int) { entries.withLock { ($0.byHost.count, $0.byServer.count) } }

    func server(forHost host: String) -> MockServer? {
        entries.withLock { $0.byHost[host.lowercased()]?.server }
    }
}

/// Answers requests to a `MockServer.inProcessURL` from that server, in process. A session gets it
/// from `MockServer.urlSessionConfiguration(_:)`; it is never registered globally.
///
/// Requests are read as the server reads them off a socket (method, path and query as sent, every
/// header, the body from `httpBody` or `httpBodyStream`), answered through the whole pipeline
/// (latency, faults, the journal), and the answer is handed back as a socket hands it: the head, then
/// the body chunk by chunk as the server writes it (Server-Sent Events arrive one by one; a repeating
/// stream ends when the task is cancelled or the server stops). A redirect is followed as URLSession
/// follows one over a socket, asking the task's and the session's delegate; `Set-Cookie` lines go to the
/// session's cookie storage, one by one. A connection fault ends the task with the `URLError` a real
/// network gives (``InProcessNetwork``); cancelling the task cancels the server's work. What differs from
/// a socket is listed in docs/testing.md.
public final class HammockURLProtocol: URLProtocol {
    /// The work answering this request, cancelled by `stopLoading`.
    private let work = Mutex<Task<Void, Never>?>(nil)

    /// Every `.hammock.invalid` host, live server or not: a session made by `urlSessionConfiguration` whose
    /// server was released would otherwise hand the request to the network, which fails it much later
    /// with "could not resolve host" and no word of the cause. ``startLoading()`` fails it at once with
    /// ``serverGone(_:)``.
    override public class func canInit(with request: URLRequest) -> Bool {
        guard let host = request.url?.host else { return false }
        return host.lowercased().hasSuffix(InProcessServers.suffix)
    }

    /// The error for a request to an in-process host whose `MockServer` no longer exists: a
    /// `URLError(.cannotConnectToHost)` whose description says what happened and what to do.
    public static func serverGone(_ url: URL) -> URLError {
        URLError(
            .cannotConnectToHost,
            userInfo: [
                NSLocalizedDescriptionKey:
                    "No MockServer answers \(url.host ?? "this host") in this process: the server this session was "
                    + "made for has been released. Keep a reference to the MockServer (or the TestMock) for as "
                    + "long as its session is used.",
                NSURLErrorFailingURLErrorKey: url,
            ])
    }

    override public class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override public func startLoading() {
        var request = self.request
        guard let url = request.url, let host = url.host else {
            client?.urlProtocol(self, didFailWithError: URLError(.badURL))
            return
        }
        guard let server = InProcessServers.shared.server(forHost: host) else {
            client?.urlProtocol(self, didFailWithError: Self.serverGone(url))
            return
        }
        #if canImport(FoundationNetworking)
        // FoundationNetworking finishes a download task by reading a file location that only its own
        // HTTP protocol can set (an internal property): finishing one from here traps in
        // `URLSession.download`. Refused with an error instead; data and upload tasks work.
        if task is URLSessionDownloadTask {
            client?.urlProtocol(self, didFailWithError: URLError(.unsupportedURL))
            return
        }
        // An upload task's body is kept on the task, not on its request, where only FoundationNetworking's
        // own protocols look. Never send the request without it: that would be a silent change of data.
        if let upload = task as? URLSessionUploadTask, request.httpBody == nil, request.httpBodyStream == nil {
            guard Self.moveUploadBody(of: upload, into: &request) else {
                client?.urlProtocol(self, didFailWithError: Self.unreadableUploadBody)
                return
            }
        }
        #endif
        let timeout = request.timeoutInterval > 0 ? request.timeoutInterval : 60
        let handle = Handle(loader: self, calls: ClientCalls())
        let task = Task { await answer(handle, request: request, url: url, server: server, timeout: timeout) }
        work.withLock { $0 = task }
    }

    override public func stopLoading() {
        work.withLock { work in
            work?.cancel()
            work = nil
        }
    }

    /// The protocol object, handed to the task that answers its request, with the way back to the
    /// thread its client must be called on.
    ///
    /// `@unchecked Sendable` (Foundation marks URLProtocol's Sendable unavailable), because that task
    /// calls `client` as the server answers: the object's own state is one `Mutex`; the inherited
    /// `request`, `client` and `task` are set when Foundation makes it and only read after; and every
    /// client call goes through ``ClientCalls``, which on Apple platforms performs it on the run loop of
    /// the thread that called `startLoading` (the URLProtocol contract there), in order, and on
    /// FoundationNetworking, whose client queues each call onto the session task's own work queue,
    /// makes it where it is.
    struct Handle: @unchecked Sendable {
        let loader: HammockURLProtocol
        let calls: ClientCalls
    }

    #if canImport(FoundationNetworking)
    /// The error for an upload task whose body this FoundationNetworking keeps where it cannot be read.
    static let unreadableUploadBody = URLError(
        .cannotDecodeRawData,
        userInfo: [
            NSLocalizedDescriptionKey:
                "Hammock cannot read this upload task's body from FoundationNetworking; set the request's httpBody or httpBodyStream and use a data task"
        ])

    /// Moves an upload task's body (data, a file or a stream) onto `request`, so that it is read as any
    /// other; false if it cannot be found (or would come from the session's delegate).
    ///
    /// FoundationNetworking keeps it in an internal stored property of the task (`knownBody`, an enum of
    /// `data(DispatchData)`, `file(URL)`, `stream(InputStream)`), read here by reflection, as no API
    /// gives it to a URLProtocol of one's own. Checked by the upload tests on every run: a toolchain that
    /// renames it fails the task with ``unreadableUploadBody`` instead of sending an empty body.
    static func moveUploadBody(of task: URLSessionUploadTask, into request: inout URLRequest) -> Bool {
        var mirror: Mirror? = Mirror(reflecting: task)
        while let current = mirror {
            if let stored = current.children.first(where: { $0.label == "knownBody" }) {
                // Optional<_Body>: `some` holds the enum, whose one child is the case's payload. None: a
                // streamed upload whose stream the session's delegate would give, which no URLProtocol
                // of one's own can ask for.
                guard let body = Mirror(reflecting: stored.value).children.first?.value,
                    let payload = Mirror(reflecting: body).children.first
                else { return false }
                switch payload.value {
                case let data as DispatchData: request.httpBody = Data(data)
                case let file as URL:
                    guard let stream = InputStream(url: file) else { return false }
                    request.httpBodyStream = stream
                case let stream as InputStream: request.httpBodyStream = stream
                default: return false
                }
                return true
            }
            mirror = current.superclassMirror
        }
        return false
    }
    #endif

    /// The request as the server would read it off a socket. A body from a stream is read up to one byte
    /// past the server's limit, so an oversized one still gets the server's 413.
    static func mockRequest(from request: URLRequest, limit: Int) throws -> MockRequest {
        guard let url = request.url, let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            throw URLError(.badURL)
        }
        var target = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { target += "?" + query }
        var body: [UInt8]?
        if let data = request.httpBody {
            body = [UInt8](data)
        } else if let stream = request.httpBodyStream {
            body = read(stream, upTo: limit + 1)
        }
        let method = HTTPRequest.Method(request.httpMethod ?? "GET") ?? .get
        let fields = (request.allHTTPHeaderFields ?? [:]).lazy.map { (name: $0.key, value: $0.value) }
        return MockRequest.arriving(method, target: target, fields: fields, body: body)
    }

    static func read(_ stream: InputStream, upTo limit: Int) -> [UInt8] {
        stream.open()
        defer { stream.close() }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while bytes.count < limit {
            let count = chunk.withUnsafeMutableBufferPointer { buffer in
                buffer.baseAddress.map { stream.read($0, maxLength: buffer.count) } ?? 0
            }
            guard count > 0 else { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return bytes
    }
}
