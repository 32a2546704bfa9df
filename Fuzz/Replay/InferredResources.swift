import Foundation
import FuzzSupport
import HTTPTypes
import HammockJSON
import HammockProxy
import HammockSQLite
import HammockServer
import HammockStore
import HammockWire

/// A recording's second promise: the exchanges that look like a collection become a resource whose records
/// are the last state the recording saw of each, and the resource then works as any other (create, read,
/// delete). The bytes drive a backend that keeps real state (one or two collections under an optional
/// prefix, keyed by integers the backend assigns or by strings the client chooses, members whose types
/// vary), and every exchange is its true answer. After the recording is written (as a configuration, and as
/// a HAR read back), with resources inferred:
/// - the configuration loads and serves;
/// - for every resource the recording made, `GET` of each record it saw answers that record as last seen,
///   and of each it saw deleted answers 404;
/// - a record made like one seen can be created, read back, and deleted;
/// - a child collection the recording linked to its parent answers each child seen under its parent's record.
/// The backend may hold records before the recording starts, which the recording sees only if listed.
enum InferredResources {
    /// The member a child record names its parent with: named for the parent, as backends name it. A
    /// recording cannot tell which member links when two hold the parent's key (`owner_id` in
    /// `memberNames` may, by chance); it takes the one named for the parent.
    static let foreignKeys = [
        "people": "person_id", "cars": "carId", "user-notes": "user_note_id", "Items": "item_id", "orders_v2": "orders_v2_id",
    ]

    struct Collection {
        var path: String
        var name: String
        /// Keys the backend assigns (integers) or the client chooses (strings).
        var assignsKeys: Bool
        var records: [(key: JSON, record: JSONObject)] = []
        var nextKey = 1
        /// The members the records carry, each with the kind of value it usually holds.
        var members: [(name: String, kind: Int)]
        /// The collection (by index) whose records this one's belong to, through ``foreignKey``: its records
        /// are listed and made under a parent record too (`/people/3/cars`).
        var parent: Int?
        var foreignKey = ""

        func index(of key: JSON) -> Int? { records.firstIndex { $0.key == key } }
    }

    /// What the recording saw of one record.
    struct Observation {
        var key: JSON
        var seen: Seen
        /// Seen at the collection's own path (`/cars`, `/cars/3`), not only under a parent record: a
        /// record seen only there is the resource's when the recording linked the two, else the nested
        /// exchanges stay stubs and the record is not the resource's.
        var atTopLevel: Bool
    }

    /// What the recording saw last of a record: its state, or that it was deleted.
    enum Seen: Equatable {
        case record(JSONObject)
        case deleted
        /// A parent record's children, in any order (only a check's expectation, never seen as such).
        case list([JSONObject])
    }

    static let names = ["people", "cars", "user-notes", "Items", "orders_v2"]
    static let prefixes = ["", "", "/api", "/v1/shop"]
    static let memberNames = ["name", "age", "score", "tags", "meta", "active", "nick name", "é", "createdAt", "owner_id"]
    static let stringKeys = ["a1", "b 2", "é", "x-9", "3", "0f8fe2c4-5e2d-4bd3-9c1b-2b1a4b0c6d7e", "A1", "with.dot"]

    /// A value of `kind` (0 integer, 1 string, 2 float, 3 bool, 4 object, 5 array), sometimes another kind
    /// or null, as real backends answer.
    static func value(kind: Int, _ reader: inout ByteReader) -> JSON {
        var kind = kind
        switch reader.choose(10) {
        case 0: return .null
        case 1: kind = reader.choose(6)
        default: break
        }
        switch kind {
        case 0: return .integer(Int(reader.byte()) - 20)
        case 1: return .string(reader.pick(["", "ada", "Grace Hopper", "é", "a\"b", "2026-12-02T10:00:00Z", "1"]))
        case 2: return .double(Double(reader.byte()) / 8)
        case 3: return .bool(reader.byte() & 1 == 0)
        case 4: return .object(["city": .string(reader.pick(["Oslo", "Lima"])), "zip": .integer(Int(reader.byte()))])
        default: return .array((0..<reader.choose(3)).map { _ in .string(reader.pick(["x", "y", "z"])) })
        }
    }

