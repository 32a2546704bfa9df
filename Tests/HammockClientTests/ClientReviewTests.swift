import Foundation
import HammockClient
import Testing

struct NewThing: Codable, Equatable, Sendable {
    var name: String
}

/// Methods whose spelling the first generator got wrong: query placeholders, parameters named like
/// the expansion's own variables, conditional requests, raw byte bodies.
@API
protocol ReviewAPI: Sendable {
    @GET("/search?q={query}&static=x y")
    func search(query: String?, page: Int) async throws -> JSON

    @GET("/tags?tag={tags}")
    func tagged(tags: [String]) async throws -> JSON

    @POST("/things")
    @Body("request")
    func create(request: NewThing) async throws -> NewThing

    @GET("/things/{client}")
    func thing(client: String) async throws -> NewThing

    @POST("/upload")
    @Body("bytes")
    func upload(bytes: Data) async throws

    @Headers(["Content-Type": "image/png"])
    @POST("/upload")
    @Body("bytes")
    func uploadPNG(bytes: [UInt8]) async throws
}

@Suite("Client review fixes")
struct ClientReviewTests {
    @Test("A placeholder in the template's query is filled, encoded strictly, dropped for nil, and never sent twice")
    func queryPlaceholders() async throws {
        let recorder = Recorder()
        let api = ReviewAPIClient(client: recorder.client())
        _ = try await api.search(query: "a b&c=d", page: 2)
        #expect(recorder.last?.request.path == "/v1/search?q=a%20b%26c%3Dd&static=x%20y&page=2")
        _ = try await api.search(query: nil, page: 1)
        #expect(recorder.last?.request.path == "/v1/search?static=x%20y&page=1")
        _ = try await api.tagged(tags: ["x", "y z"])
        #expect(recorder.last?.request.path == "/v1/tags?tag=x&tag=y%20z")
        var missing = RequestBuilder(.get, "/search?q={query}")
        missing.addQuery("other", 1)
        let error = try await #require(throws: RestError.self) { try await recorder.client().send(missing) }
        guard case .invalidRequest(let message) = error.reason else {
            Issue.record("expected an invalid request, got \(error.reason)")
            return
        }
        #expect(message == "no value for the placeholder {query}")
    }

    @Test("Parameters named request or client compile and are sent")
    func reservedNames() async throws {
        let recorder = Recorder(body: #"{"name":"made"}"#)
        let api = ReviewAPIClient(client: recorder.client())
        #expect(try await api.create(request: NewThing(name: "made")) == NewThing(name: "made"))
        #expect(recorder.last?.bodyText == #"{"name":"made"}"#)
        _ = try await api.thing(client: "acme")
        #expect(recorder.last?.request.path == "/v1/things/acme")
    }

    @Test("Data and [UInt8] bodies are sent as bytes, with their own or the declared Content-Type")
    func byteBodies() async throws {
        let recorder = Recorder()
        let api = ReviewAPIClient(client: recorder.client())
        try await api.upload(bytes: Data([0x89, 0x50, 0x4E, 0x47]))
        #expect(recorder.last?.body == [0x89, 0x50, 0x4E, 0x47])
        #expect(recorder.last?.request.headerFields[.contentType] == "application/octet-stream")
        try await api.uploadPNG(bytes: [1, 2, 3])
        #expect(recorder.last?.body == [1, 2, 3])
        #expect(recorder.last?.request.headerFields[.contentType] == "image/png")
    }

    @Test("Dates keep their milliseconds through the default encoder and decoder")
    func fractionalSeconds() throws {
        struct Stamp: Codable, Equatable { var at: Date }
        let decoded = try RestClient.defaultDecoder().decode(Stamp.self, from: Data(#"{"at":"2024-05-01T12:00:00.123Z"}"#.utf8))
        let encoded = String(decoding: try RestClient.defaultEncoder().encode(decoded), as: UTF8.self)
        #expect(encoded == #"{"at":"2024-05-01T12:00:00.123Z"}"#)
        let whole = String(
            decoding: try RestClient.defaultEncoder().encode(Stamp(at: Date(timeIntervalSince1970: 0))), as: UTF8.self)
        #expect(whole == #"{"at":"1970-01-01T00:00:00Z"}"#)
    }

    @Test(
        "A base URL with a query, user info or fragment is refused with the reason",
        arguments: [
            ("https://api.example.com/v1?api_key=K", "has a query"),
            ("https://user:secret@api.example.com/v1", "has user info"),
            ("https://api.example.com/v1#top", "has a fragment"),
        ])
    func baseURLs(base: String, reason: String) async throws {
        let recorder = Recorder()
        let error = try await #require(throws: RestError.self) {
            try await recorder.client(base).send(RequestBuilder(.get, "/items"))
        }
        guard case .invalidRequest(let message) = error.reason else {
            Issue.record("expected an invalid request, got \(error.reason)")
            return
        }
        #expect(message.contains(reason))
        #expect(recorder.count == 0)
    }

    @Test("A part's content type with a line break is refused instead of adding part headers")
    func multipartInjection() async throws {
        let recorder = Recorder()
        var request = RequestBuilder(.post, "/upload")
        request.addPart("file", FilePart(filename: "a.txt", contentType: "text/plain\r\nX-Injected: 1", data: [1]))
        let error = try await #require(throws: RestError.self) { try await recorder.client().send(request) }
        guard case .invalidRequest(let message) = error.reason else {
            Issue.record("expected an invalid request, got \(error.reason)")
            return
        }
        #expect(message.contains("line break"))
        #expect(recorder.count == 0)
    }

    @Test(
        "Content-Disposition: a quoted ; belongs to the name, and filename* wins",
        arguments: [
            (#"attachment; filename="a; b.pdf""#, "a; b.pdf"),
            (#"attachment; filename="quote\"d.txt""#, #"quote"d.txt"#),
            (#"attachment; filename="plain.txt"; filename*=UTF-8''na%C3%AFve%20r%C3%A9sum%C3%A9.txt"#, "naïve résumé.txt"),
            (#"attachment; filename*=iso-8859-1'en'%E9t%E9.txt"#, "été.txt"),
            (#"attachment; filename="../../etc/passwd""#, "passwd"),
            (#"attachment; filename*=UTF-8''%2E%2E"#, nil),
        ])
    func contentDisposition(header: String, expected: String?) async throws {
        let recorder = Recorder(headers: [.contentDisposition: header], body: "x")
        let file = try await recorder.client().download(RequestBuilder(.get, "/file"))
        #expect(file.suggestedFilename == expected)
        try? FileManager.default.removeItem(at: file.url)
    }

    @Test(
        "A download is private to its owner (0600), and a suggested name past the file system's limit keeps the download and the name",
        arguments: [400, 254, 20])
    func privateDownload(nameLength: Int) async throws {
        let name = String(repeating: "é", count: nameLength / 2) + ".pdf"
        let recorder = Recorder(
            headers: [
                .contentDisposition: "attachment; filename*=UTF-8''"
                    + (name.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(["."])) ?? "")
            ], body: "report")
        let file = try await recorder.client().download(RequestBuilder(.get, "/file"))
        defer { try? FileManager.default.removeItem(at: file.url) }
        #expect(file.suggestedFilename == name)
        #expect(try Data(contentsOf: file.url) == Data("report".utf8))
        #expect(file.url.lastPathComponent.utf8.count <= 255)
        #expect(file.url.pathExtension == "pdf")
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: file.url.path)[.posixPermissions] as? NSNumber)
        #expect(mode.intValue & 0o777 == 0o600)
    }
}
