import HammockJSON
import HammockSQLite
import HammockServer
import Testing

/// One contract, run against every store: they must behave identically.
@Suite("Store contract")
struct StoreContractTests {
    /// A store with people, cars (children of people) and categories (string keys) added.
    struct Subject {
        let store: any MockStore
        let people: ResourceSchema
        let cars: ResourceSchema
        let categories: ResourceSchema
        let products: ResourceSchema

        init(_ kind: StoreKind) async throws {
            store = try kind.makeStore()
            // A throwaway server resolves the schemas; the store under test is the server's.
            let server = try await MockServer(
                resources: [Fixtures.people, Fixtures.cars, Fixtures.categories, Fixtures.products], store: store)
            people = try #require(server.schema(named: "people"))
            cars = try #require(server.schema(named: "cars"))
            categories = try #require(server.schema(named: "categories"))
            products = try #require(server.schema(named: "products"))
        }
    }

    @Test("Generated keys count up and are never reused", arguments: StoreKind.allCases)
    func generatedKeys(kind: StoreKind) async throws {
        let subject = try await Subject(kind)
        let store = subject.store
        let first = try await store.createRecord(of: subject.people, with: ["name": "a"])
        let second = try await store.createRecord(of: subject.people, with: ["name": "b"])
        #expect(first["id"] == 1 && second["id"] == 2)
        #expect(try await store.deleteRecord(of: subject.people, withKey: 2))
        let third = try await store.createRecord(of: subject.people, with: ["name": "c"])
        #expect(third["id"] == 3)
        #expect(try await store.count(of: subject.people) == 2)
    }

    @Test(
        "A snapshot restores every record, client key and generated-key counter, and orphans children of parents it lacks",
        arguments: StoreKind.allCases)
    func snapshotRestore(kind: StoreKind) async throws {
        let subject = try await Subject(kind)
        let store = subject.store
        let schemas = [subject.people, subject.cars, subject.categories, subject.products]
        let ada = try await store.createRecord(of: subject.people, with: ["name": "ada"])
        _ = try await store.createRecord(of: subject.cars, with: ["name": "mini", "person_id": 1])
        _ = try await store.createRecord(of: subject.categories, with: ["slug": "tools", "title": "Tools"])
        let saved = try await store.snapshot(of: schemas)
        #expect(saved.recordCount == 3)
        #expect(saved.records(of: "people") == [ada])
        _ = try await store.createRecord(of: subject.people, with: ["name": "bob"])
        #expect(try await store.deleteRecord(of: subject.people, withKey: 1))
        #expect(try await store.deleteRecord(of: subject.categories, withKey: "tools"))
        try await store.restore(saved, schemas: schemas)
        #expect(try await store.records(of: subject.people) == [ada])
        #expect(try await store.record(of: subject.cars, withKey: 1)?["person_id"] == 1)
        #expect(try await store.record(of: subject.categories, withKey: "tools")?["title"] == "Tools")
        // The counter is the snapshot's: the next key is the one the first run gave.
        #expect(try await store.createRecord(of: subject.people, with: ["name": "bob"])["id"] == 2)

        // A snapshot that holds the children but not their parents leaves no dangling reference.
        let childrenOnly = try await store.snapshot(of: [subject.cars])
        try await store.restore(childrenOnly, schemas: schemas)
        #expect(try await store.count(of: subject.people) == 0)
        #expect(try await store.record(of: subject.cars, withKey: 1)?["person_id"] == .null)
        // Put back, a parent check sees the restored parents.
        try await store.restore(saved, schemas: schemas)
        let car = try await store.createRecord(of: subject.cars, with: ["name": "van", "person_id": 1])
        #expect(car["person_id"] == 1)
    }

    @Test("Records list every column in order, null when unset", arguments: StoreKind.allCases)
    func recordShape(kind: StoreKind) async throws {
        let subject = try await Subject(kind)
        let created = try await subject.store.createRecord(of: subject.cars, with: ["color": "red"])
        #expect(created.keys == ["id", "name", "color", "person_id"])
        #expect(created["name"] == .null && created["person_id"] == .null)
        let fetched = try await subject.store.record(of: subject.cars, withKey: created["id"] ?? nil)
        #expect(fetched == created)
        #expect(fetched?.keys == created.keys)
        #expect(try await subject.store.record(of: subject.cars, withKey: 99) == nil)
    }

