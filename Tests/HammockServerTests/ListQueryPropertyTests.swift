import HammockJSON
import HammockServer
import HammockTestSupport
import Testing

/// Random datasets and random queries: every store and a plain oracle written here, apart from the
/// server's code, give the same records in the same order and the same total. Memory and SQLite run
/// twice: as they are (a table of a few records is scanned) and with indexes from the first record, so
/// every plan of the query planner (a slice of one run; sets intersected, with conditions left to check
/// on records; text found by the index alone or confirmed on records; the page walked along an index or
/// the key order, or taken by a bounded heap) meets the oracle.
@Suite("List queries against an oracle")
struct ListQueryPropertyTests {
    static let items = MockResource(
        "items", fields: ["name": .string, "size": .integer, "weight": .float, "flag": .boolean])

    struct Item {
        var id: Int
        var values: [String: JSON]
    }

    static func randomText(_ generator: inout SplitMix64) -> String {
        let letters = ["a", "b", "A", "B", "é", " "]
        return (0..<Int.random(in: 0...3, using: &generator)).map { _ in letters.randomElement(using: &generator) ?? "a" }
            .joined()
    }

    static func randomValue(_ field: String, _ generator: inout SplitMix64) -> JSON {
        if Int.random(in: 0..<6, using: &generator) == 0 { return .null }
        switch field {
        case "name": return .string(randomText(&generator))
        case "size": return .integer(Int.random(in: -3...3, using: &generator))
        case "weight": return .double(Double(Int.random(in: -4...4, using: &generator)) / 2)
        default: return .bool(Bool.random(using: &generator))
        }
    }

    /// A query parameter and its text, with what the oracle needs to evaluate it.
    struct Condition {
        var parameter: String
        var text: String
        var field: String
        var suffix: String
        var value: JSON
    }

    static func randomCondition(_ generator: inout SplitMix64) -> Condition {
        let field = ["name", "size", "weight", "flag", "id"].randomElement(using: &generator) ?? "size"
        var suffixes = ["", "_ne", "_null"]
        if field != "flag" { suffixes += ["_gt", "_gte", "_lt", "_lte"] }
        if field == "name" { suffixes.append("_like") }
        let suffix = suffixes.randomElement(using: &generator) ?? ""
        if suffix == "_null" {
            let flag = Bool.random(using: &generator)
            return Condition(parameter: field + suffix, text: String(flag), field: field, suffix: suffix, value: .bool(flag))
        }
        var value = field == "id" ? .integer(Int.random(in: 0...12, using: &generator)) : randomValue(field, &generator)
        if suffix == "_like" || (suffix != "" && suffix != "_ne"), value.isNull {
            value = field == "name" ? .string("a") : .integer(0)
            if field == "weight" { value = .double(0.5) }
        }
        let text: String
        switch value {
        case .null: text = "null"
        case .string(let string): text = string
        case .integer(let number): text = String(number)
        case .double(let number): text = String(number)
        case .bool(let flag): text = String(flag)
        default: text = ""
        }
        return Condition(parameter: field + suffix, text: text, field: field, suffix: suffix, value: value)
    }

    /// Percent-encodes everything but letters and digits.
    static func encode(_ text: String) -> String {
        text.utf8.map { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                ? String(UnicodeScalar(byte)) : "%" + String(byte, radix: 16, uppercase: true).leftPadded
        }.joined()
    }

    // MARK: The oracle

    /// -1, 0, 1 with null first, numbers by value, strings by UTF-8 bytes, false before true.
    static func order(_ left: JSON, _ right: JSON) -> Int {
        switch (left, right) {
        case (.null, .null): return 0
        case (.null, _): return -1
        case (_, .null): return 1
        case (.string(let a), .string(let b)):
            let (x, y) = (Array(a.utf8), Array(b.utf8))
            return x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
        case (.bool(let a), .bool(let b)): return a == b ? 0 : (a ? 1 : -1)
        default:
            let (a, b) = (left.doubleValue ?? 0, right.doubleValue ?? 0)
            return a == b ? 0 : (a < b ? -1 : 1)
        }
    }

