import Foundation

/// `hammock-bench [json|model|engine|http|journal|stores|queries|all] [--seconds N] [--connections N] [--rounds N] [--store memory|sqlite]
/// [--compare OTHER_HAMMOCK_BINARY]`
///
/// JSON and model mapping print speeds against Foundation's; HTTP prints CPU time per request against
/// bare SwiftNIO (see `HTTPBenchmark`).
@main
struct Bench {
    static func main() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let which = arguments.first { !$0.hasPrefix("--") && Int($0) == nil } ?? "all"
        func option(_ name: String, _ fallback: Int) -> Int {
            guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return fallback }
            return Int(arguments[index + 1]) ?? fallback
        }
        let store = arguments.firstIndex(of: "--store").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
        var rows: [Row] = []
        if which == "json" || which == "all" { rows += try JSONBenchmark.run(rounds: option("--rounds", 5)) }
        if which == "model" || which == "all" { rows += try ModelBenchmark.run(rounds: option("--rounds", 5)) }
        if !rows.isEmpty { printRows(rows) }
        if which == "engine" || which == "all" {
            try await EngineBenchmark.run(
                rounds: option("--rounds", 5), iterations: option("--iterations", 100_000),
                only: arguments.contains("--only") ? option("--only", 0) : nil)
        }
        if which == "queries" {
            // `--records 100000,1000000`, `--store memory,sqlite,postgres`: lists, comma-separated.
            let records = arguments.firstIndex(of: "--records").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
            try await QueryBenchmark.run(
                recordCounts: records.map { $0.split(separator: ",").compactMap { Int($0) } } ?? [100_000, 1_000_000],
                seconds: option("--seconds", 5), rounds: option("--rounds", 3), connections: option("--connections", 32),
                storeNames: store.map { $0.split(separator: ",").map(String.init) } ?? ["memory", "sqlite", "postgres"])
        }
        if which == "stores" {
            try await StoreBenchmark.run(
                records: option("--records", 100_000), seconds: option("--seconds", 5),
                connections: option("--connections", 32), rounds: option("--rounds", 3))
        }
        if which == "journal" {
            try await JournalBenchmark.run(
                HTTPBenchmark.Options(
                    seconds: option("--seconds", 5), connections: option("--connections", 32), rounds: option("--rounds", 5),
                    storeNames: ["memory"]))
        }
        if which == "http" || which == "all" {
            try await HTTPBenchmark.run(
                HTTPBenchmark.Options(
                    seconds: option("--seconds", 5), connections: option("--connections", 32), rounds: option("--rounds", 3),
                    storeNames: store.map { [$0] } ?? ["memory", "sqlite"],
                    compare: arguments.indices.filter { arguments[$0] == "--compare" && $0 + 1 < arguments.count }
                        .map { arguments[$0 + 1] }))
        }
    }

    static func printRows(_ rows: [Row]) {
        print("| benchmark | Hammock | baseline | ratio |")
        print("|---|---:|---:|---:|")
        for row in rows {
            print(
                "| \(row.name) | \(format(row.value)) \(row.unit) | \(format(row.baseline)) \(row.unit) | \(String(format: "%.2f", row.ratio)) |"
            )
        }
    }

    static func format(_ value: Double) -> String {
        value >= 100 ? String(Int(value.rounded())) : String(format: "%.1f", value)
    }
}
