import Foundation
import HTTPTypes
import HammockHTTPServer
import HammockJSON
import HammockSQLite
import HammockServer
import HammockWire
import Synchronization
import Testing

/// A wall clock the test sets.
final class WallClock: Sendable {
    let time = Mutex(Date(timeIntervalSince1970: 1_700_000_000))
    func advance(by seconds: Double) { time.withLock { $0 += seconds } }
    var now: @Sendable () -> Date { { self.time.withLock { $0 } } }
}

@Suite("ETag, Last-Modified and 304")
struct ConditionalRequestTests {
    func makeServer(_ wall: WallClock, kind: StoreKind = .memory) async throws -> MockServer {
        try await MockServer(
            resources: [Fixtures.people, Fixtures.cars], store: await kind.makeStore(), clock: ContinuousClock(), now: wall.now)
    }

    func get(_ server: MockServer, _ path: String, _ fields: HTTPFields = [:]) async -> MockResponse {
        await server.respond(to: MockRequest(.get, path, headerFields: fields))
    }

    @Test("Every GET carries a strong ETag of its bytes and a Last-Modified date")
    func validators() async throws {
        let wall = WallClock()
        let server = try await makeServer(wall)
        wall.advance(by: 10.7)
        _ = await server.send(.post, "/people", json: ["name": "ada"])
        let response = await get(server, "/people/1")
        let tag = try #require(response.headerFields[.eTag])
        #expect(tag.hasPrefix("\"") && tag.hasSuffix("\"") && tag.count == 15)  // 13 hex digits: inline in a String
        #expect(response.headerFields[.lastModified] == "Tue, 14 Nov 2023 22:13:30 GMT")
        #expect(await get(server, "/people/1").headerFields[.eTag] == tag)  // same bytes, same tag
        #expect(await get(server, "/people").headerFields[.eTag] != tag)
        #expect(await server.send(.post, "/people", json: ["name": "x"]).0.headerFields[.eTag] == nil)  // only on GET
    }

    @Test("If-None-Match with the current tag answers 304 without a body", arguments: StoreKind.allCases)
    func ifNoneMatch(kind: StoreKind) async throws {
        let server = try await makeServer(WallClock(), kind: kind)
        _ = await server.send(.post, "/people", json: ["name": "ada"])
        let tag = try #require(await get(server, "/people/1").headerFields[.eTag])
        let notModified = await get(server, "/people/1", [.ifNoneMatch: tag])
        #expect(notModified.status == .notModified && notModified.body.isEmpty)
        #expect(notModified.headerFields[.eTag] == tag)
        #expect(await get(server, "/people/1", [.ifNoneMatch: "\"other\", W/\(tag)"]).status == .notModified)
        #expect(await get(server, "/people/1", [.ifNoneMatch: "*"]).status == .notModified)
        #expect(
            await server.respond(to: MockRequest(.head, "/people/1", headerFields: [.ifNoneMatch: tag])).status == .notModified)

