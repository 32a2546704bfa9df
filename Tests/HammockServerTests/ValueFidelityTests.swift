import HTTPTypes
import HammockJSON
import HammockSQLite
import HammockTestSupport
import Testing

@testable import HammockServer
@testable import HammockStore

/// A value stored is the value written, and an order over values is an order: what a hostile client
/// found with numbers at the edge of a double's precision, a negative zero and days that do not exist.
@Suite("Stored values keep what was written")
struct ValueFidelityTests {
    static let things = MockResource("things", fields: ["extra": .json, "count": .integer, "weight": .float, "day": .date])

    /// Integers beyond 2^53 next to doubles that round to them: the kind of values that made the sort
    /// an inconsistent order (an integer "equal" to a double that was "equal" to a smaller integer).
    static func mixedValue(_ generator: inout SplitMix64) -> JSON {
        let near = 9_007_199_254_740_992  // 2^53
        switch Int.random(in: 0..<6, using: &generator) {
        case 0: return .integer(near + Int.random(in: -4...4, using: &generator))
        case 1: return .double(Double(near + 2 * Int.random(in: -2...2, using: &generator)))
        case 2: return .integer(Int.max - Int.random(in: 0...2, using: &generator))
        case 3: return .double(9_223_372_036_854_775_808.0)  // 2^63, above every Int
        case 4: return .double(Double(Int.random(in: -3...3, using: &generator)) + 0.5)
        default: return .integer(Int.random(in: -3...3, using: &generator))
        }
    }

    /// The exact order of two numbers, for the oracle: integral doubles compared as 128-bit integers.
    static func exactOrder(_ left: JSON, _ right: JSON) -> Int {
        func exact(_ value: JSON) -> (Int128, Double)? {
            switch value {
            case .integer(let number): return (Int128(number), 0)
            case .double(let number):
                let whole = number.rounded(.down)
                return (Int128(whole), number - whole)
            default: return nil
            }
        }
        guard let (a, fa) = exact(left), let (b, fb) = exact(right) else { return 0 }
        if a != b { return a < b ? -1 : 1 }
        return fa == fb ? 0 : (fa < fb ? -1 : 1)
    }

    @Test(
        "A sort on a field mixing integers beyond 2^53 and doubles is a total order, and every window is a slice of it",
        .cpuBound, arguments: StoreKind.allCases)
    func mixedNumbersSort(kind: StoreKind) async throws {
        let server = try await Fixtures.server(kind, resources: [Self.things])
        var generator = SplitMix64(seed: 53)
        for _ in 0..<240 {
            let created = await server.send(.post, "/things", json: ["extra": Self.mixedValue(&generator)])
            #expect(created.0.status == .created)
        }
        for descending in [false, true] {
            let sort = descending ? "-extra" : "extra"
            let (_, whole) = await server.send(.get, "/things?_sort=\(sort)")
            let records = try #require(whole?.arrayValue)
            #expect(records.count == 240)
            for (left, right) in zip(records, records.dropFirst()) {
                let order = Self.exactOrder(left["extra"] ?? .null, right["extra"] ?? .null)
                #expect(descending ? order >= 0 : order <= 0, "\(left) before \(right)")
            }
            for _ in 0..<60 {
                let start = Int.random(in: 0...240, using: &generator)
                let end = Int.random(in: start...250, using: &generator)
                let (_, window) = await server.send(.get, "/things?_sort=\(sort)&_start=\(start)&_end=\(end)")
                #expect(window?.arrayValue == Array(records[start..<min(end, 240)]), "\(sort) \(start)..<\(end)")
            }
        }
    }

    /// A POST of `/things` with exactly this JSON text (a literal `JSON` value would lose how it was written).
    static func post(_ text: String) -> MockRequest {
        MockRequest(.post, "/things", headerFields: [.contentType: "application/json"], body: Array(text.utf8))
    }

    @Test("Integers and doubles compare by their exact values")
    func exactComparison() {
        let twoTo53 = 9_007_199_254_740_992
        #expect(ListQuery.compare(.integer(twoTo53 + 1), .double(Double(twoTo53))) == 1)
        #expect(ListQuery.compare(.double(Double(twoTo53)), .integer(twoTo53 + 1)) == -1)
        #expect(ListQuery.compare(.integer(twoTo53), .double(Double(twoTo53))) == 0)
        #expect(ListQuery.compare(.integer(Int.max), .double(9_223_372_036_854_775_808.0)) == -1)
        #expect(ListQuery.compare(.integer(Int.min), .double(-9_223_372_036_854_775_808.0)) == 0)
        #expect(ListQuery.compare(.integer(Int.min), .double(-9_223_372_036_854_777_856.0)) == 1)
        #expect(ListQuery.compare(.integer(2), .double(2.5)) == -1)
        #expect(ListQuery.compare(.integer(-3), .double(-2.5)) == -1)
        #expect(ListQuery.compare(.integer(0), .double(-0.0)) == 0)
    }

