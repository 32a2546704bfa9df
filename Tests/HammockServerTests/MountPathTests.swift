import Foundation
import HTTPTypes
import HammockJSON
import HammockTestSupport
import Testing

@testable import HammockServer

/// A base path: requests lose it before routing, and answers' paths from the root gain it on the way out,
/// resolved as references (RFC 3986), not pasted in front of every `/`.
@Suite("The base path")
struct MountPathTests {
    let mount = MountPath(prefix: "/api")

    @Test(
        "Only a path from the root is resolved: full URLs, //host, relative paths and queries stay as they are",
        arguments: [
            ("/people/3", "/api/people/3"), ("/", "/api/"), ("/a?b=/c", "/api/a?b=/c"), ("//cdn.example/a", nil),
            ("https://example.com/a", nil), ("people/3", nil), ("?page=2", nil), ("", nil), ("#top", nil),
        ] as [(String, String?)])
    func references(reference: String, resolved: String?) {
        #expect(mount.resolved(reference: Substring(reference)) == resolved)
    }

    @Test("A path is inside the mount at a segment boundary only")
    func inner() {
        #expect(mount.inner("/api/people") == "/people")
        #expect(mount.inner("/api") == "/")
        #expect(mount.inner("/api/") == "/")
        #expect(mount.inner("/apis/people") == nil)
        #expect(mount.inner("/people") == nil)
    }

    @Test("In Link, each link-value's target is resolved; parameters, quoted titles and escapes are not touched")
    func links() {
        #expect(
            mount.resolved(links: #"</p?_page=2>; rel="next", </p?_page=9>; rel="last""#)
                == #"</api/p?_page=2>; rel="next", </api/p?_page=9>; rel="last""#)
        // The old router pasted the prefix before the `</` inside the title, and before `//cdn`.
        #expect(
            mount.resolved(links: #"</a>; title="see </b>, then \"</c>\"", <//cdn.example/x>; rel="preload""#)
                == #"</api/a>; title="see </b>, then \"</c>\"", <//cdn.example/x>; rel="preload""#)
        #expect(mount.resolved(links: "<https://example.com/a>; rel=\"alternate\"") == nil, "nothing to change")
        for broken in ["</a", "/a>; rel=next", #"</a>; title="open"#, "</a>, junk"] {
            #expect(mount.resolved(links: broken) == nil, "left whole: \(broken)")
        }
    }

    @Test("Over random Link values, resolving changes exactly the targets that are paths from the root")
    func randomLinks() {
        var generator = SplitMix64(seed: 40)
        let targets = ["/a", "/a/b?c=/d", "//cdn.example/x", "https://x.example/y", "rel/ative", "", "/"]
        let parameters = [
            "rel=\"next\"", "title=\"</x>, <y>\"", "title=\"a \\\" </b>\"", "rel=last", "anchor=\"#/a\"", "x=\",\"",
        ]
        for _ in 0..<2_000 {
            var original: [String] = []
            var expected: [String] = []
            var changes = false
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let target = targets.randomElement(using: &generator) ?? "/"
                let resolved = mount.resolved(reference: Substring(target))
                if resolved != nil { changes = true }
                var tail = ""
                for _ in 0..<Int.random(in: 0...3, using: &generator) {
                    tail += (Bool.random(using: &generator) ? "; " : ";") + (parameters.randomElement(using: &generator) ?? "")
                }
                original.append("<\(target)>" + tail)
                expected.append("<\(resolved ?? target)>" + tail)
            }
            let separator = Bool.random(using: &generator) ? ", " : ","
            let header = original.joined(separator: separator)
            #expect(mount.resolved(links: header) == (changes ? expected.joined(separator: separator) : nil), "\(header)")
        }
    }

    @Test("Random bytes as a Link value never trap, and what comes back differs only by added prefixes")
    func hostileLinks() {
        var generator = SplitMix64(seed: 41)
        let alphabet = Array("<>/\",;\\ =ab".utf8)
        for _ in 0..<3_000 {
            let bytes = (0..<Int.random(in: 0...40, using: &generator)).map { _ in
                alphabet.randomElement(using: &generator) ?? UInt8(ascii: "a")
            }
            let header = String(decoding: bytes, as: UTF8.self)
            guard let resolved = mount.resolved(links: header) else { continue }
            #expect(
                resolved.replacingOccurrences(of: "</api/", with: "</") == header.replacingOccurrences(of: "</api/", with: "</"))
        }
    }

    @Test("Under a base path a stub's Location, Content-Location and Link are resolved the same way")
    func stubAnswer() async throws {
        let server = try await MockServer(resources: [Fixtures.people], options: MockServer.Options(basePath: "/api"))
        server.addStubs([
            try StubRoute(
                .get, "/moved",
                answers: [
                    StubAnswer(
                        status: 302,
                        headers: [
                            (.location, "//cdn.example/moved"), (HTTPField.Name("Content-Location")!, "/moved/here"),
                            (HTTPField.Name("Link")!, #"</next>; rel="next"; title="a </b>""#),
                        ])
                ]),
            try StubRoute(.get, "/here", answers: [StubAnswer(status: 302, headers: [(.location, "/people/1")])]),
        ])
        let moved = await server.respond(to: MockRequest(.get, "/api/moved"))
        #expect(moved.headerFields[.location] == "//cdn.example/moved")
        #expect(moved.headerFields[HTTPField.Name("Content-Location")!] == "/api/moved/here")
        #expect(moved.headerFields[HTTPField.Name("Link")!] == #"</api/next>; rel="next"; title="a </b>""#)
        #expect(await server.respond(to: MockRequest(.get, "/api/here")).headerFields[.location] == "/api/people/1")
    }
}
