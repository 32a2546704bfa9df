import Foundation
import HammockJSON
import HammockOpenAPI
import HammockTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("hammock openapi, and YAML files for hammock serve", .timeLimit(.minutes(1)))
struct OpenAPICommandTests {
    /// Runs `hammock` to its end; its output and exit status.
    static func run(_ arguments: [String]) async throws -> (output: String, errors: String, status: Int32) {
        let process = try HammockProcess(arguments)
        var lines: [String] = []
        for await line in process.lines { lines.append(line) }
        let status = await process.exitStatus()
        return (lines.joined(separator: "\n"), process.errorOutput.withLock { $0 }, status)
    }

    @Test("hammock openapi prints the document as JSON or YAML, the same from a YAML configuration")
    func printsTheDocument() async throws {
        let json = try await Self.run(["openapi", "Examples/people.json"])
        #expect(json.status == 0)
        let document = try JSON(parsing: Array(json.output.utf8))
        #expect(document["openapi"] == "3.1.0")
        #expect(document["info"]?["title"] == "people")
        #expect(document["paths"]?["/people/{id}/cars"] != nil)
        let yaml = try await Self.run(["openapi", "Examples/people.yaml", "--format", "yaml", "--title", "people"])
        #expect(yaml.status == 0)
        #expect(try YAMLText.json(from: yaml.output) == document)
    }

    @Test("hammock serve takes a YAML file and serves its OpenAPI document in the admin API")
    func servesYAML() async throws {
        let process = try HammockProcess(["serve", "Examples/people.yaml", "--store", "memory", "--port", "0", "--quiet"])
        let banner = await process.firstLine { $0.hasPrefix("Hammock is serving") }
        let url = try #require(banner?.split(separator: " ").last.map(String.init))
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let (people, _) = try await session.data(from: try #require(URL(string: url + "/people")))
        #expect(try JSON(parsing: [UInt8](people)).arrayValue?.count == 5)
        let (data, response) = try await session.data(from: try #require(URL(string: url + "/__hammock/openapi.json")))
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        let document = try JSON(parsing: [UInt8](data))
        #expect(document["info"]?["title"] == "people")
        #expect(document["components"]?["schemas"]?["Person"]?["examples"]?[0]?["name"] == "Amy Lee")
        process.interrupt()
        #expect(await process.exitStatus() == 0)
    }

    @Test("A YAML file with a mistake exits 2 naming the file and the line, or the key")
    func mistakes() async throws {
        let directory = TemporaryFiles.directory("yaml-cli")
        let broken = directory + "broken.yaml"
        try Data("resources:\n  - name: [people\n".utf8).write(to: URL(fileURLWithPath: broken))
        let syntax = try await Self.run(["serve", broken, "--port", "0"])
        #expect(syntax.status == 2)
        #expect(syntax.errors.hasPrefix("\(broken): line "))
        let wrong = directory + "wrong.yml"
        try Data("resources:\n  - name: people\n    fields: {age: decimal}\n".utf8).write(to: URL(fileURLWithPath: wrong))
        let key = try await Self.run(["openapi", wrong])
        #expect(key.status == 2)
        #expect(key.errors.hasPrefix("\(wrong): resources[0].fields.age: unknown type 'decimal'"))
    }
}