    static func oracle(_ items: [Item], conditions: [Condition], search: String?, sort: [(String, Bool)]) -> [Int] {
        func value(_ item: Item, _ field: String) -> JSON { field == "id" ? .integer(item.id) : item.values[field] ?? .null }
        var kept = items.filter { item in
            for condition in conditions {
                let actual = value(item, condition.field)
                let wanted = condition.value
                let passes: Bool
                switch condition.suffix {
                case "": passes = actual.isNull == wanted.isNull && order(actual, wanted) == 0
                case "_ne": passes = actual.isNull != wanted.isNull || order(actual, wanted) != 0
                case "_null": passes = actual.isNull == (wanted == .bool(true))
                case "_like":
                    guard case .string(let text) = actual else { return false }
                    passes = Array(text.lowercased().utf8).contains(
                        subsequence: Array((wanted.stringValue ?? "").lowercased().utf8))
                default:
                    guard !actual.isNull else { return false }
                    let comparison = order(actual, wanted)
                    switch condition.suffix {
                    case "_gt": passes = comparison > 0
                    case "_gte": passes = comparison >= 0
                    case "_lt": passes = comparison < 0
                    default: passes = comparison <= 0
                    }
                }
                if !passes { return false }
            }
            if let search {
                guard case .string(let name) = item.values["name"] else { return false }
                return Array(name.lowercased().utf8).contains(subsequence: Array(search.lowercased().utf8))
            }
            return true
        }
        kept.sort { left, right in
            for (field, descending) in sort {
                let comparison = order(value(left, field), value(right, field))
                if comparison != 0 { return descending ? comparison > 0 : comparison < 0 }
            }
            return left.id < right.id
        }
        return kept.map(\.id)
    }

    /// The stores compared: each kind as it is, and memory and SQLite indexed from the first record.
    static let stores: [(StoreKind, indexingFrom: Int?)] = StoreKind.allCases.map { ($0, nil) } + [(.memory, 0), (.sqlite, 0)]

    @Test("Every store, scanning or planning over indexes, agrees with the oracle on random data and queries", .cpuBound)
    func randomQueries() async throws {
        var generator = SplitMix64(seed: 12)
        for _ in 0..<12 {
            var items: [Item] = []
            for id in 1...Int.random(in: 5...30, using: &generator) {
                var values: [String: JSON] = [:]
                for field in ["name", "size", "weight", "flag"] { values[field] = Self.randomValue(field, &generator) }
                items.append(Item(id: id, values: values))
            }
            var servers: [MockServer] = []
            for (kind, indexingFrom) in Self.stores {
                let store: any MockStore
                if let indexingFrom {
                    store = try await kind.makeStore(indexingFrom: indexingFrom)
                } else {
                    store = try await kind.makeStore()
                }
                let server = try await MockServer(resources: [Self.items], store: store)
                for item in items {
                    var body = JSONObject()
                    for (field, value) in item.values { body[field] = value }
                    #expect(await server.send(.post, "/items", json: .object(body)).0.status == .created)
                }
                servers.append(server)
            }
            for _ in 0..<25 {
                let conditions = (0..<Int.random(in: 0...2, using: &generator)).map { _ in Self.randomCondition(&generator) }
                // Repeated parameters combine differently by operator; the oracle knows one each.
                guard Set(conditions.map(\.parameter)).count == conditions.count else { continue }
                let search = Int.random(in: 0..<4, using: &generator) == 0 ? Self.randomText(&generator) : nil
                let sort = (0..<Int.random(in: 0...2, using: &generator)).map { _ in
                    (
                        ["name", "size", "weight", "flag", "id"].randomElement(using: &generator) ?? "id",
                        Bool.random(using: &generator)
                    )
                }
                let page = Int.random(in: 0..<3, using: &generator) == 0 ? nil : Int.random(in: 1...4, using: &generator)
                let perPage = Int.random(in: 1...8, using: &generator)
                var parameters = conditions.map { "\($0.parameter)=\(Self.encode($0.text))" }
                if let search { parameters.append("q=\(Self.encode(search))") }
                if !sort.isEmpty { parameters.append("_sort=" + sort.map { ($0.1 ? "-" : "") + $0.0 }.joined(separator: ",")) }
                if let page { parameters += ["_page=\(page)", "_per_page=\(perPage)"] }
                let target = "/items?" + parameters.joined(separator: "&")

                let matching = Self.oracle(items, conditions: conditions, search: search, sort: sort)
                let expected =
                    page.map { page in Array(matching.dropFirst((page - 1) * perPage).prefix(perPage)) } ?? matching
                for (server, (kind, indexed)) in zip(servers, Self.stores) {
                    let kind = "\(kind)\(indexed == nil ? "" : " indexed")"
                    let (response, body) = await server.send(.get, target)
                    #expect(response.status == .ok, "\(kind) \(target)")
                    let ids = body?.arrayValue?.compactMap { $0["id"]?.intValue }
                    #expect(ids == expected, "\(kind) \(target)")
                    if page != nil { #expect(response.headerFields[.totalCount] == String(matching.count), "\(kind) \(target)") }
                }
            }
        }
    }
}

extension String {
    /// Two hex digits.
    fileprivate var leftPadded: String { count == 1 ? "0" + self : self }
}

extension Array where Element == UInt8 {
    fileprivate func contains(subsequence: [UInt8]) -> Bool {
        guard !subsequence.isEmpty else { return true }
        guard subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { self[$0..<($0 + subsequence.count)].elementsEqual(subsequence) }
    }
}
