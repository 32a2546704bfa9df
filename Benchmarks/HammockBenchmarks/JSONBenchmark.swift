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

    /// Times each body once per round, in turn, and keeps each one's best: a slow spell of a shared
    /// machine then hurts subject and baseline alike instead of whichever ran during it.
    static func interleaved(rounds: Int, _ bodies: [() throws -> Void]) throws -> [Double] {
        var best = [Double](repeating: .infinity, count: bodies.count)
        for _ in 0..<rounds {
            for (index, body) in bodies.enumerated() {
                best[index] = min(best[index], try self.best(rounds: 1, body))
            }
        }
        return best
    }

    static func run(rounds: Int) throws -> [Row] {
        let bytes = makeDocument(megabytes: 5)
        let data = Data(bytes)
        let megabytes = Double(bytes.count) / 1_000_000
        var sink = 0

        let value = try JSON(parsing: bytes)
        let foundationValue = try JSONSerialization.jsonObject(with: data)
        let people = try JSONDecoder().decode([Person].self, from: data)
        func measure() throws -> [Double] {
            try interleaved(
                rounds: rounds,
                [
                    { sink &+= try JSON(parsing: bytes).arrayValue?.count ?? 0 },
                    { sink &+= (try JSONSerialization.jsonObject(with: data) as? [Any])?.count ?? 0 },
                    { sink &+= try JSONDecoder().decode([Person].self, from: data).count },
                    { sink &+= value.serialized().count },
                    { sink &+= try JSONSerialization.data(withJSONObject: foundationValue).count },
                    { sink &+= try JSONEncoder().encode(people).count },
                ])
        }
        // Before and after the Python peer, so that it runs between two measurements of ours.
        let first = try measure()
        let python = PythonJSONPeer.run()
        let second = try measure()
        let times = zip(first, second).map { min($0, $1) }
        let (hammockParse, serializationParse, decoderParse) = (times[0], times[1], times[2])
        let (hammockWrite, serializationWrite, encoderWrite) = (times[3], times[4], times[5])
        precondition(sink != 42, "keeps the work alive")

        func mbps(_ seconds: Double) -> Double { megabytes / seconds }
        var rows = [
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
        for (label, rate, isParse) in [
            ("parse: HammockJSON vs CPython json.loads", python["cpython json.loads"], true),
            ("parse: HammockJSON vs orjson.loads", python["orjson.loads"], true),
            ("serialize: HammockJSON vs orjson.dumps", python["orjson.dumps"], false),
        ] {
            guard let rate else { continue }
            rows.append(
                Row(name: label, value: mbps(isParse ? hammockParse : hammockWrite), baseline: rate, unit: "MB/s"))
        }
        return rows
    }
}

/// `pyjson.py` from the peers directory (`HAMMOCK_PEERS`, else `../shared/peers`): CPython's json and
/// orjson on a document of the same shape, best of 5 each. A yardstick outside the project; skipped
/// with a note when it is not there.
enum PythonJSONPeer {
    static func run() -> [String: Double] {
        let peers = ProcessInfo.processInfo.environment["HAMMOCK_PEERS"] ?? "../shared/peers"
        let script = peers + "/pyjson.py"
        guard FileManager.default.fileExists(atPath: script) else {
            FileHandle.standardError.write(Data("note: no \(script); the Python JSON rows are left out\n".utf8))
            return [:]
        }
        let outputPath = NSTemporaryDirectory() + "hammock-pyjson-\(UUID().uuidString).txt"
        FileManager.default.createFile(atPath: outputPath, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        guard let output = FileHandle(forWritingAtPath: outputPath) else { return [:] }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script]
        process.standardOutput = output
        do {
            try process.run()
        } catch {
            return [:]
        }
        // A synchronous benchmark on the main thread: waiting here blocks no pool thread.
        process.waitUntilExit()
        try? output.close()
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        var rates: [String: Double] = [:]
        for line in text.split(separator: "\n") {
            // `orjson.loads: 68.5 MB/s`
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = String(line[..<colon])
            let rest = line[line.index(after: colon)...].split(separator: " ")
            if let rate = rest.first.flatMap({ Double($0) }) { rates[name] = rate }
        }
        return rates
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
