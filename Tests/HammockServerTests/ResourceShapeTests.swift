import Foundation
import HTTPTypes
import HammockJSON
import HammockServer
import HammockStore
import HammockTestSupport
import Testing

/// Fields the server fills when a create leaves them out: an API's read-only members that every answer
/// carries (`created`, a confirmation code), made anew per record.
@Suite("Made fields")
struct MadeFieldTests {
    static func tickets() -> MockResource {
        var tickets = MockResource(
            "tickets",
            fields: ["title": .string, "created": .date, "day": .string, "stamp": .integer, "code": .string, "token": .string])
        tickets.madeFields = [
            "created": .now, "day": .today, "stamp": .now, "code": .format(.pattern("^T-[0-9]{6}$")), "token": .format(.uuid),
        ]
        return tickets
    }

    @Test(
        "A create that leaves made fields out gets the write's moment, day and seconds, and a code and a UUID of their formats; each record its own",
        arguments: StoreKind.allCases)
    func made(kind: StoreKind) async throws {
        let moment = Date(timeIntervalSince1970: 1_764_387_600)  // 2025-11-29T03:40:00Z
        let server = try await MockServer(
            resources: [Self.tickets()], store: try await kind.makeStore(), clock: ContinuousClock(), now: { moment })
        let first = try await server.respond(to: MockRequest(.post, "/tickets", json: ["title": "Printer"])).json()
        #expect(first["created"] == "2025-11-29T03:40:00Z")
        #expect(first["day"] == "2025-11-29")
        #expect(first["stamp"] == 1_764_387_600)
        let code = try #require(first["code"]?.stringValue)
        #expect(code.wholeMatch(of: /T-[0-9]{6}/) != nil)
        #expect(UUID(uuidString: try #require(first["token"]?.stringValue)) != nil)
        let second = try await server.respond(to: MockRequest(.post, "/tickets", json: ["title": "Door", "code": nil])).json()
        #expect(second["token"] != first["token"])
        #expect(second["code"]?.stringValue?.wholeMatch(of: /T-[0-9]{6}/) != nil)
        // What a client sends is kept; an update does not make them again.
        let third = try await server.respond(to: MockRequest(.post, "/tickets", json: ["title": "Lamp", "code": "mine"])).json()
        #expect(third["code"] == "mine")
        let key = try #require(first["id"])
        let patched = try await server.respond(
            to: MockRequest(.patch, "/tickets/\(key.serializedString())", json: ["title": "Printer 2"])
        ).json()
        #expect(patched["code"] == first["code"] && patched["created"] == first["created"])
        // A PUT merges as a PATCH does (docs/server.md): made fields stay too.
        let replaced = try await server.respond(
            to: MockRequest(.put, "/tickets/\(key.serializedString())", json: ["title": "Printer 3"])
        ).json()
        #expect(replaced["title"] == "Printer 3" && replaced["code"] == first["code"] && replaced["token"] == first["token"])
    }

    @Test(
        "In a configuration file: `made` fills on create; a field it does not have, the key, or a type that cannot hold it is refused naming the key"
    )
    func configured() async throws {
        let text = """
            {"resources": [{"name": "orders", "fields": {"total": "float", "placed": "datetime", "confirmation": "string"},
                            "made": {"placed": "now", "confirmation": {"pattern": "^[A-Z]{6}$"}}}]}
            """
        let server = try await MockServer(
            configuration: try ServerConfiguration(parsing: Array(text.utf8), file: "orders.json"), store: MemoryStore())
        let order = try await server.respond(to: MockRequest(.post, "/orders", json: ["total": 12])).json()
        #expect(order["confirmation"]?.stringValue?.wholeMatch(of: /[A-Z]{6}/) != nil)
        #expect(order["placed"]?.stringValue?.hasSuffix("Z") == true)
        let resources = try await server.respond(to: MockRequest(.get, "/__hammock/resources")).json()
        #expect(resources[0]?["made"] == ["confirmation": ["pattern": "^[A-Z]{6}$"], "placed": "now"])

        func keyPath(_ made: String, fields: String = #"{"total": "float", "flag": "boolean"}"#) -> String? {
            let text = #"{"resources": [{"name": "orders", "fields": \#(fields), "made": \#(made)}]}"#
            let error = #expect(throws: ConfigurationError.self) {
                try ServerConfiguration(parsing: Array(text.utf8), file: "bad.json")
            }
            return error?.keyPath
        }
        #expect(keyPath(#"{"ghost": "now"}"#) == "resources[0].made.ghost")
        #expect(keyPath(#"{"flag": "now"}"#) == "resources[0].made.flag")
        #expect(keyPath(#"{"total": "uuid"}"#) == "resources[0].made.total")
        #expect(keyPath(#"{"total": "yesterday"}"#) == "resources[0].made.total")
        #expect(keyPath(#"{"id": "uuid"}"#, fields: #"{"id": "string", "total": "float"}"#) == "resources[0].made.id")
        #expect(keyPath(#"["now"]"#) == "resources[0].made")
    }
}

