import Foundation
import HTTPTypes
import HammockServer
import HammockWire
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The session a protocol's task belongs to: where its cookie storage and its delegate are.
enum SessionAccess {
    /// The session of `task`, when it can be found.
    ///
    /// `URLSessionTask` has no public `session`. FoundationNetworking keeps it in an internal stored
    /// property (`session`, a `URLSessionProtocol!`), read here by reflection as `moveUploadBody` reads
    /// `knownBody`; the in-process cookie and redirect tests check it on every run, so a toolchain that
    /// renames it fails them instead of quietly dropping cookies or skipping the app's redirect delegate.
    /// On Apple platforms reflection does not see into Objective-C objects: `nil` (the URL loading
    /// system follows redirects itself there, asking the delegates).
    static func session(of task: URLSessionTask?) -> URLSession? {
        #if canImport(FoundationNetworking)
        guard let task else { return nil }
        var mirror: Mirror? = Mirror(reflecting: task)
        while let current = mirror {
            if let stored = current.children.first(where: { $0.label == "session" }) {
                if let session = stored.value as? URLSession { return session }
                // An implicitly unwrapped optional: `some` holds the session.
                return Mirror(reflecting: stored.value).children.first?.value as? URLSession
            }
            mirror = current.superclassMirror
        }
        return nil
        #else
        return nil
        #endif
    }
}

/// Cookies in process, as URLSession handles them over a socket: what a response sets goes to the
/// session's cookie storage (each `Set-Cookie` line on its own: joined, one's `Expires` date would be
/// split at its comma), and the requests that follow carry what the storage holds for their URL
/// (FoundationNetworking adds it when a task is made; a redirect followed here adds it itself).
enum InProcessCookies {
    static func store(_ fields: HTTPFields, from url: URL, in session: URLSession?) {
        guard let session else { return }
        let configuration = session.configuration
        guard let storage = configuration.httpCookieStorage, configuration.httpCookieAcceptPolicy != .never else { return }
        var cookies: [HTTPCookie] = []
        for line in fields[values: .setCookie] {
            cookies += HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": line], for: url)
        }
        guard !cookies.isEmpty else { return }
        storage.setCookies(cookies, for: url, mainDocumentURL: nil)
    }

    static func add(to request: inout URLRequest, from session: URLSession?) {
        guard let session, let url = request.url else { return }
        let configuration = session.configuration
        guard configuration.httpShouldSetCookies, let storage = configuration.httpCookieStorage else { return }
        let cookies = storage.cookies(for: url) ?? []
        request.setValue(HTTPCookie.requestHeaderFields(with: cookies)["Cookie"], forHTTPHeaderField: "Cookie")
    }
}

/// Redirects in process, followed as URLSession follows them over a socket.
enum InProcessRedirects {
    /// The most redirects one task follows (URLSession's limit on both platforms).
    static let maximum = 20

    /// The request a redirect answer asks for, built as URLSession builds it: the `Location` resolved
    /// against the current URL; a 303, or a 301 or 302 after a `POST`, as a `GET` without a body; the
    /// other statuses keeping method, body and header fields (the delegate decides what follows). `nil`
    /// for an answer that is no redirect to follow.
    static func request(after response: MockResponse, from request: URLRequest) -> URLRequest? {
        let status = response.status.code
        guard [301, 302, 303, 307, 308].contains(status), let location = response.headerFields[.location],
            let current = request.url,
            let target = URL(string: PercentEncoding.encodeURLText(location), relativeTo: current)?.absoluteURL,
            let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else { return nil }
        var next = request
        next.url = target
        if status == 303 || ((status == 301 || status == 302) && request.httpMethod?.uppercased() == "POST") {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.httpBodyStream = nil
            for name in ["Content-Type", "Content-Length", "Content-Encoding"] { next.setValue(nil, forHTTPHeaderField: name) }
        }
        return next
    }

    /// What the task's delegate decides for a redirect.
    enum Decision: Sendable {
        /// Follow it with this request (the delegate's, with the fields it kept).
        case follow(URLRequest)
        /// Do not follow it: the redirect is the answer.
        case stop
        /// The delegate cannot be asked.
        case failed(URLError)
    }

    /// The error for a redirect to a host no server in this process answers.
    static func leavesProcess(_ url: URL?) -> URLError {
        URLError(
            .unsupportedURL,
            userInfo: [
                NSLocalizedDescriptionKey:
                    "In process, a redirect to \(url?.absoluteString.prefix(200) ?? "nowhere") (no mock server in this "
                    + "process) is not followed; serve the mock on loopback to follow it over the network"
            ])
    }

    #if canImport(FoundationNetworking)
    /// Asks the task's delegate (its own, or the session's: FoundationNetworking's `delegate` falls back
    /// to it) on the session's delegate queue, as FoundationNetworking's HTTP protocol asks it. No
    /// delegate: follow.
    static func decide(
        _ request: URLRequest, after response: HTTPURLResponse, task: URLSessionTask?, session: URLSession?
    ) async -> Decision {
        guard let task, let delegate = task.delegate else { return .follow(request) }
        guard let session else {
            return .failed(
                URLError(
                    .unknown,
                    userInfo: [
                        NSLocalizedDescriptionKey:
                            "Hammock cannot ask this task's delegate about a redirect in process (its session is not reachable)"
                    ]))
        }
        let call = DelegateCall(delegate: delegate, session: session, task: task)
        let next: URLRequest? = await withCheckedContinuation { continuation in
            let resumed = Mutex(false)
            session.delegateQueue.addOperation {
                call.delegate.urlSession(call.session, task: call.task, willPerformHTTPRedirection: response, newRequest: request)
                {
                    next in
                    // A delegate that calls its completion handler twice is ignored the second time.
                    let isFirst = resumed.withLock { done -> Bool in
                        defer { done = true }
                        return !done
                    }
                    guard isFirst else { return }
                    continuation.resume(returning: next)
                }
            }
        }
        return next.map(Decision.follow) ?? .stop
    }

    /// A delegate call's parties, taken to the session's delegate queue.
    ///
    /// `@unchecked Sendable`: the delegate, session and task are used there only, as URLSession itself
    /// calls its delegates on that queue; nothing else touches them through this value.
    struct DelegateCall: @unchecked Sendable {
        let delegate: any URLSessionTaskDelegate
        let session: URLSession
        let task: URLSessionTask
    }
    #endif
}
