import Foundation
import HTTPTypes
import HammockJSON
import HammockJWT
import HammockStore
import Testing

@testable import HammockServer

/// Owner-only records: a rule with an `owner` field holds each signed-in caller to their own records of a
/// resource, on every store, in lists, items, writes and relations.
@Suite("Auth: owner-only records")
struct OwnerRecordsTests {
    static let configuration = """
        {"resources": [
           {"name": "people", "fields": {"name": "string"}},
           {"name": "notes", "fields": {"text": "string", "ownerId": {"type": "string", "required": true}},
            "parents": [{"resource": "people", "foreignKey": "personId"}]}],
         "data": {"people": [{"id": 1, "name": "Ada"}]},
         "auth": {
           "users": [{"username": "ada", "password": "lovelace"}, {"username": "bob", "password": "builder", "id": "u-2"},
                     {"username": "root", "password": "toor", "roles": ["admin"]}],
           "protect": [{"resource": "notes", "owner": {"field": "ownerId", "exceptRoles": ["admin"]}}]
         }}
        """

    /// A server of `text` on `store`, and a way to send as each user.
    struct Mock {
        let server: MockServer
        var tokens: [String: String] = [:]

        init(_ text: String = OwnerRecordsTests.configuration, store: any MockStore = MemoryStore()) async throws {
            let configuration = try ServerConfiguration(parsing: Array(text.utf8), file: "mock.json")
            server = try await MockServer(configuration: configuration, store: store, tokenSigner: JWTAccessTokens())
            _ = try await server.loadData(from: configuration)
            for user in configuration.auth?.users ?? [] {
                tokens[user.username] = try await server.accessToken(for: user.username)
            }
        }

        func send(
            _ method: HTTPRequest.Method, _ path: String, as user: String?, json: JSON? = nil, headers: HTTPFields = [:]
        ) async -> MockResponse {
            var fields = headers
            if let user, let token = tokens[user] { fields[.authorization] = "Bearer \(token)" }
            if let json { return await server.respond(to: MockRequest(method, path, headerFields: fields, json: json)) }
            return await server.respond(to: MockRequest(method, path, headerFields: fields))
        }

        func texts(_ path: String, as user: String?) async throws -> [String] {
            let response = await send(.get, path, as: user)
            #expect(response.status == .ok, "\(path) as \(user ?? "nobody")")
            return try response.json().arrayValue?.compactMap { $0["text"]?.stringValue } ?? []
        }
    }

    @Test(
        "Each user's creates are stamped with their id, and lists, pages and nested lists show only their own, on every store",
        arguments: StoreKind.allCases)
    func listsShowOwnRecords(kind: StoreKind) async throws {
        let store = try await kind.makeStore()
        let mock = try await Mock(store: store)
        for (user, text) in [("ada", "a1"), ("bob", "b1"), ("ada", "a2"), ("bob", "b2"), ("ada", "a3")] {
            let created = await mock.send(.post, "/notes", as: user, json: ["text": .string(text), "personId": 1])
            #expect(created.status == .created, "\(String(decoding: created.body, as: UTF8.self))")
            #expect(try created.json()["ownerId"] == (user == "ada" ? "ada" : "u-2"))
        }
        #expect(try await mock.texts("/notes", as: "ada") == ["a1", "a2", "a3"])
        #expect(try await mock.texts("/notes", as: "bob") == ["b1", "b2"])
        // The filter is the store's: a page and its total count are the caller's own.
        let page = await mock.send(.get, "/notes?_page=1&_per_page=2", as: "bob")
        #expect(try page.json().arrayValue?.count == 2)
        #expect(page.headerFields[.init("X-Total-Count")!] == "2")
        #expect(try await mock.texts("/notes?text_like=a", as: "bob") == [])
        #expect(try await mock.texts("/people/1/notes", as: "bob") == ["b1", "b2"])
        // An admin is excepted: every record.
        #expect(try await mock.texts("/notes", as: "root").count == 5)
        // No token: the rule still needs one.
        #expect(await mock.send(.get, "/notes", as: nil).status == .unauthorized)
        try await store.close()
    }

    @Test("Another's record by its key answers 403 to read, update, replace and delete, and stays as it was; a missing one 404")
    func othersRecordsRefused() async throws {
        let mock = try await Mock()
        let created = await mock.send(.post, "/notes", as: "ada", json: ["text": "mine", "personId": 1])
        let id = try #require(created.json()["id"]?.intValue)
        let read = await mock.send(.get, "/notes/\(id)", as: "bob")
        #expect(read.status == .forbidden)
        #expect(try read.json()["detail"]?.stringValue?.contains("belongs to another user") == true)
        #expect(await mock.send(.patch, "/notes/\(id)", as: "bob", json: ["text": "bob's now"]).status == .forbidden)
        #expect(await mock.send(.put, "/notes/\(id)", as: "bob", json: ["text": "bob's now"]).status == .forbidden)
        #expect(await mock.send(.delete, "/notes/\(id)", as: "bob").status == .forbidden)
        // An ETag that matches does not make it bob's.
        let etag = try #require(await mock.send(.get, "/notes/\(id)", as: "ada").headerFields[.eTag])
        #expect(await mock.send(.delete, "/notes/\(id)", as: "bob", headers: [.ifMatch: etag]).status == .forbidden)
        #expect(try await mock.send(.get, "/notes/\(id)", as: "ada").json()["text"] == "mine")
        #expect(await mock.send(.get, "/notes/999", as: "bob").status == .notFound)
        // The owner's own conditions still hold: a stale ETag is a 412, not a 403.
        let stale = await mock.send(.patch, "/notes/\(id)", as: "ada", json: ["text": "x"], headers: [.ifMatch: "\"stale\""])
        #expect(stale.status == .preconditionFailed)
        #expect(await mock.send(.patch, "/notes/\(id)", as: "ada", json: ["text": "edited"]).status == .ok)
        #expect(await mock.send(.delete, "/notes/\(id)", as: "ada").status == .noContent)
    }

