import Foundation
import HTTPTypes
import HammockClient
import HammockHTTPServer
import HammockJSON
import HammockResources
import HammockServer
import HammockTesting
import Synchronization
import Testing

/// Paged lists over the three forms the mock answers: `Link` headers, numbered pages with a total in an
/// envelope, and cursors (in a header beside a plain array, or in an envelope member).
@MainActor
@Suite("Paged resources", .timeLimit(.minutes(1)))
struct PagedResourceTests {
    struct Named: Codable, Equatable, Sendable {
        var id: Int
        var name: String
    }

    /// A form of paging: the list it reads, the first page's path and how its answers are read.
    enum Style: String, CaseIterable, CustomStringConvertible, Sendable {
        case link = "Link headers"
        case pageNumber = "numbered pages with a total"
        case cursorHeader = "a cursor in a header"
        case cursorEnvelope = "a cursor in an envelope"

        var description: String { rawValue }

        var collection: String {
            switch self {
            case .link, .cursorHeader: "people"
            case .pageNumber: "teams"
            case .cursorEnvelope: "channels"
            }
        }

        var firstPage: String {
            switch self {
            case .link: "/people?_per_page=2"
            case .pageNumber: "/teams?_page=1&_per_page=2"
            case .cursorHeader: "/people?_cursor=&_limit=2"
            case .cursorEnvelope: "/channels?_cursor=&_limit=2"
            }
        }

        var paging: Paging {
            switch self {
            case .link: .link()
            case .pageNumber: .pageNumber(parameter: "_page", items: "data", total: "total")
            case .cursorHeader: .cursor()
            case .cursorEnvelope: .cursor(nextCursor: "next_cursor", items: "data")
            }
        }
    }

    /// Lets a test make every request fail, as a network that went away does.
    final class Outage: Sendable {
        let isOn = Atomic(false)
        /// When set, the next request says it arrived, then waits for the release before it is sent.
        let hold = Mutex<(arrived: AsyncStream<Void>.Continuation, release: AsyncStream<Void>)?>(nil)
    }

    struct OutageTransport: HTTPTransport {
        let base: MockServerTransport
        let outage: Outage

