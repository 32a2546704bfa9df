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
        #expect(proxy.localReference("/api/people") == nil)
        #expect(proxy.localReference("") == nil)
    }
}
