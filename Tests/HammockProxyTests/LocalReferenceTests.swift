import Foundation
import HammockServer
import Testing

@testable import HammockProxy

@Suite("A backend's references to itself, made the mock's")
struct LocalReferenceTests {
    @Test("A reference to the upstream's own URL becomes a path of the mock's; the path under its prefix only")
    func references() throws {
        let url = try #require(URL(string: "https://Staging.Example.test:8443/api"))
        let proxy = try ProxyRoutes(upstream: url)
        #expect(proxy.localReference("https://staging.example.test:8443/api/people/3?x=1#top") == "/people/3?x=1#top")
        #expect(proxy.localReference("HTTPS://STAGING.example.test:8443/api") == "/")
        #expect(proxy.localReference("https://staging.example.test:8443/api?next=2") == "/?next=2")
        // The path compares exactly and at a segment's end; another scheme, port or host is someone else.
        #expect(proxy.localReference("https://staging.example.test:8443/apix/people") == nil)
        #expect(proxy.localReference("https://staging.example.test:8443/API/people") == nil)
        #expect(proxy.localReference("http://staging.example.test:8443/api/people") == nil)
        #expect(proxy.localReference("https://staging.example.test/api/people") == nil)
        #expect(proxy.localReference("https://staging.example.test:8443.evil.test/api/people") == nil)
        #expect(proxy.localReference("https://staging.example.test:8443/api@evil.test/people") == nil)
        #expect(proxy.localReference("https://staging.example.test:84431/api/people") == nil)
        #expect(proxy.localReference("/api/people") == nil)
        #expect(proxy.localReference("") == nil)
        // An upstream with no port and no path: a longer host or userinfo after it is someone else.
        let bare = try ProxyRoutes(upstream: try #require(URL(string: "http://backend")))
        #expect(bare.localReference("http://backend") == "/")
        #expect(bare.localReference("http://backend.evil.test/x") == nil)
        #expect(bare.localReference("http://backend@evil.test/x") == nil)
        #expect(bare.localReference("http://backend:8080/x") == nil)
        let long = String(repeating: "http://backend/", count: 10_000)
        #expect(bare.localReference(long) == String(long.dropFirst("http://backend".count)))
        // A path whose first segment is empty would become `//evil.test/x`, which a client reads as another
        // host: such a reference is left as the backend wrote it.
        #expect(bare.localReference("http://backend//evil.test/x") == nil)
        #expect(proxy.localReference("https://staging.example.test:8443/api//evil.test/x") == nil)
    }
}