/// An action's success answered with another status than Hammock's usual one, as an API documents it.
@Suite("Success statuses")
struct SuccessStatusTests {
    @Test(
        "`statuses` answers a create 200 with its Location, a delete 200, an update 202; a 204 drops the body; mistakes name their key"
    )
    func statuses() async throws {
        let text = """
            {"resources": [{"name": "notes", "fields": {"text": "string"},
                            "statuses": {"create": 200, "delete": 200, "update": 202, "show": 204}}]}
            """
        let server = try await MockServer(
            configuration: try ServerConfiguration(parsing: Array(text.utf8), file: "notes.json"), store: MemoryStore())
        let created = await server.respond(to: MockRequest(.post, "/notes", json: ["text": "hi"]))
        #expect(created.status == .ok)
        #expect(created.headerFields[.location] == "/notes/1")
        #expect(try created.json()["text"] == "hi")
        #expect(await server.respond(to: MockRequest(.patch, "/notes/1", json: ["text": "ho"])).status == .accepted)
        let shown = await server.respond(to: MockRequest(.get, "/notes/1"))
        #expect(shown.status == .noContent)
        #expect(shown.body.isEmpty && shown.headerFields[.contentType] == nil)
        // Failures keep their own statuses.
        #expect(await server.respond(to: MockRequest(.get, "/notes/9")).status == .notFound)
        #expect(await server.respond(to: MockRequest(.delete, "/notes/1")).status == .ok)
        #expect(await server.respond(to: MockRequest(.delete, "/notes/1")).status == .notFound)
        let listed = try await server.respond(to: MockRequest(.get, "/__hammock/resources")).json()
        #expect(listed[0]?["statuses"] == ["show": 204, "create": 200, "update": 202, "delete": 200])

        for (statuses, key) in [
            (#"{"create": 404}"#, "create"), (#"{"destroy": 200}"#, "destroy"), (#"{"create": "200"}"#, "create"),
        ] {
            let bad = #"{"resources": [{"name": "notes", "fields": {"text": "string"}, "statuses": \#(statuses)}]}"#
            let error = #expect(throws: ConfigurationError.self) {
                try ServerConfiguration(parsing: Array(bad.utf8), file: "bad.json")
            }
            #expect(error?.keyPath == "resources[0].statuses.\(key)")
        }
    }
}

/// Lists answered inside an object, as many APIs wrap them.
@Suite("List envelopes")
struct ListEnvelopeTests {
    static let configuration = """
        {"resources": [
           {"name": "channels", "fields": {"name": "string"},
            "listEnvelope": {"items": "data", "total": "total", "hasMore": "has_more", "members": {"object": "list"}}},
           {"name": "messages", "fields": {"text": "string"}, "parents": ["channels"], "listEnvelope": {"items": "items"}}],
         "data": {"channels": [{"name": "general"}, {"name": "random"}, {"name": "help"}],
                  "messages": [{"text": "hi", "channel_id": 1}]}}
        """

