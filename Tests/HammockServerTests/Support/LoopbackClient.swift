import Foundation
import HammockJSON

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A minimal HTTP client for loopback tests (URLSession, no caching, no cookies, no redirects).
struct LoopbackClient: Sendable {
    struct Reply: Sendable {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
        var json: JSON? { try? JSON(parsing: body) }
        func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }
    }

    let baseURL: String
    let session: URLSession

    init(baseURL: String) {
        self.baseURL = baseURL
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration)
    }

    init(port: Int) { self.init(baseURL: "http://127.0.0.1:\(port)") }

    func send(
        _ method: String, _ path: String, body: [UInt8]? = nil, contentType: String? = nil, headers: [String: String] = [:]
    )
        async throws -> Reply
    {
        guard let url = URL(string: baseURL + path) else { throw URLError(.badURL) }
        var request = URLRequest(url: url)
        request.httpMethod = method
        if let body { request.httpBody = Data(body) }
        if let contentType { request.setValue(contentType, forHTTPHeaderField: "Content-Type") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name] = value }
        }
        return Reply(status: http.statusCode, headers: fields, body: [UInt8](data))
    }

    func send(_ method: String, _ path: String, json: JSON) async throws -> Reply {
        try await send(method, path, body: json.serialized(), contentType: "application/json")
    }
}
