import HammockServer
import Testing

/// Reads of the default serializer are served from each record's stored bytes; they must be exactly
/// what serializing the records answers, after any sequence of writes.
@Suite("Lists served from stored JSON")
struct StoredJSONTests {
    /// Writes records as they are stored, like the default, but through the serializer's own path.
    struct Plain: MockSerializer {}

    @Test("Every read answers the same bytes as serializing the records, after creates, updates and deletes")
    func sameBytes() async throws {
        let fast = try await MockServer(resources: [Fixtures.people, Fixtures.cars])
        let plain = try await MockServer(resources: [Fixtures.people, Fixtures.cars], serializer: Plain())
        let script: [MockRequest] = [
            MockRequest(.post, "/people", json: ["name": "ada", "numberOfKids": 1, "kilometersWalked": 2.5]),
            MockRequest(.post, "/people", json: ["name": "bob"]),
            MockRequest(.post, "/people/1/cars", json: ["name": "beetle", "color": "red"]),
            MockRequest(.post, "/people/2/cars", json: ["name": "mini"]),
            MockRequest(.patch, "/people/1", json: ["name": "Ada \"L\" \u{1F334}"]),
            MockRequest(.put, "/cars/1", json: ["color": "blue"]),
            MockRequest(.delete, "/people/2"),
        ]
        let reads = ["/people", "/people/1", "/people/2", "/cars", "/cars/2", "/people/1/cars", "/people/2/cars"]
        for (step, write) in script.enumerated() {
            let written = (await fast.respond(to: write), await plain.respond(to: write))
            #expect(written.0.status == written.1.status && written.0.body == written.1.body, "step \(step)")
            for path in reads {
                var fastRead = await fast.respond(to: MockRequest(.get, path))
                var plainRead = await plain.respond(to: MockRequest(.get, path))
                // Each server stamps its own writes with the wall clock, which may tick between them.
                fastRead.headerFields[.lastModified] = nil
                plainRead.headerFields[.lastModified] = nil
                #expect(fastRead.status == plainRead.status, "\(path) after step \(step)")
                #expect(fastRead.body == plainRead.body, "\(path) after step \(step)")
                #expect(fastRead.headerFields == plainRead.headerFields, "\(path) after step \(step)")
            }
        }
        // The orphaned car reads as orphaned: the stored bytes followed the cascade.
        let orphan = try await fast.respond(to: MockRequest(.get, "/cars/2")).json()
        #expect(orphan["person_id"] == .null)
    }
}
