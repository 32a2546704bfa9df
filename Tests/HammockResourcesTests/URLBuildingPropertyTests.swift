import Foundation
import HTTPTypes
import HammockClient
import HammockResources
import HammockTesting
import Testing

/// URL building over random inputs: whatever way a resource is reached (a path, an absolute URL, a
/// child, a relative reference), a header configured by pattern goes out only when the URL the server
/// sees is under the base URL and its path there matches the pattern.
@MainActor
@Suite("URL building, over random inputs")
struct URLBuildingPropertyTests {
    static let bases = [
        "http://api.test", "http://api.test/", "https://api.test/v1", "https://api.test/v1/",
        "http://api.test:8080/v1/a", "https://other.test/api",
    ]
    static let hosts = ["http://api.test", "https://api.test", "http://api.test:8080", "https://other.test", "http://evil.test"]
    static let segments = ["v1", "a", "api", "items", "7", ".", "..", "v1beta", ""]
    static let patternPieces = ["/", "v1", "a", "items", "*", "**", "7", "i"]

    /// The origin and path of a base URL: the oracle's own reading, independent of the library's.
    struct Scope {
        var scheme: String
        var host: String
        var port: Int
        var path: String

        init?(_ text: String) {
            guard let components = URLComponents(string: text), let scheme = components.scheme, let host = components.host
            else { return nil }
            self.scheme = scheme
            self.host = host
            self.port = components.port ?? (scheme == "https" ? 443 : 80)
            var path = components.percentEncodedPath
            while path.hasSuffix("/") { path.removeLast() }
            self.path = path
        }

        /// The path of a request relative to this scope, or nil if the request is not under it.
        func relativePath(of request: HTTPRequest) -> String? {
            guard let authority = request.authority, let requestScope = Scope("\(request.scheme ?? "")://\(authority)"),
                requestScope.scheme == scheme, requestScope.host == host, requestScope.port == port
            else { return nil }
            let path = String((request.path ?? "/").prefix { $0 != "?" })
            if path == self.path { return "/" }
            guard path.hasPrefix(self.path + "/") else { return nil }
            return String(path.dropFirst(self.path.count))
        }
    }

    static func randomPath(_ random: inout SplitMix64) -> String {
        "/"
            + (0..<Int.random(in: 0...4, using: &random)).map { _ in segments.randomElement(using: &random) ?? "" }.joined(
                separator: "/")
    }

    @Test("A configured header reaches a request only when its URL is under the base URL and matches the pattern")
    func headersOnlyUnderBase() async throws {
        var random = SplitMix64(seed: 20_261_123)
        let backend = ScriptedBackend()
        backend.setFallback(.json(["ok": true]))
        let scope = HTTPField.Name("X-Scope")!
        var underBase = 0
        var outside = 0
        for round in 0..<60 {
            let baseText = Self.bases.randomElement(using: &random) ?? ""
            let base = try #require(Scope(baseText))
            let pattern =
                "/"
                + (0..<Int.random(in: 1...4, using: &random)).map { _ in Self.patternPieces.randomElement(using: &random) ?? "" }
                .joined()
            let api = try Service(baseURL: baseText, transport: backend.transport, clock: ManualClock())
            api.configure { $0.headers[.authorization] = "Bearer secret" }
            api.configure(pattern) { $0.headers[scope] = "yes" }

            for _ in 0..<25 {
                let resource: Resource
                let start = api.resource(Self.randomPath(&random))
                let how: String
                switch Int.random(in: 0..<4, using: &random) {
                case 0:
                    resource = start
                    how = "resource(path)"
                case 1:
                    let url = (Self.hosts.randomElement(using: &random) ?? "") + Self.randomPath(&random)
                    resource = api.resource(absoluteURL: url)
                    how = "absoluteURL \(url)"
                case 2:
                    let name = (0..<Int.random(in: 1...2, using: &random)).map { _ in
                        Self.segments.randomElement(using: &random) ?? ""
                    }
                    .joined(separator: "/")
                    resource = start.child(name)
                    how = "\(start.url).child(\(name))"
                default:
                    let href: String
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0: href = String(Self.randomPath(&random).dropFirst())  // relative to the resource
                    case 1: href = Self.randomPath(&random)  // absolute path
                    case 2:
                        href =
                            "//" + (["api.test", "other.test", "api.test:8080"].randomElement(using: &random) ?? "api.test")
                            + Self.randomPath(&random)
                    default: href = (Self.hosts.randomElement(using: &random) ?? "") + Self.randomPath(&random)
                    }
                    resource = start.relative(href)
                    how = "\(start.url).relative(\(href))"
                }
                let before = backend.requestCount
                _ = await resource.load().response()
                guard backend.requestCount > before, let sent = backend.requests.last else {
                    // Nothing sent: the resource must say why.
                    #expect(resource.latestError != nil, "round \(round): \(how) sent nothing and reported nothing")
                    continue
                }
                let path = base.relativePath(of: sent)
                #expect(
                    !(sent.path ?? "").split(separator: "/").contains { $0 == "." || $0 == ".." }, "dot segments sent: \(how)")
                if let path {
                    underBase += 1
                    #expect(sent.headerFields[.authorization] == "Bearer secret", "round \(round): \(how) is under \(baseText)")
                    let expected = PropertyTests.oracle(pattern, path)
                    #expect(
                        (sent.headerFields[scope] != nil) == expected, "round \(round): \(how), pattern \(pattern), path \(path)")
                } else {
                    outside += 1
                    #expect(sent.headerFields[.authorization] == nil, "round \(round): \(how) left \(baseText) with the token")
                    #expect(sent.headerFields[scope] == nil, "round \(round): \(how) left \(baseText) with a pattern's header")
                }
            }
        }
        // The generator reaches both sides of the property often enough to mean something.
        #expect(underBase > 200)
        #expect(outside > 200)
    }
}