    @Test("Every field type round-trips unchanged", arguments: StoreKind.allCases)
    func types(kind: StoreKind) async throws {
        let subject = try await Subject(kind)
        let store = subject.store
        _ = try await store.createRecord(of: subject.categories, with: ["slug": "garden", "title": "Garden"])
        let values: JSONObject = [
            "name": "Hammock \"deluxe\" 🌴", "price": 89.5, "inStock": true, "releasedOn": "2024-05-01T10:00:00Z",
            "details": ["colors": ["green", "sand"], "weight": 2.5, "n": 3, "none": nil], "category_id": "garden",
        ]
        let created = try await store.createRecord(of: subject.products, with: values)
        let fetched = try #require(try await store.record(of: subject.products, withKey: created["id"] ?? nil))
        for (name, value) in values { #expect(fetched[name] == value, "\(name)") }
        let person = try await store.createRecord(of: subject.people, with: ["avatar": "AAEC/w==", "kilometersWalked": 3.0])
        let fetchedPerson = try await store.record(of: subject.people, withKey: person["id"] ?? nil)
        #expect(fetchedPerson?["avatar"] == "AAEC/w==")
        #expect(fetchedPerson?["kilometersWalked"] == .double(3))
    }

    @Test("Strings holding NUL and negative zero are stored exactly, in values and in keys", arguments: StoreKind.allCases)
    func exactValues(kind: StoreKind) async throws {
        let subject = try await Subject(kind)
        let store = subject.store
        let person = try await store.createRecord(
            of: subject.people, with: ["name": "a\u{0}b", "kilometersWalked": .double(-0.0)])
        let fetched = try #require(try await store.record(of: subject.people, withKey: person["id"] ?? nil))
        #expect(fetched["name"] == "a\u{0}b")
        #expect(fetched["kilometersWalked"]?.doubleValue?.sign == .minus)
        #expect(JSON.object(fetched).serializedString().contains(#""a\u0000b""#))
        #expect(JSON.object(fetched).serializedString().contains("-0.0"))
        // Keys that differ after a NUL are different keys.
        _ = try await store.createRecord(of: subject.categories, with: ["slug": "k", "title": "plain"])
        _ = try await store.createRecord(of: subject.categories, with: ["slug": "k\u{0}a", "title": "with NUL"])
        #expect(try await store.record(of: subject.categories, withKey: "k\u{0}a")?["title"] == "with NUL")
        #expect(try await store.record(of: subject.categories, withKey: "k")?["title"] == "plain")
        _ = try await store.updateRecord(of: subject.categories, withKey: "k\u{0}a", with: ["title": "changed"])
        #expect(try await store.record(of: subject.categories, withKey: "k")?["title"] == "plain")
        #expect(try await store.deleteRecord(of: subject.categories, withKey: "k\u{0}a"))
        #expect(try await store.record(of: subject.categories, withKey: "k") != nil)
        await #expect(throws: StoreError.duplicateKey("k")) {
            try await store.createRecord(of: subject.categories, with: ["slug": "k"])
        }
    }

    @Test("What SQLite serves after a restart is byte for byte what it served before")
    func exactValuesAfterRestart() async throws {
        let path = TemporaryDirectory.make() + "exact.sqlite"
        let resources = [Fixtures.people, Fixtures.categories]
        let store = try SQLiteStore(path: path)
        let first = try await MockServer(resources: resources, store: store)
        _ = await first.send(.post, "/people", json: ["name": "a\u{0}b", "kilometersWalked": .double(-0.0)])
        _ = await first.send(.post, "/people", json: ["name": "tab\tquote\"emoji🌴", "kilometersWalked": 1e-300])
        _ = await first.send(.post, "/categories", json: ["slug": "k\u{0}a", "title": "x\u{0}"])
        let (conflict, _) = await first.send(.post, "/categories", json: ["slug": "k"])
        #expect(conflict.status == .created)  // not a false 409
        let before = await (first.send(.get, "/people").0.body, first.send(.get, "/categories").0.body)
        try store.close()
        let second = try await MockServer(resources: resources, store: SQLiteStore(path: path))
        let after = await (second.send(.get, "/people").0.body, second.send(.get, "/categories").0.body)
        #expect(String(decoding: after.0, as: UTF8.self) == String(decoding: before.0, as: UTF8.self))
        #expect(String(decoding: after.1, as: UTF8.self) == String(decoding: before.1, as: UTF8.self))
        #expect(String(decoding: after.0, as: UTF8.self).contains(#""a\u0000b""#))
    }

