import Foundation
import HammockSQLite
import HammockServer
import Synchronization
import Testing

@Suite("Loading data and configuration files")
struct DataLoadingTests {
    @Test(
        "Objects are harvested: known fields kept, unknown dropped, empty ones skipped, an id given kept and the next made after it",
        arguments: StoreKind.allCases)
    func harvest(kind: StoreKind) async throws {
        let server = try await Fixtures.server(kind)
        let data: JSON = [
            ["id": 77, "name": "ada", "numberOfKids": 2, "hobby": "chess"],
            ["hobby": "nothing known"],
            "not an object",
            ["name": "bob", "numberOfKids": "many"],
        ]
        let report = try await server.addData(data, for: "people")
        #expect(report == LoadReport(loaded: 2, skipped: 2, droppedValues: 1))
        let people = await server.send(.get, "/people").1
        #expect(
            people == [
                ["id": 77, "name": "ada", "numberOfKids": 2, "kilometersWalked": nil, "avatar": nil],
                ["id": 78, "name": "bob", "numberOfKids": nil, "kilometersWalked": nil, "avatar": nil],
            ])
        await #expect(throws: HTTPProblem.self) { try await server.addData([], for: "nothing") }
    }

    @Test("Client keys must be present and free when loading")
    func clientKeys() async throws {
        let server = try await Fixtures.server(resources: [Fixtures.categories])
        let report = try await server.addData(
            [["slug": "a"], ["title": "no key"], ["slug": "a", "title": "dup"], ["slug": "b"]], for: "categories")
        #expect(report.loaded == 2 && report.skipped == 2)
    }

    @Test("Large loads report progress in batches")
    func progress() async throws {
        let server = try await Fixtures.server(.sqlite)
        let seen = Mutex<[Int]>([])
        let data = JSON.array((0..<1234).map { ["name": .string("p\($0)")] })
        let report = try await server.addData(data, for: "people") { done, total in
            #expect(total == 1234)
            seen.withLock { $0.append(done) }
        }
        #expect(report.loaded == 1234)
        #expect(seen.withLock { $0 } == [500, 1000, 1234])
    }

    func configuration(_ text: String) throws(ConfigurationError) -> ServerConfiguration {
        try ServerConfiguration(parsing: Array(text.utf8), file: "test.json")
    }

    @Test("The example configuration reads as the reference's people and cars")
    func example() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Examples/people.json").path
        let configuration = try ServerConfiguration(contentsOfFile: path)
        #expect(configuration.resources.map(\.name) == ["people", "cars"])
        #expect(configuration.resources[0].fields.map(\.name) == ["name", "numberOfKids", "kilometersWalked", "avatar"])
        #expect(configuration.resources[1].parents == ["people"])
        #expect(configuration.port == 8888)
    }

    @Test("Configuration keys map to typed values; relative SQLite paths sit next to the file")
    func configurationValues() throws {
        let directory = TemporaryDirectory.make()
        let file = directory + "team.json"
        try Data(
            #"""
            {"host": "0.0.0.0", "port": 0, "store": "sqlite:db/data.sqlite", "latency": {"min": 0.2, "max": 0.5},
             "maximumBodySize": 2048, "cors": false,
             "resources": [{"name": "cars", "fields": {"name": "string"}, "parents": [{"resource": "people", "foreignKey": "owner"}],
                            "actions": ["list", "show"]},
                           {"name": "people", "primaryKey": "handle", "fields": {"handle": "string", "age": "int"}}],
             "data": {"cars": [{"name": "mini"}], "people": [{"handle": "ada"}]}}
            """#.utf8
        ).write(to: URL(fileURLWithPath: file))
        let configuration = try ServerConfiguration(contentsOfFile: file)
        #expect(configuration.host == "0.0.0.0" && configuration.port == 0)
        #expect(configuration.store == .sqlite(path: directory + "db/data.sqlite"))
        #expect(configuration.latency == Latency(minimumSeconds: 0.2, maximumSeconds: 0.5))
        #expect(configuration.maximumBodySize == 2048 && configuration.allowsCrossOrigin == false)
        #expect(configuration.resources.map(\.name) == ["people", "cars"])  // parents first
        #expect(
            configuration.resources[0].fields == [MockResource.Field("handle", .string), MockResource.Field("age", .integer)])
        #expect(configuration.resources[1].parents == [MockResource.Parent("people", foreignKey: "owner")])
        #expect(configuration.resources[1].actions == .readOnly)
        #expect(configuration.data.map(\.resource) == ["people", "cars"])
    }

    @Test(
        "Bad configuration names the file, the key and the problem",
        arguments: [
            ("{", "test.json: not valid JSON"),
            ("[]", "test.json: the top level must be an object"),
            (#"{"resources": [], "prot": 1}"#, "test.json: prot: unknown key"),
            (#"{"port": "80", "resources": []}"#, "test.json: port: expected an integer, found string"),
            (#"{"port": 70000, "resources": []}"#, "test.json: port: 70000 is out of range"),
            (
                #"{"store": "postgres", "resources": []}"#,
                "test.json: store: expected \"memory\", \"sqlite:PATH\" or another SCHEME:ADDRESS"
            ),
            (#"{"latency": {"min": 2, "max": 1}, "resources": []}"#, "test.json: latency: min (2.0) is greater than max (1.0)"),
            (#"{}"#, "test.json: resources: missing"),
            (#"{"resources": [{"name": "a"}]}"#, "test.json: resources[0].fields: expected an object"),
            (
                #"{"resources": [{"name": "a", "fields": {"x": "int64"}}]}"#,
                "test.json: resources[0].fields.x: unknown type 'int64'"
            ),
            (
                #"{"resources": [{"name": "a", "fields": {"x": "string"}, "actions": ["list", "fly"]}]}"#,
                "test.json: resources[0].actions[1]: unknown action"
            ),
            (
                #"{"resources": [{"name": "a", "fields": {}, "parents": ["b"]}]}"#,
                "test.json: resources[0]: resource 'a': the parent 'b' is not a known resource"
            ),
            (
                #"{"resources": [{"name": "a", "fields": {"x": "string"}, "colour": 1}]}"#,
                "test.json: resources[0].colour: unknown key"
            ),
            (
                #"{"resources": [{"name": "a", "fields": {"x": "string"}}], "data": {"b": []}}"#,
                "test.json: data.b: no resource has this name"
            ),
            (#"{"resources": []}"#, "test.json: resources: empty; list at least one resource"),
            (
                #"{"resources": [{"name": "a", "fields": {"x": "string"}, "primaryKey": "slug"}]}"#,
                "test.json: resources[0].primaryKey: 'slug' is not a declared field"
            ),
            (#"{"resources": [{"name": "a", "fields": {}}]}"#, "test.json: resources[0].fields: empty"),
            (
                #"{"resources": [{"name": "a", "fields": {"x": "string", "x": "integer"}}]}"#,
                "test.json: resources[0].fields.x: declared twice in one object (line 1, column 56)"
            ),
            (
                #"{"resources": [{"name": "a", "fields": {"x": "string"}}, {"name": "A", "fields": {"y": "string"}}]}"#,
                "test.json: resources[1]: resource 'A': the name differs from the resource 'a' only in case"
            ),
            (
                #"{"idleTimeout": 0, "resources": [{"name": "a", "fields": {"x": "string"}}]}"#,
                "test.json: idleTimeout: a timeout must be more than 0 seconds"
            ),
            (
                #"{"resources": [{"name": "a", "fields": {"x": "string"}}], "resources": []}"#,
                "test.json: resources: declared twice"
            ),
        ])
    func badConfiguration(text: String, message: String) throws {
        let error = try #require(throws: ConfigurationError.self) { try configuration(text) }
        #expect(error.description.hasPrefix(message), "\(error.description)")
    }

    @Test("The data section loads only into an empty store")
    func dataOnce() async throws {
        let path = TemporaryDirectory.make() + "db.sqlite"
        let configuration = try configuration(
            #"""
            {"resources": [{"name": "people", "fields": {"name": "string"}}], "data": {"people": [{"name": "a"}, {"name": "b"}]}}
            """#)
        for round in 1...2 {
            let store = try SQLiteStore(path: path)
            let server = try await MockServer(configuration: configuration, store: store)
            let reports = try await server.loadData(from: configuration)
            #expect(reports.count == (round == 1 ? 1 : 0))
            #expect(await server.send(.get, "/people").1?.arrayValue?.count == 2)
            try store.close()
        }
    }
}