    static func record(of collection: Collection, key: JSON?, _ reader: inout ByteReader) -> JSONObject {
        var object = JSONObject()
        if let key { object["id"] = key }
        for member in collection.members where reader.choose(6) != 0 {
            object[member.name] = value(kind: member.kind, &reader)
        }
        return object
    }

    static func segment(_ key: JSON) -> String {
        switch key {
        case .integer(let number): String(number)
        case .string(let text): PercentEncoding.encodePathSegment(text)
        default: "null"
        }
    }

    static func jsonFields() -> HTTPFields {
        var fields = HTTPFields()
        fields[.contentType] = "application/json"
        return fields
    }

    static func run(_ bytes: [UInt8]) {
        var reader = ByteReader(bytes)
        let prefix = reader.pick(prefixes)
        var collections: [Collection] = []
        for index in 0..<(1 + reader.choose(2)) {
            let name = names[(index + reader.choose(names.count)) % names.count]
            guard !collections.contains(where: { $0.name.lowercased() == name.lowercased() }) else { continue }
            let members = (0..<(1 + reader.choose(4))).map { _ in (name: reader.pick(memberNames), kind: reader.choose(6)) }
            var unique: [(name: String, kind: Int)] = []
            for member in members where !unique.contains(where: { $0.name == member.name }) { unique.append(member) }
            var collection = Collection(
                path: prefix + "/" + name, name: name, assignsKeys: reader.choose(3) != 0, members: unique)
            if index == 1, reader.choose(2) == 0 {
                collection.parent = 0
                collection.foreignKey = foreignKeys[collections[0].name] ?? "parent_id"
            }
            collections.append(collection)
        }
        // Records the backend held before: seen only if an answer shows them.
        for index in collections.indices {
            for _ in 0..<reader.choose(3) {
                var collection = collections[index]
                let key: JSON = collection.assignsKeys ? .integer(collection.nextKey) : .string(reader.pick(stringKeys))
                guard collection.index(of: key) == nil else { continue }
                collection.nextKey += 1
                var made = record(of: collection, key: key, &reader)
                if let parent = collection.parent {
                    guard let owner = collections[parent].records.first?.key else { continue }
                    made[collection.foreignKey] = owner
                }
                collection.records.append((key, made))
                collections[index] = collection
            }
        }
        let recording = ProxyRecording()
        var seen: [String: [Observation]] = [:]
        func note(_ collection: Collection, _ key: JSON, _ state: Seen, nested: Bool = false) {
            var list = seen[collection.name, default: []]
            if let index = list.firstIndex(where: { $0.key == key }) {
                list[index].seen = state
                list[index].atTopLevel = list[index].atTopLevel || !nested
            } else {
                list.append(Observation(key: key, seen: state, atTopLevel: !nested))
            }
            seen[collection.name] = list
        }
        func add(_ method: HTTPRequest.Method, _ target: String, body: JSON?, status: Int, answer: JSON?) {
            var fields = HTTPFields()
            fields[.accept] = "application/json"
            if body != nil { fields[.contentType] = "application/json" }
            recording.add(
                request: MockRequest(method, target, headerFields: fields, body: body?.serialized() ?? []),
                status: HTTPResponse.Status(code: status), fields: answer == nil ? HTTPFields() : jsonFields(),
                body: answer?.serialized() ?? [])
        }

        for _ in 0..<(2 + reader.choose(10)) {
            let which = reader.choose(collections.count)
            var collection = collections[which]
            let existing = collection.records.isEmpty ? nil : collection.records[reader.choose(collection.records.count)]
            let parentRecord = collection.parent.flatMap { parent -> (path: String, key: JSON)? in
                let records = collections[parent].records
                guard !records.isEmpty else { return nil }
                let key = records[reader.choose(records.count)].key
                return (collections[parent].path + "/" + segment(key), key)
            }
            let children = collections.filter { child in child.parent == which }
            switch reader.choose(collection.parent == nil ? 8 : 10) {
            case 8:
                guard let parentRecord else { break }
                let list = collection.records.filter { $0.record[collection.foreignKey] == parentRecord.key }
                add(
                    .get, parentRecord.path + "/" + collection.name, body: nil, status: 200,
                    answer: .array(list.map { .object($0.record) }))
                for (key, record) in list { note(collection, key, .record(record), nested: true) }
            case 9:
                guard let parentRecord, collection.assignsKeys else { break }
                var sent = record(of: collection, key: nil, &reader)
                sent[collection.foreignKey] = nil
                var made = sent
                made["id"] = .integer(collection.nextKey)
                made[collection.foreignKey] = parentRecord.key
                collection.nextKey += 1
                collection.records.append((.integer(collection.nextKey - 1), made))
                add(.post, parentRecord.path + "/" + collection.name, body: .object(sent), status: 201, answer: .object(made))
                note(collection, .integer(collection.nextKey - 1), .record(made), nested: true)
            case 0, 1:
                let list = collection.records.map { JSON.object($0.record) }
                add(.get, collection.path, body: nil, status: 200, answer: .array(list))
                for (key, record) in collection.records { note(collection, key, .record(record)) }
            case 2:
                guard let existing else {
                    add(.get, collection.path + "/404", body: nil, status: 404, answer: ["error": "not found"])
                    break
                }
                add(.get, collection.path + "/" + segment(existing.key), body: nil, status: 200, answer: .object(existing.record))
                note(collection, existing.key, .record(existing.record))
            case 3, 4:
                let key: JSON =
                    collection.assignsKeys ? .integer(collection.nextKey) : .string(reader.pick(stringKeys))
                var sent = record(of: collection, key: nil, &reader)
                if !collection.assignsKeys { sent["id"] = key }
                if collection.parent != nil {
                    guard let parentRecord else { break }
                    sent[collection.foreignKey] = parentRecord.key
                }
                if collection.index(of: key) != nil {
                    add(.post, collection.path, body: .object(sent), status: 409, answer: ["error": "exists"])
                    break
                }
                collection.nextKey += 1
                var made = sent
                made["id"] = key
                collection.records.append((key, made))
                add(.post, collection.path, body: .object(sent), status: 201, answer: .object(made))
                note(collection, key, .record(made))
            case 5:
                guard let existing, let index = collection.index(of: existing.key) else { break }
                var replaced = record(of: collection, key: existing.key, &reader)
                if collection.parent != nil { replaced[collection.foreignKey] = existing.record[collection.foreignKey] }
                collection.records[index].record = replaced
                add(
                    .put, collection.path + "/" + segment(existing.key), body: .object(replaced), status: 200,
                    answer: .object(replaced))
                note(collection, existing.key, .record(replaced))
            case 6:
                guard let existing, let index = collection.index(of: existing.key), let member = collection.members.first
                else { break }
                let change = value(kind: member.kind, &reader)
                collection.records[index].record[member.name] = change
                let patched = collection.records[index].record
                add(
                    .patch, collection.path + "/" + segment(existing.key), body: .object([member.name: change]),
                    status: 200, answer: .object(patched))
                note(collection, existing.key, .record(patched))
            default:
                guard let existing, let index = collection.index(of: existing.key) else { break }
                if children.contains(where: { child in child.records.contains { $0.record[child.foreignKey] == existing.key } }) {
                    add(
                        .delete, collection.path + "/" + segment(existing.key), body: nil, status: 409,
                        answer: ["error": "has children"])
                    break
                }
                collection.records.remove(at: index)
                add(.delete, collection.path + "/" + segment(existing.key), body: nil, status: 204, answer: nil)
                note(collection, existing.key, .deleted)
            }
            collections[which] = collection
        }

        let (configuration, summary) = recording.configuration(inferringResources: true)
        check(configuration, resources: summary.resources, collections: collections, seen: seen, as: "a configuration")
        let archive = recording.archive().archive.serialized()
        guard let read = try? HTTPArchive.read(archive, file: "fuzz.har", inferringResources: true) else {
            return Fuzzer.check(false, "the HAR written cannot be read back: \(String(decoding: archive, as: UTF8.self))")
        }
        check(read.configuration, resources: read.summary.resources, collections: collections, seen: seen, as: "a HAR read back")
    }