    @Test("Concurrent SQLite writes commit in groups: each succeeds or fails alone, and what succeeded is on disk")
    func groupCommit() async throws {
        let path = TemporaryDirectory.make() + "group.sqlite"
        let store = try SQLiteStore(path: path)
        let server = try await MockServer(resources: [Fixtures.people, Fixtures.categories], store: store)
        let categories = try #require(server.schema(named: "categories"))
        let people = try #require(server.schema(named: "people"))
        _ = try await store.createRecord(of: categories, with: ["slug": "taken", "title": "first"])
        // 60 writes at once: 20 creates with a taken key, 40 that must all land; updates interleaved.
        let outcomes = await withTaskGroup(of: (Int, Bool).self) { group in
            for index in 0..<60 {
                group.addTask {
                    do {
                        if index % 3 == 0 {
                            let again: JSONObject = ["slug": "taken", "title": .string("again \(index)")]
                            _ = try await store.createRecord(of: categories, with: again)
                        } else {
                            _ = try await store.createRecord(of: people, with: ["name": .string("p\(index)")])
                        }
                        return (index, true)
                    } catch StoreError.duplicateKey {
                        return (index, false)
                    } catch {
                        Issue.record("write \(index) failed with \(error)")
                        return (index, false)
                    }
                }
            }
            var outcomes: [Int: Bool] = [:]
            for await (index, succeeded) in group { outcomes[index] = succeeded }
            return outcomes
        }
        #expect(outcomes.filter { $0.value }.keys.sorted() == (0..<60).filter { $0 % 3 != 0 })
        #expect(try await store.count(of: people) == 40)
        #expect(try await store.record(of: categories, withKey: "taken")?["title"] == "first")
        let served = try await store.storedRecords(of: people)
        try store.close()
        // Acknowledged means committed: a fresh store on the file holds every one of them.
        let reopened = try SQLiteStore(path: path)
        let again = try await MockServer(resources: [Fixtures.people, Fixtures.categories], store: reopened)
        let peopleAgain = try #require(again.schema(named: "people"))
        #expect(try await reopened.storedRecords(of: peopleAgain) == served)
        try reopened.close()
    }