    @Test(
        "A create naming another owner and an update giving a record away answer 403; naming oneself is fine; an admin may do both"
    )
    func ownerFieldGuarded() async throws {
        let mock = try await Mock()
        let forged = await mock.send(.post, "/notes", as: "bob", json: ["text": "t", "ownerId": "ada", "personId": 1])
        #expect(forged.status == .forbidden)
        #expect(try await mock.texts("/notes", as: "root") == [])
        let own = await mock.send(.post, "/notes", as: "bob", json: ["text": "t", "ownerId": "u-2", "personId": 1])
        #expect(own.status == .created)
        let id = try #require(own.json()["id"]?.intValue)
        let givenAway = await mock.send(.patch, "/notes/\(id)", as: "bob", json: ["ownerId": "ada"])
        #expect(givenAway.status == .forbidden)
        #expect(try await mock.texts("/notes", as: "bob") == ["t"])
        // A replacement that leaves the owner out keeps it: the field is required, and it is the caller's.
        #expect(await mock.send(.put, "/notes/\(id)", as: "bob", json: ["text": "t2", "personId": 1]).status == .ok)
        #expect(try await mock.texts("/notes", as: "bob") == ["t2"])
        // The admin reassigns, and creates for anyone.
        #expect(await mock.send(.patch, "/notes/\(id)", as: "root", json: ["ownerId": "ada"]).status == .ok)
        #expect(try await mock.texts("/notes", as: "bob") == [])
        #expect(try await mock.texts("/notes", as: "ada") == ["t2"])
        #expect(await mock.send(.post, "/notes", as: "root", json: ["text": "gift", "ownerId": "u-2"]).status == .created)
        #expect(try await mock.texts("/notes", as: "bob") == ["gift"])
    }

    @Test("An open resource embedding owned records shows the caller's own, and none to a caller who gives no token")
    func relationsScoped() async throws {
        let mock = try await Mock()
        _ = await mock.send(.post, "/notes", as: "ada", json: ["text": "a", "personId": 1])
        _ = await mock.send(.post, "/notes", as: "bob", json: ["text": "b", "personId": 1])
        func embedded(_ path: String, as user: String?) async throws -> [String] {
            let response = await mock.send(.get, path, as: user)
            #expect(response.status == .ok)
            let json = try response.json()
            let person = json.arrayValue?.first ?? json
            return person["notes"]?.arrayValue?.compactMap { $0["text"]?.stringValue } ?? []
        }
        #expect(try await embedded("/people/1?_embed=notes", as: "ada") == ["a"])
        #expect(try await embedded("/people?_embed=notes", as: "bob") == ["b"])
        #expect(try await embedded("/people/1?_embed=notes", as: nil) == [])
        #expect(try await embedded("/people/1?_embed=notes", as: "root").count == 2)
        // Expanding the parent from an owned note reaches the open resource as before.
        let expanded = try await mock.send(.get, "/notes?_expand=person", as: "bob").json()
        #expect(expanded.arrayValue?.first?["person"]?["name"] == "Ada")
    }

    @Test("A declared integer owner field holds a numeric user id as a number, and an API key's user is held like a token's")
    func integerOwnersAndKeys() async throws {
        let text = """
            {"resources": [{"name": "orders", "fields": {"item": "string", "userId": "integer"}}],
             "auth": {"users": [{"username": "ada", "password": "x", "id": "7"}, {"username": "bob", "password": "y", "id": "8"}],
                      "apiKeys": [{"key": "key-of-bob", "user": "bob"}],
                      "protect": [{"resource": "orders", "owner": "userId"}]}}
            """
        let mock = try await Mock(text)
        let created = await mock.send(.post, "/orders", as: "ada", json: ["item": "tea"])
        #expect(try created.json()["userId"] == 7)
        let keyed = await mock.server.respond(
            to: MockRequest(.post, "/orders", headerFields: [.init("X-API-Key")!: "key-of-bob"], json: ["item": "cake"]))
        #expect(try keyed.json()["userId"] == 8)
        let bobs = await mock.server.respond(to: MockRequest(.get, "/orders", headerFields: [.init("X-API-Key")!: "key-of-bob"]))
        #expect(try bobs.json().arrayValue?.map { $0["item"] } == ["cake"])
        #expect(await mock.send(.get, "/orders/1", as: "bob").status == .forbidden)
    }

