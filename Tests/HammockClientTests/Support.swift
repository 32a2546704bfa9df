import Foundation
import HammockClient
import Synchronization

/// Records what reached the transport and answers with a fixed response.
final class Recorder: Sendable {
    struct Sent: Sendable {
        var request: HTTPRequest
        var body: [UInt8]?
        var bodyText: String { String(decoding: body ?? [], as: UTF8.self) }
    }

    let sent = Mutex<[Sent]>([])
    let status: HTTPResponse.Status
    let headers: HTTPFields
    let responseBody: [UInt8]

    init(status: HTTPResponse.Status = .ok, headers: HTTPFields = [:], body: String = "{}") {
        self.status = status
        self.headers = headers
        self.responseBody = Array(body.utf8)
    }

    var transport: MockTransport {
        MockTransport { request, body in
            self.sent.withLock { $0.append(Sent(request: request, body: body)) }
            return (HTTPResponse(status: self.status, headerFields: self.headers), self.responseBody)
        }
    }

    var last: Sent? { sent.withLock { $0.last } }
    var count: Int { sent.withLock { $0.count } }

    func client(
        _ base: String = "https://api.example.com/v1", interceptors: [any ClientInterceptor] = [],
        defaultHeaders: [String: String] = [:]
    )
        -> RestClient
    {
        RestClient(baseURL: URL(string: base)!, transport: transport, interceptors: interceptors, defaultHeaders: defaultHeaders)
    }
}

enum Sort: String, ParameterValue { case created, updated }

/// An enum that does not declare ParameterValue: sent by raw value all the same.
enum Direction: String, Sendable {
    case ascending = "asc"
    case descending = "desc"
}

struct Repo: Codable, Equatable, Sendable {
    var id: Int
    var name: String
}
