import Foundation
import HTTPTypes
import HammockJSON
import HammockServer
import HammockTestSupport
import Testing

/// Template helpers in stub answers: the moment, UUIDs, random numbers, generated data, a counter and
/// a JSON pointer into the body; repeated by a seed.
@Suite("Stub template helpers")
struct StubHelperTests {
    static let moment = Date(timeIntervalSince1970: 1_764_387_600)  // 2025-11-29T03:40:00Z

    static func server(seed: UInt64 = 7) async throws -> MockServer {
        let server = try await MockServer(
            resources: [], clock: ContinuousClock(), random: MockServer.seededRandom(seed), now: { Self.moment })
        server.addStubs([
            try StubRoute(
                .post, "/tickets", status: .created,
                body: [
                    "id": "{{uuid}}", "number": "{{counter}}", "opened": "{{now}}", "due": "{{now offset=+2d format=date}}",
                    "stamp": "{{now format=epoch}}", "ms": "{{now offset=-1s format=epoch-ms}}", "header": "{{now format=http}}",
                    "priority": "{{random min=1 max=3}}", "assignee": "{{fake.fullName}}", "contact": "{{fake.email}}",
                    "sku": "{{body./items/0/sku}}", "ref": "T-{{counter}}-{{random min=100 max=999}}",
                ])
        ])
        return server
    }

    @Test(
        "The helpers make what they say: the server's moment in each format, a UUID, bounded numbers, plausible data, the body by pointer"
    )
    func values() async throws {
        let server = try await Self.server()
        let body: JSON = ["items": [["sku": "h-1"]]]
        let first = try await server.respond(to: MockRequest(.post, "/tickets", json: body)).json()
        #expect(UUID(uuidString: try #require(first["id"]?.stringValue)) != nil)
        #expect(first["number"] == 1)
        #expect(first["opened"] == "2025-11-29T03:40:00Z")
        #expect(first["due"] == "2025-12-01")
        #expect(first["stamp"] == 1_764_387_600)
        #expect(first["ms"] == 1_764_387_599_000)
        #expect(first["header"] == "Sat, 29 Nov 2025 03:40:00 GMT")
        #expect((1...3).contains(try #require(first["priority"]?.intValue)))
        #expect(first["assignee"]?.stringValue?.contains(" ") == true)
        #expect(first["contact"]?.stringValue?.hasSuffix("@example.com") == true)
        #expect(first["sku"] == "h-1")
        #expect(first["ref"]?.stringValue?.wholeMatch(of: /T-1-[1-9][0-9]{2}/) != nil)
        let second = try await server.respond(to: MockRequest(.post, "/tickets", json: [:])).json()
        #expect(second["number"] == 2)
        #expect(second["id"] != first["id"])
        #expect(second["sku"] == .null)
        // A reset starts the counter over.
        try await server.reset()
        #expect(try await server.respond(to: MockRequest(.post, "/tickets", json: [:])).json()["number"] == 1)
    }

    @Test("Two servers with one seed answer the same drawn values; another seed, others")
    func seeded() async throws {
        func answers(_ seed: UInt64) async throws -> [JSON] {
            let server = try await Self.server(seed: seed)
            var made: [JSON] = []
            for _ in 0..<3 {
                let answer = try await server.respond(to: MockRequest(.post, "/tickets", json: [:])).json()
                made.append([answer["id"], answer["priority"], answer["assignee"], answer["ref"]].compactMap { $0 }.json)
            }
            return made
        }
        let one = try await answers(7)
        #expect(try await answers(7) == one)
        #expect(try await answers(8) != one)
    }

    @Test(
        "A helper written wrong is refused when the stub is made, saying what it takes",
        arguments: [
            ("{{now offset=soon}}", "offset"), ("{{now format=julian}}", "format"), ("{{random min=5 max=1}}", "min at most max"),
            ("{{fake.unicorn}}", "no kind of data"), ("{{uuid version=7}}", "no argument 'version'"),
            ("{{path.id extra}}", "takes no arguments"), ("{{now offset=+999999999d}}", "hundred years"),
        ])
    func mistakes(template: String, words: String) {
        let error = #expect(throws: StubError.self) { try StubRoute(.get, "/x", body: ["value": .string(template)]) }
        #expect(error?.message.contains(words) == true)
    }
}

extension Array where Element == JSON {
    fileprivate var json: JSON { .array(self) }
}
