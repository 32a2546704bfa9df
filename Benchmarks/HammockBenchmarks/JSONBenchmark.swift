import Foundation
import HammockJSON

/// HammockJSON against Foundation on the same bytes, in the same run.
enum JSONBenchmark {
    struct Person: Codable {
        var id: Int
        var name: String
        var numberOfKids: Int
        var kilometersWalked: Double
        var avatar: String?
        var tags: [String]
        var active: Bool
    }

    /// About `megabytes` of an array of small person objects.
    static func makeDocument(megabytes: Double) -> [UInt8] {
        var people: [JSON] = []
        var size = 0
        var index = 0
        while Double(size) < megabytes * 1_000_000 {
            let person: JSON = [
                "id": .integer(index), "name": .string("person \(index) \u{e9}\u{1F600}"), "numberOfKids": .integer(index % 5),
                "kilometersWalked": .double(Double(index) * 1.25 + 0.1), "avatar": index % 3 == 0 ? nil : "aGVsbG8=",
                "tags": ["a", "b\\\"c"], "active": .bool(index % 2 == 0),
            ]
            size += person.serialized().count + 1
            people.append(person)
            index += 1
        }
        return JSON.array(people).serialized()
    }

    /// The best of `rounds` timings of `body`, in seconds.
    static func best(rounds: Int, _ body: () throws -> Void) rethrows -> Double {
        var best = Double.infinity
        for _ in 0..<rounds {
            let start = ContinuousClock.now
            try body()
            let elapsed = ContinuousClock.now - start
            best = min(best, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }
        return best
    }

    static func run(rounds: Int) throws -> [Row] {
        let bytes = makeDocument(megabytes: 5)
        let data = Data(bytes)
        let megabytes = Double(bytes.count) / 1_000_000
        var sink = 0

        let hammockParse = try best(rounds: rounds) { sink &+= try JSON(parsing: bytes).arrayValue?.count ?? 0 }
        let serializationParse = try best(rounds: rounds) {
            sink &+= (try JSONSerialization.jsonObject(with: data) as? [Any])?.count ?? 0
        }
        let decoderParse = try best(rounds: rounds) { sink &+= try JSONDecoder().decode([Person].self, from: data).count }

        let value = try JSON(parsing: bytes)
        let foundationValue = try JSONSerialization.jsonObject(with: data)
        let people = try JSONDecoder().decode([Person].self, from: data)
        let hammockWrite = best(rounds: rounds) { sink &+= value.serialized().count }
        let serializationWrite = try best(rounds: rounds) {
            sink &+= try JSONSerialization.data(withJSONObject: foundationValue).count
        }
        let encoderWrite = try best(rounds: rounds) { sink &+= try JSONEncoder().encode(people).count }
        precondition(sink != 42, "keeps the work alive")

        func mbps(_ seconds: Double) -> Double { megabytes / seconds }
        return [
            Row(
                name: "parse \(String(format: "%.1f", megabytes)) MB: HammockJSON vs JSONSerialization",
                value: mbps(hammockParse), baseline: mbps(serializationParse), unit: "MB/s"),
            Row(
                name: "parse: HammockJSON vs JSONDecoder (Codable structs)",
                value: mbps(hammockParse), baseline: mbps(decoderParse), unit: "MB/s"),
            Row(
                name: "serialize: HammockJSON vs JSONSerialization",
                value: mbps(hammockWrite), baseline: mbps(serializationWrite), unit: "MB/s"),
            Row(
                name: "serialize: HammockJSON vs JSONEncoder (Codable structs)",
                value: mbps(hammockWrite), baseline: mbps(encoderWrite), unit: "MB/s"),
        ]
    }
}

/// One measured line: our number, the baseline measured in the same run, and their ratio.
struct Row {
    var name: String
    var value: Double
    var baseline: Double
    var unit: String
    var ratio: Double { value / baseline }
}
