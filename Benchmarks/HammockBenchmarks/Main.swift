import Foundation

/// `hammock-bench [json|model|http|all] [--seconds N] [--connections N] [--rounds N] [--memory]`
@main
struct Bench {
    static func main() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let which = arguments.first { !$0.hasPrefix("--") && Int($0) == nil } ?? "all"
        func option(_ name: String, _ fallback: Int) -> Int {
            guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return fallback }
            return Int(arguments[index + 1]) ?? fallback
        }
        var rows: [Row] = []
        if which == "json" || which == "all" { rows += try JSONBenchmark.run(rounds: option("--rounds", 5)) }
        if which == "model" || which == "all" { rows += try ModelBenchmark.run(rounds: option("--rounds", 5)) }
        if which == "http" || which == "all" {
            let stores = arguments.contains("--memory") ? ["sqlite", "memory"] : ["sqlite"]
            rows += try await HTTPBenchmark.run(
                seconds: option("--seconds", 5), connections: option("--connections", 32), storeNames: stores)
        }
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
