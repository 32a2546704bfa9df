import HammockJSON
import HammockSQLite
import HammockTestSupport
import Testing

@testable import HammockServer
@testable import HammockStore

/// The indexed answers of a record table (``RecordTable/answer(_:)``) against the plain scan
/// (``ListQuery/apply(to:schema:)``), which the property test in ListQueryPropertyTests holds to an oracle.
@Suite("Indexed list queries")
struct IndexedQueryTests {
    static let items = MockResource(
        "items", fields: ["name": .string, "size": .integer, "weight": .float, "flag": .boolean, "tags": .json])

    static func schema() async throws -> ResourceSchema {
        let server = try await MockServer(resources: [items], store: MemoryStore())
        return try #require(server.schema(named: "items"))
    }

    static func randomValue(_ field: String, _ generator: inout SplitMix64) -> JSON {
        if Int.random(in: 0..<6, using: &generator) == 0 { return .null }
        switch field {
        case "name":
            let letters = ["a", "b", "A", "B", "é", "É", "e\u{301}", " "]  // é twice: composed and not
            return .string(
                (0..<Int.random(in: 0...3, using: &generator)).map { _ in letters.randomElement(using: &generator) ?? "a" }
                    .joined())
        case "size": return .integer(Int.random(in: -3...3, using: &generator))
        case "weight": return .double(Double(Int.random(in: -4...4, using: &generator)) / 2)
        case "flag": return .bool(Bool.random(using: &generator))
        default:
            // A json field holds values of any kind, which the index orders as the sort does.
            return [.integer(1), .double(1), .string("1"), .bool(true), .array([1]), .object(["a": 1])]
                .randomElement(using: &generator) ?? .null
        }
    }

    static func randomRecord(_ generator: inout SplitMix64) -> JSONObject {
        var record = JSONObject()
        for field in ["name", "size", "weight", "flag", "tags"] { record[field] = randomValue(field, &generator) }
        return record
    }

