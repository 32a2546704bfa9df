import Foundation
import FuzzSupport
import HammockJSON
import HammockSQLite
import HammockServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The query language (parse, evaluate, `Link` and `X-Total-Count`) on lists and nested lists, on both
/// stores at once, against the plain evaluation as an oracle. For any query string: never a trap and
/// never a 5xx; a 400 is a problem naming the parameter; a page holds no more records than the total
/// and than its window asks; every number in a link is a page from 1 or a position from 0; both stores
/// answer the same status, headers and bytes, which are what `ListQuery.apply` gives on all records.
///
/// The first byte picks the list, the rest is the query string as a client would send it (see
/// ``queryText(_:)``).
@main
struct FuzzTarget {
    static let resources = [
        MockResource(
            "people",
            fields: ["name": .string, "age": .integer, "height": .float, "active": .boolean, "born": .date, "extra": .json]),
        MockResource("cars", fields: ["name": .string, "power": .integer], parents: ["people"]),
    ]

    /// Values at the edges: integers at Int's ends and beyond a double's precision, doubles that round
    /// to them, a negative zero, nulls, text in several scripts.
    static let ages: [JSON] = [
        .integer(Int.max), .integer(Int.min), .integer(9_007_199_254_740_993), .integer(0), .integer(-1), .null, .integer(42),
    ]
    static let extras: [JSON] = [
        .integer(9_007_199_254_740_993), .double(9_007_199_254_740_992), .double(-0.0), .string("x"), .null, .bool(true),
        .array([1, 2]), .double(1e308), .integer(Int.min),
    ]
    static let names = ["Amy", "amy", "Ærø", "e\u{301}", "é", "", "a%b", "🌴", "x y"]

    static let servers: [MockServer] = Fuzzer.wait {
        removeStore()
        atexit { FuzzTarget.removeStore() }
        var servers: [MockServer] = []
        for store in [MemoryStore() as any MockStore, try! SQLiteStore(path: storePath)] {
            // One fixed wall clock for both: `Last-Modified` is the date of a list's last write, and the
            // second server's writes come later (a second boundary between them made the headers differ).
            let server = try! await MockServer(resources: resources, store: store, now: { FuzzTarget.writeDate })
            for index in 0..<23 {
                let person: JSONObject = [
                    "name": .string(names[index % names.count]), "age": ages[index % ages.count],
                    "height": index % 4 == 0 ? .null : .double(Double(index) / 3), "active": .bool(index % 3 == 0),
                    "born": index % 5 == 0 ? .null : .string("2024-02-\(10 + index % 19)"), "extra": extras[index % extras.count],
                ]
                _ = await server.respond(to: MockRequest(.post, "/people", json: .object(person)))
            }
            for index in 0..<9 {
                let car: JSONObject = [
                    "name": .string(names[index % names.count]), "power": ages[index % ages.count], "person_id": 1,
                ]
                _ = await server.respond(to: MockRequest(.post, "/cars", json: .object(car)))
            }
            servers.append(server)
        }
        return servers
    }

    static let writeDate = Date(timeIntervalSince1970: 1_700_000_000)

    static var storePath: String { "/tmp/hammock-fuzz-queries-\(getpid()).sqlite" }

    static func removeStore() {
        for suffix in ["", "-wal", "-shm"] { unlink(storePath + suffix) }
    }

    static let lists: [(path: String, resource: String)] = [("/people", "people"), ("/people/1/cars", "cars"), ("/cars", "cars")]
    static let windowOptions: Set<String> = ["_page", "_per_page", "_start", "_end", "_limit"]

    static func main() {
        Fuzzer.run { data, count in
            let bytes = Fuzzer.bytes(data, count)
            guard let selector = bytes.first else { return 0 }
            let list = FuzzTarget.lists[Int(selector) % FuzzTarget.lists.count]
            let query = FuzzTarget.queryText(bytes.dropFirst())
            let servers = FuzzTarget.servers
            Fuzzer.wait {
                var answers: [MockResponse] = []
                for server in servers {
                    let response = await server.respond(to: MockRequest(.get, list.path + "?" + query))
                    FuzzTarget.check(response, query: query)
                    answers.append(response)
                }
                Fuzzer.check(
                    answers[0].status == answers[1].status, "the stores answer \(answers[0].status) and \(answers[1].status)")
                Fuzzer.check(answers[0].body == answers[1].body, "the stores answer different records")
                Fuzzer.check(answers[0].headerFields == answers[1].headerFields, "the stores answer different headers")
                await FuzzTarget.compareWithOracle(answers[0], list: list, query: query, server: servers[0])
            }
            return 0
        }
    }

    /// The bytes as a client could send them in a request target: what HTTP does not allow there
    /// (controls, spaces, `#`, bytes above ASCII) percent-encoded, the rest as it is.
    static func queryText(_ bytes: ArraySlice<UInt8>) -> String {
        var text = ""
        for byte in bytes {
            if byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "#") {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let digits = Array("0123456789ABCDEF".utf8)
                text += "%" + String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]], as: UTF8.self)
            }
        }
        return text
    }

    /// The rules every answer keeps.
    static func check(_ response: MockResponse, query: String) {
        let code = response.status.code
        Fuzzer.check(code == 200 || code == 400, "\(code) for '\(query)': \(String(decoding: response.body, as: UTF8.self))")
        guard let body = try? response.json() else {
            Fuzzer.check(false, "the answer to '\(query)' is not JSON")
            return
        }
        if code == 400 {
            Fuzzer.check(body["parameter"]?.stringValue != nil, "a 400 without the parameter it is about: '\(query)'")
            return
        }
        let records = body.arrayValue?.count ?? -1
        Fuzzer.check(records >= 0, "a list answer that is not an array: '\(query)'")
        if let total = response.headerFields[.totalCount] {
            Fuzzer.check(Int(total).map { records <= $0 } == true, "a page of \(records) over a total of \(total): '\(query)'")
        }
        for link in (response.headerFields[.link] ?? "").split(separator: ",") {
            for pair in link.split(whereSeparator: { "?&<>".contains($0) }) {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, windowOptions.contains(String(parts[0])) else { continue }
                let number = Int(parts[1])
                Fuzzer.check(number.map { $0 >= 0 } == true, "a link number out of range in '\(link)' for '\(query)'")
                if parts[0] == "_page" || parts[0] == "_per_page" {
                    Fuzzer.check(number.map { $0 >= 1 } == true, "a page below 1 in '\(link)' for '\(query)'")
                }
            }
        }
    }

    /// The plain evaluation on every record: what the indexes answer must be what it gives.
    static func compareWithOracle(
        _ response: MockResponse, list: (path: String, resource: String), query: String, server: MockServer
    ) async {
        guard response.status == .ok, let schema = server.schema(named: list.resource) else { return }
        let rawQuery = query
        guard let parsed = try? ListQuery(parsing: rawQuery, for: schema), parsed.embed.isEmpty, parsed.expand.isEmpty else {
            return
        }
        var all = (try? await server.store.storedRecords(of: schema)) ?? []
        if list.path.hasPrefix("/people/1/") {
            all = all.filter { $0.fields["person_id"] == .integer(1) }
        }
        let (page, total) = parsed.apply(to: all, schema: schema)
        Fuzzer.check(StoredRecord.jsonArray(page) == response.body, "the indexes and the plain evaluation disagree on '\(query)'")
        if let reported = response.headerFields[.totalCount] {
            Fuzzer.check(reported == String(total), "X-Total-Count \(reported), the plain evaluation \(total): '\(query)'")
        }
    }
}