        func send(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8]) {
            if outage.isOn.load(ordering: .relaxed) { throw URLError(.notConnectedToInternet) }
            if let hold = outage.hold.withLock({ hold in
                defer { hold = nil }
                return hold
            }) {
                hold.arrived.yield(())
                for await _ in hold.release { break }
            }
            return try await base.send(request, body: body)
        }
    }

    @MainActor
    struct Setup {
        let server: MockServer
        let service: Service
        let outage: Outage

        func list(_ style: Style) -> PagedResource<Named> {
            service.pagedResource(style.firstPage, of: Named.self, paging: style.paging)
        }

        /// What the server holds, in key order.
        func names(_ style: Style) async throws -> [String] {
            try await server.respond(to: MockRequest(.get, "/\(style.collection)")).json().arrayValue?
                .compactMap { $0["name"]?.stringValue } ?? []
        }
    }

    /// Five records in each collection: `p1`…`p5`, `t1`…`t5`, `c1`…`c5`.
    static func setup() async throws -> Setup {
        var teams = MockResource("teams", fields: ["name": .string])
        teams.listEnvelope = .init(items: "data", total: "total")
        var channels = MockResource("channels", fields: ["name": .string])
        channels.listEnvelope = .init(items: "data", nextCursor: "next_cursor")
        let server = try await MockServer(resources: [MockResource("people", fields: ["name": .string]), teams, channels])
        for (collection, prefix) in [("people", "p"), ("teams", "t"), ("channels", "c")] {
            for number in 1...5 {
                _ = await server.respond(to: MockRequest(.post, "/\(collection)", json: ["name": .string("\(prefix)\(number)")]))
            }
        }
        let outage = Outage()
        let service = try Service(
            baseURL: "http://paged.hammock.invalid",
            transport: OutageTransport(base: MockServerTransport(server: server), outage: outage))
        return Setup(server: server, service: service, outage: outage)
    }

    static func prefix(_ style: Style) -> String { String(style.collection.prefix(1)) }

    @Test("Pages load one at a time on demand until the list ends, then nothing more is sent", arguments: Style.allCases)
    func walk(style: Style) async throws {
        let setup = try await Self.setup()
        let list = setup.list(style)
        let p = Self.prefix(style)
        #expect(list.items.isEmpty && list.hasNextPage && !list.isUpToDate)
        #expect(try await list.loadIfNeeded().map(\.name) == ["\(p)1", "\(p)2"])
        #expect(list.pages.count == 1 && list.hasNextPage && list.isUpToDate)
        #expect(try await list.loadNextPage().map(\.name) == ["\(p)1", "\(p)2", "\(p)3", "\(p)4"])
        #expect(try await list.loadNextPage().map(\.name) == ["\(p)1", "\(p)2", "\(p)3", "\(p)4", "\(p)5"])
        #expect(!list.hasNextPage && list.pages.count == 3)
        setup.server.journal.clear()
        #expect(try await list.loadNextPage().count == 5)
        #expect(try await list.loadIfNeeded().count == 5)
        #expect(setup.server.journal.entries.isEmpty)
        // Each page is the URL's one resource.
        #expect(list.pages[0].resource === setup.service.resource(style.firstPage))
    }

    @Test("Calls for the next page while one is in flight load one page", arguments: [Style.link, .cursorEnvelope])
    func joined(style: Style) async throws {
        let setup = try await Self.setup()
        let list = setup.list(style)
        try await list.loadIfNeeded()
        setup.server.journal.clear()
        async let a = list.loadNextPage()
        async let b = list.loadNextPage()
        async let c = list.loadNextPage()
        let answers = try await [a, b, c]
        #expect(answers.allSatisfy { $0.count == 4 })
        #expect(list.pages.count == 2)
        #expect(setup.server.journal.entries.count == 1)
    }

    @Test(
        "A refresh loads every loaded page again from the first, following the new chain, and replaces them together",
        arguments: Style.allCases)
    func coherentRefresh(style: Style) async throws {
        let setup = try await Self.setup()
        let list = setup.list(style)
        try await list.loadIfNeeded()
        try await list.loadNextPage()
        #expect(list.items.count == 4)
        // Behind the app's back: the first record goes, a sixth comes.
        _ = await setup.server.respond(to: MockRequest(.delete, "/\(style.collection)/1"))
        _ = await setup.server.respond(to: MockRequest(.post, "/\(style.collection)", json: ["name": "new"]))
        // Observers see the old two pages, then the new two, never a mix.
        var seen: [[String]] = []
        let watcher = Task { @MainActor in
            while !Task.isCancelled {
                seen.append(list.items.map(\.name))
                await Task.yield()
            }
        }
        try await list.refresh()
        watcher.cancel()
        await watcher.value
        let p = Self.prefix(style)
        let old = ["\(p)1", "\(p)2", "\(p)3", "\(p)4"]
        let new = ["\(p)2", "\(p)3", "\(p)4", "\(p)5"]
        #expect(list.items.map(\.name) == new)
        #expect(list.pages.count == 2 && list.hasNextPage)
        #expect(seen.allSatisfy { $0 == old || $0 == new }, "\(seen)")
        #expect(try await list.loadNextPage().map(\.name) == new + ["new"])
        #expect(!list.hasNextPage)
    }

    @Test(
        "A refresh that fails part way keeps the pages as they were and reports the error", arguments: [Style.link, .pageNumber])
    func failedRefresh(style: Style) async throws {
        let setup = try await Self.setup()
        let list = setup.list(style)
        try await list.loadIfNeeded()
        try await list.loadNextPage()
        let before = list.items
        setup.outage.isOn.store(true, ordering: .relaxed)
        let error = await #expect(throws: ResourceError.self) { try await list.refresh() }
        #expect(error?.kind == .transport)
        #expect(list.items == before && list.pages.count == 2)
        #expect(list.latestError != nil && !list.isRefreshing)
        // A next page that fails keeps what was loaded too.
        await #expect(throws: ResourceError.self) { try await list.loadNextPage() }
        #expect(list.items == before)
        setup.outage.isOn.store(false, ordering: .relaxed)
        #expect(try await list.loadNextPage().count == 5)
        #expect(list.latestError == nil)
    }

    @Test("A write through the service's client makes the list stale, and loadIfNeeded refreshes its pages")
    func writeInvalidates() async throws {
        let setup = try await Self.setup()
        let list = setup.list(.link)
        try await list.loadIfNeeded()
        try await list.loadNextPage()
        #expect(list.isUpToDate)
        var create = RequestBuilder(.post, "/people")
        create.setBody(Named(id: 6, name: "p6"))
        let _: JSON = try await setup.service.restClient().result(of: create)
        #expect(!list.isUpToDate)
        setup.server.journal.clear()
        #expect(try await list.loadIfNeeded().map(\.name) == ["p1", "p2", "p3", "p4"])
        // Both pages went again (conditionally), in order.
        #expect(
            setup.server.journal.entries.map { "\($0.request.path)?\($0.request.query ?? "")" } == [
                "/people?_per_page=2", "/people?_page=2&_per_page=2",
            ])
        #expect(try await list.loadNextPage().map(\.name).suffix(2) == ["p5", "p6"])
    }

    @Test("Signing out empties the list at once, and the next load starts again from one page")
    func signOut() async throws {
        let setup = try await Self.setup()
        let list = setup.list(.cursorHeader)
        try await list.loadIfNeeded()
        try await list.loadNextPage()
        try await list.loadNextPage()
        #expect(list.items.count == 5)
        await setup.service.signOut()
        #expect(list.items.isEmpty && !list.isUpToDate)
        #expect(try await list.loadIfNeeded().map(\.name) == ["p1", "p2"])
        #expect(list.pages.count == 1)
    }

    @Test("A page that is not what its paging reads fails with the page and the reason; the pages loaded stay")
    func unreadable() async throws {
        let setup = try await Self.setup()
        // The people's answers are arrays: there is no "data" member to read.
        let list = setup.service.pagedResource("/people?_limit=2", of: Named.self, paging: .link(items: "data"))
        let error = await #expect(throws: ResourceError.self) { try await list.loadIfNeeded() }
        #expect(error?.userMessage.contains("Page 1 of") == true)
        #expect(error?.userMessage.contains(#"no array of items at "data""#) == true)
        if case .pipeline(let cause)? = error?.cause {
            #expect(cause is PagingError)
        } else {
            Issue.record("\(String(describing: error))")
        }
        // Items of the wrong type: a decoding error, named.
        let wrong = setup.service.pagedResource("/people?_limit=2", of: Int.self, paging: .link())
        await #expect(throws: ResourceError.self) { try await wrong.loadIfNeeded() }
        #expect(wrong.pages.isEmpty && wrong.items.isEmpty)
    }

    @Test("Numbered pages stop at the total the header states, or without one at the first empty page")
    func pageNumbersWithoutTotal() async throws {
        let setup = try await Self.setup()
        let list = setup.service.pagedResource(
            "/people?_per_page=2", of: Named.self, paging: .pageNumber(parameter: "_page"))
        try await list.loadIfNeeded()
        while list.hasNextPage { try await list.loadNextPage() }
        #expect(list.items.map(\.name) == ["p1", "p2", "p3", "p4", "p5"])
        #expect(list.pages.count == 3)  // X-Total-Count: 5
        // No total anywhere: a page with items names the next number, an empty one ends the list.
        let url = try #require(URL(string: "https://api.test/items?page=7&size=2"))
        func next(_ body: String) throws -> URL? {
            let entity = Entity(
                content: try JSON(parsing: Array(body.utf8)), contentType: "application/json", bytes: Array(body.utf8))
            return try Paging.pageNumber(parameter: "page").cut(Paging.Answer(entity: entity, url: url, index: 6)).next
        }
        #expect(try next("[1, 2]")?.query == "page=8&size=2" || next("[1, 2]")?.query == "size=2&page=8")
        #expect(try next("[]") == nil)
        // hasMore false ends it even with items.
        let more = try #require(URL(string: "https://api.test/items"))
        let body = #"{"items": [1], "more": false}"#
        let entity = Entity(
            content: try JSON(parsing: Array(body.utf8)), contentType: "application/json", bytes: Array(body.utf8))
        let cut = try Paging.pageNumber(parameter: "page", items: "items", hasMore: "more").cut(
            Paging.Answer(entity: entity, url: more))
        #expect(cut.next == nil && cut.items == [1])
    }

    @Test("Next-page calls and refreshes racing under load leave one coherent chain of pages, each item once")
    func racing() async throws {
        let setup = try await Self.setup()
        for number in 6...40 {
            _ = await setup.server.respond(to: MockRequest(.post, "/people", json: ["name": .string("p\(number)")]))
        }
        for round in 0..<20 {
            let list = setup.service.pagedResource(
                "/people?_cursor=&_limit=3&round=\(round)", of: Named.self, paging: .cursor())
            let calls = (0..<12).map { call in
                Task { @MainActor in
                    if (call + round) % 4 == 0 { try? await list.refresh() } else { try? await list.loadNextPage() }
                }
            }
            for call in calls { await call.value }
            // Every page's URL is the one the page before it named.
            for index in list.pages.indices.dropFirst() {
                let named = try #require(list.pages[index - 1].next)
                #expect(list.pages[index].resource === setup.service.resource(absoluteURL: named))
            }
            let ids = list.items.map(\.id)
            #expect(ids == Array(1...ids.count), "round \(round): \(ids)")
            #expect(!list.isLoadingNextPage && !list.isRefreshing)
        }
    }

    @Test("A reset while a next page is in flight keeps the list empty: the old load does not put its page back")
    func resetDuringLoad() async throws {
        let setup = try await Self.setup()
        let list = setup.list(.link)
        try await list.loadIfNeeded()
        // The next page's request is held in the transport until the reset is done: polling for the load
        // to start instead spun for good once the load had finished before the first look (a full run).
        let (arrived, arrival) = AsyncStream<Void>.makeStream()
        let (release, releasing) = AsyncStream<Void>.makeStream()
        setup.outage.hold.withLock { $0 = (arrival, release) }
        async let loading = list.loadNextPage()
        for await _ in arrived { break }
        #expect(list.isLoadingNextPage)
        list.reset()
        releasing.yield(())
        _ = try await loading
        #expect(list.pages.isEmpty && list.items.isEmpty)
        #expect(try await list.loadNextPage().map(\.name) == ["p1", "p2"])
    }

    @Test("A server that names a page already loaded as the next one ends the list instead of looping")
    func cycles() async throws {
        let setup = try await Self.setup()
        // Every answer's Link points back at the first page.
        try setup.server.route(.get, "/loop") { _ in
            MockResponse(
                status: .ok, headerFields: [.contentType: "application/json", HTTPField.Name("Link")!: "</loop>; rel=\"next\""],
                body: Array(#"[{"id": 1, "name": "again"}]"#.utf8))
        }
        let list = setup.service.pagedResource("/loop", of: Named.self, paging: .link())
        try await list.loadIfNeeded()
        #expect(!list.hasNextPage && list.items.count == 1)
        try await list.loadNextPage()
        try await list.refresh()
        #expect(list.pages.count == 1)
    }

    @API
    protocol People: Sendable {
        @GET("/people")
        func people(_per_page: Int?) async throws -> [Named]
    }

    @Test("An @API method returning an array backs the first page")
    func fromEndpoint() async throws {
        let setup = try await Self.setup()
        let client = PeopleClient(client: try setup.service.restClient())
        let list = setup.service.pagedResource(client.endpoints.people(_per_page: 2), paging: .link())
        #expect(list.firstPage === setup.service.resource("/people?_per_page=2"))
        try await list.loadIfNeeded()
        while list.hasNextPage { try await list.loadNextPage() }
        #expect(list.items.map(\.id) == [1, 2, 3, 4, 5])
    }

    @Test("Over loopback, a Link-paged list walks to its end")
    func loopback() async throws {
        let setup = try await Self.setup()
        try await setup.server.start(host: "127.0.0.1", port: 0)
        defer { Task { await setup.server.stop() } }
        let service = try Service(baseURL: try #require(await setup.server.baseURL))
        let list = service.pagedResource("/people?_per_page=2", of: Named.self, paging: .link())
        try await list.loadIfNeeded()
        while list.hasNextPage { try await list.loadNextPage() }
        #expect(list.items.map(\.name) == ["p1", "p2", "p3", "p4", "p5"])
    }
}

@Suite("Link headers")
struct LinkHeaderTests {
    @Test("The next target is found among several links, quoted commas, rel lists and any case; broken headers give none")
    func parsing() {
        let header =
            #"<https://a.test/x?page=1>; rel="first", <https://a.test/x?q=a,b&page=3>; title="a, b"; REL="prefetch next""#
        #expect(Self.next(header) == "https://a.test/x?q=a,b&page=3")
        #expect(Self.next(#"<https://a.test/x?page=2>; rel=next"#) == "https://a.test/x?page=2")
        // Relative targets resolve against the page's URL.
        #expect(Self.next(#"</x?page=2>; rel="next""#) == "https://api.test/x?page=2")
        #expect(Self.next(#"<https://a.test/x?page=2>; rel="nextish""#) == nil)
        #expect(Self.next(#"<https://a.test/x?page=2; rel="next""#) == nil)
        #expect(Self.next("") == nil)
        #expect(Self.next(String(repeating: "<", count: 10_000)) == nil)
        #expect(Self.next(String(repeating: "<a>; rel=\"prev\", ", count: 2_000)) == nil)
    }

    /// The next page `Paging.link()` reads from an answer with `header` as its `Link`.
    static func next(_ header: String) -> String? {
        var fields = HTTPFields()
        fields[HTTPField.Name("Link")!] = header
        let entity = Entity(
            content: JSON.array([]), contentType: "application/json", headerFields: fields, bytes: Array("[]".utf8))
        let answer = Paging.Answer(entity: entity, url: URL(string: "https://api.test/x?page=1")!)
        return (try? Paging.link().cut(answer))?.next?.absoluteString
    }
}
