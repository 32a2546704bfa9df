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
public struct URLSessionTransport: HTTPTransport {
    let session: URLSession

    /// A transport over `session`; by default an ephemeral session without a cache or cookies.
    public init(session: URLSession? = nil) {
        if let session {
            self.session = session
        } else {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.urlCache = nil
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
            configuration.httpCookieStorage = nil
            configuration.httpCookieAcceptPolicy = .never
            configuration.httpShouldSetCookies = false
            self.session = URLSession(configuration: configuration)
        }
    }

    public func send(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8]) {
        guard let url = request.url else { throw URLError(.badURL) }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method.rawValue
        for (name, value) in request.headerFields.http1Lines { urlRequest.addValue(value, forHTTPHeaderField: name) }
        if let body { urlRequest.httpBody = Data(body) }
        let (data, response) = try await perform(urlRequest)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        var fields = HTTPFields()
        for (name, value) in http.allHeaderFields {
            guard let name = name as? String, let value = value as? String, let fieldName = HTTPField.Name(name) else { continue }
            fields.append(HTTPField(name: fieldName, value: value))
        }
        return (HTTPResponse(status: .init(code: http.statusCode), headerFields: fields), [UInt8](data))
    }

    /// Runs a data task, cancelling it as soon as the calling task is cancelled. (The async
    /// `data(for:)` of FoundationNetworking waits for the server before it reports cancellation.)
    func perform(_ request: URLRequest) async throws -> (Data, URLResponse) {
        let handle = DataTaskHandle()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Data, URLResponse), any Error>) in
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let response {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                task.delegate = CredentialsStayHome.shared
                handle.start(task)
            }
        } onCancel: {
            handle.cancel()
        }
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

/// Follows a redirect as URLSession would, except that one leaving the original request's origin
/// keeps only the fields of ``RedirectRule/keptAcrossOrigins``: a redirect must not carry a user's
/// token, cookie or API key to whatever host the `Location` names.
///
/// `@unchecked Sendable`: it has no stored state (an `NSObject` subclass cannot be checked by the compiler).
final class CredentialsStayHome: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    static let shared = CredentialsStayHome()

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        #if canImport(FoundationNetworking)
        // A 307 or 308 sends the method and body again (RFC 9110 §15.4.8), but FoundationNetworking
        // sends the method with an empty body, whatever the new request holds: a POST would arrive
        // empty. Such a redirect is not followed; the caller gets the 307 or 308 itself.
        if [307, 308].contains(response.statusCode), task.originalRequest?.httpBody?.isEmpty == false {
            completionHandler(nil)
            return
        }
        #endif
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