    @Test("A second store on a file that a live store holds is refused, until the first closes")
    func oneStorePerFile() async throws {
        let directory = TemporaryDirectory.make()
        let path = directory + "shared.sqlite"
        let first = try SQLiteStore(path: path)
        #expect(first.createdFile)
        #expect(throws: StoreError.fileInUse(path: path)) { try SQLiteStore(path: path) }
        // The same file by another path is the same file.
        #expect(throws: StoreError.fileInUse(path: directory + "./shared.sqlite")) {
            try SQLiteStore(path: directory + "./shared.sqlite")
        }
        let server = try await MockServer(resources: [Fixtures.people], store: first)
        _ = await server.send(.post, "/people", json: ["name": "kept"])
        try first.close()
        let second = try SQLiteStore(path: path)
        #expect(!second.createdFile)
        let reopened = try await MockServer(resources: [Fixtures.people], store: second)
        #expect(await reopened.send(.get, "/people/1").1?["name"] == "kept")
        try second.close()
    }

    @Test("Updates merge into the record and never touch the key", arguments: StoreKind.allCases)
    func updates(kind: StoreKind) async throws {
        let subject = try await Subject(kind)
        let store = subject.store
        _ = try await store.createRecord(of: subject.people, with: ["name": "john", "numberOfKids": 1])
        let updated = try await store.updateRecord(of: subject.people, withKey: 1, with: ["name": "jeff", "id": 7])
        #expect(updated == ["id": 1, "name": "jeff", "numberOfKids": 1, "kilometersWalked": nil, "avatar": nil])
        let cleared = try await store.updateRecord(of: subject.people, withKey: 1, with: ["numberOfKids": nil])
        #expect(cleared?["numberOfKids"] == .null && cleared?["name"] == "jeff")
        #expect(try await store.updateRecord(of: subject.people, withKey: 2, with: ["name": "x"]) == nil)
    }

    @Test("A conditional update or delete writes only while the record is the one expected", arguments: StoreKind.allCases)
    func conditionalWrites(kind: StoreKind) async throws {
        let subject = try await Subject(kind)
        let store = subject.store
        let original = try await store.createRecord(of: subject.people, with: ["name": "john", "numberOfKids": 1])
        _ = try await store.createRecord(of: subject.cars, with: ["name": "mini", "person_id": 1])
        let written = try await store.updateRecord(of: subject.people, withKey: 1, with: ["name": "jeff"], ifCurrent: original)
        let updated = try #require(written.value)
        #expect(updated["name"] == "jeff")
        // The original is stale now: nothing is written, by update or delete.
        let staleUpdate = try await store.updateRecord(of: subject.people, withKey: 1, with: ["name": "x"], ifCurrent: original)
        #expect(staleUpdate.kind == "changed")
        #expect(try await store.deleteRecord(of: subject.people, withKey: 1, ifCurrent: original).kind == "changed")
        #expect(try await store.record(of: subject.people, withKey: 1)?["name"] == "jeff")
        let missing = try await store.updateRecord(of: subject.people, withKey: 9, with: ["name": "x"], ifCurrent: original)
        #expect(missing.kind == "missing")
        #expect(try await store.deleteRecord(of: subject.people, withKey: 1, ifCurrent: updated).kind == "written")
        // As an unconditional delete does, it orphans the children.
        #expect(try await store.record(of: subject.cars, withKey: 1)?["person_id"] == .null)
        #expect(try await store.deleteRecord(of: subject.people, withKey: 1, ifCurrent: updated).kind == "missing")
    }

    @Test(
        "A delete with dependents removes them with the record in one step; a stale or missing record removes none",
        arguments: StoreKind.allCases)
    func dependentDeletes(kind: StoreKind) async throws {
        let subject = try await Subject(kind)
        let store = subject.store
        let ada = try await store.createRecord(of: subject.people, with: ["name": "ada"])
        _ = try await store.createRecord(of: subject.people, with: ["name": "bob"])
        for (name, owner) in [("mini", 1), ("jeep", 1), ("cab", 2)] {
            _ = try await store.createRecord(of: subject.cars, with: ["name": .string(name), "person_id": .integer(owner)])
        }
        let carsOfPeople = try #require(subject.cars.foreignKeys.first)
        let cars = [(subject.cars, carsOfPeople)]
        let stale: JSONObject = ["id": 1, "name": "someone else"]
        let refused = try await store.deleteRecord(of: subject.people, withKey: 1, dependents: cars, ifCurrent: stale)
        #expect(refused.kind == "changed")
        #expect(try await store.count(of: subject.cars) == 3)
        let deleted = try await store.deleteRecord(of: subject.people, withKey: 1, dependents: cars, ifCurrent: ada)
        #expect(deleted.value == 2)
        #expect(try await store.records(of: subject.cars).map { $0["name"] } == ["cab"])
        let again = try await store.deleteRecord(of: subject.people, withKey: 1, dependents: cars, ifCurrent: nil)
        #expect(again.kind == "missing")
    }

    @Test("Lists are ordered by key, integers numerically and strings by bytes", arguments: StoreKind.allCases)
    func ordering(kind: StoreKind) async throws {
        let subject = try await Subject(kind)
        let store = subject.store
        for slug in ["b", "a", "C", "ab", "é"] {
            _ = try await store.createRecord(of: subject.categories, with: ["slug": .string(slug)])
        }
        let slugs = try await store.records(of: subject.categories).compactMap { $0["slug"]?.stringValue }
        #expect(slugs == ["C", "a", "ab", "b", "é"])
        for index in 1...12 { _ = try await store.createRecord(of: subject.people, with: ["numberOfKids": .integer(index)]) }
        let ids = try await store.records(of: subject.people).compactMap { $0["id"]?.intValue }
        #expect(ids == Array(1...12))
    }

    @Test(
        "Keys spelled with other bytes are other records, though Unicode calls them equivalent: reads, writes and children",
        arguments: StoreKind.allCases)
    func unicodeSpellings(kind: StoreKind) async throws {
        let subject = try await Subject(kind)
        let store = subject.store
        let composed = "\u{E9}"  // é as one scalar
        let decomposed = "e\u{301}"  // e and a combining accent: equal to `composed` for Swift's ==
        for (slug, title) in [("a", "a"), (composed, "composed"), ("f", "f"), (decomposed, "decomposed")] {
            _ = try await store.createRecord(of: subject.categories, with: ["slug": .string(slug), "title": .string(title)])
        }
        _ = try await store.createRecord(of: subject.products, with: ["name": "hat", "category_id": .string(composed)])
        func listed() async throws -> [[UInt8]] {
            try await store.records(of: subject.categories).map { Array(($0["slug"]?.stringValue ?? "").utf8) }
        }
        func titles() async throws -> [String] {
            try await store.records(of: subject.categories).compactMap { $0["title"]?.stringValue }
        }
        // Ordered by bytes: "e" + U+0301 (65 CC 81) before "f" (66) before U+00E9 (C3 A9).
        #expect(try await listed() == [Array("a".utf8), Array(decomposed.utf8), Array("f".utf8), Array(composed.utf8)])
        #expect(try await store.record(of: subject.categories, withKey: .string(decomposed))?["title"] == "decomposed")
        #expect(try await store.record(of: subject.categories, withKey: .string(composed))?["title"] == "composed")

        _ = try await store.updateRecord(of: subject.categories, withKey: .string(decomposed), with: ["title": "changed"])
        #expect(try await titles() == ["a", "changed", "f", "composed"])
        #expect(try await store.deleteRecord(of: subject.categories, withKey: .string(decomposed)))
        #expect(try await titles() == ["a", "f", "composed"])
        #expect(try await store.record(of: subject.categories, withKey: .string(decomposed)) == nil)
        // The product belongs to the composed spelling, which is still there: it keeps its category.
        let hat = try await store.records(of: subject.products).first
        #expect(hat?["category_id"]?.stringValue.map { Array($0.utf8) } == Array(composed.utf8))
        let foreignKey = try #require(subject.products.foreignKey(toParent: "categories"))
        #expect(try await store.records(of: subject.products, where: foreignKey, is: .string(decomposed)).isEmpty)
        #expect(try await store.records(of: subject.products, where: foreignKey, is: .string(composed)).count == 1)
    }

    @Test("Client keys must be unique", arguments: StoreKind.allCases)
    func duplicateKeys(kind: StoreKind) async throws {
        let subject = try await Subject(kind)
        _ = try await subject.store.createRecord(of: subject.categories, with: ["slug": "tools"])
        await #expect(throws: StoreError.duplicateKey("tools")) {
            try await subject.store.createRecord(of: subject.categories, with: ["slug": "tools", "title": "Again"])
        }
        #expect(try await subject.store.record(of: subject.categories, withKey: "tools")?["title"] == .null)
    }

    @Test("Children are found by foreign key and orphaned when the parent goes", arguments: StoreKind.allCases)
    func children(kind: StoreKind) async throws {
        let subject = try await Subject(kind)
        let store = subject.store
        let foreignKey = try #require(subject.cars.foreignKey(toParent: "people"))
        _ = try await store.createRecord(of: subject.people, with: ["name": "ada"])
        _ = try await store.createRecord(of: subject.people, with: ["name": "bob"])
        _ = try await store.createRecord(of: subject.cars, with: ["name": "beetle", "person_id": 1])
        _ = try await store.createRecord(of: subject.cars, with: ["name": "mini", "person_id": 2])
        _ = try await store.createRecord(of: subject.cars, with: ["name": "golf", "person_id": 1])
        let adas = try await store.records(of: subject.cars, where: foreignKey, is: 1)
        #expect(adas.compactMap { $0["name"]?.stringValue } == ["beetle", "golf"])
        #expect(try await store.deleteRecord(of: subject.people, withKey: 1))
        #expect(try await store.records(of: subject.cars, where: foreignKey, is: 1).isEmpty)
        let all = try await store.records(of: subject.cars)
        #expect(all.map { $0["person_id"] } == [.null, 2, .null])
        #expect(try await store.deleteRecord(of: subject.people, withKey: 1) == false)
    }

    @Test(
        "Stored JSON is the serialization of the stored fields after every kind of write, never an older version",
        arguments: StoreKind.allCases)
    func storedJSON(kind: StoreKind) async throws {
        let subject = try await Subject(kind)
        let store = subject.store
        let foreignKey = try #require(subject.cars.foreignKey(toParent: "people"))
        /// Every record's bytes against a fresh serialization of what `records` returns.
        func check(_ moment: Comment) async throws {
            for schema in [subject.people, subject.cars] {
                let stored = try await store.storedRecords(of: schema)
                #expect(stored.map(\.fields) == (try await store.records(of: schema)), moment)
                #expect(stored.map(\.json) == stored.map { JSON.object($0.fields).serialized() }, moment)
                for record in stored {
                    let key = try #require(record.fields[schema.key.name])
                    #expect(try await store.storedRecord(of: schema, withKey: key) == record, moment)
                }
            }
            let children = try await store.storedRecords(of: subject.cars, where: foreignKey, is: 1)
            #expect(children.map(\.fields) == (try await store.records(of: subject.cars, where: foreignKey, is: 1)), moment)
        }
        _ = try await store.createRecord(of: subject.people, with: ["name": "ada", "numberOfKids": 1])
        _ = try await store.createRecords(of: subject.people, with: [["name": "bob"], ["name": "cy"]])
        _ = try await store.createRecord(of: subject.cars, with: ["name": "beetle", "person_id": 1])
        _ = try await store.createRecord(of: subject.cars, with: ["name": "mini", "person_id": 2])
        try await check("after creating")
        _ = try await store.updateRecord(of: subject.people, withKey: 1, with: ["name": "Ada \"L\" 🌴", "numberOfKids": 2])
        let updated = try #require(try await store.storedRecord(of: subject.people, withKey: 1))
        #expect(String(decoding: updated.json, as: UTF8.self).contains("Ada \\\"L\\\" 🌴"))
        try await check("after updating")
        #expect(try await store.deleteRecord(of: subject.people, withKey: 2))
        // Deleting the parent orphans its car: the car's bytes must say so too.
        let orphan = try #require(try await store.storedRecord(of: subject.cars, withKey: 2))
        #expect(orphan.fields["person_id"] == .null)
        #expect(String(decoding: orphan.json, as: UTF8.self).contains("\"person_id\":null"))
        try await check("after deleting a parent")
    }

    @Test("Bulk creation stores all records", arguments: StoreKind.allCases)
    func bulk(kind: StoreKind) async throws {
        let subject = try await Subject(kind)
        let records = (0..<1200).map { JSONObject(dictionaryLiteral: ("numberOfKids", .integer($0))) }
        #expect(try await subject.store.createRecords(of: subject.people, with: records) == 1200)
        #expect(try await subject.store.count(of: subject.people) == 1200)
        #expect(try await subject.store.record(of: subject.people, withKey: 1200)?["numberOfKids"] == 1199)
    }

    @Test(
        "Bulk creation is all or nothing: a taken key, a key repeated in the batch, a missing key", arguments: StoreKind.allCases)
    func bulkAtomic(kind: StoreKind) async throws {
        let subject = try await Subject(kind)
        _ = try await subject.store.createRecord(of: subject.categories, with: ["slug": "taken"])
        let batches: [[JSONObject]] = [
            [["slug": "new"], ["slug": "taken"]], [["slug": "new"], ["slug": "other"], ["slug": "new"]],
            [["slug": "new"], ["title": "no slug"]],
        ]
        for batch in batches {
            await #expect(throws: (any Error).self) { try await subject.store.createRecords(of: subject.categories, with: batch) }
            #expect(try await subject.store.records(of: subject.categories).map { $0["slug"] } == ["taken"])
        }
        // The store still takes a good batch afterwards.
        #expect(try await subject.store.createRecords(of: subject.categories, with: [["slug": "new"], ["slug": "b"]]) == 2)
        #expect(try await subject.store.records(of: subject.categories).map { $0["slug"] } == ["b", "new", "taken"])
    }

    @Test("Dropping a resource removes its records", arguments: StoreKind.allCases)
    func drop(kind: StoreKind) async throws {
        let subject = try await Subject(kind)
        _ = try await subject.store.createRecord(of: subject.people, with: ["name": "a"])
        try await subject.store.dropResource(subject.people)
        await #expect(throws: (any Error).self) { try await subject.store.count(of: subject.people) }
        try await subject.store.addResource(subject.people)
        #expect(try await subject.store.count(of: subject.people) == 0)
    }

    @Test("Both stores give identical answers to the same script")
    func identical() async throws {
        var transcripts: [[JSON]] = []
        for kind in StoreKind.allCases {
            let subject = try await Subject(kind)
            let store = subject.store
            var transcript: [JSON] = []
            _ = try await store.createRecord(of: subject.categories, with: ["slug": "garden", "title": "G"])
            transcript.append(
                .object(
                    try await store.createRecord(of: subject.products, with: ["name": "h", "price": 1, "category_id": "garden"])))
            transcript.append(
                .object(try await store.createRecord(of: subject.products, with: ["details": [1, "two"], "inStock": false])))
            transcript.append(
                .object(try await store.updateRecord(of: subject.products, withKey: 2, with: ["price": 2.25]) ?? [:]))
            transcript.append(.bool(try await store.deleteRecord(of: subject.categories, withKey: "garden")))
            transcript.append(.array(try await store.records(of: subject.products).map { .object($0) }))
            transcripts.append(transcript)
        }
        #expect(transcripts[0] == transcripts[1])
        #expect(transcripts[0].map { $0.serializedString() } == transcripts[1].map { $0.serializedString() })
    }

    @Test("SQLite's in-memory mirror matches what a reopened file holds")
    func mirrorMatchesFile() async throws {
        let path = TemporaryDirectory.make() + "mirror.sqlite"
        let resources = [Fixtures.people, Fixtures.cars, Fixtures.categories, Fixtures.products]
        let firstStore = try SQLiteStore(path: path)
        let first = try await MockServer(resources: resources, store: firstStore)
        _ = await first.send(.post, "/categories", json: ["slug": "garden"])
        _ = await first.send(.post, "/categories/garden/products", json: ["name": "h", "price": 2, "details": ["x": [1, nil]]])
        _ = await first.send(.post, "/people", json: ["name": "ada", "avatar": "AAEC/w=="])
        _ = await first.send(.post, "/people/1/cars", json: ["name": "mini"])
        _ = await first.send(.patch, "/products/1", json: ["inStock": true, "releasedOn": "2024-01-02"])
        _ = await first.send(.delete, "/people/1")
        _ = await first.send(.post, "/categories", json: ["slug": "garden"])  // 409, changes nothing
        var served: [String: [UInt8]] = [:]
        for path in ["/people", "/cars", "/categories", "/products"] { served[path] = await first.send(.get, path).0.body }
        try firstStore.close()
        let second = try await MockServer(resources: resources, store: SQLiteStore(path: path))
        for path in ["/people", "/cars", "/categories", "/products"] {
            let before = served[path] ?? []
            let after = await second.send(.get, path).0.body
            #expect(
                before == after,
                "\(path): \(String(decoding: before, as: UTF8.self)) vs \(String(decoding: after, as: UTF8.self))")
        }
    }
}

extension ConditionalWrite {
    /// `written`, `missing` or `changed`, for expectations.
    var kind: String {
        switch self {
        case .written: "written"
        case .missing: "missing"
        case .changed: "changed"
        }
    }

    /// The written value, if the write happened.
    var value: Value? {
        if case .written(let value) = self { return value }
        return nil
    }
}