    @Test(
        "An integer field refuses a double at or beyond 2^53, which no longer says which integer was written",
        arguments: StoreKind.allCases)
    func integersBeyondDoublePrecision(kind: StoreKind) async throws {
        let server = try await Fixtures.server(kind, resources: [Self.things])
        for text in ["9007199254740993.0", "9007199254740992.0", "-9007199254740992.0", "9.007199254740993e15"] {
            let request = Self.post(#"{"count": \#(text)}"#)
            let response = await server.respond(to: request)
            #expect(response.status == .unprocessableContent, "\(text)")
            #expect((try? response.json())?["errors"]?[0]?["field"] == "count")
        }
        // Below 2^53 a double is still one integer; written as digits, any Int is kept exactly.
        let below = Self.post(#"{"count": 9007199254740991.0}"#)
        #expect(await server.respond(to: below).status == .created)
        let created = await server.respond(to: Self.post(#"{"count": 9007199254740993}"#))
        #expect(try created.json()["count"] == .integer(9_007_199_254_740_993))
        #expect(await server.send(.get, "/things?count=9007199254740993").1?.arrayValue?.count == 1)
    }

    @Test("A negative zero keeps its sign through a write, a PATCH, a read and a restart of the SQLite file")
    func negativeZero() async throws {
        let path = TemporaryDirectory.make() + "zero.sqlite"
        let store = try SQLiteStore(path: path)
        let server = try await MockServer(resources: [Self.things], store: store)
        let (created, body) = await server.send(.post, "/things", json: ["weight": .double(-0.0), "extra": .double(-0.0)])
        #expect(created.status == .created)
        #expect(body?["weight"]?.doubleValue?.sign == .minus)
        // A PATCH from 0.0 to -0.0 is a change: the stored value and the ETag follow it.
        _ = await server.send(.post, "/things", json: ["weight": .double(0.0), "extra": ["a": .double(0.0)]])
        let before = await server.respond(to: MockRequest(.get, "/things/2")).headerFields[.eTag]
        let (_, patched) = await server.send(.patch, "/things/2", json: ["weight": .double(-0.0), "extra": ["a": .double(-0.0)]])
        #expect(patched?["weight"]?.doubleValue?.sign == .minus)
        let (after, reread) = await server.send(.get, "/things/2")
        #expect(reread?["weight"]?.doubleValue?.sign == .minus)
        #expect(reread?["extra"]?["a"]?.doubleValue?.sign == .minus)
        #expect(after.headerFields[.eTag] != before)
        // Written `-0`, as JavaScript's JSON.stringify(-0.0) does not, but a hand-written body may.
        let literal = await server.respond(to: Self.post(#"{"weight": -0, "count": -0}"#))
        #expect(try literal.json()["weight"]?.doubleValue?.sign == .minus)
        #expect(try literal.json()["count"] == .integer(0))
        let served = await server.send(.get, "/things").0.body
        try store.close()
        let reopened = try SQLiteStore(path: path)
        let again = try await MockServer(resources: [Self.things], store: reopened)
        let (_, list) = await again.send(.get, "/things")
        #expect(list?[0]?["weight"]?.doubleValue?.sign == .minus)
        #expect(list?[0]?["extra"]?.doubleValue?.sign == .minus)
        #expect(list?[1]?["weight"]?.doubleValue?.sign == .minus)
        #expect(list?[1]?["extra"]?["a"]?.doubleValue?.sign == .minus)
        #expect(await again.send(.get, "/things").0.body == served)
        try reopened.close()
    }

    @Test("A date field refuses days that do not exist", arguments: StoreKind.allCases)
    func impossibleDates(kind: StoreKind) async throws {
        let server = try await Fixtures.server(kind, resources: [Self.things])
        for day in ["2023-02-29", "2023-02-31", "2023-04-31", "2100-02-29", "2023-02-29T10:00:00Z", "0000-00-00"] {
            let (response, problem) = await server.send(.post, "/things", json: ["day": .string(day)])
            #expect(response.status == .unprocessableContent, "\(day)")
            #expect(problem?["errors"]?[0]?["field"] == "day", "\(day)")
        }
        for day in ["2024-02-29", "2000-02-29", "2023-12-31", "2023-01-31T23:59:60Z"] {
            #expect(await server.send(.post, "/things", json: ["day": .string(day)]).0.status == .created, "\(day)")
        }
    }
}
