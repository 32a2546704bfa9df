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

    @Test("hammock serve takes an OpenAPI document: says what it made and what it does not do, then serves it")
    func servesOpenAPI() async throws {
        let process = try HammockProcess(["serve", "Tests/OpenAPI/documents/tasks.yaml", "--port", "0", "--quiet"])
        var summary: [String] = []
        var url: String?
        for await line in process.lines {
            if line.hasPrefix("Hammock is serving") { url = line.split(separator: " ").last.map(String.init) }
            if line.hasPrefix("from OpenAPI") || line.hasPrefix("not as documented") || line.hasPrefix("checked against") {
                summary.append(line)
            }
            if line.hasPrefix("store:") { break }
        }
        #expect(summary.first == "from OpenAPI 3.1.0 \"Tasks API\": resources projects, tasks, teams; 7 stubs")
        #expect(summary.last == "checked against the document: 18 operations (--no-validation turns the checks off)")
        #expect(!summary.contains { $0.contains("security") })
        let base = try #require(url)
        // The document asks for a bearer token: the session sends one, as a signed-in app would.
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpAdditionalHeaders = ["Authorization": "Bearer test-token"]
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        let (projects, _) = try await session.data(from: try #require(URL(string: base + "/v3/projects")))
        #expect(try JSON(parsing: [UInt8](projects)).arrayValue?.count == 2)
        let (_, wrongKey) = try await session.data(from: try #require(URL(string: base + "/v3/tasks/seven")))
        #expect((wrongKey as? HTTPURLResponse)?.statusCode == 400)
        let (_, anonymous) = try await URLSession.shared.data(from: try #require(URL(string: base + "/v3/tasks/7")))
        #expect((anonymous as? HTTPURLResponse)?.statusCode == 401)
        let (_, health) = try await session.data(from: try #require(URL(string: base + "/v3/health")))
        #expect((health as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type") == "text/plain")
        // Its own document, served back, has the title it was given.
        let (data, _) = try await session.data(from: try #require(URL(string: base + "/__hammock/openapi.json")))
        #expect(try JSON(parsing: [UInt8](data))["info"]?["title"] == "Tasks API")
        process.interrupt()
        #expect(await process.exitStatus() == 0)

        // --no-validation: the same request reaches the resource, which finds no such task.
        let unchecked = try HammockProcess([
            "serve", "Tests/OpenAPI/documents/tasks.yaml", "--port", "0", "--quiet", "--no-validation",
        ])
        var uncheckedURL: String?
        var announced = false
        for await line in unchecked.lines {
            if line.hasPrefix("Hammock is serving") { uncheckedURL = line.split(separator: " ").last.map(String.init) }
            if line.hasPrefix("checked against") { announced = true }
            if line.hasPrefix("store:") { break }
        }
        #expect(!announced)
        let uncheckedBase = try #require(uncheckedURL)
        let (_, notFound) = try await session.data(from: try #require(URL(string: uncheckedBase + "/v3/tasks/seven")))
        #expect((notFound as? HTTPURLResponse)?.statusCode == 404)
        unchecked.interrupt()
        #expect(await unchecked.exitStatus() == 0)

        let routes = try await Self.run(["routes", "Tests/OpenAPI/documents/petstore.yaml"])
        #expect(routes.status == 0)
        #expect(routes.output.contains("GET, HEAD, POST  /v1/pets      pets"))
        let swagger = TemporaryFiles.directory("swagger") + "old.json"
        try Data(#"{"swagger": "2.0", "info": {"title": "Old", "version": "1"}, "paths": {}}"#.utf8)
            .write(to: URL(fileURLWithPath: swagger))
        let refused = try await Self.run(["serve", swagger, "--port", "0"])
        #expect(refused.status == 2)
        #expect(refused.errors.hasPrefix("\(swagger): swagger: Swagger 2.0 is not read"))
    }
}
