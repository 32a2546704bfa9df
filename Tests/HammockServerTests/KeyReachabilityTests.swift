import HTTPTypes
import HammockHTTPServer
import HammockJSON
import HammockServer
import Testing

/// A record a client creates can be reached again at the `Location` it was given: keys that cannot
/// round-trip through a URL are refused with a 422 that says why, and never loaded from data.
@Suite("Keys reach their records")
struct KeyReachabilityTests {
    @Test("A key too long for a URL, '.' and '..' are a 422 naming the field", arguments: StoreKind.allCases)
    func refused(kind: StoreKind) async throws {
        let server = try await Fixtures.server(kind, resources: [Fixtures.categories])
        let huge = String(repeating: "k", count: 70_000)
        let encodedHuge = String(repeating: "é", count: 400)  // 800 bytes, 2,400 percent-encoded
        for key in [huge, ".", "..", encodedHuge] {
            let (response, problem) = await server.send(.post, "/categories", json: ["slug": .string(key), "title": "t"])
            #expect(response.status == .unprocessableContent, "\(key.prefix(10))")
            #expect(problem?["errors"]?[0]?["field"] == "slug")
            if key.count > 2 {
                #expect(problem?["errors"]?[0]?["detail"]?.stringValue?.contains("2048") == true)
            }
        }
        #expect(await server.send(.get, "/categories").1 == [])
        // Data loaded from a file skips them the same way.
        let report = try await server.addData(
            [["slug": .string(huge)], ["slug": ".."], ["slug": "fine", "title": "kept"]], for: "categories")
        #expect(report.loaded == 1 && report.skipped == 2)
    }

    @Test("A key at the limit is created, and its Location answers over HTTP", arguments: StoreKind.allCases)
    func atTheLimit(kind: StoreKind) async throws {
        let server = try await Fixtures.server(kind, resources: [Fixtures.categories])
        let key = String(repeating: "k", count: ResourceSchema.maximumKeyBytesInURL - 1) + "/"  // "/" takes 3 bytes
        #expect(await server.send(.post, "/categories", json: ["slug": .string(key)]).0.status == .unprocessableContent)
        let fitting = String(repeating: "k", count: ResourceSchema.maximumKeyBytesInURL - 3) + "/"
        try await server.whileServing { port in
            let client = LoopbackClient(port: port)
            let created = try await client.send("POST", "/categories", json: ["slug": .string(fitting), "title": "edge"])
            #expect(created.status == 201)
            let location = try #require(created.header("Location"))
            let read = try await client.send("GET", location)
            #expect(read.status == 200)
            #expect(read.json?["slug"] == .string(fitting))
            let dots = try await client.send("POST", "/categories", json: ["slug": "...", "title": "three dots are a name"])
            #expect(dots.status == 201)
            #expect(try await client.send("GET", try #require(dots.header("Location"))).json?["slug"] == "...")
        }
    }
}
