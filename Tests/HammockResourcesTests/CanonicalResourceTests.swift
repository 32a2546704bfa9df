import Foundation
import HammockClient
import HammockResources
import Testing

@MainActor
@Suite("Canonical resources")
struct CanonicalResourceTests {
    let api: Service

    init() throws {
        api = try Service(baseURL: "http://api.test/v1", transport: MockTransport { _, _ in throw FakeNetworkError() })
    }

    @Test("the same URL by any route gives the same instance")
    func sameInstance() {
        let direct = api.resource("/items/123/related")
        #expect(api.resource("/items").child("123").child("related") === direct)
        #expect(api.resource("items/123/related") === direct)
        #expect(api.resource("/items").child("123/related") === direct)
        #expect(api.resource(absoluteURL: "http://api.test/v1/items/123/related") === direct)
        #expect(direct.url.absoluteString == "http://api.test/v1/items/123/related")
        #expect(api.resource("/items/124") !== direct)
    }

    @Test(
        "One URL is one object and one cache key: case of scheme and host, a default port and escaped unreserved characters do not matter",
        arguments: [
            ("HTTP://API.Test/v1/%7Eada/a%2db?%61=%31", "http://api.test/v1/~ada/a-b?a=1"),
            ("http://api.test:80/v1/items", "http://api.test/v1/items"),
            ("https://Api.Test:443/v1/x", "https://api.test/v1/x"),
            ("http://api.test/v1/a%2fb?q=%e2%9c%93", "http://api.test/v1/a%2Fb?q=%E2%9C%93"),
        ])
    func canonicalForms(variant: String, canonical: String) {
        let one = api.resource(absoluteURL: variant)
        #expect(one === api.resource(absoluteURL: canonical))
        #expect(one.url.absoluteString == canonical)
    }

    @Test("A port that is not the default, and a slash that is escaped, still make different resources")
    func distinctForms() {
        #expect(api.resource(absoluteURL: "http://api.test:8080/v1/x") !== api.resource(absoluteURL: "http://api.test/v1/x"))
        #expect(api.resource(absoluteURL: "https://api.test/v1/x") !== api.resource(absoluteURL: "http://api.test/v1/x"))
        #expect(api.resource(absoluteURL: "http://api.test/v1/a%2Fb") !== api.resource(absoluteURL: "http://api.test/v1/a/b"))
    }

    @Test("Visiting 20,000 URLs nobody holds keeps the service's tables the size of what is alive")
    func liveTablePruned() {
        api.maximumUnobservedResources = 10
        for index in 0..<20_000 { _ = api.resource("/visited/\(index)") }
        #expect(api.resourceCount <= 10)
        #expect(api.trackedResourceCount <= 512, "the weak table is pruned as it grows, not only on wipe or mutation")
    }

    @Test("parameters are sorted, replaced and removed")
    func parameters() {
        let items = api.resource("/items")
        let both = items.withParam("sort", "name").withParam("page", "2")
        #expect(both === items.withParam("page", "2").withParam("sort", "name"))
        #expect(both === api.resource("/items?sort=name&page=2"))
        #expect(both.url.absoluteString == "http://api.test/v1/items?page=2&sort=name")
        #expect(both.withParam("page", "3").url.query == "page=3&sort=name")
        #expect(both.withParam("page", nil).withParam("sort", nil) === items)
        #expect(items.withParam("q", "a b&c").url.absoluteString == "http://api.test/v1/items?q=a%20b%26c")
        #expect(items.withParam("q", "1+1=2").url.query == "q=1%2B1%3D2")  // a plus is not a space
        #expect(items.withParam("q", "1+1=2").withParam("q", nil) === items)
    }

    @Test("relative links resolve like a browser's")
    func relative() {
        let item = api.resource("/items/123")
        #expect(item.relative("456") === api.resource("/items/456"))
        #expect(item.relative("../users") === api.resource("/users"))
        #expect(item.relative("/other") === api.resource(absoluteURL: "http://api.test/other"))
        #expect(item.relative("?page=2") === api.resource("/items/123?page=2"))
        #expect(item.relative("https://elsewhere.test/x").url.host == "elsewhere.test")
    }

    @Test("children are percent-encoded, and drop the parent's query")
    func childEncoding() {
        let child = api.resource("/items?page=2").child("a b")
        #expect(child.url.absoluteString == "http://api.test/v1/items/a%20b")
    }

    @Test("characters a URL cannot hold are encoded, not refused")
    func encodedPaths() {
        let spaced = api.resource("/search?q=a b")
        #expect(spaced.url.scheme == "http")
        #expect(spaced === api.resource("/search").withParam("q", "a b"))
        // Beside one, an escape already there stays one: `a%20b` was sent as `a%2520b`.
        let bracketed = api.resource("/search?f[name]=a%20b")
        #expect(bracketed.url.absoluteString == "http://api.test/v1/search?f%5Bname%5D=a%20b")
        #expect(bracketed === api.resource(absoluteURL: "http://api.test/v1/search?f[name]=a%20b"))
    }

    @Test("IPv6 hosts reach the transport bracketed once")
    func ipv6() async throws {
        let backend = ScriptedBackend()
        let local = try Service(baseURL: "http://[::1]:8080/api", transport: backend.transport)
        _ = await local.resource("/items").load().response()
        #expect(backend.requests.first?.authority == "[::1]:8080")
        #expect(backend.requests.first?.path == "/api/items")
    }

    @Test("a base URL that is not a URL is refused where the service is made, not at every load")
    func invalidBase() {
        #expect(throws: InvalidBaseURL.self) { try Service(baseURL: "not a url") }
        #expect(throws: InvalidBaseURL.self) { try Service(baseURL: "/relative/path") }
    }
}

@Suite("URL patterns")
struct URLPatternTests {
    @Test(
        "single and double stars",
        arguments: [
            ("/items/*", "/items/123", true),
            ("/items/*", "/items/123/related", false),
            ("/items/*", "/items", false),
            ("/items/**", "/items/123/related", true),
            ("/items/**", "/items", true),
            ("/**", "/", true),
            ("/**", "/anything/at/all", true),
            ("/items/*/related", "/items/9/related", true),
            ("/items/*/related", "/items/9/other", false),
            ("items/*", "/items/7", true),
            ("/user*", "/users", true),
            ("/user*", "/users/1", false),
        ])
    func matching(pattern: String, path: String, expected: Bool) {
        #expect(URLPattern(pattern).matches(path) == expected)
    }
}