    @Test(
        "A list, a page and a nested list answer their records in the envelope, with the total and whether more follow; headers stay"
    )
    func wrapped() async throws {
        let server = try await MockServer.inMemory(
            try ServerConfiguration(parsing: Array(Self.configuration.utf8), file: "chat.json"))
        let all = await server.respond(to: MockRequest(.get, "/channels"))
        #expect(all.headerFields[.contentType]?.hasPrefix("application/json") == true)
        let whole = try all.json()
        #expect(whole["object"] == "list" && whole["total"] == 3 && whole["has_more"] == false)
        #expect(whole["data"]?.arrayValue?.map { $0["name"] } == ["general", "random", "help"])
        let page = await server.respond(to: MockRequest(.get, "/channels?_limit=2&_sort=name"))
        #expect(try page.json()["has_more"] == true)
        #expect(try page.json()["data"]?.arrayValue?.count == 2)
        #expect(page.headerFields[.totalCount] == "3" && page.headerFields[.link] != nil)
        let last = await server.respond(to: MockRequest(.get, "/channels?_start=2&_limit=2"))
        #expect(try last.json()["has_more"] == false)
        #expect(
            try await server.respond(to: MockRequest(.get, "/channels/1/messages")).json() == [
                "items": [["id": 1, "text": "hi", "channel_id": 1]]
            ])
        #expect(try await server.respond(to: MockRequest(.get, "/channels?name=nobody")).json()["data"] == [])
        // A record is answered as itself.
        #expect(try await server.respond(to: MockRequest(.get, "/channels/2")).json()["name"] == "random")
    }

    @Test("An envelope without items, with a name used twice, or of the wrong shape is refused naming its key")
    func mistakes() {
        for (envelope, key) in [
            (#"{"total": "n"}"#, "listEnvelope.items"), (#"{"items": "data", "total": "data"}"#, "listEnvelope"),
            (#"{"items": "data", "pages": 2}"#, "listEnvelope.pages"), (#""data""#, "listEnvelope"),
        ] {
            let text = #"{"resources": [{"name": "a", "fields": {"x": "string"}, "listEnvelope": \#(envelope)}]}"#
            let error = #expect(throws: ConfigurationError.self) {
                try ServerConfiguration(parsing: Array(text.utf8), file: "bad.json")
            }
            #expect(error?.keyPath == "resources[0].\(key)")
        }
    }
}

/// A resource an API reaches only under its parent.
@Suite("Nested-only resources")
struct NestedOnlyTests {
    @Test("`topLevel: false` lists and creates only under the parent; the item stays; the route table has no /messages")
    func nestedOnly() async throws {
        let text = """
            {"resources": [{"name": "channels", "fields": {"name": "string"}},
                           {"name": "messages", "fields": {"text": "string"}, "parents": ["channels"], "topLevel": false}],
             "data": {"channels": [{"name": "general"}]}}
            """
        let server = try await MockServer.inMemory(try ServerConfiguration(parsing: Array(text.utf8), file: "chat.json"))
        let created = await server.respond(to: MockRequest(.post, "/channels/1/messages", json: ["text": "hi"]))
        #expect(created.status == .created)
        #expect(try await server.respond(to: MockRequest(.get, "/channels/1/messages")).json().arrayValue?.count == 1)
        #expect(await server.respond(to: MockRequest(.get, "/messages")).status == .notFound)
        #expect(
            await server.respond(to: MockRequest(.post, "/messages", json: ["text": "x", "channel_id": 1])).status == .notFound)
        #expect(try await server.respond(to: MockRequest(.get, "/messages/1")).json()["text"] == "hi")
        #expect(!server.routeTable.contains { $0.pattern == "/messages" })
        let orphan = #"{"resources": [{"name": "notes", "fields": {"text": "string"}, "topLevel": false}]}"#
        let error = #expect(throws: ConfigurationError.self) {
            try ServerConfiguration(parsing: Array(orphan.utf8), file: "bad.json")
        }
        #expect(error?.keyPath == "resources[0].topLevel")
    }
}

