import Foundation
import HTTPTypes
import HammockJSON
import HammockServer
import HammockTestSupport
import HammockWire
import Synchronization
import Testing

/// `If-Match` and `If-Unmodified-Since` on writes: a client that read a record overwrites it only if it
/// is still what the client read, on every store, atomically with the write.
@Suite("Conditional writes")
struct ConditionalWriteTests {
    static func server(_ kind: StoreKind, now: @escaping @Sendable () -> Date = { Date() }) async throws -> MockServer {
        let server = try await MockServer(resources: [Fixtures.people], store: await kind.makeStore(), now: now)
        _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": "ada", "numberOfKids": 1]))
        return server
    }

    static func request(_ method: HTTPRequest.Method, _ path: String, json: JSON? = nil, _ fields: HTTPFields) -> MockRequest {
        var request = json.map { MockRequest(method, path, json: $0) } ?? MockRequest(method, path)
        for field in fields { request.headerFields.append(field) }
        return request
    }

    static func tag(_ server: MockServer) async throws -> String {
        try #require(await server.respond(to: MockRequest(.get, "/people/1")).headerFields[.eTag])
    }

    @Test(
        "If-Match with the tag a GET gave writes; a stale tag is 412 with the current ETag, and nothing changes",
        arguments: StoreKind.allCases)
    func ifMatch(kind: StoreKind) async throws {
        let server = try await Self.server(kind)
        let first = try await Self.tag(server)
        let patched = await server.respond(to: Self.request(.patch, "/people/1", json: ["name": "bob"], [.ifMatch: first]))
        #expect(patched.status == .ok)
        let second = try await Self.tag(server)
        #expect(second != first)
        // The first tag is stale now: PUT, PATCH and DELETE with it all fail and change nothing.
        for (method, body) in [(HTTPRequest.Method.put, ["name": "eve"] as JSON?), (.patch, ["name": "eve"]), (.delete, nil)] {
            let stale = await server.respond(to: Self.request(method, "/people/1", json: body, [.ifMatch: first]))
            #expect(stale.status == .preconditionFailed, "\(method)")
            #expect(stale.headerFields[.eTag] == second && stale.headerFields[.contentType] == "application/problem+json")
            #expect(try stale.json()["etag"] == .string(second))
        }
        #expect(try await server.respond(to: MockRequest(.get, "/people/1")).json()["name"] == "bob")
        // One of several tags, and the current one, deletes.
        let deleted = await server.respond(to: Self.request(.delete, "/people/1", [.ifMatch: "\"nope\", \(second)"]))
        #expect(deleted.status == .noContent)
    }

    @Test(
        "If-None-Match: * never writes over a record (412), and a tag still current is 412 too; an old one writes",
        arguments: StoreKind.allCases)
    func ifNoneMatch(kind: StoreKind) async throws {
        let server = try await Self.server(kind)
        let first = try await Self.tag(server)
        // The usual guard against creating over an existing key (RFC 9110 §13.1.2): before, a 200 that overwrote.
        for (method, body) in [(HTTPRequest.Method.put, ["name": "eve"] as JSON?), (.patch, ["name": "eve"]), (.delete, nil)] {
            let star = await server.respond(to: Self.request(method, "/people/1", json: body, [.ifNoneMatch: "*"]))
            #expect(star.status == .preconditionFailed, "\(method)")
            #expect(star.headerFields[.contentType] == "application/problem+json")
            let current = await server.respond(to: Self.request(method, "/people/1", json: body, [.ifNoneMatch: "W/\(first)"]))
            #expect(current.status == .preconditionFailed, "\(method)")
            #expect(current.headerFields[.eTag] == first)
        }
        #expect(try await server.respond(to: MockRequest(.get, "/people/1")).json()["name"] == "ada")
        // No record: nothing to write over, and the update is the 404 it always was.
        let missing = await server.respond(to: Self.request(.put, "/people/9", json: ["name": "x"], [.ifNoneMatch: "*"]))
        #expect(missing.status == .notFound)
        // A tag that is no longer current lets the write through; If-Match is still checked first.
        let patched = await server.respond(
            to: Self.request(.patch, "/people/1", json: ["name": "bob"], [.ifNoneMatch: "\"old\""]))
        #expect(patched.status == .ok)
        let both = await server.respond(
            to: Self.request(.patch, "/people/1", json: ["name": "eve"], [.ifMatch: first, .ifNoneMatch: "\"old\""]))
        #expect(both.status == .preconditionFailed)
        #expect(try await server.respond(to: MockRequest(.get, "/people/1")).json()["name"] == "bob")
    }