    @Test("An owner rule for writes only lets everyone read every record, and holds writes to the owner's")
    func writeOnlyOwnership() async throws {
        let text = OwnerRecordsTests.configuration.replacingOccurrences(
            of: #"{"resource": "notes", "owner""#, with: #"{"resource": "notes", "actions": ["write"], "owner""#)
        let mock = try await Mock(text)
        _ = await mock.send(.post, "/notes", as: "ada", json: ["text": "a", "personId": 1])
        #expect(try await mock.texts("/notes", as: "bob") == ["a"])
        #expect(try await mock.texts("/notes", as: nil) == ["a"])
        #expect(await mock.send(.get, "/notes/1", as: "bob").status == .ok)
        #expect(await mock.send(.delete, "/notes/1", as: "bob").status == .forbidden)
    }

    @Test("Fifty deletes by another user racing fifty edits by the owner leave the record with the owner, every delete refused")
    func racingOthersWrites() async throws {
        let mock = try await Mock()
        _ = await mock.send(.post, "/notes", as: "ada", json: ["text": "0", "personId": 1])
        let statuses = await withTaskGroup(of: (String, HTTPResponse.Status).self) { group in
            for index in 0..<50 {
                group.addTask { ("bob", await mock.send(.delete, "/notes/1", as: "bob").status) }
                group.addTask {
                    ("ada", await mock.send(.patch, "/notes/1", as: "ada", json: ["text": .string("\(index)")]).status)
                }
            }
            var all: [(String, HTTPResponse.Status)] = []
            for await status in group { all.append(status) }
            return all
        }
        #expect(statuses.filter { $0.0 == "bob" }.allSatisfy { $0.1 == .forbidden })
        #expect(statuses.filter { $0.0 == "ada" }.allSatisfy { $0.1 == .ok })
        #expect(await mock.send(.get, "/notes/1", as: "ada").status == .ok)
    }

    @Test("An owner on a route's rule, an empty field and an unknown key are refused with their key paths")
    func ownerMistakes() throws {
        let cases: [(String, String)] = [
            (#"{"protect": [{"route": "/x", "owner": "ownerId"}]}"#, "auth.protect[0].owner"),
            (#"{"protect": [{"resource": "notes", "owner": ""}]}"#, "auth.protect[0].owner"),
            (
                #"{"protect": [{"resource": "notes", "owner": {"field": "o", "except": ["admin"]}}]}"#,
                "auth.protect[0].owner.except"
            ),
            (#"{"protect": [{"resource": "notes", "owner": {"exceptRoles": ["admin"]}}]}"#, "auth.protect[0].owner.field"),
            (#"{"protect": [{"resource": "notes", "owner": 3}]}"#, "auth.protect[0].owner"),
        ]
        for (section, key) in cases {
            let text = #"{"resources": [{"name": "notes", "fields": {"text": "string"}}], "auth": \#(section)}"#
            let error = #expect(throws: ConfigurationError.self) {
                try ServerConfiguration(parsing: Array(text.utf8), file: "m.json")
            }
            #expect(error?.keyPath == key, "\(section)")
        }
    }

    @Test(
        "A controller's own compare-and-set through the owner's store still answers changed for a stale read, and refused for another's record"
    )
    func compareAndSetThroughScope() async throws {
        let base = MemoryStore()
        let notes = try #require(
            try ResourceSchema.resolving([MockResource("notes", fields: [.init("text", .string), .init("ownerId", .string)])])
                .first)
        try await base.addResource(notes)
        let mine = try await base.createRecord(of: notes, with: ["text": "a", "ownerId": "ada"])
        let theirs = try await base.createRecord(of: notes, with: ["text": "b", "ownerId": "bob"])
        let store = OwnerScopedStore(
            base: base, scope: OwnerScope(subject: "ada", fields: ["notes": "ownerId"]), routeRecord: nil)
        let stale = try await store.updateRecord(of: notes, withKey: 1, with: ["text": "x"], ifCurrent: ["text": "old"])
        guard case .changed = stale else {
            Issue.record("expected changed, got \(stale)")
            return
        }
        let current = try await store.updateRecord(of: notes, withKey: 1, with: ["text": "x"], ifCurrent: mine)
        #expect(current.value?["text"] == "x")
        let other = try await store.updateRecord(of: notes, withKey: 2, with: ["text": "x"], ifCurrent: theirs)
        guard case .refused(let reason) = other else {
            Issue.record("expected refused, got \(other)")
            return
        }
        #expect((reason as? HTTPProblem)?.status == .forbidden)
        // Reading another's record by a key the route does not name finds nothing; the store's lists hold own records.
        #expect(try await store.record(of: notes, withKey: 2) == nil)
        #expect(try await store.records(of: notes).map { $0["text"] } == ["x"])
        #expect(try await store.count(of: notes) == 1)
    }
}