/// Nulls left out of answers for some fields only.
@Suite("Null omission per field")
struct NullOmissionTests {
    @Test("`omitNulls` as a list leaves out those fields' nulls and answers the others' null; an unknown name is refused")
    func perField() async throws {
        let text =
            #"{"resources": [{"name": "notes", "fields": {"text": "string", "topic": "string", "owner": "string"}, "omitNulls": ["topic"]}]}"#
        let server = try await MockServer.inMemory(try ServerConfiguration(parsing: Array(text.utf8), file: "notes.json"))
        let note = try await server.respond(to: MockRequest(.post, "/notes", json: ["text": "hi"])).json()
        #expect(note["topic"] == nil && note["owner"] == .null)
        let bad = #"{"resources": [{"name": "notes", "fields": {"text": "string"}, "omitNulls": ["ghost"]}]}"#
        let error = #expect(throws: ConfigurationError.self) {
            try ServerConfiguration(parsing: Array(bad.utf8), file: "bad.json")
        }
        #expect(error?.keyPath == "resources[0].omitNulls[0]")
    }
}

/// Records whose answers do not show their key, as a document's schema without an `id` has them.
@Suite("Keys left out of answers")
struct HiddenKeyTests {
    @Test(
        "`answersKey: false` answers no key in a create, a read, a list or an update; the path, Location and filters still use it"
    )
    func hidden() async throws {
        let text = """
            {"resources": [{"name": "pets", "fields": {"name": "string"}, "answersKey": false}],
             "data": {"pets": [{"name": "Rex"}]}}
            """
        let server = try await MockServer.inMemory(try ServerConfiguration(parsing: Array(text.utf8), file: "pets.json"))
        let created = await server.respond(to: MockRequest(.post, "/pets", json: ["name": "Tom"]))
        #expect(created.status == .created)
        #expect(try created.json() == ["name": "Tom"])
        #expect(created.headerFields[.location]?.hasSuffix("/pets/2") == true)
        #expect(try await server.respond(to: MockRequest(.get, "/pets/2")).json() == ["name": "Tom"])
        #expect(try await server.respond(to: MockRequest(.get, "/pets")).json() == [["name": "Rex"], ["name": "Tom"]])
        #expect(try await server.respond(to: MockRequest(.get, "/pets?id=1")).json() == [["name": "Rex"]])
        let patched = await server.respond(to: MockRequest(.patch, "/pets/1", json: ["name": "Max"]))
        #expect(try patched.json() == ["name": "Max"])
        #expect(await server.respond(to: MockRequest(.delete, "/pets/1")).status == .noContent)
        #expect(await server.respond(to: MockRequest(.get, "/pets/1")).status == .notFound)
        let bad = #"{"resources": [{"name": "pets", "fields": {"name": "string"}, "answersKey": "no"}]}"#
        let error = #expect(throws: ConfigurationError.self) {
            try ServerConfiguration(parsing: Array(bad.utf8), file: "bad.json")
        }
        #expect(error?.keyPath == "resources[0].answersKey")
    }
}

/// Children deleted with their parent, as a document whose child's parent key is never null has them.
@Suite("Children deleted with their parent")
struct CascadeTests {
    static let configuration = """
        {"resources": [{"name": "projects", "fields": {"name": "string"}},
                       {"name": "tasks", "fields": {"title": "string"},
                        "parents": [{"resource": "projects", "foreignKey": "projectId", "onDelete": "cascade"}]},
                       {"name": "notes", "fields": {"text": "string"}, "parents": ["projects"]},
                       {"name": "comments", "fields": {"text": "string"}, "parents": [{"resource": "tasks", "foreignKey": "taskId"}]}],
         "data": {"projects": [{"name": "Beta"}, {"name": "Gamma"}],
                  "tasks": [{"title": "Ship", "projectId": 1}, {"title": "Test", "projectId": 1}, {"title": "Plan", "projectId": 2}],
                  "notes": [{"text": "n", "project_id": 1}],
                  "comments": [{"text": "c", "taskId": 1}]}}
        """

