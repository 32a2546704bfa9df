import Foundation
import HammockJSON
import HammockModel

/// Mapping a 5 MB array of small objects through a recipe, against JSONDecoder into an equivalent
/// Codable struct, from the same bytes in the same run.
enum ModelBenchmark {
    struct Item: Codable, Sendable {
        var id = 0
        var name = ""
        var price = 0.0
        var available = false
        var category = ""
        var rating: Double? = nil
        var tags: [String] = []
    }

    static func run(rounds: Int) throws -> [Row] {
        var items: [JSON] = []
        var size = 0
        var index = 0
        while size < 5_000_000 {
            let item: JSON = [
                "id": .integer(index), "name": .string("item \(index)"), "price": .double(Double(index % 1000) + 0.99),
                "available": .bool(index % 3 == 0), "category": .string(["tools", "garden", "home"][index % 3]),
                "rating": index % 4 == 0 ? nil : .double(Double(index % 5) + 0.5), "tags": ["a", "b"],
            ]
            size += item.serialized().count + 1
            items.append(item)
            index += 1
        }
        let bytes = JSON.array(items).serialized()
        let data = Data(bytes)
        let recipe = try Recipe<Item>(name: "Item") {
            Field("id", \.id, at: "id")
            Field("name", \.name, at: "name")
            Field("price", \.price, at: "price")
            Field("available", \.available, at: "available")
            Field("category", \.category, at: "category")
            Field("rating", \.rating, at: "rating")
            Field("tags", \.tags, at: "tags")
        }
        var sink = 0
        let megabytes = Double(bytes.count) / 1_000_000
        let times = try JSONBenchmark.interleaved(
            rounds: rounds,
            [
                {
                    guard case .array(let elements) = try JSON(parsing: bytes) else { return }
                    var models: [Item] = []
                    models.reserveCapacity(elements.count)
                    for element in elements { models.append(try Oven.baked(Item(), from: element, recipe: recipe)) }
                    sink &+= models.count
                },
                { sink &+= try JSONDecoder().decode([Item].self, from: data).count },
            ])
        let (mapped, decoded) = (times[0], times[1])
        precondition(sink != 42, "keeps the work alive")
        return [
            Row(
                name: "map \(String(format: "%.1f", megabytes)) MB through a recipe vs JSONDecoder (Codable)",
                value: megabytes / mapped, baseline: megabytes / decoded, unit: "MB/s")
        ]
    }
}