    static func randomQuery(_ generator: inout SplitMix64) -> ListQuery {
        var query = ListQuery()
        let fields = ["id", "name", "size", "weight", "flag", "tags"]
        for _ in 0..<Int.random(in: 0...2, using: &generator) {
            let field = fields.randomElement(using: &generator) ?? "size"
            let comparison = ListQuery.Operator.allCases.randomElement(using: &generator) ?? .equal
            let values: [JSON]
            switch comparison {
            case .null: values = [.bool(Bool.random(using: &generator))]
            case .like:
                // Needles of up to three bytes are answered by the text index alone, longer ones confirmed
                // on the records, and a `%` splits a pattern into parts.
                let needle = { (generator: inout SplitMix64) in randomValue("name", &generator).stringValue ?? "a" }
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: values = [.string(needle(&generator) + "%" + needle(&generator))]
                case 1: values = [.string(needle(&generator) + needle(&generator)), .string(needle(&generator))]
                default: values = [.string(needle(&generator))]
                }
            default:
                values = (0..<Int.random(in: 1...3, using: &generator)).map { _ in
                    field == "id" ? .integer(Int.random(in: 0...40, using: &generator)) : randomValue(field, &generator)
                }
            }
            query.filters.append(ListQuery.Filter(field: field, comparison: comparison, values: values))
        }
        if Int.random(in: 0..<4, using: &generator) == 0 {
            query.search = ["", "a", "é", "b a", "É", "ab a", "aé b", "e\u{301}a"].randomElement(using: &generator)
        }
        query.sort = (0..<Int.random(in: 0...2, using: &generator)).map { _ in
            ListQuery.SortKey(
                field: fields.randomElement(using: &generator) ?? "id", isDescending: Bool.random(using: &generator))
        }
        switch Int.random(in: 0..<3, using: &generator) {
        case 0:
            query.window = .page(number: Int.random(in: 1...4, using: &generator), size: Int.random(in: 1...8, using: &generator))
        case 1:
            let start = Int.random(in: 0...10, using: &generator)
            query.window = .range(
                start: start, end: Bool.random(using: &generator) ? nil : start + Int.random(in: 0...6, using: &generator))
        default: break
        }
        return query
    }

    static func keys(_ records: [StoredRecord]) -> [JSON] { records.map { $0.fields["id"] ?? .null } }

    @Test("Indexed answers equal the scan's after every kind of write, in every order", .cpuBound)
    func indexesFollowWrites() async throws {
        let schema = try await Self.schema()
        var generator = SplitMix64(seed: 7)
        for round in 0..<6 {
            // Chunks of four rows in half the rounds: a few records make many chunks, which split and
            // empty as writes come, and each chunk's fence must stay its last row's value.
            var table = RecordTable(schema: schema, indexingFrom: 0, chunkLimit: round % 2 == 0 ? 4 : 512)
            for _ in 0..<Int.random(in: 0...25, using: &generator) {
                table.insert(
                    schema.makeRecord(key: .integer(table.lastGeneratedKey + 1), values: Self.randomRecord(&generator)),
                    key: .integer(table.lastGeneratedKey + 1))
            }
            for step in 0..<60 {
                // Queries first build indexes, so the writes after them must keep the indexes true.
                for _ in 0..<4 {
                    let query = Self.randomQuery(&generator)
                    let expected = query.apply(to: table.storedRecords, schema: schema)
                    let answered = table.answer(query)
                    #expect(Self.keys(answered.page) == Self.keys(expected.page), "step \(step): \(query)")
                    #expect(answered.total == expected.total, "step \(step): \(query)")
                }
                let key = JSON.integer(Int.random(in: 1...max(1, table.lastGeneratedKey), using: &generator))
                switch Int.random(in: 0..<6, using: &generator) {
                case 5 where table.record(withKey: key) == nil:
                    // A key below the last, in the row a removal freed: rows no longer follow the key order.
                    table.insert(schema.makeRecord(key: key, values: Self.randomRecord(&generator)), key: key)
                case 0, 1:
                    let next = JSON.integer(table.lastGeneratedKey + Int.random(in: 1...2, using: &generator))
                    table.insert(schema.makeRecord(key: next, values: Self.randomRecord(&generator)), key: next)
                case 2:
                    var values = JSONObject()
                    let field = ["name", "size", "weight", "flag", "tags"].randomElement(using: &generator) ?? "size"
                    values[field] = Self.randomValue(field, &generator)
                    _ = table.merge(values, intoKey: key)
                case 3: _ = table.remove(key: key)
                default: table.orphan(foreignKey: "size", of: .integer(Int.random(in: -3...3, using: &generator)))
                }
                let fencesHold = table.indexes?.fields.values.allSatisfy { $0.fencesHold(in: table.slots) } ?? true
                #expect(fencesHold, "step \(step)")
            }
        }
    }

    @Test(
        "PostgreSQL answers what SQL cannot (json fields, bounds of another kind) in Swift on the rows SQL selects, as the scan does"
    )
    func postgresLeavesToSwiftOnlyWhatSQLCannotAnswer() async throws {
        let store = try await StoreKind.postgres.makeStore()
        let server = try await MockServer(resources: [Self.items], store: store)
        let schema = try #require(server.schema(named: "items"))
        var generator = SplitMix64(seed: 17)
        let records = (0..<40).map { _ in JSON.object(Self.randomRecord(&generator)) }
        _ = try await server.addData(.array(records), for: "items")
        let stored = try await store.storedRecords(of: schema)
        #expect(stored.count == 40)
        var mixed = 0
        for round in 0..<300 {
            var query = Self.randomQuery(&generator)
            // Half the queries get a condition on the json field beside the others, so SQL selects the
            // rows of the rest and Swift checks it on them.
            if round % 2 == 0 {
                let value = Self.randomValue("tags", &generator)
                let comparison: ListQuery.Operator =
                    [.equal, .notEqual, .greater, .null].randomElement(using: &generator) ?? .equal
                query.filters.append(
                    ListQuery.Filter(
                        field: "tags", comparison: comparison, values: [comparison == .null ? .bool(value.isNull) : value]))
            }
            if query.filters.contains(where: { $0.field != "tags" }) && query.filters.contains(where: { $0.field == "tags" }) {
                mixed += 1
            }
            let expected = query.apply(to: stored, schema: schema)
            let answered = try await store.storedRecords(of: schema, answering: query)
            #expect(Self.keys(answered.page) == Self.keys(expected.page), "\(query)")
            #expect(answered.total == expected.total, "\(query)")
        }
        #expect(mixed > 50)
        // A filter SQL gives up on after binding its first value (a string among a number field's values,
        // as code may build one), with SQL conditions before and after it: their parameters keep their
        // numbers.
        let partly = ListQuery(
            filters: [
                .init(field: "weight", comparison: .greater, values: [.double(-1)]),
                .init(field: "size", values: [.integer(1), .string("x")]),
                .init(field: "flag", values: [.bool(true)]),
            ], sort: [.init(field: "tags")])
        let expected = partly.apply(to: stored, schema: schema)
        let answered = try await store.storedRecords(of: schema, answering: partly)
        #expect(Self.keys(answered.page) == Self.keys(expected.page))
        #expect(answered.total == expected.total)
    }

    @Test("A bounded heap gives a full sort's window and the count, for any window and any arrival order")
    func topRecordsMatchAFullSort() async throws {
        let schema = try await Self.schema()
        var generator = SplitMix64(seed: 11)
        for round in 0..<300 {
            let records = (0..<Int.random(in: 0...40, using: &generator)).map { index in
                StoredRecord(schema.makeRecord(key: .integer(index + 1), values: Self.randomRecord(&generator)))
            }.shuffled(using: &generator)
            let keys = (0..<Int.random(in: 0...2, using: &generator)).map { _ in
                ListQuery.SortKey(
                    field: ["name", "size", "weight", "flag", "tags"].randomElement(using: &generator) ?? "size",
                    isDescending: Bool.random(using: &generator))
            }
            let window: ListQuery.Window? =
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: .page(number: Int.random(in: 1...5, using: &generator), size: Int.random(in: 1...9, using: &generator))
                case 1: .range(start: Int.random(in: 0...12, using: &generator), end: Int.random(in: 0...30, using: &generator))
                default: nil
                }
            let order = RecordOrder(keys: keys, keyName: "id")
            var top = TopRecords(window: window, order: order)
            for record in records { top.add(record) }
            var query = ListQuery()
            query.sort = keys
            query.window = window
            let expected = query.apply(to: records.sorted(by: order.precedes), schema: schema)
            #expect(Self.keys(top.result.page) == Self.keys(expected.page), "round \(round)")
            #expect(top.result.total == records.count)
        }
    }

    @Test("_like folds ASCII letters in place and matches as the lowercased copy does, with and without %")
    func likeFoldsInPlace() {
        var generator = SplitMix64(seed: 5)
        let pieces = ["a", "B", "ab", "AB", "%", "é", "É", "z", "Zz", " ", "_", "ß"]
        func random(_ count: ClosedRange<Int>) -> String {
            (0..<Int.random(in: count, using: &generator)).map { _ in pieces.randomElement(using: &generator) ?? "a" }.joined()
        }
        for _ in 0..<3_000 {
            let text = String(random(0...6).filter { $0 != "%" })
            let pattern = random(0...4)
            let parts = pattern.lowercased().split(separator: "%", omittingEmptySubsequences: false).map { Array($0.utf8) }
            let expected = TextMatch.matches(Array(text.lowercased().utf8), pattern: parts)
            #expect(TextMatch.matches(text, pattern: parts) == expected, "\(text) ~ \(pattern)")
        }
    }

    @Test("A key inserted below the others, and a table emptied and refilled, keep the indexes in order")
    func insertsBelowAndRefills() async throws {
        let schema = try await Self.schema()
        var table = RecordTable(schema: schema, indexingFrom: 0)
        let bySize = ListQuery(sort: [.init(field: "size")])
        for number in stride(from: 2_000, to: 0, by: -1) {
            table.insert(schema.makeRecord(key: .integer(number), values: ["size": .integer(number % 7)]), key: .integer(number))
            if number % 500 == 0 { _ = table.answer(bySize) }
        }
        let expected = bySize.apply(to: table.storedRecords, schema: schema)
        #expect(Self.keys(table.answer(bySize).page) == Self.keys(expected.page))
        for number in 1...2_000 {
            let removed = table.remove(key: .integer(number))
            #expect(removed)
        }
        #expect(table.answer(ListQuery(filters: [.init(field: "size", values: [3])])).total == 0)
        table.insert(schema.makeRecord(key: 5, values: ["size": 3]), key: 5)
        #expect(Self.keys(table.answer(ListQuery(filters: [.init(field: "size", values: [3])])).page) == [5])
    }

    @Test(
        "A store with more records than the indexing threshold answers queries as the scan does", .cpuBound,
        arguments: StoreKind.allCases)
    func largeStore(_ kind: StoreKind) async throws {
        let server = try await Fixtures.server(kind, resources: [Fixtures.people, Fixtures.cars])
        let store = server.store
        let people = try #require(server.schema(named: "people"))
        let cars = try #require(server.schema(named: "cars"))
        var generator = SplitMix64(seed: 3)
        let count = RecordTable.indexingThreshold + 200
        let names = ["amy", "Amber", "bob", "carl", "dora", "Émile"]
        _ = try await store.createRecords(
            of: people,
            with: (0..<count).map { number in
                ["name": .string("\(names[number % names.count]) \(number % 97)"), "numberOfKids": .integer(number % 5)]
            })
        _ = try await store.createRecords(
            of: cars,
            with: (0..<count).map { number in ["name": .string("car \(number)"), "person_id": .integer(1 + number % 40)] })
        let queries = [
            "numberOfKids=2&_page=3&_per_page=20", "numberOfKids=2&numberOfKids=4&_sort=-name&_page=2",
            "numberOfKids_gte=3&name_like=am", "_sort=name,-numberOfKids&_start=40&_limit=25", "_sort=-numberOfKids&_page=7",
            "q=AM&_page=2", "q=emile&_sort=numberOfKids", "q=é", "numberOfKids_ne=1&_sort=name&_page=1", "id_lt=30&id_gt=10",
        ]
        for round in 0..<2 {
            for text in queries {
                let query = try ListQuery(parsing: text, for: people)
                let expected = query.apply(to: try await store.storedRecords(of: people), schema: people)
                let answered = try await store.storedRecords(of: people, answering: query)
                #expect(Self.keys(answered.page) == Self.keys(expected.page), "\(kind) round \(round): \(text)")
                #expect(answered.total == expected.total, "\(kind) round \(round): \(text)")
            }
            // Writes between the rounds: the second round reads indexes the writes had to keep.
            for _ in 0..<50 {
                let key = JSON.integer(Int.random(in: 1...count, using: &generator))
                _ = try await store.updateRecord(
                    of: people, withKey: key, with: ["numberOfKids": .integer(Int.random(in: 0...4, using: &generator))])
            }
            _ = try await store.deleteRecord(of: people, withKey: 2)
            _ = try await store.createRecord(of: people, with: ["name": "amy new", "numberOfKids": 2])
        }
        // A nested list and embedded children come from the foreign key's index.
        let (response, body) = await server.send(.get, "/people/3/cars?_sort=-name&_page=1&_per_page=5")
        #expect(response.status == .ok)
        let expectedCars = try await store.storedRecords(of: cars).filter { $0.fields["person_id"] == 3 }
            .sorted {
                ($0.fields["name"]?.stringValue ?? "").utf8.lexicographicallyPrecedes(($1.fields["name"]?.stringValue ?? "").utf8)
            }
            .reversed().prefix(5).map { $0.fields["id"] ?? .null }
        #expect(body?.arrayValue?.map { $0["id"] ?? .null } == Array(expectedCars))
        #expect(response.headerFields[.totalCount] == String(count / 40))
        // Without a query too: the plain nested list reads the same index.
        let plain = await server.send(.get, "/people/3/cars").1?.arrayValue?.map { $0["id"] ?? .null }
        #expect(
            plain
                == (try await store.storedRecords(of: cars)).filter { $0.fields["person_id"] == 3 }.map {
                    $0.fields["id"] ?? .null
                })
        #expect(plain?.count == count / 40)
        // Person 2 was deleted above.
        let (_, embedded) = await server.send(.get, "/people?_embed=cars&id_lte=3")
        #expect(embedded?.arrayValue?.map { $0["cars"]?.arrayValue?.count } == [count / 40, count / 40])
        let (_, expanded) = await server.send(.get, "/cars?_expand=person&id_lte=2")
        // Car 2 belonged to person 2, so its foreign key was set to null.
        #expect(expanded?.arrayValue?.map { $0["person"]?["id"] } == [JSON.integer(1), nil])
    }

    /// `inRuns`: a new record mostly repeats the value of the one before, as new records of a status or a
    /// boolean do, so that most inserts go right after the last one (``FieldIndex``'s guess) while
    /// removals and changed values move entries under it.
    @Test(
        "A field index with small chunks keeps its order, bounds and walks through random inserts and removals, of values at random or in runs",
        arguments: [false, true])
    func fieldIndexAgainstASortedArray(inRuns: Bool) {
        var generator = SplitMix64(seed: inRuns ? 22 : 21)
        var lastValue = 0
        var index = FieldIndex(field: "size", column: 1, keyName: "id", keyColumn: 0, records: [], chunkLimit: 4)
        var model: [(value: Int, key: Int)] = []
        // The index reads values from the records, by row (the key here); a third of them hold their
        // fields in another order, found by name.
        var records: [StoredRecord?] = [nil]
        var nextKey = 0
        for _ in 0..<1_500 {
            let operation = Int.random(in: 0..<4, using: &generator)
            if !model.isEmpty, operation == 3 {
                // A changed value, as a table's replace makes it: out at the old value and in at the new
                // one while the row's slot still holds the old record, which is then replaced.
                let position = Int.random(in: 0..<model.count, using: &generator)
                let (old, key) = model[position]
                let new = Int.random(in: 0...9, using: &generator)
                guard new != old else { continue }
                let row = Int32(key)
                let removed = index.remove(row: row, value: .integer(old), key: .integer(key), in: records)
                index.insert(row: row, value: .integer(new), key: .integer(key), in: records)
                records[key] = StoredRecord(["id": .integer(key), "size": .integer(new)])
                #expect(removed)
                model[position].value = new
                model.sort { ($0.value, $0.key) < ($1.value, $1.key) }
            } else if model.isEmpty || operation > 0 {
                nextKey += 1
                let repeats = inRuns && Int.random(in: 0..<4, using: &generator) > 0
                let value = repeats ? lastValue : Int.random(in: 0...9, using: &generator)
                lastValue = value
                let fields: JSONObject =
                    nextKey % 3 == 0
                    ? ["size": .integer(value), "id": .integer(nextKey)] : ["id": .integer(nextKey), "size": .integer(value)]
                records.append(StoredRecord(fields))
                index.insert(row: Int32(nextKey), value: .integer(value), key: .integer(nextKey), in: records)
                model.append((value, nextKey))
                model.sort { ($0.value, $0.key) < ($1.value, $1.key) }
            } else {
                let victim = model.remove(at: Int.random(in: 0..<model.count, using: &generator))
                let row = Int32(victim.key)
                let removed = index.remove(row: row, value: .integer(victim.value), key: .integer(victim.key), in: records)
                let removedTwice = index.remove(
                    row: row, value: .integer(victim.value), key: .integer(victim.key), in: records)
                #expect(removed && !removedTwice)
                records[victim.key] = nil
            }
            #expect(index.count == model.count)
            #expect(index.chunks.allSatisfy { !$0.isEmpty && $0.count <= 4 })
            let fencesHold = index.fencesHold(in: records)  // a value, so a failure does not print the index
            #expect(fencesHold)
            let probe = Int.random(in: -1...10, using: &generator)
            #expect(index.bound(of: .integer(probe), after: false, in: records) == model.partitioningIndex { $0.value >= probe })
            #expect(index.bound(of: .integer(probe), after: true, in: records) == model.partitioningIndex { $0.value > probe })
            let low = Int.random(in: 0...model.count, using: &generator)
            let high = Int.random(in: low...model.count, using: &generator)
            if !model.isEmpty {
                let position = Int.random(in: 0..<model.count, using: &generator)
                let value = model[position].value
                let expected = model.partitioningIndex { $0.value >= value }..<model.partitioningIndex { $0.value > value }
                #expect(index.run(containing: position, in: records) == expected)
            }
            let walked = index.rows(in: low..<high)
            #expect(walked == model[low..<high].map(\.key))
            #expect(index.rows(in: low..<high, reversed: true) == walked.reversed())
        }
    }

    @Test("Chunk positions agree with sums over an array of sizes through growth, shrinking and rebuilds")
    func chunkPositionsAgainstAnArray() {
        var generator = SplitMix64(seed: 5)
        var sizes: [Int] = []
        var positions = ChunkPositions(sizes: sizes)
        #expect(positions.chunkCount == 0 && positions.start(of: 0) == 0)
        for step in 0..<600 {
            if sizes.isEmpty || Int.random(in: 0..<5, using: &generator) == 0 {
                // A chunk split or emptied and taken, anywhere; a new first chunk when there is none.
                if sizes.isEmpty {
                    sizes = [Int.random(in: 1...9, using: &generator)]
                    positions = ChunkPositions(sizes: sizes)
                } else if Bool.random(using: &generator) {
                    let chunk = Int.random(in: 0..<sizes.count, using: &generator)
                    positions.add(-(sizes[chunk] - 1), to: chunk)
                    positions.add(-1, to: chunk)
                    positions.remove(chunk)
                    sizes.remove(at: chunk)
                } else if let chunk = sizes.indices.filter({ sizes[$0] > 1 }).randomElement(using: &generator) {
                    let moved = Int.random(in: 1..<sizes[chunk], using: &generator)
                    positions.split(chunk, moving: moved)
                    sizes[chunk] -= moved
                    sizes.insert(moved, at: chunk + 1)
                }
            } else {
                let chunk = Int.random(in: 0..<sizes.count, using: &generator)
                let change = sizes[chunk] > 1 && Bool.random(using: &generator) ? -1 : 1
                sizes[chunk] += change
                positions.add(change, to: chunk)
            }
            #expect(positions.chunkCount == sizes.count)
            var start = 0
            for (chunk, size) in sizes.enumerated() {
                #expect(positions.start(of: chunk) == start, "step \(step), chunk \(chunk)")
                for offset in 0..<size where offset == 0 || offset == size - 1 || step % 50 == 0 {
                    let located = positions.locate(start + offset)
                    #expect(located.chunk == chunk && located.offset == offset, "step \(step), position \(start + offset)")
                }
                start += size
            }
            #expect(positions.start(of: sizes.count) == start)
        }
    }

    @Test("A string rewritten in another Unicode form moves in the index, which compares bytes as filters do")
    func canonicallyEquivalentRewrite() async throws {
        let schema = try await Self.schema()
        var table = RecordTable(schema: schema, indexingFrom: 0)
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(composed == decomposed)  // Swift's == equates them; the index must not
        table.insert(schema.makeRecord(key: 1, values: ["name": .string(composed)]), key: 1)
        table.insert(schema.makeRecord(key: 2, values: ["name": "cafe"]), key: 2)
        let byName = { (name: String) in ListQuery(filters: [.init(field: "name", values: [.string(name)])]) }
        #expect(Self.keys(table.answer(byName(composed)).page) == [1])
        _ = table.merge(["name": .string(decomposed)], intoKey: 1)
        for name in [composed, decomposed] {
            let query = byName(name)
            #expect(
                Self.keys(table.answer(query).page)
                    == Self.keys(query.apply(to: table.storedRecords, schema: schema).page))
        }
        let removed = table.remove(key: 1)
        #expect(removed)
        #expect(Self.keys(table.answer(ListQuery(sort: [.init(field: "name")])).page) == [2])
    }

    @Test("A row set agrees with a plain set through inserts, removals, intersections and unions, sparse and dense")
    func rowSetAgainstASet() {
        var generator = SplitMix64(seed: 31)
        func randomSet(_ generator: inout SplitMix64) -> (RowSet, Set<Int>) {
            var rows = RowSet()
            var model = Set<Int>()
            // Bursts in a few 65,536-row chunks make some chunks dense (bitmaps) and leave others sparse.
            for _ in 0..<Int.random(in: 0...3, using: &generator) {
                let chunk = Int.random(in: 0...3, using: &generator) << 16
                let density = [10, 3_000, 9_000, 40_000].randomElement(using: &generator) ?? 10
                for _ in 0..<density {
                    let row = chunk | Int.random(in: 0..<65_536, using: &generator)
                    let inserted = rows.insert(row)
                    #expect(inserted == model.insert(row).inserted)
                }
            }
            return (rows, model)
        }
        for round in 0..<12 {
            var (rows, model) = randomSet(&generator)
            // Removals bring dense chunks back under the limit, and some chunks to nothing.
            for row in model.shuffled(using: &generator).prefix(model.count * 3 / 4) {
                let removed = rows.remove(row)
                #expect(removed)
                model.remove(row)
            }
            let (removedNegative, removedAbsent) = (rows.remove(-1), rows.remove(1 << 20))
            #expect(!removedNegative && !removedAbsent)
            #expect(rows.count == model.count, "round \(round)")
            #expect(rows.rows == model.sorted(), "round \(round)")
            let sorted = model.sorted()
            for _ in 0..<20 {
                let low = Int.random(in: 0...sorted.count, using: &generator)
                let high = Int.random(
                    in: low...min(sorted.count, low + Int.random(in: 0...9_000, using: &generator)), using: &generator)
                #expect(rows.rows(ranked: low..<high) == Array(sorted[low..<high]), "round \(round): \(low)..<\(high)")
            }
            for _ in 0..<200 {
                let probe = Int.random(in: -2...(4 << 16), using: &generator)
                #expect(rows.contains(probe) == model.contains(probe))
            }
            let (other, otherModel) = randomSet(&generator)
            let both = rows.intersection(other)
            #expect(both.rows == model.intersection(otherModel).sorted(), "round \(round)")
            #expect(both.count == model.intersection(otherModel).count)
            let either = rows.union(other)
            #expect(either.rows == model.union(otherModel).sorted(), "round \(round)")
            #expect(either.count == model.union(otherModel).count)
            #expect(RowSet(model.shuffled(using: &generator)).rows == model.sorted())
        }
    }

    @Test("The text index's candidates hold every match, and are exactly the matches when it says so")
    func gramIndexAgainstAScan() {
        var generator = SplitMix64(seed: 41)
        let pieces = ["a", "B", "ab", "é", "É", "e\u{301}", " ", "ß", "zz", "abc"]
        func random(_ count: ClosedRange<Int>, _ generator: inout SplitMix64) -> String {
            (0..<Int.random(in: count, using: &generator)).map { _ in pieces.randomElement(using: &generator) ?? "a" }.joined()
        }
        for round in 0..<20 {
            var index = GramIndex()
            var values: [Int: JSON] = [:]
            for row in 0..<200 {
                let value: JSON =
                    Int.random(in: 0..<8, using: &generator) == 0 ? .integer(row) : .string(random(0...5, &generator))
                values[row] = value
                index.insert(row: row, value: value)
            }
            // Rewrites: the old value's grams go, the new value's come.
            for row in 0..<200 where Int.random(in: 0..<4, using: &generator) == 0 {
                index.remove(row: row, value: values[row] ?? .null)
                let value = JSON.string(random(0...4, &generator))
                values[row] = value
                index.insert(row: row, value: value)
            }
            for _ in 0..<60 {
                let pattern = random(0...3, &generator) + (Bool.random(using: &generator) ? "%" + random(0...2, &generator) : "")
                let parts = ListQuery.Matcher.likePatterns([.string(pattern)])[0]
                let matching = values.filter { _, value in
                    guard case .string(let text) = value else { return false }
                    return TextMatch.matches(text, pattern: parts)
                }.keys.sorted()
                let (candidates, exact) = index.candidates(for: parts)
                #expect(Set(matching).isSubset(of: candidates.rows), "round \(round): \(pattern)")
                if exact { #expect(candidates.rows == matching, "round \(round): \(pattern)") }
            }
        }
    }

    @Test("A table makes its indexes in the write that brings it to the threshold, and a query never makes one")
    func indexesComeWithTheWrite() async throws {
        let schema = try await Self.schema()
        var table = RecordTable.sized(1...9, schema, indexingFrom: 10)
        let query = ListQuery(filters: [.init(field: "size", values: [1])], sort: [.init(field: "name")])
        #expect(table.answer(query).total == 3)
        #expect(table.indexes == nil)
        table.insert(schema.makeRecord(key: 10, values: ["size": 1]), key: 10)
        let indexes = try #require(table.indexes)
        #expect(Set(indexes.fields.keys) == ["id", "name", "size", "weight", "flag"])
        #expect(Set(indexes.texts.keys) == ["name"])
        #expect(Self.keys(table.answer(query).page) == [1, 4, 7, 10])
        // Back under the threshold the indexes stay: they are dropped only when the schema changes.
        _ = table.remove(key: 10)
        #expect(table.indexes != nil)
        #expect(table.answer(query).total == 3)
    }

    @Test("A kept answer follows every write: a record written into or out of a condition is in or out of the next answer")
    func keptAnswersFollowWrites() async throws {
        let schema = try await Self.schema()
        var table = RecordTable(schema: schema, indexingFrom: 0)
        for number in 1...40 {
            table.insert(
                schema.makeRecord(key: .integer(number), values: ["size": .integer(number % 4), "name": .string("n\(number)")]),
                key: .integer(number))
        }
        let query = ListQuery(filters: [.init(field: "size", values: [1])], search: "n1", sort: [.init(field: "weight")])
        func check(_ step: String) {
            let answered = table.answer(query)
            let expected = query.apply(to: table.storedRecords, schema: schema)
            #expect(Self.keys(answered.page) == Self.keys(expected.page), "\(step)")
            #expect(answered.total == expected.total, "\(step)")
        }
        check("first answer, which keeps both conditions")
        _ = table.merge(["size": 1], intoKey: 12)  // into the filter, and already in the search
        check("updated into the filter")
        _ = table.merge(["name": "other"], intoKey: 13)  // out of the search
        check("updated out of the search")
        _ = table.remove(key: 17)
        check("removed")
        table.insert(schema.makeRecord(key: 100, values: ["size": 1, "name": "n100"]), key: 100)
        check("inserted into both")
        table.insert(schema.makeRecord(key: 17, values: ["size": 1, "name": "N1 again"]), key: 17)
        check("inserted in a freed row, below the last key")
        #expect(table.answer(query).total == 4)  // 1, 12, 17 and 100
    }

    @Test("A table that keeps removing old records and adding new ones reuses freed rows instead of growing")
    func churnReusesRows() async throws {
        let schema = try await Self.schema()
        var table = RecordTable.sized(1...10, schema, indexingFrom: 0)
        #expect(table.rowsFollowKeys)
        for number in 11...400 {
            _ = table.remove(key: .integer(number - 10))
            table.insertSized(number, schema)
        }
        #expect(table.count == 10)
        #expect(table.slots.count <= 21, "\(table.slots.count) rows for 10 records")
        #expect(!table.rowsFollowKeys)
        for query in [
            ListQuery(filters: [.init(field: "size", values: [1])], window: .page(number: 1, size: 3)),
            ListQuery(sort: [.init(field: "size", isDescending: true)], window: .page(number: 2, size: 3)),
        ] {
            let answered = table.answer(query)
            let expected = query.apply(to: table.storedRecords, schema: schema)
            #expect(Self.keys(answered.page) == Self.keys(expected.page))
            #expect(answered.total == expected.total)
        }
    }

    @Test("The key map finds every row through growth and removal, for integer, string and other keys, and tells bytes apart")
    func keyMapFindsEveryRow() {
        var map = RowsByKey()
        map.reserveCapacity(100)
        // Past several growths of every shard, from the reserved hundred; negative integers take the
        // shards of their low bits too.
        var expected: [RecordKey: Int32] = [:]
        for number in -500..<5_000 { expected[RecordKey(.integer(number))] = Int32(number + 500) }
        for number in 0..<2_000 { expected[RecordKey(.string("key-\(number)"))] = Int32(10_000 + number) }
        expected[RecordKey(.double(2.5))] = 20_000
        expected[RecordKey(.bool(true))] = 20_001
        // The composed and the decomposed "é": one key to Swift's ==, two to the store.
        expected[RecordKey(.string("caf\u{E9}"))] = 20_002
        expected[RecordKey(.string("cafe\u{301}"))] = 20_003
        for (key, row) in expected { map[key] = row }
        #expect(map.count == expected.count)
        for (key, row) in expected { #expect(map[key] == row, "\(key.key)") }
        for number in stride(from: -500, to: 5_000, by: 3) {
            #expect(map.removeValue(forKey: RecordKey(.integer(number))) == Int32(number + 500))
            expected[RecordKey(.integer(number))] = nil
        }
        #expect(map.removeValue(forKey: RecordKey(.string("cafe\u{301}"))) == 20_003)
        expected[RecordKey(.string("cafe\u{301}"))] = nil
        #expect(map.removeValue(forKey: RecordKey(.integer(-500))) == nil)
        #expect(map.count == expected.count)
        for (key, row) in expected { #expect(map[key] == row, "\(key.key)") }
        #expect(map[RecordKey(.string("caf\u{E9}"))] == 20_002)
        #expect(map[RecordKey(.integer(5_000))] == nil && map[RecordKey(.string("key-2000"))] == nil)
    }

    @Test("A snapshot keeps the records alone; a restore makes the rows, key map and indexes again and answers as a scan")
    func snapshotsLeaveIndexesBehind() async throws {
        let schema = try await Self.schema()
        var table = RecordTable.sized(1...30, schema, indexingFrom: 0)
        let snapshot = StoreSnapshot(tables: [schema.name: table])
        #expect(snapshot.tables[schema.name]?.records.count == 30)
        #expect(snapshot.records(of: schema.name).count == 30)
        _ = table.remove(key: 3)  // the live table goes on with its own indexes
        #expect(table.answer(ListQuery(filters: [.init(field: "size", values: [0])])).total == 9)
        var restored = try #require(snapshot.tables(for: [schema]).first)
        #expect(restored.indexes != nil)
        #expect(restored.record(withKey: 3) != nil && restored.record(withKey: 31) == nil)
        // Rows follow keys again: a key above the others takes a new last row, and a page in key order
        // is read by rank.
        restored.insert(schema.makeRecord(key: 40, values: ["size": 0]), key: 40)
        _ = restored.remove(key: 6)
        let byKey = ListQuery(filters: [.init(field: "size", values: [0])], window: .range(start: 8, end: 10))
        #expect(Self.keys(restored.answer(byKey).page) == Self.keys(byKey.apply(to: restored.storedRecords, schema: schema).page))
        let query = ListQuery(filters: [.init(field: "size", values: [0])], sort: [.init(field: "id", isDescending: true)])
        #expect(restored.answer(query).total == 10)
        #expect(Self.keys(restored.answer(query).page) == Self.keys(query.apply(to: restored.storedRecords, schema: schema).page))
    }

    @Test(
        "A store's snapshot holds a record list of its own, and so does a table restored from one: no write after either copies a list under the lock"
    )
    func snapshotsOwnTheirLists() async throws {
        let schema = try await Self.schema()
        let store = MemoryStore()
        try await store.addResource(schema)
        let records = (1...20).map { schema.makeRecord(key: .integer($0), values: ["size": .integer($0 % 3)]) }
        try await store.restore(StoreSnapshot([(schema, records, 20)]), schemas: [schema])
        let live = try await store.storedRecords(of: schema)
        let saved = try await store.snapshot(of: [schema])
        let savedList = try #require(saved.tables[schema.name]).records
        #expect(savedList.map(\.fields) == live.map(\.fields))
        #expect(Self.storage(of: savedList) != Self.storage(of: live))
        try await store.restore(saved, schemas: [schema])
        let restored = try await store.storedRecords(of: schema)
        #expect(restored.map(\.fields) == savedList.map(\.fields))
        #expect(Self.storage(of: restored) != Self.storage(of: savedList))
    }

    /// Where a list's elements are: two lists that share storage give the same address.
    static func storage(of list: [StoredRecord]) -> UnsafeRawPointer? {
        list.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
    }

    @Test("The sixteen-at-a-time text search finds what a plain search finds, at every offset and near the end")
    func textSearchAgainstAPlainSearch() {
        var generator = SplitMix64(seed: 5)
        for _ in 0..<400 {
            let haystack = (0..<Int.random(in: 0...70, using: &generator)).map { _ in UInt8.random(in: 97...99, using: &generator)
            }
            let needle = (0..<Int.random(in: 1...5, using: &generator)).map { _ in UInt8.random(in: 97...99, using: &generator) }
            for start in 0...haystack.count {
                let plain = (start..<max(start, haystack.count - needle.count + 1)).first { position in
                    haystack[position..<(position + needle.count)].elementsEqual(needle)
                }
                let fast = haystack.withUnsafeBytes { haystack in
                    needle.withUnsafeBytes { needle in TextMatch.firstOccurrence(of: needle, in: haystack, from: start) }
                }
                #expect(fast == plain, "\(needle) in \(haystack) from \(start)")
            }
        }
    }
}

extension Array {
    /// The first position whose element satisfies `isPast`, for a predicate false then true along the array.
    fileprivate func partitioningIndex(where isPast: (Element) -> Bool) -> Int { firstIndex(where: isPast) ?? count }
}

extension RecordTable {
    /// A table of the records `numbers`, each sized as ``RecordTable/insertSized(_:_:)`` makes it.
    static func sized(_ numbers: ClosedRange<Int>, _ schema: ResourceSchema, indexingFrom: Int) -> RecordTable {
        var table = RecordTable(schema: schema, indexingFrom: indexingFrom)
        for number in numbers { table.insertSized(number, schema) }
        return table
    }

    /// Inserts record `number` with the key `number` and the size `number % 3`.
    mutating func insertSized(_ number: Int, _ schema: ResourceSchema) {
        insert(schema.makeRecord(key: .integer(number), values: ["size": .integer(number % 3)]), key: .integer(number))
    }

    /// An update as the store's rules make one (StoreRules merges, then replaces), for tests of the table alone.
    /// Merges values into the record with `key`; the key itself never changes.
    mutating func merge(_ values: JSONObject, intoKey key: JSON) -> JSONObject? {
        guard var row = record(withKey: key) else { return nil }
        for column in schema.columns.dropFirst() {
            if let value = values[column.name] { row[column.name] = column.normalized(value) }
        }
        replace(row, key: key)
        return row
    }
}
