import HTTPTypes
import HammockConsole
import HammockJSON
import HammockServer
import Testing

/// The console's place in the admin API, in process. The page itself is driven in a real browser by
/// scripts/check-console (chromium and Selenium).
@Suite("The console")
struct ConsoleTests {
    static let browser: HTTPFields = [.accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"]

    func server(_ options: MockServer.Options = MockServer.Options()) async throws -> MockServer {
        let server = try await MockServer(resources: [MockResource("people", fields: ["name": .string])], options: options)
        #expect(server.serveConsole())
        return server
    }

    @Test("A browser gets the page at the admin path, with or without the slash; every other client the JSON index")
    func page() async throws {
        let server = try await server()
        for path in ["/__hammock", "/__hammock/"] {
            let page = await server.respond(to: MockRequest(.get, path, headerFields: Self.browser))
            #expect(page.status == .ok)
            #expect(page.headerFields[.contentType] == "text/html; charset=utf-8")
            let html = String(decoding: page.body, as: UTF8.self)
            #expect(html.contains(#"<script src="/__hammock/console.js" defer></script>"#))
            #expect(html.contains(#"<body data-admin="/__hammock">"#))
            #expect(!html.contains("%ADMIN%"))
            #expect(page.headerFields[HTTPField.Name("Content-Security-Policy")!]?.contains("script-src 'self'") == true)
        }
        for accept in [nil, "*/*", "application/json", "text/html;q=0"] {
            var fields = HTTPFields()
            if let accept { fields[.accept] = accept }
            let index = await server.respond(to: MockRequest(.get, "/__hammock", headerFields: fields))
            #expect(try index.json()["name"] == "Hammock admin API", "Accept: \(accept ?? "none")")
        }
        let script = await server.respond(to: MockRequest(.get, "/__hammock/console.js"))
        #expect(script.headerFields[.contentType] == "text/javascript; charset=utf-8")
        #expect(String(decoding: script.body, as: UTF8.self).contains("followLog"))
        let styles = await server.respond(to: MockRequest(.get, "/__hammock/console.css"))
        #expect(styles.headerFields[.contentType] == "text/css; charset=utf-8")
        let head = await server.respond(to: MockRequest(.head, "/__hammock/", headerFields: Self.browser))
        #expect(head.status == .ok && head.body.isEmpty)
    }

    @Test("With an admin token the page and its files load without it, and the data still needs it")
    func token() async throws {
        let server = try await server(MockServer.Options(adminToken: "s3cret"))
        #expect(await server.respond(to: MockRequest(.get, "/__hammock/", headerFields: Self.browser)).status == .ok)
        #expect(await server.respond(to: MockRequest(.get, "/__hammock/console.js")).status == .ok)
        #expect(await server.respond(to: MockRequest(.get, "/__hammock/console.css")).status == .ok)
        #expect(await server.respond(to: MockRequest(.get, "/__hammock")).status == .unauthorized)
        #expect(await server.respond(to: MockRequest(.get, "/__hammock/resources")).status == .unauthorized)
        #expect(
            await server.respond(to: MockRequest(.get, "/__hammock/events", headerFields: Self.browser)).status == .unauthorized)
        // Only reading: the files refuse other methods.
        #expect(await server.respond(to: MockRequest(.post, "/__hammock/console.js")).status == .methodNotAllowed)
    }

    @Test("Under another admin path the page names its files there; without an admin API there is no console")
    func adminPath() async throws {
        let server = try await server(MockServer.Options(adminPath: "/ops/mock"))
        let html = String(
            decoding: await server.respond(to: MockRequest(.get, "/ops/mock/", headerFields: Self.browser)).body, as: UTF8.self)
        #expect(html.contains(#"<link rel="stylesheet" href="/ops/mock/console.css">"#))
        #expect(await server.respond(to: MockRequest(.get, "/__hammock/", headerFields: Self.browser)).status == .notFound)
        let none = try await MockServer(
            resources: [MockResource("people", fields: ["name": .string])], options: MockServer.Options(adminPath: nil))
        #expect(!none.serveConsole())
    }
}
