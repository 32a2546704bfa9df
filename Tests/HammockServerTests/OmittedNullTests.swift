import HTTPTypes
import HammockJSON
import HammockServer
import Testing

/// A resource whose answers leave out members no one set (`omitNulls`), as an API document's optional,
/// non-nullable members are.
@Suite("Omitted nulls")
struct OmittedNullTests {
    static let configuration = """
        {"resources": [{"name": "pets", "fields": {"name": {"type": "string", "required": true}, "tag": "string",
                        "born": "date", "secret": {"type": "string", "writeOnly": true}}, "omitNulls": true},
                       {"name": "toys", "fields": {"name": "string", "colour": "string"}}]}
        """

    @Test(
        "Every answer leaves out null members (create, read, list, update, a cleared field), on every store; another resource keeps them",
        arguments: StoreKind.allCases)
    func answers(kind: StoreKind) async throws {
        let store = try await kind.makeStore()
        let configuration = try ServerConfiguration(parsing: Array(Self.configuration.utf8), file: "pets.json")
        #expect(configuration.resources.first?.omitsNulls == true)
        let server = try await MockServer(configuration: configuration, store: store)
        let created = await server.respond(to: MockRequest(.post, "/pets", json: ["name": "Fig"]))
        #expect(try created.json() == ["id": 1, "name": "Fig"])
        #expect(try await server.respond(to: MockRequest(.get, "/pets/1")).json() == ["id": 1, "name": "Fig"])
        #expect(try await server.respond(to: MockRequest(.get, "/pets")).json() == [["id": 1, "name": "Fig"]])
        let tagged = await server.respond(to: MockRequest(.patch, "/pets/1", json: ["tag": "cat"]))
        #expect(try tagged.json() == ["id": 1, "name": "Fig", "tag": "cat"])
        // A write-only field is stored but never answered.
        let secret = await server.respond(to: MockRequest(.patch, "/pets/1", json: ["secret": "s3cret"]))
        #expect(try secret.json() == ["id": 1, "name": "Fig", "tag": "cat"])
        #expect(try await server.respond(to: MockRequest(.get, "/pets?secret=s3cret")).json().arrayValue?.count == 1)
        let cleared = await server.respond(to: MockRequest(.patch, "/pets/1", json: ["tag": nil]))
        #expect(try cleared.json() == ["id": 1, "name": "Fig"])
        // The tag of what was answered is the tag a conditional request compares.
        let etag = try #require(await server.respond(to: MockRequest(.get, "/pets/1")).headerFields[.eTag])
        let unchanged = await server.respond(to: MockRequest(.get, "/pets/1", headerFields: [.ifNoneMatch: etag]))
        #expect(unchanged.status == .notModified)
        let toy = await server.respond(to: MockRequest(.post, "/toys", json: ["name": "Ball"]))
        #expect(try toy.json() == ["id": 1, "name": "Ball", "colour": nil])
        try await store.close()
    }

    @Test("A resource that omits nulls says so in the admin listing; a value other than true or false is refused")
    func described() async throws {
        let configuration = try ServerConfiguration(parsing: Array(Self.configuration.utf8), file: "pets.json")
        let server = try await MockServer(configuration: configuration, store: MemoryStore())
        let listing = try await server.respond(to: MockRequest(.get, "/__hammock/resources")).json()
        #expect(listing.arrayValue?.map { $0["omitsNulls"] } == [true, false])
        // `omitNulls` must be true or false.
        let wrong = #"{"resources": [{"name": "pets", "fields": {"name": "string"}, "omitNulls": "yes"}]}"#
        let error = #expect(throws: ConfigurationError.self) {
            try ServerConfiguration(parsing: Array(wrong.utf8), file: "bad.json")
        }
        #expect(error?.keyPath == "resources[0].omitNulls")
    }
}
