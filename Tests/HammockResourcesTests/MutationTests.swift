import Foundation
import HTTPTypes
import HammockClient
import HammockJSON
import HammockResources
import HammockServer
import HammockTesting
import Testing

/// Resources against the mock server in process: real routing, validation, ETags and 304s, no socket.
@MainActor
@Suite("Mutations and invalidation against the mock server, in process")
struct MutationTests {
    static func makeServer() async throws -> MockServer {
        let people = MockResource("people", fields: ["name": .string, "age": .integer])
        let cars = MockResource("cars", fields: ["model": .string], parents: ["people"])
        return try await MockServer(resources: [people, cars])
    }

    @Test("a POST invalidates the list, and the observed list reloads by itself")
    func postReloadsList() async throws {
        let server = try await Self.makeServer()
        let api = try Service(baseURL: "http://mock", transport: MockServerTransport(server: server), clock: ManualClock())
        let people = api.resource("/people")
        var events = people.events().makeAsyncIterator()
        #expect(await events.next() == .observerAdded)
        _ = await people.loadIfNeeded()?.response()
        #expect(await events.next() == .requested)
        #expect(await events.next() == .newData(.network))
        #expect(people.latestData?.jsonContent == [])

        let created = try await people.request(.post, json: ["name": "Ada", "age": 36]).value()
        #expect(created.jsonContent?["id"] == 1)
        #expect(created.header("Location") == "/people/1")
        // The list was invalidated and, being observed, reloads without being asked.
        #expect(await events.next() == .requested)
        #expect(await events.next() == .newData(.network))
        #expect(people.latestData?.jsonContent?[0]?["name"] == "Ada")
    }

    @Test("PUT and DELETE invalidate the item, its list, and (for DELETE) what lived below it")
    func putAndDelete() async throws {
        let server = try await Self.makeServer()
        let api = try Service(baseURL: "http://mock", transport: MockServerTransport(server: server), clock: ManualClock())
        _ = await api.resource("/people").request(.post, json: ["name": "Ada"]).response()
        let ada = api.resource("/people/1")
        let list = api.resource("/people")
        let cars = ada.child("cars")
        let unrelated = api.resource("/elsewhere")
        for resource in [ada, list, cars] { _ = await resource.load().response() }
        #expect([ada, list, cars].allSatisfy { $0.isUpToDate })

        _ = try await ada.request(.put, json: ["name": "Ada L."]).value()
        #expect(!ada.isUpToDate && !list.isUpToDate)
        #expect(cars.isUpToDate)  // a PUT leaves children alone
        #expect(ada.latestData?.jsonContent?["name"] == "Ada")  // the data stays until a reload
        for resource in [ada, list] { _ = await resource.loadIfNeeded()?.response() }
        #expect(ada.latestData?.jsonContent?["name"] == "Ada L.")

        _ = try await ada.request(.delete).value()
        #expect(!ada.isUpToDate && !list.isUpToDate && !cars.isUpToDate)
        #expect(unrelated.latestData == nil && !unrelated.isInvalidated)
        _ = await ada.loadIfNeeded()?.response()
        #expect(ada.latestError?.status == .notFound)
        #expect(ada.latestError?.userMessage == "No people with id 1")  // the server's problem detail
        #expect(ada.latestData?.jsonContent?["name"] == "Ada L.")  // an error keeps the old data
    }

    @Test("a rejected mutation reports the server's problem and invalidates nothing")
    func rejectedMutation() async throws {
        let server = try await Self.makeServer()
        let api = try Service(baseURL: "http://mock", transport: MockServerTransport(server: server), clock: ManualClock())
        let list = api.resource("/people")
        _ = await list.load().response()
        let outcome = await list.request(.post, json: ["age": "old"]).response()
        guard case .failure(let error) = outcome else {
            Issue.record("expected a validation failure")
            return
        }
        #expect(error.status == .unprocessableContent)
        #expect(error.userMessage == "age: expected an integer, found string")
        #expect(list.isUpToDate)
        #expect(list.latestError == nil)  // a failed mutation is not the resource's error
    }