    @Test(
        "If-Match: * needs the record to exist; any If-Match on a missing record is 412; a weak tag never matches",
        arguments: StoreKind.allCases)
    func starMissingAndWeak(kind: StoreKind) async throws {
        let server = try await Self.server(kind)
        #expect(await server.respond(to: Self.request(.patch, "/people/1", json: ["name": "x"], [.ifMatch: "*"])).status == .ok)
        #expect(
            await server.respond(to: Self.request(.patch, "/people/9", json: ["name": "x"], [.ifMatch: "*"])).status
                == .preconditionFailed)
        #expect(await server.respond(to: Self.request(.delete, "/people/9", [.ifMatch: "\"a\""])).status == .preconditionFailed)
        #expect(await server.respond(to: MockRequest(.delete, "/people/9")).status == .notFound)
        let tag = try await Self.tag(server)
        let weak = await server.respond(to: Self.request(.patch, "/people/1", json: ["name": "y"], [.ifMatch: "W/\(tag)"]))
        #expect(weak.status == .preconditionFailed)
        // Extremes: an empty value, a list of ten thousand tags with the right one last, commas alone.
        #expect(await server.respond(to: Self.request(.delete, "/people/1", [.ifMatch: ""])).status == .preconditionFailed)
        #expect(await server.respond(to: Self.request(.delete, "/people/1", [.ifMatch: ",,, ,"])).status == .preconditionFailed)
        let many = (0..<10_000).map { "\"t\($0)\"" }.joined(separator: ", ") + ", " + tag
        #expect(await server.respond(to: Self.request(.patch, "/people/1", json: ["name": "z"], [.ifMatch: many])).status == .ok)
    }

    @Test(
        "If-Unmodified-Since: at or after Last-Modified writes, before it is 412; a date that is no date is ignored",
        arguments: StoreKind.allCases)
    func ifUnmodifiedSince(kind: StoreKind) async throws {
        let clock = Clockwork(Date(timeIntervalSince1970: 1_800_000_000))
        let server = try await Self.server(kind, now: { clock.now })
        clock.advance(10)
        let read = await server.respond(to: MockRequest(.get, "/people/1"))
        let stamp = try #require(read.headerFields[.lastModified])
        clock.advance(10)
        #expect(
            await server.respond(to: Self.request(.patch, "/people/1", json: ["name": "b"], [.ifUnmodifiedSince: stamp])).status
                == .ok)
        clock.advance(10)
        // The write above moved Last-Modified past the stamp: the same condition fails now.
        let late = await server.respond(to: Self.request(.patch, "/people/1", json: ["name": "c"], [.ifUnmodifiedSince: stamp]))
        #expect(late.status == .preconditionFailed)
        #expect(
            await server.respond(to: Self.request(.delete, "/people/1", [.ifUnmodifiedSince: "yesterday"])).status == .noContent)
    }

    @Test(
        "Forty PATCHes carrying the same tag at once: exactly one wins, the rest get 412, none is lost",
        arguments: StoreKind.allCases)
    func lostUpdates(kind: StoreKind) async throws {
        let server = try await Self.server(kind)
        let tag = try await Self.tag(server)
        let statuses = await withBusyMachine {
            await withTaskGroup(of: (Int, Int).self) { group in
                for index in 0..<40 {
                    group.addTask {
                        let response = await server.respond(
                            // Every value differs from the record's 1: a PATCH that changed nothing would
                            // leave the tag valid, and a second winner would be right.
                            to: Self.request(.patch, "/people/1", json: ["numberOfKids": .integer(100 + index)], [.ifMatch: tag]))
                        return (index, response.status.code)
                    }
                }
                var all: [(Int, Int)] = []
                for await result in group { all.append(result) }
                return all
            }
        }
        let winners = statuses.filter { $0.1 == 200 }
        #expect(winners.count == 1)
        #expect(statuses.filter { $0.1 == 412 }.count == 39)
        let final = try await server.respond(to: MockRequest(.get, "/people/1")).json()
        #expect(final["numberOfKids"] == .integer(100 + (winners.first?.0 ?? -1)))
    }
}

/// A wall clock a test moves.
final class Clockwork: Sendable {
    private let current: Mutex<Date>
    init(_ start: Date) { current = Mutex(start) }
    var now: Date { current.withLock { $0 } }
    func advance(_ seconds: Double) { current.withLock { $0 += seconds } }
}
