import Foundation
import HTTPTypes
import HammockClient
import HammockJSON
import HammockResources
import HammockTesting
import Synchronization
import Testing

/// Records each request head and response status that passes through the client.
final class WireLog: ClientInterceptor {
    struct Exchange: Sendable {
        var request: HTTPRequest
        var status: Int
    }

    private let exchanges = Mutex<[Exchange]>([])
    var all: [Exchange] { exchanges.withLock { $0 } }

    func intercept(_ request: HTTPRequest, body: [UInt8]?, next: Next) async throws -> (HTTPResponse, [UInt8]) {
        let (response, responseBody) = try await next(request, body)
        exchanges.withLock { $0.append(Exchange(request: request, status: response.status.code)) }
        return (response, responseBody)
    }
}

@MainActor
@Suite("Observable resources against hammock serve", .serialized, .timeLimit(.minutes(2)))
struct ResourcesServeTests {
    @Test("load, observe, mutate, see the invalidated list reload, and a 304 round trip with both validators")
    func endToEnd() async throws {
        let store = TemporaryFiles.path("resources", extension: "sqlite")
        defer { try? FileManager.default.removeItem(atPath: store) }
        let (process, banner) = try await Self.serve(store: store)
        defer { process.interrupt() }
        let url = try #require(banner?.split(separator: " ").last.map(String.init))
        let wire = WireLog()
        let api = try Service(baseURL: url, interceptors: [wire])
        api.configure("/people/*") { $0.pipeline[.model] = [.decoding(ServedPerson.self)] }

        // Load and observe the list.
        let people = api.resource("/people")
        let log = EventLog()
        let owner = NSObject()
        people.addObserver(owner: owner) { resource, event in
            log.entries.append("\(event) loading=\(resource.isLoading)")
        }
        var events = people.events().makeAsyncIterator()
        #expect(await events.next() == .observerAdded)
        _ = try await people.loadIfNeeded()?.value()
        #expect(await events.next() == .requested)
        #expect(await events.next() == .newData(.network))
        #expect(people.latestData?.jsonContent == [])
        #expect(people.loadIfNeeded() == nil)

        // Mutate: the list is invalidated and, being observed, reloads by itself.
        let created = try await people.request(.post, json: ["name": "john", "numberOfKids": 1]).value()
        #expect(created.header("Location") == "/people/1")
        #expect(await events.next() == .requested)
        #expect(await events.next() == .newData(.network))
        #expect(people.latestData?.jsonContent?[0]?["name"] == "john")
        #expect(
            log.entries == [
                "observerAdded loading=false", "requested loading=true", "newData(network) loading=false",
                "requested loading=true", "newData(network) loading=false",
            ])

        // One person, typed by the pipeline; then a 304 round trip carrying both validators.
        let john = people.child("1")
        var first = try await john.load().value()
        if first.lastModified == nil {
            // The create landed in a second that the list's answer had already named, so the server
            // leaves Last-Modified out until its clock reaches the next second (never a date that names
            // two contents): load again once it has.
            try await Task.sleep(for: .milliseconds(1100))
            first = try await john.load().value()
        }
        #expect(first.typedContent(as: ServedPerson.self) == ServedPerson(id: 1, name: "john", numberOfKids: 1))
        let etag = try #require(first.etag)
        let lastModified = try #require(first.lastModified)
        var johnEvents = john.events().makeAsyncIterator()
        #expect(await johnEvents.next() == .observerAdded)
        john.invalidate()
        let revalidated = try await #require(john.loadIfNeeded()).value()
        #expect(await johnEvents.next() == .requested)
        #expect(await johnEvents.next() == .notModified)
        let exchange = try #require(wire.all.last)
        #expect(exchange.status == 304)
        #expect(exchange.request.headerFields[.ifNoneMatch] == etag)
        #expect(exchange.request.headerFields[.ifModifiedSince] == lastModified)
        #expect(revalidated.typedContent(as: ServedPerson.self)?.name == "john")
        #expect(revalidated.timestamp >= first.timestamp)

        // Change him: his resource and the list reload; the new representation has a new ETag.
        _ = try await john.request(.put, json: ["name": "jeff"]).value()
        #expect(await johnEvents.next() == .requested)
        #expect(await johnEvents.next() == .newData(.network))
        #expect(john.latestData?.typedContent(as: ServedPerson.self)?.name == "jeff")
        #expect(john.latestData?.etag != etag)
        #expect(await events.next() == .requested)
        #expect(await events.next() == .newData(.network))
        #expect(people.latestData?.jsonContent?[0]?["name"] == "jeff")

        // Errors carry the server's words and keep the data.
        _ = try await john.request(.delete).value()
        #expect(await johnEvents.next() == .requested)
        #expect(await johnEvents.next() == .error)
        #expect(john.latestError?.status == .notFound)
        #expect(john.latestError?.userMessage == "No people with id 1")
        #expect(john.latestData?.typedContent(as: ServedPerson.self)?.name == "jeff")
        let nowhere = api.resource("/nowhere")
        _ = await nowhere.load().response()
        #expect(nowhere.latestError?.status == .notFound)
        #expect(nowhere.latestError?.userMessage.hasPrefix("No route for") == true)
        withExtendedLifetime(owner) {}
    }
}

extension ResourcesServeTests {
    /// Starts `hammock serve` on the people example's resources, without its data, and returns it with
    /// its banner line.
    nonisolated static func serve(store: String) async throws -> (HammockProcess, String?) {
        let process = try HammockProcess([
            "serve", try HammockProcess.emptyExample("people"), "--store", "sqlite:\(store)", "--port", "0", "--quiet",
        ])
        return (process, await process.firstLine { $0.hasPrefix("Hammock is serving") })
    }
}

@MainActor
final class EventLog {
    var entries: [String] = []
}
