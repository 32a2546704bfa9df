import Foundation
import HammockJSON
import HammockTestSupport
import Testing

@testable import HammockServer
@testable import HammockStore

@Suite("Generated data")
struct GenerationTests {
    static let users = MockResource(
        "users",
        fields: [
            "name": .string, "email": .string, "age": .integer, "score": .float, "createdAt": .date, "birthday": .date,
            "active": .boolean, "avatar": .blob, "settings": .json, "color": .string,
        ])
    static let posts = MockResource(
        "posts", fields: ["title": .string, "likes": .integer, "rating": .float, "publishedOn": .date], parents: ["users"])
    static let tags = MockResource("tags", fields: ["slug": .string, "label": .string], primaryKey: "slug")

    static let generation = DataGeneration([
        .init(
            "posts", count: 40,
            fields: [
                "likes": .init(minimum: 10, maximum: 12), "publishedOn": .init(minimum: "2024-02-28", maximum: "2024-03-01"),
            ]),
        .init(
            "users", count: 12, fields: ["color": .init(choices: ["red", "teal"]), "score": .init(minimum: 0.5, maximum: 0.75)]),
        .init("tags", count: 30),
    ])

    static func server(_ kind: StoreKind) async throws -> MockServer {
        try await Fixtures.server(kind, resources: [users, posts, tags])
    }

    static func all(_ server: MockServer, _ resource: String) async -> [JSON] {
        await server.send(.get, "/\(resource)").1?.arrayValue ?? []
    }

    @Test(
        "Records get values that suit each field's type, name and rule, and foreign keys of existing parents",
        arguments: StoreKind.allCases)
    func plausibleValues(_ kind: StoreKind) async throws {
        let server = try await Self.server(kind)
        let reports = try await server.generateData(Self.generation, seed: 1)
        // Parents first, whatever the generation's order.
        let order = reports.map(\.resource)
        #expect((order.firstIndex(of: "users") ?? .max) < (order.firstIndex(of: "posts") ?? .min))
        #expect(
            Dictionary(uniqueKeysWithValues: reports.map { ($0.resource, $0.report.loaded) }) == [
                "users": 12, "posts": 40, "tags": 30,
            ])
        #expect(reports.allSatisfy { $0.report.skipped == 0 && $0.report.droppedValues == 0 })