    @Test("extra invalidation patterns, and opting out of ancestors")
    func invalidationRules() async throws {
        let server = try await Self.makeServer()
        let api = try Service(baseURL: "http://mock", transport: MockServerTransport(server: server), clock: ManualClock())
        api.configure("/people/**") {
            $0.invalidatesAncestorsAfterMutation = false
            $0.alsoInvalidatesAfterMutation = ["/stats"]
        }
        let list = api.resource("/people")
        let stats = api.resource("/stats")
        _ = await list.load().response()
        stats.overrideLocalContent(with: (["count": 0] as JSON))
        _ = try await list.request(.post, json: ["name": "Ada"]).value()
        #expect(list.isUpToDate)
        #expect(stats.isInvalidated)
    }

    @Test("Encodable bodies, and an unencodable one fails at once")
    func encodableBodies() async throws {
        struct NewPerson: Encodable {
            var name: String
            var age: Int
        }
        struct Broken: Encodable {
            func encode(to encoder: any Encoder) throws {
                throw EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "nope"))
            }
        }
        let server = try await Self.makeServer()
        let api = try Service(baseURL: "http://mock", transport: MockServerTransport(server: server), clock: ManualClock())
        let created = try await api.resource("/people").request(.post, encoding: NewPerson(name: "Grace", age: 85)).value()
        #expect(created.jsonContent?["age"] == 85)
        let broken = api.resource("/people").request(.post, encoding: Broken())
        #expect(broken.isCompleted)
        guard case .failure(let error) = await broken.response(), case .pipeline = error.cause else {
            Issue.record("expected an encoding failure")
            return
        }
    }

    @Test("the in-process transport reports the response head and its bytes")
    func inProcessProgress() async throws {
        let server = try await Self.makeServer()
        _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": "Ada"]))
        let log = TransferLog()
        let transport = MockServerTransport(server: server)
        let head = HTTPRequest(method: .get, scheme: "http", authority: "mock", path: "/people")
        let (_, body) = try await TransferProgress.$reporter.withValue(TransferReporter { log.append($0) }) {
            try await transport.send(head, body: nil)
        }
        #expect(log.all == [.responseHeadReceived(expectedBytes: body.count), .responseBytesReceived(total: body.count)])
    }

    @Test("the server's ETag makes a reload a 304 in process")
    func conditionalInProcess() async throws {
        let server = try await Self.makeServer()
        let clock = ManualClock()
        let api = try Service(baseURL: "http://mock", transport: MockServerTransport(server: server), clock: clock)
        _ = await api.resource("/people").request(.post, json: ["name": "Ada"]).response()
        let ada = api.resource("/people/1")
        var events = ada.events().makeAsyncIterator()
        _ = await events.next()
        _ = await ada.load().response()
        #expect(ada.latestData?.etag != nil && ada.latestData?.lastModified != nil)
        _ = await events.next()
        _ = await events.next()
        clock.advance(by: .seconds(31))
        _ = await ada.loadIfNeeded()?.response()
        #expect(await events.next() == .requested)
        #expect(await events.next() == .notModified)
    }
}

@MainActor
@Suite("A paged list as an observable resource")
struct PagedListResourceTests {
    @Test("Each page is a resource of its own; a POST makes the observed page reload with the new total")
    func pages() async throws {
        let people = MockResource("people", fields: ["name": .string])
        let server = try await MockServer(resources: [people])
        for name in ["ada", "bob", "cy"] {
            _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": .string(name)]))
        }
        let api = try Service(baseURL: "http://mock", transport: MockServerTransport(server: server), clock: ManualClock())
        let list = api.resource("/people").withParam("_per_page", "2")
        let first = list.withParam("_page", "1")
        let second = list.withParam("_page", "2")
        #expect(first !== second)
        #expect(first === api.resource("/people").withParam("_per_page", "2").withParam("_page", "1"))
        _ = await first.loadIfNeeded()?.response()
        _ = await second.loadIfNeeded()?.response()
        #expect(first.latestData?.jsonContent?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["ada", "bob"])
        #expect(second.latestData?.jsonContent?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["cy"])
        #expect(second.latestData?.header("X-Total-Count") == "3")

        var events = second.events().makeAsyncIterator()
        #expect(await events.next() == .observerAdded)
        _ = try await api.resource("/people").request(.post, json: ["name": "dee"]).value()
        // The POST invalidated every page of the list; the observed one reloads by itself.
        #expect(await events.next() == .requested)
        #expect(await events.next() == .newData(.network))
        #expect(second.latestData?.jsonContent?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["cy", "dee"])
        #expect(second.latestData?.header("X-Total-Count") == "4")
        #expect(!first.isUpToDate)
    }
}
