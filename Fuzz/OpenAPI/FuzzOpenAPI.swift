import FuzzSupport
import HammockJSON
import HammockOpenAPI
import HammockServer

/// The OpenAPI importer on documents built from random schema graphs: schemas that refer to themselves
/// and each other through `$ref`, `allOf`, `oneOf` and `anyOf` (with `null`), arrays and members, shared
/// many times; collections, items and stubs over them. Never a crash (the stack overflows of the hostile
/// review), never a startup past libFuzzer's `-timeout` (the exponential `allOf`), and a document the
/// importer accepts starts a server whose every documented path answers below 500.
@main
struct FuzzTarget {
    static func main() {
        Fuzzer.run { data, count in
            var reader = ByteReader(Fuzzer.bytes(data, count))
            let (document, paths) = Self.document(&reader)
            guard let mock = try? OpenAPIImport.make(from: document, file: "fuzz.json") else { return 0 }
            let configuration: ServerConfiguration
            do {
                configuration = try ServerConfiguration(root: mock.configuration, file: "fuzz.json")
            } catch {
                Fuzzer.check(false, "the import made a configuration that is refused: \(error)")
                return 0
            }
            let failure = Fuzzer.wait { () async -> String? in
                do {
                    let server = try await MockServer.inMemory(configuration)
                    for path in paths {
                        let answer = await server.respond(to: MockRequest(.get, path))
                        if answer.status.code >= 500 { return "GET \(path) answered \(answer.status.code)" }
                    }
                    return nil
                } catch {
                    return "the imported mock did not start: \(error)"
                }
            }
            Fuzzer.check(failure == nil, failure ?? "")
            return 0
        }
    }

    /// A document of 1 to 12 schemas and 1 to 4 collections or stubs over them, and the paths to ask.
    static func document(_ reader: inout ByteReader) -> (JSON, [String]) {
        let count = 1 + reader.choose(12)
        func reference(_ reader: inout ByteReader) -> JSON { ["$ref": .string("#/components/schemas/S\(reader.choose(count))")] }
        func member(_ reader: inout ByteReader) -> JSON {
            switch reader.choose(6) {
            case 0: return reference(&reader)
            case 1: return ["type": "array", "items": reference(&reader)]
            case 2: return ["oneOf": [reference(&reader), ["type": "null"]]]
            case 3: return ["type": "integer", "minimum": .integer(Int(reader.byte()) - 128)]
            case 4: return ["type": "string", "format": .string(reader.pick(["date", "uuid", "email", "byte", "x"]))]
            default: return ["type": ["string", "null"]]
            }
        }
        var schemas = JSONObject()
        for index in 0..<count {
            var schema = JSONObject()
            switch reader.choose(8) {
            case 0, 7:
                var properties: JSONObject = ["id": ["type": reader.pick(["integer", "string"])]]
                for position in 0..<reader.choose(6) { properties["m\(position)"] = member(&reader) }
                schema["type"] = "object"
                schema["properties"] = .object(properties)
                if reader.choose(3) == 0 { schema["allOf"] = .array([reference(&reader)]) }
            case 1: schema["allOf"] = .array((0...reader.choose(3)).map { _ in reference(&reader) })
            case 2: schema["oneOf"] = .array((0...reader.choose(3)).map { _ in reference(&reader) })
            case 3: schema["anyOf"] = .array([reference(&reader), ["type": "null"], member(&reader)])
            case 4:
                schema["type"] = "array"
                schema["items"] = reference(&reader)
            case 5: schema = ["$ref": .string("#/components/schemas/S\(reader.choose(count))")]
            default:
                schema["type"] = "string"
                schema["minLength"] = .integer(reader.choose(20))
            }
            schemas["S\(index)"] = .object(schema)
        }
        var paths = JSONObject()
        var asked: [String] = []
        for index in 0..<(1 + reader.choose(4)) {
            let schema = reference(&reader)
            func answer(_ schema: JSON) -> JSON {
                ["description": "x", "content": ["application/json": ["schema": schema]]]
            }
            let name = reader.pick(["things", "items\(index)", "a-b", "v2/Flows"])
            if reader.choose(2) == 0 {
                paths["/\(name)"] = [
                    "get": ["responses": ["200": answer(["type": "array", "items": schema])]],
                    "post": [
                        "requestBody": ["content": ["application/json": ["schema": schema]]],
                        "responses": ["201": answer(schema)],
                    ],
                ]
                paths["/\(name)/{id}"] = [
                    "get": [
                        "parameters": [["name": "id", "in": "path", "required": true, "schema": ["type": "string"]]],
                        "responses": ["200": answer(schema)],
                    ]
                ]
                asked += ["/\(name)", "/\(name)/1"]
            } else {
                paths["/report\(index)"] = ["get": ["responses": ["200": answer(schema)]]]
                asked.append("/report\(index)")
            }
        }
        let document: JSON = [
            "openapi": .string(reader.pick(["3.1.0", "3.0.3"])), "info": ["title": "Fuzz", "version": "1"],
            "paths": .object(paths), "components": ["schemas": .object(schemas)],
        ]
        return (document, asked)
    }
}
