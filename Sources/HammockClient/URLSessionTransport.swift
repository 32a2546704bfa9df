import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
public import HTTPTypes

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
        let (data, response) = try await session.data(for: urlRequest)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        var fields = HTTPFields()
        for (name, value) in http.allHeaderFields {
            guard let name = name as? String, let value = value as? String, let fieldName = HTTPField.Name(name) else { continue }
            fields.append(HTTPField(name: fieldName, value: value))
        }
        return (HTTPResponse(status: .init(code: http.statusCode), headerFields: fields), [UInt8](data))
    }
}
