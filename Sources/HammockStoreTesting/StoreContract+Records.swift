import HammockJSON
import HammockStore
import Testing

extension StoreContract {
    /// Keys, the shape and fidelity of records, ordering, children and the stored JSON.
    static let records: [Check] = [
        Check("Generated keys count up and are never reused") { (subject: Subject) async throws in
            let store = subject.store
            let first = try await store.createRecord(of: subject.people, with: ["name": "a"])
            let second = try await store.createRecord(of: subject.people, with: ["name": "b"])
            #expect(first["id"] == 1 && second["id"] == 2)
            #expect(try await store.deleteRecord(of: subject.people, withKey: 2))
            let third = try await store.createRecord(of: subject.people, with: ["name": "c"])
            #expect(third["id"] == 3)
            #expect(try await store.count(of: subject.people) == 2)
        },
        Check("Records list every column in order, null when unset") { (subject: Subject) async throws in
            let created = try await subject.store.createRecord(of: subject.cars, with: ["color": "red"])
            #expect(created.keys == ["id", "name", "color", "person_id"])
            #expect(created["name"] == .null && created["person_id"] == .null)
            let fetched = try await subject.store.record(of: subject.cars, withKey: created["id"] ?? nil)
            #expect(fetched == created)
            #expect(fetched?.keys == created.keys)
            #expect(try await subject.store.record(of: subject.cars, withKey: 99) == nil)
        },
        Check("Every field type round-trips unchanged") { (subject: Subject) async throws in
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
        },
        Check("Strings holding NUL and negative zero are stored exactly, in values and in keys") {
            (subject: Subject) async throws in
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
        },
        Check("Lists are ordered by key, integers numerically and strings by bytes") { (subject: Subject) async throws in
            let store = subject.store
            for slug in ["b", "a", "C", "ab", "é"] {
                _ = try await store.createRecord(of: subject.categories, with: ["slug": .string(slug)])
            }
            let slugs = try await store.records(of: subject.categories).compactMap { $0["slug"]?.stringValue }
            #expect(slugs == ["C", "a", "ab", "b", "é"])
            for index in 1...12 { _ = try await store.createRecord(of: subject.people, with: ["numberOfKids": .integer(index)]) }
            let ids = try await store.records(of: subject.people).compactMap { $0["id"]?.intValue }
            #expect(ids == Array(1...12))
        },
        Check("Keys spelled with other bytes are other records, though Unicode calls them equivalent: reads, writes and children")
        { (subject: Subject) async throws in
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
        },
        Check("Children are found by foreign key and orphaned when the parent goes") { (subject: Subject) async throws in
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
        },
        Check("Stored JSON is the serialization of the stored fields after every kind of write, never an older version") {
            (subject: Subject) async throws in
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
        },
        Check("Dropping a resource removes its records") { (subject: Subject) async throws in
            _ = try await subject.store.createRecord(of: subject.people, with: ["name": "a"])
            try await subject.store.dropResource(subject.people)
            await #expect(throws: (any Error).self) { try await subject.store.count(of: subject.people) }
            try await subject.store.addResource(subject.people)
            #expect(try await subject.store.count(of: subject.people) == 0)
        },
    ]
}
