import Foundation
import HTTPTypes
import HammockServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Answers `request` from `server` and hands the answer to the protocol's client as a socket would: the
/// head, then the body as it is written, after following redirects and storing cookies.
func answer(
    _ handle: HammockURLProtocol.Handle, request: URLRequest, url: URL, server: MockServer, timeout: TimeInterval
) async {
    let loader = handle.loader
    let calls = handle.calls
    let session = SessionAccess.session(of: loader.task)
    var request = request
    var server = server
    do {
        var redirects = 0
        while true {
            let mockRequest = try HammockURLProtocol.mockRequest(from: request, limit: server.options.maximumBodySize)
            let exchanged = try await server.exchangeStreaming(mockRequest, timeout: .seconds(min(timeout, 86_400)))
            guard let current = request.url, let head = HTTPURLResponse(exchanged.head, url: current) else {
                calls.perform { handle.loader.client?.urlProtocol(handle.loader, didFailWithError: URLError(.badServerResponse)) }
                return
            }
            InProcessCookies.store(exchanged.head.headerFields, from: current, in: session)
            if let next = InProcessRedirects.request(after: exchanged.head, from: request) {
                #if canImport(FoundationNetworking)
                // FoundationNetworking's client traps on `wasRedirectedTo` ("doesn't currently handle
                // redirects directly"): the redirect is followed here, asking the delegate as its own
                // HTTP protocol does.
                redirects += 1
                guard redirects <= InProcessRedirects.maximum else {
                    calls.perform {
                        handle.loader.client?.urlProtocol(handle.loader, didFailWithError: URLError(.httpTooManyRedirects))
                    }
                    return
                }
                switch await InProcessRedirects.decide(next, after: head, task: loader.task, session: session) {
                case .follow(var followed):
                    guard let host = followed.url?.host, let nextServer = InProcessServers.shared.server(forHost: host) else {
                        let error = InProcessRedirects.leavesProcess(followed.url)
                        calls.perform { handle.loader.client?.urlProtocol(handle.loader, didFailWithError: error) }
                        return
                    }
                    InProcessCookies.add(to: &followed, from: session)
                    request = followed
                    server = nextServer
                    continue
                case .stop:
                    break  // the redirect itself is the answer
                case .failed(let error):
                    calls.perform { handle.loader.client?.urlProtocol(handle.loader, didFailWithError: error) }
                    return
                }
                #else
                // Apple's URL loading system follows it, asking the delegates, with a new protocol object.
                calls.perform {
                    handle.loader.client?.urlProtocol(handle.loader, wasRedirectedTo: next, redirectResponse: head)
                    handle.loader.client?.urlProtocol(handle.loader, didFailWithError: CocoaError(.userCancelled))
                }
                return
                #endif
            }
            try await deliver(exchanged, head: head, handle: handle, server: server)
            return
        }
    } catch let error as ConnectionFaultError {
        calls.perform {
            handle.loader.client?.urlProtocol(handle.loader, didFailWithError: InProcessNetwork.urlError(for: error.fault))
        }
    } catch is CancellationError {
        // The task was cancelled (stopLoading): URLSession reports that itself.
    } catch {
        calls.perform { handle.loader.client?.urlProtocol(handle.loader, didFailWithError: error) }
    }
}

/// Hands the head and then the body to the client: a body of one buffer at once, a streamed one chunk
/// by chunk as the server writes it, until it ends, the task is cancelled, or the server stops (which
/// ends it, as the HTTP listener ends its connections' streams).
private func deliver(
    _ exchanged: MockServer.StreamedExchange, head: HTTPURLResponse, handle: HammockURLProtocol.Handle, server: MockServer
) async throws {
    let calls = handle.calls
    calls.perform { handle.loader.client?.urlProtocol(handle.loader, didReceive: head, cacheStoragePolicy: .notAllowed) }
    let buffered = exchanged.head.body
    if !buffered.isEmpty { calls.perform { handle.loader.client?.urlProtocol(handle.loader, didLoad: Data(buffered)) } }
    if let body = exchanged.body {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await body.write(
                    to: BodyWriter { chunk in
                        calls.perform { handle.loader.client?.urlProtocol(handle.loader, didLoad: Data(chunk)) }
                    })
            }
            group.addTask { await server.untilStopped() }
            try await group.next()
            group.cancelAll()
        }
        try Task.checkCancellation()
        if exchanged.isTruncated {
            calls.perform {
                handle.loader.client?.urlProtocol(handle.loader, didFailWithError: InProcessNetwork.urlError(for: .truncate))
            }
            return
        }
    }
    calls.perform { handle.loader.client?.urlProtocolDidFinishLoading(handle.loader) }
}

extension HTTPURLResponse {
    /// `response` as URLSession hands one over: repeated fields joined with ", " (as it joins them off a
    /// socket; `Set-Cookie` lines are stored one by one before that, see ``InProcessCookies``).
    fileprivate convenience init?(_ response: MockResponse, url: URL) {
        var fields: [String: String] = [:]
        for field in response.headerFields {
            fields[field.name.canonicalName] = fields[field.name.canonicalName].map { $0 + ", " + field.value } ?? field.value
        }
        self.init(url: url, statusCode: response.status.code, httpVersion: "HTTP/1.1", headerFields: fields)
    }
}

/// Client calls on the thread the URL loading system expects them on.
///
/// On Apple platforms a URLProtocol calls its client from the thread (and run loop mode) that called
/// `startLoading` (Apple's CustomHTTPProtocol sample; calls from elsewhere are the classic source of lost
/// callbacks in URLProtocol mocks): each call is a block on that thread's run loop, in the order made.
/// FoundationNetworking's client queues every call onto the session task's own serial work queue, so
/// there it is made where it is.
///
/// `@unchecked Sendable`: on Apple platforms it holds a `CFRunLoop`, whose `CFRunLoopPerformBlock` and
/// `CFRunLoopWakeUp` may be called from any thread (Core Foundation's documented contract); elsewhere it
/// holds nothing.
final class ClientCalls: @unchecked Sendable {
    #if canImport(FoundationNetworking)
    init() {}

    func perform(_ call: @escaping @Sendable () -> Void) { call() }
    #else
    private let runLoop: CFRunLoop
    private let modes: CFArray

    /// Captures the calling thread's run loop and its current mode (with the default and common modes).
    init() {
        runLoop = CFRunLoopGetCurrent()
        var modes: [CFString] = [CFRunLoopMode.defaultMode.rawValue, CFRunLoopMode.commonModes.rawValue]
        if let current = CFRunLoopCopyCurrentMode(runLoop) { modes.insert(current.rawValue, at: 0) }
        self.modes = modes as CFArray
    }

    func perform(_ call: @escaping @Sendable () -> Void) {
        CFRunLoopPerformBlock(runLoop, modes, call)
        CFRunLoopWakeUp(runLoop)
    }
    #endif
}
