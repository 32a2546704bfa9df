import Foundation
public import HTTPTypes
import Synchronization

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Sends requests with `URLSession` (on Linux, FoundationNetworking's libcurl-based one).
///
/// ```swift
/// let client = RestClient(baseURL: url, transport: URLSessionTransport(session: .shared))
/// ```
/// The default session keeps nothing between requests: no cache (conditional requests are the
/// caller's to make) and no cookie jar (cookies are the caller's to send, as with AsyncHTTPClient, so a
/// client shared by several users never sends one user's session to another). Redirects are followed;
/// one that leaves the request's origin (scheme, host and port) keeps only the fields of
/// ``RedirectRule/keptAcrossOrigins`` (no token, cookie or API key), whatever session you pass.
/// Cancelling the calling task cancels the request.
///
/// Like `AsyncHTTPClientTransport`, it is bounded by default: `timeout` (60 s) covers the whole call,
/// body included, and a body past `maximumResponseSize` (16 MiB) fails as it arrives, not after it is
/// all in memory; progress is reported through ``TransferProgress``. (With a session you pass, which
/// keeps its own delegate, the size is checked once the body is whole and no progress is reported.)
public struct URLSessionTransport: HTTPTransport {
    let session: URLSession
    /// Whether the session's delegate is the transport's own, which sees the body as it arrives.
    let streams: Bool
    /// How long a whole request may take (applied between a millisecond and a year).
    public let timeout: Duration
    /// The largest response body accepted, in bytes.
    public let maximumResponseSize: Int
    /// Which redirects it follows.
    public let redirects: RedirectPolicy

    /// The session of transports made without one: ephemeral, without a cache or cookies, its delegate
    /// the transport's own. One for the process, as `URLSession.shared` is: a session with a delegate
    /// holds it until invalidated, so one per transport would never be released.
    static let defaultSession: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpCookieStorage = nil
        configuration.httpCookieAcceptPolicy = .never
        configuration.httpShouldSetCookies = false
        // URLSession's own bound is 7 days; each transport's deadline is the one that counts.
        configuration.timeoutIntervalForResource = Double(Self.longestTimeout.components.seconds)
        return URLSession(configuration: configuration, delegate: TransferRouter.shared, delegateQueue: nil)
    }()

    /// A transport over `session`; by default an ephemeral session without a cache or cookies.
    ///
    /// With the default session the body is counted as it arrives, so one past `maximumResponseSize`
    /// fails without being held whole, and progress is reported. A session you pass keeps its own
    /// delegate: its bodies are checked against the limit once they are complete, and report no progress.
    public init(
        session: URLSession? = nil, timeout: Duration = .seconds(60), maximumResponseSize: Int = 16 << 20,
        redirects: RedirectPolicy = .follow
    ) {
        self.redirects = redirects
        self.timeout = Self.clampedTimeout(timeout)
        self.maximumResponseSize = max(0, maximumResponseSize)
        self.session = session ?? Self.defaultSession
        streams = session == nil
    }

    public func send(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8]) {
        let (data, response) = try await perform(try Self.urlRequest(for: request, body: body))
        return (try Self.head(of: response), [UInt8](data))
    }

    /// The `URLRequest` for `request` with `body`.
    static func urlRequest(for request: HTTPRequest, body: [UInt8]?) throws -> URLRequest {
        guard let url = request.url else { throw URLError(.badURL) }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method.rawValue
        for (name, value) in request.headerFields.http1Lines { urlRequest.addValue(value, forHTTPHeaderField: name) }
        if let body { urlRequest.httpBody = Data(body) }
        return urlRequest
    }

    /// The status and header fields of `response`.
    static func head(of response: URLResponse) throws -> HTTPResponse {
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        var fields = HTTPFields()
        for (name, value) in http.allHeaderFields {
            guard let name = name as? String, let value = value as? String, let fieldName = HTTPField.Name(name) else { continue }
            fields.append(HTTPField(name: fieldName, value: value))
        }
        return HTTPResponse(status: .init(code: http.statusCode), headerFields: fields)
    }

    /// Runs a data task, cancelling it as soon as the calling task is cancelled, the deadline passes or
    /// the body grows past the limit. (The async `data(for:)` of FoundationNetworking waits for the
    /// server before it reports cancellation.)
    func perform(_ request: URLRequest) async throws -> (Data, URLResponse) {
        let handle = DataTaskHandle()
        let transfer = DataTransfer(limit: maximumResponseSize, reporter: streams ? TransferProgress.reporter : nil)
        let timeout = self.timeout
        let deadline = Task {
            try await Task.sleep(for: timeout)
            transfer.fail(with: URLError(.timedOut))
            handle.cancel()
        }
        defer { deadline.cancel() }
        let end = ContinuousClock.now + timeout
        let result = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Data, URLResponse), any Error>) in
                transfer.start(continuation)
                let task: URLSessionDataTask
                if streams {
                    task = session.dataTask(with: request)
                    TransferRouter.shared.register(transfer, for: task)
                } else {
                    task = session.dataTask(with: request) { data, response, error in
                        transfer.finish(data: data, response: response, error: error)
                    }
                    task.delegate = TransferRouter.shared  // the redirect rule, whatever the session's delegate
                }
                TransferRouter.shared.register(redirects, for: task)
                handle.start(task)
            }
        } onCancel: {
            transfer.fail(with: CancellationError())
            handle.cancel()
        }
        // The deadline task needs a thread of the concurrency pool to fire; on a machine busy enough to
        // hold it back, the transfer (finished on URLSession's own queue) may win a race it had lost.
        // Whatever the scheduling, a call that ends after its deadline is a timeout.
        guard ContinuousClock.now <= end else { throw URLError(.timedOut) }
        return result
    }
}

