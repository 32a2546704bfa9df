import HTTPTypes
import HammockJSON
import HammockSQLite
import HammockServer
import HammockStoreTesting
import Synchronization
import Testing

/// The shipped contract (HammockStoreTesting) on every store, and what only SQLite promises.
@Suite("Store contract")
struct StoreContractTests {
    @Test("Every store keeps the store contract", arguments: StoreKind.allCases, StoreContract.checks)
    func contract(kind: StoreKind, check: StoreContract.Check) async throws {
        try await check.run { try await kind.makeStore() }
    }

    @Test("A store written from StoreRules' primitives alone keeps the whole contract", arguments: StoreContract.checks)
    func primitivesKeepTheContract(check: StoreContract.Check) async throws {
        try await check.run { PrimitiveStore() }
    }

    @Test("A conditional PATCH or DELETE reads its record once, inside the store's write, whether it passes or not")
    func oneReadPerConditionalWrite() async throws {
        let primitive = PrimitiveStore()
        let calls = Mutex<[String]>([])
        let store = InstrumentedStore(primitive) { name in calls.withLock { $0.append(name) } }
        let server = try await MockServer(resources: [Fixtures.people], store: store)
        _ = await server.send(.post, "/people", json: ["name": "ada"])
        let tag = try #require(await server.send(.get, "/people/1").0.headerFields[.eTag])
        let reads = ["storedRecord", "storedRecords", "query", "count"]
        func conditional(
            _ method: HTTPRequest.Method, _ headers: HTTPFields, json: JSON? = nil
        ) async -> (HTTPResponse.Status, Int, [String]) {
            calls.withLock { $0 = [] }
            let before = primitive.recordReads(of: "people")
            let request =
                json.map { MockRequest(method, "/people/1", headerFields: headers, json: $0) }
                ?? MockRequest(method, "/people/1", headerFields: headers)
            let status = await server.respond(to: request).status
            return (status, primitive.recordReads(of: "people") - before, calls.withLock { $0 })
        }
        let written = await conditional(.patch, [.ifMatch: tag], json: ["name": "grace"])
        #expect(written.0 == .ok && written.1 == 1)
        #expect(written.2 == ["update"])  // no read of the record around the write, no date fetched
        let stale = await conditional(.patch, [.ifMatch: tag], json: ["name": "lost"])
        #expect(stale.0 == .preconditionFailed && stale.1 == 1 && stale.2 == ["update"])
        let since = await conditional(.delete, [.ifUnmodifiedSince: "Sat, 01 Jan 2000 00:00:00 GMT"])
        #expect(since.0 == .preconditionFailed && since.1 == 1)
        #expect(!since.2.contains { reads.contains($0) })  // the date, but no record read outside the write
        let current = try #require(await server.send(.get, "/people/1").0.headerFields[.eTag])
        let deleted = await conditional(.delete, [.ifMatch: current])
        #expect(deleted.0 == .noContent && deleted.1 == 1 && deleted.2 == ["delete"])
        #expect(await server.send(.get, "/people/1").0.status == .notFound)
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

    @Test("A write that fails halfway leaves nothing of it in SQLite's mirror, beside writes of its batch that land")
    func halfWrittenNeverServed() async throws {
        let path = TemporaryDirectory.make() + "half.sqlite"
        let store = try SQLiteStore(path: path)
        let server = try await MockServer(resources: [Fixtures.people], store: store)
        let people = try #require(server.schema(named: "people"))
        // The second record's value cannot go in a string column: the first was inserted (in SQL and in the
        // batch's changes) before the failure. Concurrent good writes share the batches.
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<30 {
                group.addTask {
                    let batch: [JSONObject] =
                        index % 2 == 0
                        ? [["name": .string("half \(index)")], ["name": 5]] : [["name": .string("whole \(index)")]]
                    return (try? await store.createRecords(of: people, with: batch)) != nil
                }
            }
            var outcomes: [Bool] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        #expect(outcomes.filter { $0 }.count == 15)
        let served = try await store.records(of: people)
        #expect(served.count == 15)
        #expect(served.allSatisfy { ($0["name"]?.stringValue ?? "").hasPrefix("whole") })
        try store.close()
        // What was served is what the file holds: the mirror never ran ahead of it.
        let reopened = try SQLiteStore(path: path)
        _ = try await MockServer(resources: [Fixtures.people], store: reopened)
        #expect(try await reopened.records(of: people) == served)
        try reopened.close()
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
