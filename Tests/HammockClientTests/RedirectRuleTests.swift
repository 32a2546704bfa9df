import Foundation
import HTTPTypes
import HammockClient
import HammockTestSupport
import Testing

/// The redirect rule both transports follow, over random header names, hosts, ports and schemes.
@Suite("Redirects, over random inputs")
struct RedirectRuleTests {
    static let hosts = ["api.example", "API.example", "cdn.example", "127.0.0.1", "localhost", "[::1]"]
    static let schemes = ["http", "https", "HTTP"]
    static let ports: [Int?] = [nil, 80, 443, 8080]

    func url(_ random: inout SplitMix64) -> URL {
        let scheme = Self.schemes[Int(random.next() % UInt64(Self.schemes.count))]
        let host = Self.hosts[Int(random.next() % UInt64(Self.hosts.count))]
        let port = Self.ports[Int(random.next() % UInt64(Self.ports.count))]
        return URL(string: "\(scheme)://\(host)\(port.map { ":\($0)" } ?? "")/p\(random.next() % 100)")!
    }

    func name(_ random: inout SplitMix64) -> String {
        let known = [
            "Authorization", "Cookie", "X-Api-Key", "Private-Token", "accept", "User-Agent", "Content-Type",
            "Content-Length", "Proxy-Authorization", "Origin", "If-None-Match",
        ]
        if random.next() % 2 == 0 { return known[Int(random.next() % UInt64(known.count))] }
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.!#$%&'*+^`|~")
        return String((0..<(1 + random.next() % 20)).map { _ in letters[Int(random.next() % UInt64(letters.count))] })
    }

    func defaultPort(_ scheme: String) -> Int { scheme.lowercased() == "https" ? 443 : 80 }

    func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        a.scheme?.lowercased() == b.scheme?.lowercased() && a.host?.lowercased() == b.host?.lowercased()
            && (a.port ?? defaultPort(a.scheme ?? "")) == (b.port ?? defaultPort(b.scheme ?? ""))
    }

    @Test(
        "A field follows a redirect iff the origin stays the same or the field is on the short safe list; a dropped body takes its framing along"
    )
    func fieldsFollowOnlyHome() {
        var random = SplitMix64(seed: 0x5EC2E7)
        for _ in 0..<2_000 {
            let from = url(&random)
            let to = url(&random)
            var fields = HTTPFields()
            for _ in 0..<(random.next() % 8) {
                guard let fieldName = HTTPField.Name(name(&random)) else { continue }
                fields.append(HTTPField(name: fieldName, value: "v\(random.next() % 10)"))
            }
            let keepsBody = random.next() % 2 == 0
            let kept = RedirectRule.fields(fields, from: from, to: to, keepsBody: keepsBody)
            let home = sameOrigin(from, to)
            #expect(RedirectRule.leavesOrigin(from: from, to: to) == !home, "\(from) → \(to)")
            let expected = fields.filter { field in
                let lower = field.name.canonicalName
                if !keepsBody && (lower == "content-type" || lower == "content-length") { return false }
                return home || RedirectRule.keptAcrossOrigins.contains(lower)
            }
            #expect(kept == expected, "\(from) → \(to)")
        }
    }

    @Test("303 turns anything but HEAD into a body-less GET, 301 and 302 only a POST; 307 and 308 keep both")
    func methods() {
        let methods: [HTTPRequest.Method] = [.get, .head, .post, .put, .patch, .delete]
        for method in methods {
            #expect(RedirectRule.method(after: 303, from: method) == (method == .head ? (.head, true) : (.get, false)))
            for status in [301, 302] {
                #expect(RedirectRule.method(after: status, from: method) == (method == .post ? (.get, false) : (method, true)))
            }
            for status in [307, 308] { #expect(RedirectRule.method(after: status, from: method) == (method, true)) }
        }
    }
}