/// The data task of one request, so a cancellation that arrives before or after it starts cancels it.
final class DataTaskHandle: Sendable {
    private enum State {
        case waiting
        case running(URLSessionDataTask)
        case cancelled
    }

    // URLSessionDataTask is not Sendable on every platform; it is only touched under this lock,
    // and `resume()`/`cancel()` are documented as safe to call from any thread.
    private let state = Mutex<State>(.waiting)

    func start(_ task: URLSessionDataTask) {
        let cancelled = state.withLock { state -> Bool in
            if case .cancelled = state { return true }
            state = .running(task)
            return false
        }
        if cancelled { task.cancel() }
        task.resume()
    }

    func cancel() {
        state.withLock { state in
            if case .running(let task) = state { task.cancel() }
            state = .cancelled
        }
    }
}

/// One request's transfer: collects the body as it arrives (failing past the limit), reports progress,
/// and resumes the caller exactly once, whichever comes first: the task's end, the deadline, a
/// cancellation or the limit.
package final class DataTransfer: TaskTransfer {
    private struct State {
        var continuation: CheckedContinuation<(Data, URLResponse), any Error>?
        var data = Data()
        var response: URLResponse?
        /// A failure decided before the task completed (over the limit, deadline, cancellation).
        var failure: (any Error)?
    }

    private let state = Mutex(State())
    let limit: Int
    let reporter: TransferReporter?

    init(limit: Int, reporter: TransferReporter?) {
        self.limit = limit
        self.reporter = reporter
    }

    func start(_ continuation: CheckedContinuation<(Data, URLResponse), any Error>) {
        let failure = state.withLock { state -> (any Error)? in
            if let failure = state.failure { return failure }
            state.continuation = continuation
            return nil
        }
        if let failure { continuation.resume(throwing: failure) }
    }

    /// Ends the call with `error` now, if it has not ended.
    func fail(with error: any Error) {
        let continuation = state.withLock { state -> CheckedContinuation<(Data, URLResponse), any Error>? in
            if state.failure == nil { state.failure = error }
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(throwing: error)
    }

    /// The head arrived; `false` if its declared length is already past the limit.
    func received(_ response: URLResponse) -> Bool {
        let expected = response.expectedContentLength >= 0 ? Int(response.expectedContentLength) : nil
        if let expected, expected > limit {
            fail(with: Self.tooLarge(limit))
            return false
        }
        state.withLock { $0.response = response }
        reporter?.report(.responseHeadReceived(expectedBytes: expected))
        return true
    }

    func received(_ data: Data, on task: URLSessionDataTask) -> Bool { received(data) }

    /// Part of the body arrived; `false` once the body is past the limit (the task should be cancelled).
    func received(_ data: Data) -> Bool {
        let total = state.withLock { state -> Int? in
            guard state.failure == nil else { return 0 }
            guard state.data.count + data.count <= limit else { return nil }
            state.data.append(data)
            return state.data.count
        }
        guard let total else {
            fail(with: Self.tooLarge(limit))
            return false
        }
        if total > 0 { reporter?.report(.responseBytesReceived(total: total)) }
        return true
    }

    /// The task ended (delegate path): the body collected so far is the answer.
    func completed(error: (any Error)?, response: URLResponse?) {
        finish(result: { state in
            if let error { return .failure(error) }
            guard let response = state.response ?? response else { return .failure(URLError(.badServerResponse)) }
            return .success((state.data, response))
        })
    }

    /// The task ended (completion-handler path): the whole body is checked against the limit now.
    func finish(data: Data?, response: URLResponse?, error: (any Error)?) {
        let limit = self.limit
        finish(result: { _ in
            if let error { return .failure(error) }
            guard let response else { return .failure(URLError(.badServerResponse)) }
            let body = data ?? Data()
            return body.count > limit ? .failure(Self.tooLarge(limit)) : .success((body, response))
        })
    }

    private func finish(result: (State) -> Result<(Data, URLResponse), any Error>) {
        let (continuation, outcome) = state.withLock {
            state -> (CheckedContinuation<(Data, URLResponse), any Error>?, Result<(Data, URLResponse), any Error>) in
            defer { state.continuation = nil }
            if let failure = state.failure { return (state.continuation, .failure(failure)) }
            return (state.continuation, result(state))
        }
        continuation?.resume(with: outcome)
    }

    package static func tooLarge(_ limit: Int) -> URLError {
        URLError(
            .dataLengthExceedsMaximum, userInfo: [NSLocalizedDescriptionKey: "The response body is larger than \(limit) bytes"])
    }
}

/// The delegate of the transport's session: hands each task's events to its ``DataTransfer``, and
/// follows redirects under ``RedirectRule`` (also for tasks of sessions the app passed, as their task
/// delegate).
///
/// `@unchecked Sendable`: its only mutable state is the registry behind the `Mutex`. (An `NSObject`
/// subclass cannot be checked by the compiler.)
final class TransferRouter: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    static let shared = TransferRouter()
    /// By the task object, not its `taskIdentifier`: identifiers are numbered per session, so a task of
    /// a session the app passed (whose task delegate this is) shares its number with one of ours. The
    /// object stays alive from `register` to completion (its session holds a running task), so its
    /// identity is not reused meanwhile; the entry goes at completion.
    private let transfers = Mutex<[ObjectIdentifier: any TaskTransfer]>([:])
    /// The redirect policy of tasks whose transport follows fewer than all (`.follow` is not stored).
    private let policies = Mutex<[ObjectIdentifier: RedirectPolicy]>([:])

    /// Applies `policy` to `task`'s redirects until it completes. Call before the task resumes.
    func register(_ policy: RedirectPolicy, for task: URLSessionTask) {
        guard policy != .follow else { return }
        policies.withLock { $0[ObjectIdentifier(task)] = policy }
    }

    /// Routes `task`'s events to `transfer` until the task completes. Call before the task resumes.
    func register(_ transfer: any TaskTransfer, for task: URLSessionTask) {
        transfers.withLock { $0[ObjectIdentifier(task)] = transfer }
    }

    private func transfer(for task: URLSessionTask) -> (any TaskTransfer)? {
        transfers.withLock { $0[ObjectIdentifier(task)] }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let allowed = transfer(for: dataTask)?.received(response) ?? true
        completionHandler(allowed ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        if transfer(for: dataTask)?.received(data, on: dataTask) == false { dataTask.cancel() }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        transfer(for: task)?.sent(total: totalBytesSent, expected: totalBytesExpectedToSend)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let transfer = transfers.withLock { $0.removeValue(forKey: ObjectIdentifier(task)) }
        policies.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(task)) }
        transfer?.completed(error: error, response: task.response)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        #if canImport(FoundationNetworking)
        // A 307 or 308 sends the method and body again (RFC 9110 §15.4.8), but FoundationNetworking
        // sends the method with an empty body, whatever the new request holds: a POST would arrive
        // empty. Such a redirect is not followed; the caller gets the 307 or 308 itself.
        if [307, 308].contains(response.statusCode),
            task.originalRequest?.httpBody?.isEmpty == false || task is URLSessionUploadTask
        {
            completionHandler(nil)
            return
        }
        #endif
        let policy = policies.withLock { $0[ObjectIdentifier(task)] } ?? .follow
        if let original = task.originalRequest?.url, let target = request.url, !policy.follows(from: original, to: target) {
            completionHandler(nil)  // the 3xx is the answer
            return
        }
        completionHandler(Self.redirect(request, from: task.originalRequest?.url))
    }

    /// `request` as it may go: unchanged within the origin of `original`, with only the kept fields
    /// outside it (or when the original URL is unknown).
    static func redirect(_ request: URLRequest, from original: URL?) -> URLRequest {
        guard let target = request.url else { return request }
        if let original, !RedirectRule.leavesOrigin(from: original, to: target) { return request }
        var stripped = request
        for name in (request.allHTTPHeaderFields ?? [:]).keys
        where !RedirectRule.keptAcrossOrigins.contains(name.lowercased()) {
            stripped.setValue(nil, forHTTPHeaderField: name)
        }
        return stripped
    }
}

extension HTTPTransport {
    /// The longest timeout a transport applies: a year (in nanoseconds, `.seconds(Int64.max)` overflows).
    package static var longestTimeout: Duration { .seconds(366 * 86_400) }

    /// A timeout as transports apply it: from a millisecond to ``longestTimeout``, so any `Duration` is safe.
    package static func clampedTimeout(_ timeout: Duration) -> Duration {
        min(max(timeout, .milliseconds(1)), longestTimeout)
    }
}
