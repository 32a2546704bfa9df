import Foundation
import HTTPTypes
import HammockAsyncHTTPClient
import HammockClient
import HammockResources
import HammockTestSupport
import Testing

/// Both transports, on the wire: a header the app configured follows a request only to its own origin,
/// and a service's interceptors run only for its own URLs.
@Suite("Secrets stay on their origin, on both transports", .timeLimit(.minutes(1)))
struct SecretsStayHomeTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case urlSession, asyncHTTPClient
        var testDescription: String { rawValue }
        func make() -> any HTTPTransport {
            switch self {
            case .urlSession: URLSessionTransport()
            case .asyncHTTPClient: AsyncHTTPClientTransport()
            }
        }
    }

    /// Adds a header of its own, as an app's signing interceptor would.
    struct Signing: ClientInterceptor {
        func intercept(_ request: HTTPRequest, body: [UInt8]?, next: Next) async throws -> (HTTPResponse, [UInt8]) {
            var request = request
            request.headerFields[HTTPField.Name("Private-Token")!] = "glpat-secret"
            return try await next(request, body)
        }
    }

    static let secrets = ["X-Api-Key", "Private-Token", "X-Hammock-Made-Up", "Authorization", "Cookie"]

    @Test(
        "A redirect to another origin carries no header the app set: default headers, per-request ones, interceptors' ones",
        arguments: Kind.allCases)
    func crossOrigin(kind: Kind) async throws {
        let elsewhere = try RecordingHTTPServer { _ in .text("landed") }
        defer { elsewhere.stop() }
        let origin = try RecordingHTTPServer { request in
            switch request.target {
            case "/away": .redirect(to: "http://localhost:\(elsewhere.port)/landing")
            case "/away-307":
                RecordingHTTPServer.Reply(status: 307, headers: [("Location", "http://localhost:\(elsewhere.port)/posted")])
            case "/here": .redirect(to: "/landing")
            default: .text("home")
            }
        }
        defer { origin.stop() }
        let api = RestClient(
            baseURL: URL(string: "http://127.0.0.1:\(origin.port)")!, transport: kind.make(),
            interceptors: [BearerAuthentication { "user-secret" }, Signing()],
            defaultHeaders: ["X-Api-Key": "key-123", "Accept-Language": "de"])
        func request(_ path: String, method: HTTPRequest.Method = .get) -> RequestBuilder {
            var request = RequestBuilder(method, path)
            request.setHeader("X-Hammock-Made-Up", "per-call-secret")
            request.setHeader("Cookie", "session=abc")
            request.setHeader("User-Agent", "HammockTests")
            return request
        }

        #expect(try await api.send(request("/away")).body == Array("landed".utf8))
        let landed = try #require(elsewhere.requests.first)
        for name in Self.secrets { #expect(landed.values(of: name).isEmpty, "\(name) reached another origin") }
        #expect(landed.values(of: "Accept-Language") == ["de"])
        #expect(landed.values(of: "User-Agent") == ["HammockTests"])

        // Within the origin, everything follows.
        #expect(try await api.send(request("/here")).body == Array("home".utf8))
        let followed = try #require(origin.requests.last)
        #expect(followed.target == "/landing")
        #expect(followed.values(of: "Authorization") == ["Bearer user-secret"])
        #expect(followed.values(of: "X-Api-Key") == ["key-123"])
        #expect(followed.values(of: "Private-Token") == ["glpat-secret"])
        #expect(followed.values(of: "X-Hammock-Made-Up") == ["per-call-secret"])

        // A 307 sends the body again, with its type, and still no secret.
        var post = request("/away-307", method: .post)
        post.setBody(["name": "Ada"])
        #if canImport(FoundationNetworking)
        if kind == .urlSession {
            // FoundationNetworking would resend the POST with an empty body: the transport does not
            // follow, and the caller sees the 307 rather than a request that lost its data.
            let error = try await #require(throws: RestError.self) { try await api.send(post) }
            #expect(error.status?.code == 307)
            #expect(elsewhere.requests.count == 1)
            return
        }
        #endif
        _ = try await api.send(post)
        let posted = try #require(elsewhere.requests.last)
        #expect(posted.method == "POST" && posted.target == "/posted")
        #expect(String(decoding: posted.body, as: UTF8.self) == #"{"name":"Ada"}"#)
        #expect(posted.values(of: "Content-Type").first?.hasPrefix("application/json") == true)
        for name in Self.secrets { #expect(posted.values(of: name).isEmpty, "\(name) reached another origin") }
    }

    @Test(
        "A service's interceptors and configured headers stay on its base URL; another host gets a plain request unless the app names it",
        arguments: Kind.allCases)
    @MainActor
    func serviceScope(kind: Kind) async throws {
        let tracker = try RecordingHTTPServer { _ in .text("pixel") }
        defer { tracker.stop() }
        let apiServer = try RecordingHTTPServer { _ in
            RecordingHTTPServer.Reply(headers: [("Content-Type", "application/json")], body: Array(#"{"ok":true}"#.utf8))
        }
        defer { apiServer.stop() }
        let api = try Service(
            baseURL: "http://127.0.0.1:\(apiServer.port)/v1", transport: kind.make(),
            interceptors: [BearerAuthentication { "user-secret" }, Signing()])
        api.configure { $0.headers[HTTPField.Name("X-Api-Key")!] = "key-123" }

        _ = await api.resource("/me").load().response()
        let own = try #require(apiServer.requests.last)
        #expect(own.values(of: "Authorization") == ["Bearer user-secret"])
        #expect(own.values(of: "Private-Token") == ["glpat-secret"])
        #expect(own.values(of: "X-Api-Key") == ["key-123"])

        let pixel = URL(string: "http://localhost:\(tracker.port)/a.png")!
        _ = await api.resource("/me").relative(pixel.absoluteString).load().response()
        _ = await api.resource(absoluteURL: pixel).load().response()
        // The same host under another path is outside the base URL too.
        _ = await api.resource(absoluteURL: URL(string: "http://127.0.0.1:\(apiServer.port)/admin")!).load().response()
        #expect(tracker.requests.count == 2)
        for recorded in tracker.requests + [try #require(apiServer.requests.last)] {
            for name in ["Authorization", "Private-Token", "X-Api-Key"] {
                #expect(recorded.values(of: name).isEmpty, "\(name) reached \(recorded.target)")
            }
        }

        api.applyInterceptors(under: URL(string: "http://localhost:\(tracker.port)")!)
        _ = await api.resource(absoluteURL: URL(string: "http://localhost:\(tracker.port)/b.png")!).load().response()
        #expect(tracker.requests.last?.values(of: "Authorization") == ["Bearer user-secret"])
    }
}
