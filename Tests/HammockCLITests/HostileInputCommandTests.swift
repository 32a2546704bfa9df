import Foundation
import HammockJSON
import HammockTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `hammock` against what a third party can hand it: an empty admin token, a FIFO where the file was, a
/// document whose schemas loop, a namespace PostgreSQL cannot take. Each one ended in an open admin API,
/// a hang or a crash before.
@Suite("hammock against hostile input (end to end)", .timeLimit(.minutes(2)))
struct HostileInputCommandTests {
    let serving = ServeCommandTests()

    @Test("An empty or blank admin token, from the flag or the environment, exits 2 before anything is served")
    func emptyAdminToken() async throws {
        for (arguments, environment) in [
            (["--admin-token", ""], [String: String]()), (["--admin-token", "  "], [:]), ([], ["HAMMOCK_ADMIN_TOKEN": ""]),
            ([], ["HAMMOCK_ADMIN_TOKEN": "has space"]),
        ] {
            let process = try HammockProcess(
                ["serve", "Examples/people.json", "--store", "memory", "--port", "0"] + arguments, environment: environment)
            #expect(await process.exitStatus() == 2, "\(arguments) \(environment)")
            let text = process.errorOutput.withLock { $0 }
            #expect(text.contains("admin token"), "\(text)")
        }
    }

    @Test("A FIFO given as the file exits 2 at once, and one put where a watched file was never stops the watcher")
    func fifo() async throws {
        let directory = TemporaryFiles.directory("fifo")
        let fifo = directory + "api.json"
        #expect(mkfifo(fifo, 0o600) == 0)
        let refused = try HammockProcess(["serve", fifo, "--store", "memory", "--port", "0"])
        #expect(await refused.exitStatus() == 2)
        #expect(refused.errorOutput.withLock { $0 }.contains("not a regular file"))

        let (_, path) = try serving.temporaryConfig(#"{"resources": [{"name": "people", "fields": {"name": "string"}}]}"#)
        let (process, url) = try await serving.serve([path, "--store", "memory", "--watch"])
        #expect(await process.firstLine { $0.hasPrefix("watching ") } != nil)
        try FileManager.default.removeItem(atPath: path)
        #expect(mkfifo(path, 0o600) == 0)
        // Long enough for the watcher to open it a few times (it reads every 250 ms).
        try await Task.sleep(for: .seconds(1))
        try FileManager.default.removeItem(atPath: path)
        let changed =
            #"{"resources": [{"name": "people", "fields": {"name": "string"}}, {"name": "shops", "fields": {"title": "string"}}]}"#
        try Data(changed.utf8).write(to: URL(fileURLWithPath: path))
        let reloaded = await process.firstLine { $0.hasPrefix("reloaded ") }
        #expect(reloaded?.contains("added shops") == true, "\(reloaded ?? "no line")")
        #expect(try await serving.send("GET", url + "/shops").json == [])
        process.interrupt()
        #expect(await process.exitStatus() == 0)
    }

    @Test("A document whose schema includes itself is served, and saving one under --watch keeps the server up")
    func loopingDocument() async throws {
        let looping: JSON = [
            "openapi": "3.1.0", "info": ["title": "Loop", "version": "1"],
            "paths": [
                "/report": [
                    "get": [
                        "responses": [
                            "200": [
                                "description": "r",
                                "content": ["application/json": ["schema": ["$ref": "#/components/schemas/A"]]],
                            ]
                        ]
                    ]
                ]
            ],
            "components": [
                "schemas": [
                    "A": ["allOf": [["$ref": "#/components/schemas/B"], ["properties": ["a": ["type": "string"]]]]],
                    "B": ["allOf": [["$ref": "#/components/schemas/A"], ["properties": ["b": ["type": "integer"]]]]],
                ]
            ],
        ]
        let (_, path) = try serving.temporaryConfig(#"{"routes": [{"method": "GET", "path": "/ping", "body": {"pong": true}}]}"#)
        for command in [["routes", path], ["openapi", path], ["generate", "swift", path]] {
            try Data(looping.serializedString().utf8).write(to: URL(fileURLWithPath: path))
            let process = try HammockProcess(command)
            #expect(await process.exitStatus() == 0, "\(command): \(process.errorOutput.withLock { $0 })")
        }
        try Data(#"{"routes": [{"method": "GET", "path": "/ping", "body": {"pong": true}}]}"#.utf8)
            .write(to: URL(fileURLWithPath: path))
        let (process, url) = try await serving.serve([path, "--store", "memory", "--watch"])
        #expect(await process.firstLine { $0.hasPrefix("watching ") } != nil)
        try Data(looping.serializedString().utf8).write(to: URL(fileURLWithPath: path))
        let reloaded = await process.firstLine { $0.hasPrefix("reloaded ") }
        #expect(reloaded != nil)
        let report = try await serving.send("GET", url + "/report")
        #expect(report.status == 200)
        #expect(report.json?["a"] != nil && report.json?["b"] != nil)
        process.interrupt()
        #expect(await process.exitStatus() == 0)
    }

    @Test("A namespace PostgreSQL cannot take exits 2 with a sentence, before any connection")
    func namespace() async throws {
        for name in ["pg_team", String(repeating: "n", count: 64)] {
            let process = try HammockProcess([
                "serve", "Examples/people.json", "--port", "0", "--store", "postgres://hammock@127.0.0.1:1/mocks", "--namespace",
                name,
            ])
            #expect(await process.exitStatus() == 2)
            let text = process.errorOutput.withLock { $0 }
            #expect(text.contains("cannot be a PostgreSQL schema name"), "\(text)")
            #expect(!text.contains("PSQLError"))
        }
    }

    @Test("Names from a document reach the terminal with their control characters escaped")
    func terminalEscapes() async throws {
        let document: JSON = [
            "openapi": "3.1.0", "info": ["title": "T\u{1B}]0;owned\u{07}", "version": "1"],
            "paths": [
                "/x\u{1B}[2J": [
                    "get": ["responses": ["200": ["description": "x", "content": ["application/json": ["example": ["a": 1]]]]]]
                ]
            ],
        ]
        let (_, path) = try serving.temporaryConfig("{}")
        try Data(document.serializedString().utf8).write(to: URL(fileURLWithPath: path))
        let process = try HammockProcess(["routes", path])
        var text = ""
        for await line in process.lines { text += line + "\n" }
        #expect(await process.exitStatus() == 0)
        #expect(!text.contains("\u{1B}"))
        #expect(text.contains("\\u{1B}"), "\(text)")
    }
}
