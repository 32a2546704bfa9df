import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
public import HTTPTypes
import Synchronization

/// Sends requests with `URLSession` (on Linux, FoundationNetworking's libcurl-based one).
///
/// ```swift
/// let client = RestClient(baseURL: url, transport: URLSessionTransport(session: .shared))
/// ```
/// Caching is off by default (an ephemeral session), so conditional requests are the caller's to make.
/// Cancelling the calling task cancels the request.
public struct URLSessionTransport: HTTPTransport {
    let session: URLSession

    /// A transport over `session`; by default an ephemeral session without a cache.
    public init(session: URLSession? = nil) {
        if let session {
            self.session = session
        } else {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.urlCache = nil
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
            self.session = URLSession(configuration: configuration)
        }
    }

    public func send(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8]) {
        guard let url = request.url else { throw URLError(.badURL) }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method.rawValue
        for field in request.headerFields { urlRequest.addValue(field.value, forHTTPHeaderField: field.name.rawName) }
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