    @Test(
        "A parent's delete deletes its cascading children in the same write, keeps the others with a null key, and leaves all in place on a 412",
        arguments: StoreKind.allCases)
    func cascade(kind: StoreKind) async throws {
        let configuration = try ServerConfiguration(parsing: Array(Self.configuration.utf8), file: "projects.json")
        let server = try await MockServer(configuration: configuration, store: try await kind.makeStore())
        _ = try await server.loadData(from: configuration)
        var stale = MockRequest(.delete, "/projects/1")
        stale.headerFields[.ifMatch] = "\"nope\""
        #expect(await server.respond(to: stale).status == .preconditionFailed)
        #expect(try await server.respond(to: MockRequest(.get, "/tasks")).json().arrayValue?.count == 3)
        #expect(await server.respond(to: MockRequest(.delete, "/projects/1")).status == .noContent)
        #expect(try await server.respond(to: MockRequest(.get, "/tasks")).json().arrayValue?.map { $0["title"] } == ["Plan"])
        #expect(try await server.respond(to: MockRequest(.get, "/notes/1")).json()["project_id"] == .null)
        // One level: the deleted task's comment stays, its key null.
        #expect(try await server.respond(to: MockRequest(.get, "/comments/1")).json()["taskId"] == .null)
        // `_dependent` naming a cascading child too deletes it once.
        #expect(await server.respond(to: MockRequest(.delete, "/projects/2?_dependent=tasks")).status == .noContent)
        #expect(try await server.respond(to: MockRequest(.get, "/tasks")).json() == [])
        let admin = try await server.respond(to: MockRequest(.get, "/__hammock/resources")).json()
        #expect(admin[1]?["parents"]?[0]?["onDelete"] == "cascade")
        #expect(admin[2]?["parents"]?[0]?["onDelete"] == "setNull")
    }

    @Test("An unknown onDelete, or an unknown key in a parent link, is refused naming its key")
    func refused() {
        for (link, keyPath) in [
            (#"{"resource": "projects", "onDelete": "restrict"}"#, "resources[1].parents[0].onDelete"),
            (#"{"resource": "projects", "ondelete": "cascade"}"#, "resources[1].parents[0].ondelete"),
        ] {
            let text = """
                {"resources": [{"name": "projects", "fields": {"name": "string"}},
                               {"name": "tasks", "fields": {"title": "string"}, "parents": [\(link)]}]}
                """
            let error = #expect(throws: ConfigurationError.self) {
                try ServerConfiguration(parsing: Array(text.utf8), file: "bad.json")
            }
            #expect(error?.keyPath == keyPath)
        }
    }
}

/// Lists that answer a page unless asked for more, as an API that documents its limit's default does.
@Suite("Default pages")
struct DefaultPageTests {
    @Test(
        "`pageSize` answers the first page of an unpaged list, with the total and Links in the API's own names; a page asked for keeps its size"
    )
    func pages() async throws {
        let text = """
            {"resources": [{"name": "notes", "fields": {"text": "string"}, "pageSize": 2,
                            "queryNames": {"limit": "_limit", "offset": "_start"}}],
             "data": {"notes": [{"text": "a"}, {"text": "b"}, {"text": "c"}, {"text": "d"}, {"text": "e"}]}}
            """
        let server = try await MockServer.inMemory(try ServerConfiguration(parsing: Array(text.utf8), file: "notes.json"))
        let first = await server.respond(to: MockRequest(.get, "/notes"))
        #expect(try first.json().arrayValue?.map { $0["text"] } == ["a", "b"])
        #expect(first.headerFields[.totalCount] == "5")
        #expect(first.headerFields[.link]?.contains("</notes?offset=2&limit=2>; rel=\"next\"") == true)
        let filtered = await server.respond(to: MockRequest(.get, "/notes?text_ne=a"))
        #expect(try filtered.json().arrayValue?.map { $0["text"] } == ["b", "c"])
        #expect(try await server.respond(to: MockRequest(.get, "/notes?offset=4")).json().arrayValue?.map { $0["text"] } == ["e"])
        #expect(try await server.respond(to: MockRequest(.get, "/notes?limit=4")).json().arrayValue?.count == 4)
        // A page asked for in the query language's own names keeps them in its links.
        let own = await server.respond(to: MockRequest(.get, "/notes?_limit=2"))
        #expect(own.headerFields[.link]?.contains("</notes?_start=2&_limit=2>; rel=\"next\"") == true)
        #expect(
            try await server.respond(to: MockRequest(.get, "/notes?_page=2")).json().arrayValue?.map { $0["text"] } == ["c", "d"])
        #expect(try await server.respond(to: MockRequest(.get, "/notes?_start=1&_end=5")).json().arrayValue?.count == 4)
        let admin = try await server.respond(to: MockRequest(.get, "/__hammock/resources")).json()
        #expect(admin[0]?["pageSize"] == 2)
        let bad = #"{"resources": [{"name": "notes", "fields": {"text": "string"}, "pageSize": 0}]}"#
        let error = #expect(throws: ConfigurationError.self) {
            try ServerConfiguration(parsing: Array(bad.utf8), file: "bad.json")
        }
        #expect(error?.keyPath == "resources[0].pageSize")
    }
}

