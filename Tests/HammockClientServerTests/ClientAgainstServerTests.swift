import Foundation
import HammockClient
import HammockHTTPServer
import HammockServer
import HammockTesting
import Testing

/// Hand-written calls (what generated clients will do) against the mock server, in process and over HTTP.
@Suite("Client against the mock server")
struct ClientAgainstServerTests {
    struct Person: Codable, Equatable, Sendable {
        var id: Int?
        var name: String
        var numberOfKids: Int?
    }

    static func makeServer() async throws -> MockServer {
        let people = MockResource("people", fields: ["name": .string, "numberOfKids": .integer])
        return try await MockServer(resources: [people])
    }

    static func crud(_ client: RestClient) async throws {
        var create = RequestBuilder(.post, "/people")
        create.setBody(Person(id: nil, name: "john", numberOfKids: 1))
        let created = try await client.sendForResponse(create, decoding: Person.self)
        #expect(created.status == .created && created.headerFields[.location] == "/people/1")
        #expect(created.value == Person(id: 1, name: "john", numberOfKids: 1))

        var list = RequestBuilder(.get, "/people")
        list.addQuery("ignored", Sort.created)
        #expect(try await client.send(list, decoding: [Person].self) == [created.value])

        var update = RequestBuilder(.put, "/people/{id}")
        update.setPathValue(1, for: "id")
        update.setBody(["name": "jeff"] as JSON)
        #expect(try await client.send(update, decoding: Person.self) == Person(id: 1, name: "jeff", numberOfKids: 1))

        var form = RequestBuilder(.post, "/people")
        form.addFormField("name", "ada lovelace")
        form.addFormField("numberOfKids", 3)
        #expect(try await client.send(form, decoding: Person.self) == Person(id: 2, name: "ada lovelace", numberOfKids: 3))

        var delete = RequestBuilder(.delete, "/people/{id}")
        delete.setPathValue(1, for: "id")
        #expect(try await client.sendOptional(delete, decoding: Person.self) == nil)

        var missing = RequestBuilder(.get, "/people/{id}")
        missing.setPathValue(1, for: "id")
        do {
            let error = try await #require(throws: RestError.self) {
                _ = try await client.send(missing, decoding: Person.self)
            }
            #expect(error.status == .notFound)
            #expect(try error.decodeBody(as: [String: JSONValueProbe].self)["title"]?.text == "Not Found")
        }
    }

    @Test("Cancelling a call through MockServerTransport ends in .cancelled, as on every other transport")
    func inProcessCancellation() async throws {
        let people = MockResource("people", fields: ["name": .string])
        let server = try await MockServer(
            resources: [people], options: MockServer.Options(latency: Latency(.seconds(60)...(.seconds(60)))))
        let client = RestClient(baseURL: URL(string: "http://mock")!, transport: MockServerTransport(server: server))
        let call = Task { try await client.send(RequestBuilder(.get, "/people")) }
        try await Task.sleep(for: .milliseconds(50))
        call.cancel()
        let error = try await #require(throws: RestError.self) { try await call.value }
        guard case .cancelled = error.reason else {
            Issue.record("expected cancelled, got \(error.reason)")
            return
        }
    }

    @Test("CRUD in process through MockServerTransport")
    func inProcess() async throws {
        let server = try await Self.makeServer()
        let client = RestClient(baseURL: URL(string: "http://mock")!, transport: MockServerTransport(server: server))
        try await Self.crud(client)
    }

    @Test("CRUD over loopback through URLSessionTransport")
    func overLoopback() async throws {
        let server = try await Self.makeServer()
        try await server.whileServing { port in
            try await Self.crud(RestClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!))
        }
    }
}

/// Decodes any JSON scalar as text, for reading problem bodies loosely.
struct JSONValueProbe: Decodable {
    var text: String?
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        text = (try? container.decode(String.self)) ?? (try? container.decode(Int.self)).map(String.init)
    }
}
