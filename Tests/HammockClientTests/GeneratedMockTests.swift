import Foundation
import HammockClient
import Testing

struct Book: Codable, Equatable, Sendable {
    var id: Int
    var title: String
}

@API
protocol Library: Sendable {
    @GET("/books/{id}")
    func book(id: Int) async throws -> Book

    @GET("/books")
    func books(author: String?, tags: [String]) async throws -> [Book]

    @DELETE("/books/{id}")
    func remove(id: Int) async throws

    @GET("/search")
    func search(q: String) async throws -> [Book]

    @GET("/search")
    func search(tag: String) async throws -> [Book]

    @GET("/ping")
    func ping() async throws -> String
}

/// Code under test that takes the protocol, as an app's view model would.
struct Shelf {
    let library: any Library

    func titles(by author: String) async -> [String] {
        (try? await library.books(author: author, tags: ["fiction"]).map(\.title)) ?? []
    }
}

/// The `<Name>Mock` that `@API` generates: answers from closures, calls recorded, no server.
@Suite("Generated mocks")
struct GeneratedMockTests {
    @Test("Code that takes the protocol gets the mock's answers, and the mock records each call's arguments")
    func answersAndCalls() async throws {
        let mock = LibraryMock()
        mock.on.books.answer { author, tags in [Book(id: 1, title: "\(author ?? "anyone"): \(tags.joined())")] }
        mock.on.book.answer { id in Book(id: id, title: "Book \(id)") }
        mock.on.remove.returns(())
        #expect(await Shelf(library: mock).titles(by: "Le Guin") == ["Le Guin: fiction"])
        #expect(try await mock.book(id: 7) == Book(id: 7, title: "Book 7"))
        try await mock.remove(id: 7)
        try await mock.remove(id: 8)
        #expect(mock.on.books.calls.map(\.author) == ["Le Guin"] && mock.on.books.calls.map(\.tags) == [["fiction"]])
        #expect(mock.on.book.calls == [7])
        #expect(mock.on.remove.calls == [7, 8] && mock.on.remove.callCount == 2)
        mock.on.remove.resetCalls()
        #expect(mock.on.remove.calls.isEmpty)
    }

    @Test("A call with no answer set throws UnansweredMockCall, naming the method and how to answer it")
    func unanswered() async throws {
        let mock = LibraryMock()
        await #expect(throws: UnansweredMockCall(method: "ping()")) { try await mock.ping() }
        #expect(mock.on.ping.callCount == 1)
        #expect(UnansweredMockCall(method: "book(id:)").description.contains("mock.on.book.returns"))
    }

    @Test("An answer can throw, as the real client would")
    func throwing() async throws {
        let mock = LibraryMock()
        mock.on.book.throws(RestError(.unacceptableStatus, method: .get, url: "/books/1", status: .notFound))
        do {
            _ = try await mock.book(id: 1)
            Issue.record("no error")
        } catch let error as RestError {
            #expect(error.status == .notFound)
        }
    }

    @Test("Overloads of one name get one answer each, named by their labels")
    func overloads() async throws {
        let mock = LibraryMock()
        mock.on.search_q.returns([Book(id: 1, title: "by query")])
        mock.on.search_tag.returns([Book(id: 2, title: "by tag")])
        #expect(try await mock.search(q: "x").map(\.id) == [1])
        #expect(try await mock.search(tag: "y").map(\.id) == [2])
        #expect(mock.on.search_q.calls == ["x"] && mock.on.search_tag.calls == ["y"])
    }

    @Test("Calls from many tasks at once are all recorded and all answered")
    func concurrentCalls() async throws {
        let mock = LibraryMock()
        mock.on.book.answer { id in
            await Task.yield()
            return Book(id: id, title: "")
        }
        let ids = try await withThrowingTaskGroup(of: Int.self) { group in
            for id in 0..<500 { group.addTask { try await mock.book(id: id).id } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(ids) == Set(0..<500))
        #expect(Set(mock.on.book.calls) == Set(0..<500) && mock.on.book.callCount == 500)
    }
}