    struct Request: Sendable {
        var request: MockRequest
        var label: String
    }

    static func check(
        _ configuration: JSON, resources: [String], collections: [Collection], seen: [String: [Observation]],
        as written: String
    ) {
        let text = configuration.serializedString()
        // Nothing recorded that a mock can serve: ProxyRecording.write leaves the file alone.
        if configuration["resources"] == nil, configuration["routes"] == nil { return }
        let parsed: ServerConfiguration
        do {
            parsed = try ServerConfiguration(root: configuration, file: "fuzz.json")
        } catch {
            return Fuzzer.check(false, "\(written) with resources the reader refuses: \(error)\n\(text)")
        }
        // Each resource made: its records as last seen, then a record made like one seen, read, deleted.
        var reads: [(Request, Seen)] = []
        var creations: [(collection: Collection, body: JSONObject)] = []
        let basePath = configuration["basePath"]?.stringValue ?? ""
        for var collection in collections where resources.contains(collection.name) {
            let linked =
                configuration["resources"]?.arrayValue?.contains {
                    $0["name"]?.stringValue == collection.name && $0["parents"] != nil
                } ?? false
            // Every exchange under one parent record (`/people/1/cars` alone): the recording serves that
            // as a collection of its own under the base path `/people/1`, which is a fair reading.
            let underParentAlone = !basePath.isEmpty && !collection.path.hasPrefix(basePath + "/")
            if underParentAlone { collection.path = basePath + "/" + collection.name }
            // A record seen only under a parent record is the resource's when the two are linked; when the
            // link was dropped (the data would break it), the recording may keep it or leave it to stubs.
            let held = Set((configuration["data"]?[collection.name]?.arrayValue ?? []).compactMap { $0["id"] })
            let observations = (seen[collection.name] ?? []).filter {
                linked || underParentAlone || $0.atTopLevel || held.contains($0.key)
            }
            // A member one record holds `null` for is answered `null` by the records that lack it (the
            // store holds an absent field as null; recordings document the choice).
            let records = observations.compactMap { entry -> JSONObject? in
                if case .record(let record) = entry.seen { return record }
                return nil
            }
            let nullable = Set(records.flatMap { record in record.filter { $0.value == .null }.map(\.key) })
            var lists: [(owner: JSON, records: [JSONObject])] = []
            for observation in observations {
                let (key, state) = (observation.key, observation.seen)
                let target = collection.path + "/" + segment(key)
                var expected = state
                if case .record(var record) = state {
                    for member in nullable where record[member] == nil { record[member] = .null }
                    expected = .record(record)
                    if collection.parent != nil, let owner = record[collection.foreignKey] {
                        if let index = lists.firstIndex(where: { $0.owner == owner }) {
                            lists[index].records.append(record)
                        } else {
                            lists.append((owner, [record]))
                        }
                    }
                }
                reads.append((Request(request: MockRequest(.get, target), label: "GET \(target)"), expected))
            }
            // Linked to its parent: each parent record's list (shallow nesting: `/people/3/cars`) holds the
            // children seen with its key.
            if linked, let parent = collection.parent {
                for (owner, records) in lists {
                    let target = collections[parent].path + "/" + segment(owner) + "/" + collection.name
                    reads.append((Request(request: MockRequest(.get, target), label: "GET \(target)"), .list(records)))
                }
            }
            let template = (seen[collection.name] ?? []).lazy.compactMap { entry -> JSONObject? in
                if case .record(let record) = entry.seen { return record }
                return nil
            }.first
            if var body = template {
                if collection.assignsKeys {
                    body["id"] = nil
                } else {
                    body["id"] = "made-by-the-fuzzer"
                }
                creations.append((collection, body))
            }
        }
        for store in ["memory", "SQLite"] {
            check(
                parsed, on: store, reads: reads, creations: creations, as: "\(written) on \(store)", resources: resources,
                text: text)
        }
    }