/// Keys a client never chooses, as a document's `readOnly` key is.
@Suite("Read-only keys")
struct ReadOnlyKeyTests {
    @Test(
        "`keyReadOnly` makes every key: one a create sends is ignored, so sending a taken one is no conflict; it needs a keyFormat"
    )
    func readOnly() async throws {
        let text = """
            {"resources": [{"name": "orders", "fields": {"id": "string", "total": "float"}, "primaryKey": "id",
                            "keyFormat": "uuid", "keyReadOnly": true}]}
            """
        let server = try await MockServer.inMemory(try ServerConfiguration(parsing: Array(text.utf8), file: "orders.json"))
        let first = await server.respond(to: MockRequest(.post, "/orders", json: ["id": "mine", "total": 1.5]))
        #expect(first.status == .created)
        let key = try #require(try first.json()["id"]?.stringValue)
        #expect(key != "mine" && UUID(uuidString: key) != nil)
        let again = await server.respond(to: MockRequest(.post, "/orders", json: ["id": .string(key), "total": 2.5]))
        #expect(again.status == .created)
        #expect(try again.json()["id"] != .string(key))
        let bad = #"{"resources": [{"name": "orders", "fields": {"id": "string"}, "primaryKey": "id", "keyReadOnly": true}]}"#
        let error = #expect(throws: ConfigurationError.self) {
            try ServerConfiguration(parsing: Array(bad.utf8), file: "bad.json")
        }
        #expect(error?.keyPath == "resources[0].keyReadOnly")
    }
}

/// Stubs on a record's path that answer only while the record exists.
@Suite("Stubs that require a record")
struct RequiredRecordTests {
    @Test(
        "A stub's `requires` answers 404 for a record its path names that does not exist, or no longer does; unknown names are refused"
    )
    func requires() async throws {
        let text = """
            {"resources": [{"name": "channels", "fields": {"name": "string"}}],
             "routes": [{"method": "PUT", "path": "/channels/:channelId/topic", "requires": {"channelId": "channels"},
                         "body": {"ok": true}}],
             "data": {"channels": [{"name": "general"}]}}
            """
        let server = try await MockServer.inMemory(try ServerConfiguration(parsing: Array(text.utf8), file: "chat.json"))
        #expect(try await server.respond(to: MockRequest(.put, "/channels/1/topic")).json() == ["ok": true])
        for path in ["/channels/9/topic", "/channels/x/topic", "/channels/01/topic"] {
            let missing = await server.respond(to: MockRequest(.put, path))
            #expect(missing.status == .notFound, "\(path)")
            #expect(missing.headerFields[.contentType] == "application/problem+json")
        }
        #expect(await server.respond(to: MockRequest(.delete, "/channels/1")).status == .noContent)
        #expect(await server.respond(to: MockRequest(.put, "/channels/1/topic")).status == .notFound)
        for (requires, keyPath) in [
            (#"{"id": "channels"}"#, "routes[0].requires.id"), (#"{"channelId": "rooms"}"#, "routes[0].requires.channelId"),
        ] {
            let bad = """
                {"resources": [{"name": "channels", "fields": {"name": "string"}}],
                 "routes": [{"method": "PUT", "path": "/channels/:channelId/topic", "requires": \(requires), "body": {}}]}
                """
            let error = #expect(throws: ConfigurationError.self) {
                try ServerConfiguration(parsing: Array(bad.utf8), file: "bad.json")
            }
            #expect(error?.keyPath == keyPath)
        }
    }
}
