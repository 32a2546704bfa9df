import Foundation
import HammockClient
import HammockTestSupport
import Testing

/// What the URLSession transport sends over the wire, seen by a server on loopback that records every
/// header line: credentials stay on their origin, cookies are the caller's, and go on one line.
@Suite("URLSession transport: credentials and cookies on the wire", .timeLimit(.minutes(1)))
struct TransportPrivacyTests {
    func client(_ port: Int, interceptors: [any ClientInterceptor] = []) -> RestClient {
        RestClient(
            baseURL: URL(string: "http://127.0.0.1:\(port)")!, transport: URLSessionTransport(), interceptors: interceptors)
    }

    @Test("A redirect to another origin drops Authorization and Cookie; one within the origin keeps them")
    func redirects() async throws {
        let elsewhere = try RecordingHTTPServer { _ in .text("landed") }
        defer { elsewhere.stop() }
        let origin = try RecordingHTTPServer { request in
            switch request.target {
            case "/away": .redirect(to: "http://localhost:\(elsewhere.port)/landing")
            case "/here": .redirect(to: "/landing")
            default: .text("home")
            }
        }
        defer { origin.stop() }
        let api = client(origin.port, interceptors: [BearerAuthentication { "user-secret" }])
        var away = RequestBuilder(.get, "/away")
        away.setHeader("Cookie", "session=abc")
        #expect(try await api.send(away).body == Array("landed".utf8))
        let landed = try #require(elsewhere.requests.first)
        #expect(landed.target == "/landing")
        #expect(landed.values(of: "Authorization").isEmpty)
        #expect(landed.values(of: "Cookie").isEmpty)

        var here = RequestBuilder(.get, "/here")
        here.setHeader("Cookie", "session=abc")
        #expect(try await api.send(here).body == Array("home".utf8))
        let followed = try #require(origin.requests.last)
        #expect(followed.target == "/landing")
        #expect(followed.values(of: "Authorization") == ["Bearer user-secret"])
        #expect(followed.values(of: "Cookie") == ["session=abc"])
    }

    @Test("Two cookies go on one Cookie line, joined by a semicolon")
    func oneCookieLine() async throws {
        let server = try RecordingHTTPServer { _ in .text("ok") }
        defer { server.stop() }
        var request = RequestBuilder(.get, "/echo")
        request.setHeader("Cookie", "session=abc; theme=dark")
        _ = try await client(server.port).send(request)
        #expect(server.requests.first?.values(of: "Cookie") == ["session=abc; theme=dark"])
        // Cookies given as a list join the same way (a comma would make them one cookie).
        var listed = RequestBuilder(.get, "/echo")
        listed.setHeader("Cookie", ["session=abc", "theme=dark"])
        listed.setHeader("Accept", ["text/plain", "application/json"])
        _ = try await client(server.port).send(listed)
        #expect(server.requests.last?.values(of: "Cookie") == ["session=abc; theme=dark"])
        #expect(server.requests.last?.values(of: "Accept") == ["text/plain, application/json"])
    }

    @Test("The default transport keeps no cookie jar: a cookie one caller received never goes out for another")
    func noCookieJar() async throws {
        let server = try RecordingHTTPServer { request in
            request.target == "/login"
                ? RecordingHTTPServer.Reply(headers: [("Set-Cookie", "sid=user-A-session; Path=/")], body: Array("in".utf8))
                : .text("ok")
        }
        defer { server.stop() }
        let shared = client(server.port)
        _ = try await shared.send(RequestBuilder(.get, "/login"))
        _ = try await shared.send(RequestBuilder(.get, "/profile"))
        #expect(server.requests.count == 2)
        #expect(server.requests.last?.values(of: "Cookie").isEmpty == true)
    }
}