    /// The checks on one store: `hammock serve recorded.json --store sqlite` must answer as the memory store does.
    static func check(
        _ parsed: ServerConfiguration, on kind: String, reads: [(Request, Seen)],
        creations: [(collection: Collection, body: JSONObject)], as written: String, resources: [String], text: String
    ) {
        let outcome = Fuzzer.wait { () async -> Result<[String], FailedStart> in
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-replay-\(UUID().uuidString).sqlite")
                .path
            defer {
                for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: file + suffix) }
            }
            do {
                let store: any MockStore = kind == "SQLite" ? try SQLiteStore(path: file) : MemoryStore()
                let server = try await MockServer(configuration: parsed, store: store, random: MockServer.seededRandom(1))
                _ = try await server.loadData(from: parsed)
                var problems: [String] = []
                for (read, state) in reads {
                    let answer = await server.respond(to: read.request)
                    switch state {
                    case .deleted where answer.status.code != 404:
                        problems.append("\(read.label) answered \(answer.status.code) for a record seen deleted")
                    case .record(let record):
                        let body = try? JSON(parsing: answer.body)
                        if answer.status.code != 200 || !(body.map { sameValue($0, .object(record)) } ?? false) {
                            problems.append(
                                "\(read.label) answered \(answer.status.code) \(String(decoding: answer.body, as: UTF8.self)) where the record was last seen as \(JSON.object(record).serializedString())"
                            )
                        }
                    case .list(let records):
                        let elements = (try? JSON(parsing: answer.body))?.arrayValue ?? []
                        var unmatched = elements
                        for record in records {
                            guard let index = unmatched.firstIndex(where: { sameValue($0, .object(record)) }) else { break }
                            unmatched.remove(at: index)
                        }
                        if answer.status.code != 200 || elements.count != records.count || !unmatched.isEmpty {
                            problems.append(
                                "\(read.label) answered \(answer.status.code) \(String(decoding: answer.body, as: UTF8.self)) where the children seen are \(JSON.array(records.map(JSON.object)).serializedString())"
                            )
                        }
                    case .deleted:
                        break
                    }
                }
                for (collection, body) in creations {
                    let made = await server.respond(
                        to: MockRequest(.post, collection.path, headerFields: jsonFields(), body: JSON.object(body).serialized()))
                    guard made.status.code == 201, let record = try? JSON(parsing: made.body), let key = record["id"] else {
                        problems.append(
                            "POST \(collection.path) \(JSON.object(body).serializedString()) answered \(made.status.code) \(String(decoding: made.body, as: UTF8.self))"
                        )
                        continue
                    }
                    let target = collection.path + "/" + segment(key)
                    let back = await server.respond(to: MockRequest(.get, target))
                    if back.status.code != 200 || (try? JSON(parsing: back.body)) != record {
                        problems.append("GET \(target) after its creation answered \(back.status.code)")
                    }
                    let deleted = await server.respond(to: MockRequest(.delete, target))
                    let gone = await server.respond(to: MockRequest(.get, target))
                    if !(200..<300).contains(Int(deleted.status.code)) || gone.status.code != 404 {
                        problems.append("DELETE \(target) answered \(deleted.status.code), then GET \(gone.status.code)")
                    }
                }
                try? await store.close()
                return .success(problems)
            } catch {
                return .failure(FailedStart(description: String(describing: error)))
            }
        }
        switch outcome {
        case .success(let problems):
            Fuzzer.check(problems.isEmpty, "\(written), resources \(resources):\n\(problems.joined(separator: "\n"))\n\(text)")
        case .failure(let error):
            Fuzzer.check(false, "\(written) with resources cannot start a server: \(error)\n\(text)")
        }
    }

    /// Equal as JSON values, numbers compared by value: a float field answers `-7` as `-7.0`, the same
    /// number (a store holds a float field's values as doubles; SQLite's REAL does too).
    static func sameValue(_ a: JSON, _ b: JSON) -> Bool {
        switch (a, b) {
        case (.integer(let x), .double(let y)), (.double(let y), .integer(let x)): return Double(x) == y
        case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy(sameValue)
        case (.object(let x), .object(let y)):
            return x.count == y.count && x.allSatisfy { member in y[member.key].map { sameValue(member.value, $0) } ?? false }
        default: return a == b
        }
    }

    struct FailedStart: Error, CustomStringConvertible {
        var description: String
    }
}
