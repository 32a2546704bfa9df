import Foundation
import HammockHTTPServer
import HammockJSON
import HammockServer
import HammockServerTesting
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `.mockServer(…)` trait: a server per test, seeded, in process or on a loopback port, stopped after.
@Suite("A mock server per test")
struct MockServerTraitTests {
    static let people = MockResource("people", fields: ["name": .string, "numberOfKids": .integer])
    static let cars = MockResource("cars", fields: ["name": .string], parents: ["people"])

    static func json(_ data: Data) throws -> JSON { try JSON(parsing: [UInt8](data)) }

    static func post(_ mock: TestMock, _ path: String, _ body: String) async throws -> (JSON, Int) {
        var request = URLRequest(url: mock.url(path))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(body.utf8)
        let (data, response) = try await mock.session.data(for: request)
        return (try json(data), (response as? HTTPURLResponse)?.statusCode ?? 0)
    }

    @Test(
        "In process: the test's server has its seed, in order, and answers its session with no socket",
        .mockServer(
            resources: [cars, people],
            data: ["people": [["name": "ada"], ["name": "bob"]], "cars": [["name": "zoe", "person_id": 2]]]))
    func inProcess() async throws {
        let mock = try #require(TestMock.current)
        #expect(mock.reach == .inProcess)
        #expect(mock.baseURL.host?.hasSuffix(".hammock.invalid") == true)
        #expect(await mock.server.port == nil)
        let (data, _) = try await mock.session.data(from: mock.url("/people/2/cars"))
        #expect(try Self.json(data).arrayValue?.map { $0["name"] } == ["zoe"])
        let (created, status) = try await Self.post(mock, "people", #"{"name":"cyd"}"#)
        #expect(status == 201)
        #expect(created["id"] == 3)
        mock.verify(RequestPattern(.post, "/people", body: ["name": "cyd"]), count: .once)
        mock.verify(RequestPattern(.get, "/people/:id/cars"))
    }

    @Test(
        "On loopback: the test's server listens on a free port of 127.0.0.1 and its base URL says where",
        .mockServer(.loopback, resources: [people], data: ["people": [["name": "ada"]]]))
    func loopback() async throws {
        let mock = try #require(TestMock.current)
        let port = try #require(await mock.server.port)
        #expect(port > 0)
        #expect(mock.baseURL.absoluteString == "http://127.0.0.1:\(port)")
        #expect(try mock.launchEnvironment == ["HAMMOCK_BASE_URL": "http://127.0.0.1:\(port)"])
        // Any client reaches it: a session of the test's own, not the mock's.
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await session.data(from: mock.url("people?name=ada"))
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(try Self.json(data).arrayValue?.count == 1)
        mock.verify(RequestPattern(.get, "/people", query: ["name": "ada"]), count: .once)
    }

    @Test(
        "A test's URL keeps the escapes it was given beside characters a URL cannot hold: name=Amy%20Lee&f[x]=1",
        .mockServer(resources: [people], data: ["people": [["name": "Amy Lee"]]]))
    func urlEscapes() async throws {
        let mock = try #require(TestMock.current)
        let url = mock.url("people?name=Amy%20Lee&f[x]=1")
        // It was `name=Amy%2520Lee`: the whole text escaped again because of the brackets.
        #expect(url.absoluteString.hasSuffix("/people?name=Amy%20Lee&f%5Bx%5D=1"))
        #expect(mock.url("people?name=Amy Lee").absoluteString.hasSuffix("/people?name=Amy%20Lee"))
        _ = try await mock.session.data(from: url)
        mock.verify(RequestPattern(.get, "/people", query: ["name": "Amy Lee", "f[x]": "1"]), count: .once)
    }

    @Test(
        "A base path is part of the base URL, in process and on loopback",
        arguments: [TestMock.Reach.inProcess, .loopback])
    func basePath(reach: TestMock.Reach) async throws {
        let mock = try await TestMock.start(
            reach, resources: [Self.people], data: ["people": [["name": "ada"]]],
            options: MockServer.Options(basePath: "/api/v1"))
        let (data, response) = try await mock.session.data(from: mock.url("people/1"))
        await mock.stop()
        #expect(mock.baseURL.path == "/api/v1")
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(try Self.json(data)["name"] == "ada")
    }

    /// Cases of one parameterised test run in parallel: each has a server of its own, so each sees only
    /// what it wrote.
    @Test(
        "Tests running in parallel each get a server of their own and never see another's records",
        .mockServer(resources: [people]), arguments: 0..<8)
    func parallel(index: Int) async throws {
        let mock = try #require(TestMock.current)
        let (_, status) = try await Self.post(mock, "people", #"{"name":"case \#(index)","numberOfKids":\#(index)}"#)
        #expect(status == 201)
        let (data, _) = try await mock.session.data(from: mock.url("people"))
        let names = try Self.json(data).arrayValue?.map { $0["name"] }
        #expect(names == [JSON.string("case \(index)")])
        mock.verify(.any, count: .exactly(2))
    }

    @Test(
        "Parallel loopback servers each get a port of their own", .mockServer(.loopback, resources: [people]),
        arguments: 0..<4)
    func parallelPorts(index: Int) async throws {
        let mock = try #require(TestMock.current)
        _ = try await Self.post(mock, "people", #"{"name":"port \#(index)"}"#)
        let (data, _) = try await mock.session.data(from: mock.url("people"))
        #expect(try Self.json(data).arrayValue?.map { $0["name"] } == [JSON.string("port \(index)")])
    }

    @Test(
        "A configuration file seeds the test's server: its data loaded, its generated records the same in every run",
        .mockServer(configuration: "Examples/people.json"))
    func configurationFile() async throws {
        let mock = try #require(TestMock.current)
        let (data, _) = try await mock.session.data(from: mock.url("people/1"))
        #expect(try Self.json(data)["name"] == "Amy Lee")
        let again = try await TestMock.start(configuration: "Examples/generated.json")
        let other = try await TestMock.start(configuration: "Examples/generated.json")
        let first = try await again.session.data(from: again.url("users")).0
        let second = try await other.session.data(from: other.url("users")).0
        #expect(!(try Self.json(first).arrayValue ?? []).isEmpty)
        #expect(first == second)
    }

    @Test(
        "A configuration with a login works in the trait's server, in process and on loopback, and a test turns its switches on",
        .mockServer(configuration: "Tests/Configurations/login.json"))
    func loginInTrait() async throws {
        let mock = try #require(TestMock.current)
        let loopback = try await TestMock.start(.loopback, configuration: "Tests/Configurations/login.json")
        for current in [mock, loopback] {
            var login = URLRequest(url: current.url("auth/token"))
            login.httpMethod = "POST"
            login.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            login.httpBody = Data("grant_type=password&username=ada&password=lovelace".utf8)
            let token = try #require(try Self.json(try await current.session.data(for: login).0)["access_token"]?.stringValue)
            var people = URLRequest(url: current.url("people"))
            people.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            #expect((try await current.session.data(for: people).1 as? HTTPURLResponse)?.statusCode == 200)
            try current.server.expireAccessTokens()
            #expect((try await current.session.data(for: people).1 as? HTTPURLResponse)?.statusCode == 401)
        }
        await loopback.stop()
    }

    @Test(
        "url(_:) keeps a query and percent-encodes what a URL cannot hold, never falling back to the base URL",
        .mockServer(resources: [people], data: ["people": [["name": "Amy Lee"]]]))
    func urls() async throws {
        let mock = try #require(TestMock.current)
        #expect(mock.url("/people?name=ada").absoluteString == mock.baseURL.absoluteString + "/people?name=ada")
        let spaced = mock.url("people?name=Amy Lee")
        #expect(spaced.absoluteString.hasSuffix("/people?name=Amy%20Lee"))
        let (data, _) = try await mock.session.data(from: spaced)
        #expect(try Self.json(data).arrayValue?.count == 1)
    }

    @Test("Outside the trait there is no current mock")
    func noCurrent() {
        #expect(TestMock.current == nil)
    }

    @Test("Stopping a loopback mock closes its port; the records stay readable in process")
    func stopping() async throws {
        let mock = try await TestMock.start(.loopback, resources: [Self.people], data: ["people": [["name": "ada"]]])
        let url = mock.url("people")
        _ = try await mock.session.data(from: url)
        await mock.stop()
        #expect(await mock.server.port == nil)
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        await #expect(throws: URLError.self) { _ = try await session.data(from: url) }
        #expect(try await mock.server.respond(to: MockRequest(.get, "/people/1")).json()["name"] == "ada")
    }

    @Test(
        "A failed verification is a test issue at the caller, naming the closest request and what differed",
        .mockServer(resources: [people]))
    func verificationText() async throws {
        let mock = try #require(TestMock.current)
        _ = try await mock.session.data(from: mock.url("people"))
        _ = try await Self.post(mock, "people", #"{"name":"ada","numberOfKids":2}"#)
        let recorded = Mutex<[(text: String, line: Int?)]>([])
        let line = #line + 2
        withKnownIssue {
            mock.verify(RequestPattern(.post, "/people", body: ["numberOfKids": 3]), count: .once)
        } matching: { issue in
            recorded.withLock { $0.append((issue.comments.map(\.rawValue).joined(), issue.sourceLocation?.line)) }
            return true
        }
        let issues = recorded.withLock { $0 }
        try #require(issues.count == 1)
        #expect(issues[0].line == line)
        #expect(
            issues[0].text == """
                expected exactly 1 request matching POST /people {body numberOfKids = 3}, found 0
                closest recorded requests:
                  #2 POST /people → 201: body member 'numberOfKids' is 2, not 3
                  #1 GET /people → 200: method is GET, not POST (and 1 more difference)
                """)
    }
}