        let users = await Self.all(server, "users")
        #expect(users.count == 12)
        for user in users {
            let name = try #require(user["name"]?.stringValue)
            let parts = name.split(separator: " ").map(String.init)
            #expect(parts.count == 2 && Words.firstNames.contains(parts[0]) && Words.lastNames.contains(parts[1]), "\(name)")
            // The email belongs to the same person, and carries the record's number.
            let email = try #require(user["email"]?.stringValue)
            #expect(email == "\(parts[0].lowercased()).\(parts[1].lowercased())\(user["id"]?.intValue ?? 0)@example.com")
            #expect((18...90).contains(user["age"]?.intValue ?? 0))
            #expect((0.5...0.75).contains(user["score"]?.doubleValue ?? -1))
            #expect(["red", "teal"].contains(user["color"]?.stringValue ?? ""))
            #expect(user["active"]?.boolValue != nil)
            #expect(user["avatar"] == .null && user["settings"] == .null)
            let created = try #require(user["createdAt"]?.stringValue)
            #expect(created.count == 20 && created.hasSuffix("Z") && ISO8601.isValid(created), "\(created)")
            let birthday = try #require(user["birthday"]?.stringValue)
            #expect(birthday.count == 10 && (1950...2005).contains(Int(birthday.prefix(4)) ?? 0), "\(birthday)")
        }
        let userIDs = Set(users.compactMap { $0["id"] })
        for post in await Self.all(server, "posts") {
            #expect(userIDs.contains(post["user_id"] ?? .null))
            #expect((10...12).contains(post["likes"]?.intValue ?? 0))
            #expect(["2024-02-28", "2024-02-29", "2024-03-01"].contains(post["publishedOn"]?.stringValue ?? ""))
            #expect((1...5).contains(post["rating"]?.doubleValue ?? 0))
            let title = try #require(post["title"]?.stringValue)
            #expect(title.split(separator: " ").count == 2 && title.first?.isUppercase == true, "\(title)")
        }
        // A key the client supplies is unique.
        let slugs = await Self.all(server, "tags").compactMap { $0["slug"]?.stringValue }
        #expect(slugs.count == 30 && Set(slugs).count == 30)
    }

    @Test("The same seed makes the same records on both stores; another seed makes others")
    func deterministic() async throws {
        var answers: [[JSON]] = []
        for (kind, seed) in [(StoreKind.memory, UInt64(9)), (.sqlite, 9), (.memory, 10)] {
            let server = try await Self.server(kind)
            try await server.generateData(Self.generation, seed: seed)
            answers.append(await Self.all(server, "users") + Self.all(server, "posts") + Self.all(server, "tags"))
        }
        #expect(answers[0].count == 82)
        #expect(answers[0] == answers[1])
        #expect(answers[0] != answers[2])
    }

    @Test("Each resource draws from its own sequence: generating another one as well changes nothing in the first")
    func independentResources() async throws {
        let alone = try await Self.server(.memory)
        try await alone.generateData(DataGeneration([.init("users", count: 5)]), seed: 3)
        let together = try await Self.server(.memory)
        try await together.generateData(DataGeneration([.init("tags", count: 5), .init("users", count: 5)]), seed: 3)
        #expect(await Self.all(alone, "users") == Self.all(together, "users"))
    }

    @Test(
        "Only empty resources are filled, so a second run or a resource with records is left alone", arguments: StoreKind.allCases
    )
    func onlyEmptyResources(_ kind: StoreKind) async throws {
        let server = try await Self.server(kind)
        #expect(await server.send(.post, "/users", json: ["name": "kept"]).0.status == .created)
        let reports = try await server.generateData(Self.generation, seed: 5)
        #expect(Set(reports.map(\.resource)) == ["posts", "tags"])
        #expect(await Self.all(server, "users").map { $0["name"] } == ["kept"])
        // Every post belongs to the one user there is.
        #expect(Set(await Self.all(server, "posts").map { $0["user_id"] }) == [1])
        #expect(try await server.generateData(Self.generation, seed: 6).isEmpty)
        #expect(await Self.all(server, "posts").count == 40)
    }

    @Test("Children of a parent with no records get null foreign keys")
    func childrenWithoutParents() async throws {
        let server = try await Self.server(.memory)
        try await server.generateData(DataGeneration([.init("posts", count: 3)]), seed: 1)
        #expect(await Self.all(server, "posts").map { $0["user_id"] } == [.null, .null, .null])
    }

    @Test("A rule that does not suit its field, or a name that does not exist, is refused before anything is made")
    func problems() async throws {
        let server = try await Self.server(.memory)
        let cases: [(DataGeneration.Resource, String)] = [
            (.init("nobody", count: 1), "nobody"),
            (.init("users", count: 1, fields: ["hobby": .init(kind: .word)]), "users.fields.hobby"),
            (.init("users", count: 1, fields: ["id": .init(minimum: 1)]), "users.fields.id"),
            (.init("users", count: 1, fields: ["age": .init(kind: .email)]), "users.fields.age.kind"),
            (.init("users", count: 1, fields: ["age": .init(minimum: 9, maximum: 3)]), "users.fields.age.min"),
            (.init("users", count: 1, fields: ["age": .init(minimum: 1.5)]), "users.fields.age.min"),
            (.init("users", count: 1, fields: ["name": .init(maximum: 3)]), "users.fields.name.max"),
            (.init("users", count: 1, fields: ["birthday": .init(minimum: "2023-02-29")]), "users.fields.birthday.min"),
            (.init("users", count: 1, fields: ["age": .init(choices: ["old"])]), "users.fields.age.oneOf[0]"),
            (.init("users", count: 1, fields: ["age": .init(choices: [])]), "users.fields.age.oneOf"),
            (.init("posts", count: 1, fields: ["user_id": .init(minimum: 1)]), "posts.fields.user_id.min"),
            (.init("users", count: -1), "users.count"),
            (.init("users", count: 1, fields: ["age": .init(pattern: "^[0-9]+$")]), "users.fields.age.pattern"),
            (.init("users", count: 1, fields: ["name": .init(pattern: "(?=x)y")]), "users.fields.name.pattern"),
            (.init("posts", count: 1, fields: ["user_id": .init(pattern: "^u[0-9]$")]), "posts.fields.user_id.pattern"),
        ]
        for (resource, path) in cases {
            let problem = try await #require(throws: DataGeneration.Problem.self) {
                try await server.generateData(DataGeneration([.init("tags", count: 2), resource]), seed: 1)
            }
            #expect(problem.path == path, "\(problem)")
        }
        #expect(await Self.all(server, "tags").isEmpty)
    }

    @Test("A pattern rule makes every value of a string field match it, the same for the same seed")
    func patternRule() async throws {
        let server = try await Self.server(.memory)
        let generation = DataGeneration([
            .init("users", count: 40, fields: ["name": .init(kind: .word, pattern: "^SKU-[0-9]{6}$")])
        ])
        try await server.generateData(generation, seed: 4)
        let names = await Self.all(server, "users").compactMap { $0["name"]?.stringValue }
        #expect(names.count == 40)
        #expect(try names.allSatisfy { try ICUPattern.fullyMatches("^SKU-[0-9]{6}$", $0) })
        let again = try await Self.server(.memory)
        try await again.generateData(generation, seed: 4)
        #expect(await Self.all(again, "users").compactMap { $0["name"]?.stringValue } == names)
    }

    @Test("The configuration's generate section reads counts and rules, and names the key of a mistake")
    func configuration() throws {
        let resources = #"""
            "resources": [{"name": "people", "fields": {"name": "string", "age": "integer"}},
                          {"name": "cars", "fields": {"color": "string"}, "parents": ["people"]}]
            """#
        let read = try ServerConfiguration(
            parsing: Array(
                #"{\#(resources), "generate": {"people": 5, "cars": {"count": 2, "fields": {"color": {"oneOf": ["red"], "kind": "color"}, "person_id": {"oneOf": [1]}}}}}"#
                    .utf8),
            file: "t.json")
        #expect(
            read.generate
                == DataGeneration([
                    .init("people", count: 5),
                    .init(
                        "cars", count: 2,
                        fields: ["color": .init(kind: .color, choices: ["red"]), "person_id": .init(choices: [1])]),
                ]))
        let mistakes: [(String, String)] = [
            (#""generate": []"#, "generate"),
            (#""generate": {"dogs": 1}"#, "generate.dogs"),
            (#""generate": {"people": "many"}"#, "generate.people"),
            (#""generate": {"people": 2000000}"#, "generate.people"),
            (#""generate": {"people": {"fields": {}}}"#, "generate.people.count"),
            (#""generate": {"people": {"count": 1, "size": 2}}"#, "generate.people.size"),
            (
                #""generate": {"people": {"count": 1, "fields": {"age": {"min": 1, "step": 2}}}}"#,
                "generate.people.fields.age.step"
            ),
            (#""generate": {"people": {"count": 1, "fields": {"age": {"max": 1, "min": 5}}}}"#, "generate.people.fields.age.min"),
            (
                #""generate": {"people": {"count": 1, "fields": {"name": {"kind": "planet"}}}}"#,
                "generate.people.fields.name.kind"
            ),
            (#""generate": {"people": {"count": 1, "fields": {"shoe": {"min": 1}}}}"#, "generate.people.fields.shoe"),
            (
                #""generate": {"people": {"count": 1, "fields": {"name": {"pattern": "a{2,1}"}}}}"#,
                "generate.people.fields.name.pattern"
            ),
            (
                #""generate": {"cars": {"count": 1, "fields": {"person_id": {"oneOf": ["x"]}}}}"#,
                "generate.cars.fields.person_id.oneOf[0]"
            ),
        ]
        for (section, keyPath) in mistakes {
            let error = try #require(throws: ConfigurationError.self) {
                try ServerConfiguration(parsing: Array("{\(resources), \(section)}".utf8), file: "t.json")
            }
            #expect(error.keyPath == keyPath, "\(section): \(error)")
        }
    }

    @Test(
        "`keys` gives the first records the keys asked for, on both stores; more keys than the count make that many; a generated key, a repeat or a wrong type is refused",
        arguments: [StoreKind.memory, .sqlite])
    func keys(kind: StoreKind) async throws {
        let text = """
            {"resources": [{"name": "stores", "fields": {"id": "string", "name": "string"}, "primaryKey": "id",
                            "keyFormat": {"pattern": "^vs_[a-z0-9]{6}$"}},
                           {"name": "files", "fields": {"size": "integer"}, "parents": ["stores"]}],
             "generate": {"stores": {"count": 4, "keys": ["vs_abc123", "vs_def456"]}, "files": 6}}
            """
        let configuration = try ServerConfiguration(parsing: Array(text.utf8), file: "stores.json")
        let server = try await MockServer(configuration: configuration, store: try await kind.makeStore())
        _ = try await server.generateData(try #require(configuration.generate), seed: 5)
        let stores = await Self.all(server, "stores")
        #expect(stores.count == 4)
        #expect(
            stores.compactMap { $0["id"]?.stringValue }.filter { $0.hasPrefix("vs_abc123") || $0.hasPrefix("vs_def456") }.count
                == 2)
        #expect(try await server.respond(to: MockRequest(.get, "/stores/vs_abc123")).json()["id"] == "vs_abc123")
        // Their children name them as they name any parent.
        #expect(await Self.all(server, "files").count == 6)
        let more = DataGeneration([.init("stores", count: 1, keys: ["vs_aaaaaa", "vs_bbbbbb", "vs_cccccc"])])
        let other = try await MockServer(configuration: configuration, store: try await kind.makeStore())
        _ = try await other.generateData(more, seed: 5)
        #expect(await Self.all(other, "stores").count == 3)
        for (generate, keyPath) in [
            (#"{"people": {"count": 2, "keys": [1]}}"#, "generate.people.keys"),
            (#"{"stores": {"count": 2, "keys": ["vs_abc123", "vs_abc123"]}}"#, "generate.stores.keys[1]"),
            (#"{"stores": {"count": 2, "keys": [{"a": 1}]}}"#, "generate.stores.keys[0]"),
            (#"{"stores": {"count": 2, "keys": "vs_abc123"}}"#, "generate.stores.keys"),
        ] {
            let bad = """
                {"resources": [{"name": "people", "fields": {"name": "string"}},
                               {"name": "stores", "fields": {"id": "string"}, "primaryKey": "id"}],
                 "generate": \(generate)}
                """
            let error = #expect(throws: ConfigurationError.self) {
                try ServerConfiguration(parsing: Array(bad.utf8), file: "bad.json")
            }
            #expect(error?.keyPath == keyPath, "\(generate)")
        }
    }

    @Test("Dates convert to days and back for two centuries, and a day that does not exist is refused")
    func civilDates() {
        var day = CivilDate.days(year: 1900, month: 1, day: 1)
        var previous = CivilDate.civil(fromDay: day - 1)
        while day <= CivilDate.days(year: 2100, month: 12, day: 31) {
            let date = CivilDate.civil(fromDay: day)
            #expect(CivilDate.days(year: date.year, month: date.month, day: date.day) == day)
            // Each day follows the one before.
            let next =
                date.day == 1
                ? (date.month == 1 ? previous.year + 1 == date.year : previous.month + 1 == date.month)
                : previous.day + 1 == date.day
            if !next { Issue.record("\(previous) then \(date)") }
            previous = date
            day += 1
        }
        #expect(CivilDate.days(from: "1970-01-01") == 0)
        #expect(CivilDate.days(from: "2024-02-29") != nil)
        #expect(CivilDate.days(from: "2023-02-29") == nil)
        #expect(CivilDate.days(from: "2023-13-01") == nil)
        #expect(CivilDate.text(ofDay: 19_782, second: 3_723) == "2024-02-29T01:02:03Z")
    }
}
