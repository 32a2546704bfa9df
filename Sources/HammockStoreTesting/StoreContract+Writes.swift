import HammockJSON
import HammockStore
import Testing

extension StoreContract {
    /// Updates, conditional writes, deletes with dependents, bulk creation, snapshots, and writes at once.
    static let writes: [Check] = [
        Check("Of concurrent conditional updates expecting the same record, exactly one is written") {
            (subject: Subject) async throws in
            let store = subject.store
            let original = try await store.createRecord(of: subject.people, with: ["name": "start"])
            let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        try await store.updateRecord(
                            of: subject.people, withKey: 1, with: ["name": .string("w\(index)")], ifCurrent: original
                        ).kind
                    }
                }
                var outcomes: [String] = []
                for try await outcome in group { outcomes.append(outcome) }
                return outcomes
            }
            #expect(outcomes.filter { $0 == "written" }.count == 1)
            #expect(outcomes.filter { $0 == "changed" }.count == 19)
        },
        Check("Concurrent creates get distinct keys, and every one is stored") { (subject: Subject) async throws in
            let store = subject.store
            let keys = try await withThrowingTaskGroup(of: JSON?.self) { group in
                for index in 0..<50 {
                    group.addTask {
                        try await store.createRecord(of: subject.people, with: ["numberOfKids": .integer(index)])["id"]
                    }
                }
                var keys: [JSON] = []
                for try await key in group { keys.append(key ?? .null) }
                return keys
            }
            #expect(Set(keys.compactMap(\.intValue)) == Set(1...50))
            #expect(try await store.count(of: subject.people) == 50)
        },
        Check("A create that names a store-made key as a positive integer keeps it, and later keys come after it") {
            (subject: Subject) async throws in
            let store = subject.store
            // Sample data that names its records (`"id": 4`): children and shared URLs refer to those numbers.
            let loaded = try await store.createRecords(
                of: subject.people, with: [["id": 4, "name": "amy"], ["name": "bob"], ["id": 9, "name": "cy"]])
            #expect(loaded == 3)
            #expect(try await store.record(of: subject.people, withKey: 4)?["name"] == "amy")
            #expect(try await store.record(of: subject.people, withKey: 9)?["name"] == "cy")
            let next = try await store.createRecord(of: subject.people, with: ["name": "dee"])
            #expect((next["id"]?.intValue ?? 0) > 9)
            // A key taken is refused, and nothing of that batch is stored.
            await #expect(throws: StoreError.self) {
                try await store.createRecords(of: subject.people, with: [["name": "eve"], ["id": 4, "name": "again"]])
            }
            #expect(try await store.count(of: subject.people) == 4)
        },
        Check("Updates merge into the record and never touch the key") { (subject: Subject) async throws in
            let store = subject.store
            _ = try await store.createRecord(of: subject.people, with: ["name": "john", "numberOfKids": 1])
            let updated = try await store.updateRecord(of: subject.people, withKey: 1, with: ["name": "jeff", "id": 7])
            #expect(updated == ["id": 1, "name": "jeff", "numberOfKids": 1, "kilometersWalked": nil, "avatar": nil])
            let cleared = try await store.updateRecord(of: subject.people, withKey: 1, with: ["numberOfKids": nil])
            #expect(cleared?["numberOfKids"] == .null && cleared?["name"] == "jeff")
            #expect(try await store.updateRecord(of: subject.people, withKey: 2, with: ["name": "x"]) == nil)
        },
        Check("A conditional update or delete writes only while the record is the one expected") {
            (subject: Subject) async throws in
            let store = subject.store
            let original = try await store.createRecord(of: subject.people, with: ["name": "john", "numberOfKids": 1])
            _ = try await store.createRecord(of: subject.cars, with: ["name": "mini", "person_id": 1])
            let written = try await store.updateRecord(
                of: subject.people, withKey: 1, with: ["name": "jeff"], ifCurrent: original)
            let updated = try #require(written.value)
            #expect(updated["name"] == "jeff")
            // The original is stale now: nothing is written, by update or delete.
            let staleUpdate = try await store.updateRecord(
                of: subject.people, withKey: 1, with: ["name": "x"], ifCurrent: original)
            #expect(staleUpdate.kind == "changed")
            #expect(try await store.deleteRecord(of: subject.people, withKey: 1, ifCurrent: original).kind == "changed")
            #expect(try await store.record(of: subject.people, withKey: 1)?["name"] == "jeff")
            let missing = try await store.updateRecord(of: subject.people, withKey: 9, with: ["name": "x"], ifCurrent: original)
            #expect(missing.kind == "missing")
            #expect(try await store.deleteRecord(of: subject.people, withKey: 1, ifCurrent: updated).kind == "written")
            // As an unconditional delete does, it orphans the children.
            #expect(try await store.record(of: subject.cars, withKey: 1)?["person_id"] == .null)
            #expect(try await store.deleteRecord(of: subject.people, withKey: 1, ifCurrent: updated).kind == "missing")
        },
        Check("A delete with dependents removes them with the record in one step; a stale or missing record removes none") {
            (subject: Subject) async throws in
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
        },
        Check("A write notes its change date with it, and lists what it changed; a refused one notes and changes nothing") {
            (subject: Subject) async throws in
            let store = subject.store
            let base = 2_000_000_000
            let person = StoreWrite(subject.people, .create([["name": "ada"]]), changedAt: base + 10)
            let created = try #require(try await store.perform(person).value)
            #expect(created.records.first?["name"] == "ada" && created.changedResources == ["people"])
            #expect(try await store.lastChange(of: ["people"], now: base + 20, marking: false) == base + 10)
            _ = try await store.createRecord(of: subject.cars, with: ["name": "mini", "person_id": 1])
            // A check that refuses: nothing written, no date moved, the reason handed back as it was given.
            struct Refusal: Error {}
            let refused = StoreWrite(
                subject.people, .update(key: 1, values: ["name": "x"]), condition: .check { _ in Refusal() },
                changedAt: base + 15)
            guard case .refused(let reason) = try await store.perform(refused) else {
                Issue.record("a check that refuses did not refuse")
                return
            }
            #expect(reason is Refusal)
            #expect(try await store.record(of: subject.people, withKey: 1)?["name"] == "ada")
            #expect(try await store.lastChange(of: ["people"], now: base + 20, marking: false) == base + 10)
            // A check that passes sees the record as the write finds it.
            let seen = StoreWrite(
                subject.people, .update(key: 1, values: ["name": "grace"]),
                condition: .check { record in record?["name"] == "ada" ? nil : Refusal() }, changedAt: base + 16)
            #expect(try await store.perform(seen).value?.records.first?["name"] == "grace")
            // A delete lists the children whose keys it nulled, and notes their date too.
            let delete = StoreWrite(subject.people, .delete(key: 1, dependents: []), changedAt: base + 17)
            let deleted = try #require(try await store.perform(delete).value)
            #expect(deleted.records.first?["name"] == "grace")
            #expect(deleted.changedResources.first == "people" && deleted.changedResources.contains("cars"))
            #expect(try await store.lastChange(of: ["cars"], now: base + 20, marking: false) == base + 17)
            #expect(try await store.record(of: subject.cars, withKey: 1)?["person_id"] == .null)
        },
        Check("Client keys must be unique") { (subject: Subject) async throws in
            _ = try await subject.store.createRecord(of: subject.categories, with: ["slug": "tools"])
            await #expect(throws: StoreError.duplicateKey("tools")) {
                try await subject.store.createRecord(of: subject.categories, with: ["slug": "tools", "title": "Again"])
            }
            #expect(try await subject.store.record(of: subject.categories, withKey: "tools")?["title"] == .null)
        },
        Check("Bulk creation stores all records") { (subject: Subject) async throws in
            let records = (0..<1200).map { JSONObject(dictionaryLiteral: ("numberOfKids", .integer($0))) }
            #expect(try await subject.store.createRecords(of: subject.people, with: records) == 1200)
            #expect(try await subject.store.count(of: subject.people) == 1200)
            #expect(try await subject.store.record(of: subject.people, withKey: 1200)?["numberOfKids"] == 1199)
        },
        Check("Bulk creation is all or nothing: a taken key, a key repeated in the batch, a missing key") {
            (subject: Subject) async throws in
            _ = try await subject.store.createRecord(of: subject.categories, with: ["slug": "taken"])
            let batches: [[JSONObject]] = [
                [["slug": "new"], ["slug": "taken"]], [["slug": "new"], ["slug": "other"], ["slug": "new"]],
                [["slug": "new"], ["title": "no slug"]],
            ]
            for batch in batches {
                await #expect(throws: (any Error).self) {
                    try await subject.store.createRecords(of: subject.categories, with: batch)
                }
                #expect(try await subject.store.records(of: subject.categories).map { $0["slug"] } == ["taken"])
            }
            // The store still takes a good batch afterwards.
            #expect(try await subject.store.createRecords(of: subject.categories, with: [["slug": "new"], ["slug": "b"]]) == 2)
            #expect(try await subject.store.records(of: subject.categories).map { $0["slug"] } == ["b", "new", "taken"])
        },
        Check("A snapshot restores every record, client key and generated-key counter, and orphans children of parents it lacks")
        { (subject: Subject) async throws in
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
        },
        Check("A script of writes and reads answers exactly as MemoryStore, the reference, answers it") {
            (subject: Subject) async throws in
            let reference = try await Subject(store: MemoryStore())
            let answered = try await writeScript(on: subject)
            let expected = try await writeScript(on: reference)
            #expect(answered == expected)
            #expect(answered.map { $0.serializedString() } == expected.map { $0.serializedString() })
        },
    ]

    /// Writes of every kind, with what each answered.
    static func writeScript(on subject: Subject) async throws -> [JSON] {
        let store = subject.store
        var transcript: [JSON] = []
        _ = try await store.createRecord(of: subject.categories, with: ["slug": "garden", "title": "G"])
        transcript.append(
            .object(try await store.createRecord(of: subject.products, with: ["name": "h", "price": 1, "category_id": "garden"])))
        transcript.append(
            .object(try await store.createRecord(of: subject.products, with: ["details": [1, "two"], "inStock": false])))
        transcript.append(.object(try await store.updateRecord(of: subject.products, withKey: 2, with: ["price": 2.25]) ?? [:]))
        transcript.append(.bool(try await store.deleteRecord(of: subject.categories, withKey: "garden")))
        transcript.append(.array(try await store.records(of: subject.products).map { .object($0) }))
        transcript.append(.integer(try await store.count(of: subject.products)))
        return transcript
    }
}
