import FuzzSupport
import HammockJSON
import HammockOpenAPI
import HammockServer

/// `hammock generate swift` on configurations built from random names and paths: resources, fields,
/// parents, routes with parameters and query conditions, each named from an alphabet of what breaks
/// generated code (quotes, backslashes, line breaks, `#`, `\(`, braces, keywords, non-ASCII, digits
/// first). Every source made must pass ``SwiftSourceCheck`` (which the command checks before printing):
/// no name or path ever leaves its string literal or comment, and every path template is one `@API` reads.
@main
struct FuzzTarget {
    static let pieces = [
        "a", "people", "x", "\"", "\\", "\n", "\r", "#", "#error(\"x\")", "\\(", ")", "{", "}", "?", "`", "init", "self",
        "Type", "class", "_", "1", "é", "人", "\u{2028}", "\u{1B}", " ", "-", "/", ":", "%41", "%", "*", "default", "JSON",
    ]

    static func main() {
        Fuzzer.run { data, count in
            var reader = ByteReader(Fuzzer.bytes(data, count))
            let (root, name) = Self.configuration(&reader)
            guard let configuration = try? ServerConfiguration(root: root, file: "fuzz.json") else { return 0 }
            let source = Fuzzer.wait { () async -> String? in
                guard let server = try? await MockServer(configuration: configuration, store: MemoryStore()) else { return nil }
                return SwiftClientSource.make(for: server, name: name, origin: name + ".json")
            }
            guard let source else { return 0 }
            let problems = SwiftSourceCheck.problems(in: source)
            Fuzzer.check(problems.isEmpty, "generated source fails the check: \(problems.prefix(3))\n\(source)")
            return 0
        }
    }

    static func word(_ reader: inout ByteReader) -> String {
        (0...reader.choose(3)).map { _ in reader.pick(pieces) }.joined()
    }

    static func configuration(_ reader: inout ByteReader) -> (JSON, String) {
        var resources: [JSON] = []
        var names: [String] = []
        for _ in 0..<(1 + reader.choose(3)) {
            let name = word(&reader)
            var fields = JSONObject()
            var fieldNames: [String] = []
            for _ in 0..<reader.choose(5) {
                let field = word(&reader)
                fields[field] = .string(reader.pick(["string", "integer", "float", "boolean", "date", "blob", "json"]))
                fieldNames.append(field)
            }
            var resource: JSONObject = ["name": .string(name), "fields": .object(fields)]
            if let parent = names.last, reader.choose(2) == 0 { resource["parents"] = [.string(parent)] }
            if reader.choose(3) == 0, let key = fieldNames.first { resource["primaryKey"] = .string(key) }
            resources.append(.object(resource))
            names.append(name)
        }
        var routes: [JSON] = []
        for _ in 0..<reader.choose(4) {
            var path = ""
            for _ in 0..<(1 + reader.choose(3)) { path += "/" + (reader.choose(3) == 0 ? ":" : "") + word(&reader) }
            var route: JSONObject = [
                "method": .string(reader.pick(["GET", "POST", "PUT", "PATCH", "DELETE"])), "path": .string(path),
                "body": ["ok": true],
            ]
            var match = JSONObject()
            if reader.choose(2) == 0 { match["query"] = .object([word(&reader): .string(word(&reader))]) }
            if reader.choose(3) == 0 { match["body"] = .object([word(&reader): true]) }
            if !match.isEmpty { route["match"] = .object(match) }
            routes.append(.object(route))
        }
        var root: JSONObject = ["resources": .array(resources)]
        if !routes.isEmpty { root["routes"] = .array(routes) }
        return (.object(root), word(&reader))
    }
}
