import Foundation
import HammockJSON
import HammockOpenAPI
import HammockServer
import HammockTestSupport
import Testing

/// `hammock generate swift`'s source. That it compiles and works is scripts/check-generated-clients's part
/// (a scratch package against HammockClient, run against `hammock serve`); these check its shape.
@Suite("The generated Swift client", .timeLimit(.minutes(5)))
struct SwiftClientSourceTests {
    static func source(_ example: String, name: String) async throws -> String {
        let configuration = try ConfigurationFile.read(packageRoot + example)
        let server = try await MockServer(configuration: configuration, store: MemoryStore())
        return SwiftClientSource.make(for: server, name: name, origin: example)
    }

    @Test("The same file gives the same source: models per resource, a method per route, lists callable bare")
    func people() async throws {
        let source = try await Self.source("Examples/people.json", name: "People")
        #expect(try await Self.source("Examples/people.json", name: "People") == source)
        #expect(source.contains("public struct Person: Codable, Hashable, Sendable {\n    public var id: Int\n"))
        #expect(source.contains("    public var avatar: Data?\n"))
        #expect(source.contains("public struct PersonInput: Codable, Hashable, Sendable {\n    public var name: String?\n"))
        #expect(source.contains("@API\npublic protocol People: Sendable {"))
        #expect(source.contains("    @GET(\"/people/{id}\")\n    func getPerson(id: Int) async throws -> Person\n"))
        #expect(
            source.contains(
                "    @PATCH(\"/people/{id}\")\n    @Body(\"person\")\n    func updatePerson(id: Int, person: PersonInput)"))
        #expect(source.contains("    @DELETE(\"/cars/{id}\")\n    func deleteCar(id: Int) async throws\n"))
        #expect(
            source.contains(
                "    @POST(\"/people/{personId}/cars\")\n    @Body(\"car\")\n    func createPersonCar(personId: Int, car: CarInput)"
            ))
        // The nested list's foreign key is the path's, not a filter of its own.
        let nested = try #require(source.range(of: "func listPersonCars(")).upperBound
        let nestedDeclaration = source[nested...].prefix { $0 != ")" }
        #expect(nestedDeclaration.hasPrefix("\n        personId: Int, _page: Int?"))
        #expect(!nestedDeclaration.contains("person_id"))
        #expect(source.contains("    public func listPeople() async throws -> [Person] {\n        try await listPeople("))
        // 14 routes: 6 of people, 6 of cars, 2 nested.
        #expect(source.components(separatedBy: "async throws").count - 1 == 14 + 2)
    }

    @Test("A chosen key gets a create and an update shape; a read-only resource none; stubs answer JSON, bytes or nothing")
    func shapes() async throws {
        let shop = try await Self.source("Examples/shop.json", name: "Shop")
        #expect(shop.contains("public struct CategoryCreate: Codable, Hashable, Sendable {\n    public var slug: String\n"))
        #expect(shop.contains("public struct CategoryUpdate: Codable, Hashable, Sendable {\n    public var title: String?\n"))
        #expect(shop.contains("    public var details: JSON?\n"))
        #expect(!shop.contains("func replaceReview"))  // reviews: list, show and create only

        let server = try await MockServer(resources: [MockResource("flags", fields: ["on": .boolean], actions: .readOnly)])
        _ = server.addStubs(
            try ServerConfiguration(
                root: [
                    "routes": [
                        [
                            "method": "POST", "path": "/login", "match": ["query": ["mode": "fast"], "body": ["user": "ada"]],
                            "body": ["token": "t"],
                        ],
                        ["method": "GET", "path": "/files/:name/raw", "text": "hello"],
                        ["method": "DELETE", "path": "/session", "status": 204],
                        ["method": "GET", "path": "/assets/**", "text": "any"],
                    ]
                ], file: "routes.json"
            ).routes)
        let source = SwiftClientSource.make(for: server, name: "Flags")
        #expect(!source.contains("FlagInput"))
        #expect(
            source.contains(
                "    @POST(\"/login\")\n    @Body(\"body\")\n    func postLogin(mode: String?, body: JSON) async throws -> JSON\n"
            ))
        #expect(
            source.contains("    @GET(\"/files/{name}/raw\")\n    func getFilesByNameRaw(name: String) async throws -> Data\n"))
        #expect(source.contains("    @DELETE(\"/session\")\n    func deleteSession() async throws\n"))
        #expect(source.contains("/// Not here: `GET, HEAD /assets/**` (a wildcard path has no method of its own)."))
    }

    @Test("Required fields are in every record and first in a create, which then has a shape of its own")
    func required() async throws {
        let books = MockResource(
            "books",
            fields: [
                MockResource.Field("note", .string), MockResource.Field("title", .string, isRequired: true),
                MockResource.Field("pages", .integer, isRequired: true, defaultValue: 100),
            ])
        let source = SwiftClientSource.make(for: try await MockServer(resources: [books]), name: "Library")
        #expect(
            source.contains(
                "public struct Book: Codable, Hashable, Sendable {\n    public var id: Int\n    public var note: String?\n    public var title: String\n    public var pages: Int\n"
            ))
        #expect(source.contains("    public init(title: String, note: String? = nil, pages: Int? = nil) {\n"))
        #expect(
            source.contains(
                "public struct BookUpdate: Codable, Hashable, Sendable {\n    public var note: String?\n    public var title: String?\n"
            ))
        #expect(source.contains("    func createBook(book: BookCreate) async throws -> Book\n"))
        #expect(source.contains("    func updateBook(id: Int, book: BookUpdate) async throws -> Book\n"))
        #expect(!source.contains("BookInput"))
    }

    @Test("Hostile paths, names and members stay inside their literals and comments: the source passes the check and parses")
    func hostileNames() async throws {
        // Paths, names and members that try to end their literal or comment and run code (`/p")\n#error(…)`).
        let document = try JSON(
            parsing: Array(try Data(contentsOf: URL(fileURLWithPath: packageRoot + "Tests/OpenAPI/documents/hostile-names.json")))
        )
        let mock = try OpenAPIImport.make(from: document, file: "evil\n#error(\"file\").yaml")
        let configuration = try ServerConfiguration(root: mock.configuration, file: "evil.yaml")
        let server = try await MockServer(configuration: configuration, store: MemoryStore())
        let source = SwiftClientSource.make(for: server, name: "Pwn\n#error", origin: "evil\n#error(\"file\").yaml")
        #expect(SwiftSourceCheck.problems(in: source) == [])
        for line in source.split(separator: "\n") {
            let code = line.drop { $0 == " " }
            #expect(!code.hasPrefix("#"), "\(line)")
        }
        #expect(source.contains("init_"))
        #expect(source.contains("firstName_"))
        // The Swift parser agrees (macros are expanded by scripts/check-generated-clients, which compiles one).
        let file = TemporaryFiles.directory("hostile") + "Client.swift"
        try Data(source.utf8).write(to: URL(fileURLWithPath: file))
        let parse = try await runToEnd(["swiftc", "-parse", file])
        #expect(parse.status == 0, "\(parse.output)")
    }

    @Test("The check itself refuses what would escape: a directive, an interpolation, a broken literal, a bad template")
    func checkRefuses() {
        for source in [
            "#error(\"x\")", "let a = \"\\(b)\"", "let a = \"open", "/* x */", "@GET(\"/a?b\")\nfunc x()",
            "@GET(\"/a/{b\")", "@escaping", "let é = 1", "}",
        ] {
            #expect(!SwiftSourceCheck.problems(in: source).isEmpty, "\(source)")
        }
        #expect(SwiftSourceCheck.problems(in: "// a comment\n@GET(\"/a/{b}\")\nfunc get(b: Int) async throws -> [A]") == [])
    }

    @Test("Names that are not Swift identifiers, keywords, and names Swift already has are made safe")
    func names() async throws {
        let tasks = MockResource(
            "tasks", fields: ["first-name": .string, "default": .integer, "2fa": .boolean, "class": .string])
        let server = try await MockServer(resources: [tasks, MockResource("results", fields: ["ok": .boolean])])
        let source = SwiftClientSource.make(for: server, name: "9 lives")
        #expect(source.contains("public struct TaskRecord: Codable"))  // not `Task`, which would hide Swift's
        #expect(source.contains("public struct ResultRecord: Codable"))
        #expect(source.contains("public protocol API9Lives: Sendable"))
        #expect(source.contains("    public var firstName: String?\n"))
        #expect(source.contains("    public var `default`: Int?\n"))
        #expect(source.contains("    public var value2fa: Bool?\n"))
        #expect(source.contains("        self.default = `default`\n"))
        #expect(source.contains("        case firstName = \"first-name\"\n"))
        #expect(source.contains("        case `default`\n"))
        #expect(source.contains("        case value2fa = \"2fa\"\n"))
    }

    @Test(
        "The source is formatted as swift-format formats this package",
        arguments: ["Examples/shop.json", "Tests/OpenAPI/documents/tasks.yaml"])
    func formatted(example: String) async throws {
        let source = try await Self.source(example, name: "Client")
        let path = TemporaryFiles.path("client", extension: "swift")
        try Data(source.utf8).write(to: URL(fileURLWithPath: path))
        let (output, status) = try await runToEnd(["swift", "format", "--configuration", packageRoot + ".swift-format", path])
        #expect(status == 0)
        #expect(output == source)
    }
}
