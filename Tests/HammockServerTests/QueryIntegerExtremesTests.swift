import Foundation
import HTTPTypes
import HammockJSON
import HammockStore
import HammockTestSupport
import HammockWire
import Testing

@testable import HammockServer

/// Every numeric query option with values from the whole `Int` range and beyond, on both stores and on
/// nested lists: an answer is a page no longer than asked and no longer than the total, with links
/// whose numbers stay in range, or a 400 that names the parameter. Before this suite,
/// `GET /people?_per_page=9223372036854775807` trapped with an arithmetic overflow and took the server
/// down.
@Suite("Query options at integer extremes")
struct QueryIntegerExtremesTests {
    static let extremes: [String] = [
        "0", "1", "2", "3", "-1", "7", "10",
        String(Int.max), String(Int.max - 1), String(Int.max / 2), String(Int.max / 2 + 1), String(Int.min),
        String(Int.min + 1), String(Int32.max), String(UInt64.max), "9223372036854775808",
        "99999999999999999999999999", "-99999999999999999999999999", "1e3", "0x10", " 5", "+5",
    ]
    static let options = ["_page", "_per_page", "_start", "_end", "_limit"]

    /// Seven people, three cars for the first.
    static func seeded(_ kind: StoreKind) async throws -> MockServer {
        let server = try await Fixtures.server(kind)
        for index in 0..<7 {
            #expect(
                await server.send(.post, "/people", json: ["name": .string("p\(index)"), "numberOfKids": .integer(index)]).0
                    .status == .created)
        }
        for index in 0..<3 {
            #expect(await server.send(.post, "/cars", json: ["name": .string("c\(index)"), "person_id": 1]).0.status == .created)
        }
        return server
    }

    /// Checks one answer against the rules; `total` is the list's size without a window.
    static func check(
        _ response: MockResponse, _ target: String, total: Int, parameters: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let body = try? response.json()
        switch response.status.code {
        case 200:
            let page = try #require(body?.arrayValue, "\(target)", sourceLocation: sourceLocation)
            #expect(page.count <= total, "\(target)", sourceLocation: sourceLocation)
            if let reported = response.headerFields[.totalCount] {
                #expect(Int(reported) == total, "\(target)", sourceLocation: sourceLocation)
            }
            for link in (response.headerFields[.link] ?? "").split(separator: ",") {
                // Every number in a link is a page from 1 or a position from 0, never a wrapped value.
                for pair in link.split(whereSeparator: { "?&>".contains($0) }) where pair.contains("=") {
                    let parts = pair.split(separator: "=")
                    guard parts.count == 2, Self.options.contains(String(parts[0])) else { continue }
                    let number = try #require(Int(parts[1]), "\(target): \(link)", sourceLocation: sourceLocation)
                    #expect(number >= 0, "\(target): \(link)", sourceLocation: sourceLocation)
                }
            }
        case 400:
            let named = body?["parameter"]?.stringValue
            #expect(named.map(parameters.contains) == true, "\(target): \(body ?? .null)", sourceLocation: sourceLocation)
            #expect(response.headerFields[.contentType] == "application/problem+json", sourceLocation: sourceLocation)
        default:
            Issue.record("\(target) answered \(response.status.code)", sourceLocation: sourceLocation)
        }
    }

    @Test("A page size of Int.max answers the whole list with links in range", arguments: StoreKind.allCases)
    func hugePageSize(kind: StoreKind) async throws {
        let server = try await Self.seeded(kind)
        let (response, body) = await server.send(.get, "/people?_per_page=\(Int.max)")
        #expect(response.status == .ok)
        #expect(body?.arrayValue?.count == 7)
        #expect(response.headerFields[.totalCount] == "7")
        #expect(response.headerFields[.link]?.contains("_page=1&_per_page=\(Int.max)>; rel=\"last\"") == true)
        let (last, lastBody) = await server.send(.get, "/people?_page=\(Int.max)&_per_page=\(Int.max)")
        #expect(last.status == .ok && lastBody == [])
        #expect(last.headerFields[.link]?.contains("rel=\"next\"") == false)
    }

    @Test("A range that ends at Int.max, or starts there, answers what exists", arguments: StoreKind.allCases)
    func hugeRanges(kind: StoreKind) async throws {
        let server = try await Self.seeded(kind)
        let (whole, body) = await server.send(.get, "/people?_start=2&_end=\(Int.max)")
        #expect(whole.status == .ok && body?.arrayValue?.count == 5)
        let (limited, limitedBody) = await server.send(.get, "/people?_start=\(Int.max - 10)&_limit=5")
        #expect(limited.status == .ok && limitedBody == [])
        #expect(limited.headerFields[.link]?.contains("</people?_start=5&_limit=5>; rel=\"prev\"") == true)
        let (both, bothBody) = await server.send(.get, "/people?_start=\(Int.max)&_limit=\(Int.max)")
        #expect(both.status == .ok && bothBody == [])
    }

    @Test("Numbers outside Int are a 400 naming the parameter")
    func outOfRange() async throws {
        let server = try await Self.seeded(.memory)
        for option in Self.options {
            let (response, body) = await server.send(.get, "/people?\(option)=99999999999999999999")
            #expect(response.status == .badRequest)
            #expect(body?["parameter"] == .string(option))
        }
    }

    @Test(
        "Every pair of numeric options at the extremes answers a page or a 400, on lists, nested lists and both stores",
        .cpuBound, arguments: StoreKind.allCases)
    func pairs(kind: StoreKind) async throws {
        let server = try await Self.seeded(kind)
        for target in [(path: "/people", total: 7), (path: "/people/1/cars", total: 3)] {
            for first in Self.options {
                for second in Self.options where second != first {
                    for value in Self.extremes {
                        for other in Self.extremes {
                            let query = "\(first)=\(value)&\(second)=\(other)".replacingOccurrences(of: "+", with: "%2B")
                            let url = "\(target.path)?\(query)"
                            let response = await server.respond(to: MockRequest(.get, url))
                            try Self.check(response, url, total: target.total, parameters: [first, second])
                        }
                    }
                }
            }
        }
    }

    @Test("Random values from the whole Int range in random options agree between the stores", .cpuBound)
    func random() async throws {
        let memory = try await Self.seeded(.memory)
        let sqlite = try await Self.seeded(.sqlite)
        var generator = SplitMix64(seed: 24)
        for _ in 0..<2_000 {
            var items: [String] = []
            var named: [String] = []
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let option = Self.options.randomElement(using: &generator) ?? "_page"
                let value: Int
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: value = Int.random(in: Int.min...Int.max, using: &generator)
                case 1: value = Int.random(in: -2...12, using: &generator)
                case 2: value = Int.max - Int.random(in: 0...3, using: &generator)
                default: value = Int.random(in: 0...Int.max, using: &generator)
                }
                items.append("\(option)=\(value)")
                named.append(option)
            }
            if Bool.random(using: &generator) { items.append("_sort=-numberOfKids") }
            let url = "/people?" + items.joined(separator: "&")
            let fromMemory = await memory.respond(to: MockRequest(.get, url))
            let fromSQLite = await sqlite.respond(to: MockRequest(.get, url))
            try Self.check(fromMemory, url, total: 7, parameters: named)
            #expect(fromMemory.status == fromSQLite.status, "\(url)")
            #expect(fromMemory.body == fromSQLite.body, "\(url)")
            #expect(fromMemory.headerFields[.link] == fromSQLite.headerFields[.link], "\(url)")
        }
    }

    @Test(
        "A window built in code with negative or extreme numbers answers instead of trapping", .cpuBound,
        arguments: StoreKind.allCases)
    func windowsInCode(kind: StoreKind) async throws {
        let server = try await Self.seeded(kind)
        let schema = try #require(server.schema(named: "people"))
        let store = server.store
        let windows: [ListQuery.Window] = [
            .page(number: Int.min, size: Int.min), .page(number: 0, size: 0), .page(number: -3, size: -5),
            .page(number: Int.max, size: Int.max), .page(number: 2, size: Int.max), .range(start: Int.min, end: Int.min),
            .range(start: -4, end: -9), .range(start: 5, end: 2), .range(start: Int.max, end: nil),
            .range(start: Int.min, end: Int.max),
        ]
        for window in windows {
            let query = ListQuery(window: window)
            let (page, total) = try await store.storedRecords(of: schema, answering: query)
            #expect(total == 7, "\(window)")
            #expect(page.count <= 7, "\(window)")
            let fields = query.responseFields(total: total, path: "/people")
            #expect(fields[.totalCount] == "7", "\(window)")
        }
    }

    @Test("Numbers in links are written as String writes them, at the ends of Int and between")
    func numbersInLinksAreWrittenAsStringWritesThem() {
        var generator = SystemRandomNumberGenerator()
        let values =
            [0, 1, 9, 10, 99, 100, -1, -10, Int.max, Int.min, Int.max - 1, Int.min + 1]
            + (0..<200).map { _ in Int.random(in: Int.min...Int.max, using: &generator) }
        for value in values {
            var bytes = Array("x=".utf8)
            LinkWriter.appendDecimal(value, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == "x=\(value)")
        }
    }

    @Test("A query string splits into the items a plain split gives, for random runs of separators, escapes and text")
    func queryItemsSplitAsAPlainSplitDoes() throws {
        var generator = SystemRandomNumberGenerator()
        let pieces = ["a", "b", "=", "&", "%41", "+", "%", "é", "_sort", "=="]
        for _ in 0..<2_000 {
            let query = (0..<Int.random(in: 0...12, using: &generator)).map { _ in
                pieces[Int.random(in: 0..<pieces.count, using: &generator)]
            }
            .joined()
            // The reference: split on &, drop empty parts, cut each at its first =.
            var expected: [(String, String)] = []
            var malformed = false
            for part in query.split(separator: "&", omittingEmptySubsequences: true) {
                let cut = part.firstIndex(of: "=")
                let name = cut.map { String(part[..<$0]) } ?? String(part)
                let value = cut.map { String(part[part.index(after: $0)...]) } ?? ""
                guard let decodedName = PercentEncoding.decodeForm(Array(name.utf8)[...]),
                    let decodedValue = PercentEncoding.decodeForm(Array(value.utf8)[...])
                else {
                    malformed = true
                    break
                }
                expected.append((decodedName, decodedValue))
            }
            if malformed {
                #expect(throws: QueryError.self, "\(query)") { try ListQuery.items(of: query) }
            } else {
                let items = try ListQuery.items(of: query)
                #expect(items.map(\.name) == expected.map(\.0), "\(query)")
                #expect(items.map(\.value) == expected.map(\.1), "\(query)")
            }
        }
    }
}