        _ = await server.send(.patch, "/people/1", json: ["name": "ada l."])
        let changed = await get(server, "/people/1", [.ifNoneMatch: tag])
        #expect(changed.status == .ok && changed.headerFields[.eTag] != tag)
        #expect(try changed.json()["name"] == "ada l.")
    }

    @Test("If-Modified-Since answers 304 until the resource changes; If-None-Match wins when both are sent")
    func ifModifiedSince() async throws {
        let wall = WallClock()
        let server = try await makeServer(wall)
        _ = await server.send(.post, "/people", json: ["name": "ada"])
        let first = await get(server, "/people")
        let lastModified = try #require(first.headerFields[.lastModified])
        wall.advance(by: 5)
        #expect(await get(server, "/people", [.ifModifiedSince: lastModified]).status == .notModified)
        #expect(await get(server, "/people", [.ifModifiedSince: "Mon, 01 Jan 2001 00:00:00 GMT"]).status == .ok)
        #expect(await get(server, "/people", [.ifModifiedSince: "not a date"]).status == .ok)
        #expect(await get(server, "/people", [.ifModifiedSince: lastModified, .ifNoneMatch: "\"stale\""]).status == .ok)

        _ = await server.send(.post, "/people", json: ["name": "bob"])
        let after = await get(server, "/people", [.ifModifiedSince: lastModified])
        #expect(after.status == .ok)
        #expect(after.headerFields[.lastModified] != lastModified)
    }

    @Test(
        "A write in the same second as an answer never leaves that answer's Last-Modified valid",
        arguments: ["/people", "/people/1", "/people/1/cars"])
    func sameSecondWrites(path: String) async throws {
        let wall = WallClock()
        let server = try await makeServer(wall)
        wall.advance(by: 3.1)
        _ = await server.send(.post, "/people", json: ["name": "ada"])
        _ = await server.send(.post, "/people/1/cars", json: ["name": "mini"])
        let read = await get(server, path)
        let lastModified = try #require(read.headerFields[.lastModified])
        // Another write in the same second: the copy just read is stale, whatever the date says.
        wall.advance(by: 0.2)
        let change: (HTTPRequest.Method, String, JSON) =
            path.hasSuffix("cars") ? (.post, "/people/1/cars", ["name": "golf"]) : (.patch, "/people/1", ["name": "bob"])
        #expect((200...201).contains(await server.send(change.0, change.1, json: change.2).0.status.code))
        let sameSecond = await get(server, path, [.ifModifiedSince: lastModified])
        #expect(sameSecond.status == .ok)
        // Until the clock reaches the new date, answers carry no Last-Modified (it may not be in the future)…
        #expect(sameSecond.headerFields[.lastModified] == nil)
        #expect(sameSecond.headerFields[.eTag] != nil)
        // …and once it has, the new date validates the new content.
        wall.advance(by: 1)
        #expect(await get(server, path, [.ifModifiedSince: lastModified]).status == .ok)
        let settled = try #require(await get(server, path).headerFields[.lastModified])
        #expect(settled != lastModified)
        #expect(await get(server, path, [.ifModifiedSince: settled]).status == .notModified)
    }

    @Test("Many writes in one second move the date by one second, not one per write")
    func burstOfWrites() async throws {
        let wall = WallClock()
        let server = try await makeServer(wall)
        _ = await server.send(.post, "/people", json: ["name": "ada"])
        let first = try #require(await get(server, "/people").headerFields[.lastModified])
        for index in 0..<50 { _ = await server.send(.post, "/people", json: ["name": .string("p\(index)")]) }
        wall.advance(by: 1)
        let next = try #require(await get(server, "/people").headerFields[.lastModified])
        let (firstDate, nextDate) = (HTTPDate.parse(first, now: Date()), HTTPDate.parse(next, now: Date()))
        #expect(nextDate.map { $0.timeIntervalSince(firstDate ?? $0) } == 1)
    }

    @Test("Deleting a parent changes its children's Last-Modified; nested lists follow their parent")
    func cascades() async throws {
        let wall = WallClock()
        let server = try await makeServer(wall)
        _ = await server.send(.post, "/people", json: ["name": "ada"])
        _ = await server.send(.post, "/people/1/cars", json: ["name": "mini"])
        let cars = try #require(await get(server, "/cars").headerFields[.lastModified])
        wall.advance(by: 60)
        _ = await server.send(.delete, "/people/1")
        #expect(await get(server, "/cars", [.ifModifiedSince: cars]).status == .ok)
    }

    @Test("HTTP dates format and parse as IMF-fixdate")
    func httpDates() async throws {
        let wall = WallClock()
        wall.time.withLock { $0 = Date(timeIntervalSince1970: 784_111_777) }  // RFC 9110's example
        let server = try await makeServer(wall)
        #expect(await get(server, "/people").headerFields[.lastModified] == "Sun, 06 Nov 1994 08:49:37 GMT")
    }

    @Test(
        "An If-Modified-Since that is not a real date is ignored, never a crash or a 304",
        arguments: [
            "Thu, 01 Jan 999999999999 00:00:00 GMT", "Sat, 31 Feb 2099 00:00:00 GMT", "Fri, 01 Jan 2100 25:00:00 GMT",
        ])
    func invalidIfModifiedSince(header: String) async throws {
        let server = try await makeServer(WallClock())
        let response = await get(server, "/people", [.ifModifiedSince: header])
        #expect(response.status == .ok)
        // The same instant in each of the other two forms RFC 9110 requires does answer 304.
        for future in ["Friday, 01-Jan-49 00:00:00 GMT", "Fri Jan  1 00:00:00 2100"] {
            #expect(await get(server, "/people", [.ifModifiedSince: future]).status == .notModified, "\(future)")
        }
    }

    @Test("A 304 round trip over loopback")
    func loopback() async throws {
        let server = try await makeServer(WallClock())
        let port = try await server.start(port: 0)
        do {
            let client = LoopbackClient(port: port)
            _ = try await client.send("POST", "/people", json: ["name": "ada"])
            let first = try await client.send("GET", "/people/1")
            let tag = try #require(first.header("ETag"))
            let lastModified = try #require(first.header("Last-Modified"))
            let second = try await client.send(
                "GET", "/people/1", headers: ["If-None-Match": tag, "If-Modified-Since": lastModified])
            #expect(second.status == 304 && second.body.isEmpty)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}
