import Foundation
import HammockClient
import HammockTestSupport
import Testing

struct Payload: Codable, Equatable, Sendable {
    var title: String
    var count: Int
    var tags: [String]
}

/// What httpbin echoes is what the generated client sent.
@API
@Headers(["X-Static": "hammock"])
protocol HTTPBin: Sendable {
    @GET("/get?static=yes")
    func get(q: String, tags: [String], flag: Bool, missing: String?, at when: Date) async throws -> JSON

    @GET("/anything/{segment}/end")
    func anything(segment: String) async throws -> JSON

    @FormURLEncoded
    @POST("/post")
    func form(name: String, note: String?, formula: String) async throws -> JSON

    @Multipart
    @POST("/post")
    func upload(description: String, file: FilePart) async throws -> JSON

    @Headers(["X-Custom": "{value}", "Authorization": "Bearer {token}"])
    @GET("/headers")
    func headers(value: String?, token: String?) async throws -> JSON

    @POST("/post")
    @Body("payload")
    func json(payload: Payload) async throws -> JSON

    @GET("/status/{code}")
    func status(code: Int) async throws

    @GET("/bytes/{count}")
    func bytes(count: Int) async throws -> Data

    @GET("/json")
    func slideshow() async throws -> Response<Data>

    @GET("/bytes/{count}")
    func optionalBytes(count: Int) async throws -> Data?

    @GET("/delay/{seconds}")
    func delay(seconds: Int) async throws -> JSON

    @GET(
        "/response-headers?Content-Disposition=attachment%3B%20filename%3D%22..%2Freport.json%22&Content-Type=application%2Fjson")
    func download() async throws -> DownloadedFile

    @GET("/anything")
    func keywords(`default` value: String, `for` other: Int) async throws -> JSON
}

@Suite("Generated client against httpbin", .timeLimit(.minutes(1)))
struct HTTPBinTests {
    func client(_ url: URL) -> HTTPBinClient { HTTPBinClient(client: RestClient(baseURL: url)) }

    @Test("Query items: static, strict encoding, arrays repeated, nil omitted, booleans and dates")
    func query() async throws {
        try await withHTTPBin { url in
            let echo = try await client(url).get(
                q: "a+b c&d=e", tags: ["x", "y"], flag: true, missing: nil, at: Date(timeIntervalSince1970: 0))
            #expect(
                echo["args"] == [
                    "static": "yes", "q": "a+b c&d=e", "tags": ["x", "y"], "flag": "true", "at": "1970-01-01T00:00:00Z",
                ])
            #expect(echo["url"]?.stringValue?.contains("q=a%2Bb%20c%26d%3De") == true)
            #expect(echo["headers"]?["X-Static"] == "hammock")
        }
    }

    @Test("Path values are one segment")
    func pathSegment() async throws {
        try await withHTTPBin { url in
            let echo = try await client(url).anything(segment: "a/b c?d")
            // httpbin shows the path decoded; the "?" staying in the path (no args) proves the encoding.
            #expect(echo["url"]?.stringValue?.hasSuffix("/anything/a/b%20c%3Fd/end") == true)
            #expect(echo["args"] == [:])
        }
    }

    @Test("Form bodies arrive as fields")
    func form() async throws {
        try await withHTTPBin { url in
            let echo = try await client(url).form(name: "ada lovelace", note: nil, formula: "1+1=2 & more")
            #expect(echo["form"] == ["name": "ada lovelace", "formula": "1+1=2 & more"])
            #expect(echo["headers"]?["Content-Type"] == "application/x-www-form-urlencoded")
        }
    }

    @Test("Multipart bodies arrive as fields and files")
    func multipart() async throws {
        try await withHTTPBin { url in
            let file = FilePart(filename: "notes.txt", contentType: "text/plain", data: Array("hello\r\n--not-a-boundary".utf8))
            let echo = try await client(url).upload(description: "a \"quoted\" note", file: file)
            #expect(echo["form"] == ["description": "a \"quoted\" note"])
            #expect(echo["files"] == ["file": "hello\r\n--not-a-boundary"])
            #expect(echo["headers"]?["Content-Type"]?.stringValue?.hasPrefix("multipart/form-data; boundary=") == true)
        }
    }

    @Test("Header substitution; a nil value leaves the header out")
    func headers() async throws {
        try await withHTTPBin { url in
            let with = try await client(url).headers(value: "v1", token: "t0k3n")
            #expect(with["headers"]?["X-Custom"] == "v1")
            #expect(with["headers"]?["Authorization"] == "Bearer t0k3n")
            #expect(with["headers"]?["X-Static"] == "hammock")
            let without = try await client(url).headers(value: nil, token: nil)
            #expect(without["headers"]?["X-Custom"] == nil)
            #expect(without["headers"]?["Authorization"] == nil)
        }
    }

    @Test("JSON bodies arrive as sent")
    func json() async throws {
        try await withHTTPBin { url in
            let payload = Payload(title: "Crash", count: 3, tags: ["bug", "p1"])
            let echo = try await client(url).json(payload: payload)
            #expect(echo["json"] == ["title": "Crash", "count": 3, "tags": ["bug", "p1"]])
            #expect(echo["data"] == #"{"count":3,"tags":["bug","p1"],"title":"Crash"}"#)
            #expect(echo["headers"]?["Content-Type"] == "application/json")
        }
    }

    @Test("Statuses: 2xx passes, others throw with the status; binary results arrive whole")
    func statuses() async throws {
        try await withHTTPBin { url in
            let api = client(url)
            try await api.status(code: 204)
            do {
                try await api.status(code: 418)
                Issue.record("expected an error")
            } catch let error as RestError {
                #expect(error.status?.code == 418)
                #expect(error.description.hasPrefix("GET http://127.0.0.1:"))
            }
            #expect(try await api.bytes(count: 4096).count == 4096)
        }
    }

    @Test("Downloads land in a file, with the suggested name and type")
    func download() async throws {
        try await withHTTPBin { url in
            let file = try await client(url).download()
            defer { try? FileManager.default.removeItem(at: file.url) }
            #expect(file.suggestedFilename == "report.json")  // no directory part, ever
            #expect(file.contentType == "application/json")
            let saved = try Data(contentsOf: file.url)
            #expect(saved.count == file.byteCount && file.byteCount > 0)
            #expect(try JSON(parsing: [UInt8](saved))["Content-Disposition"] == "attachment; filename=\"../report.json\"")
        }
    }

    @Test("Data results are the raw body, whether plain, optional or in a Response")
    func rawBytes() async throws {
        try await withHTTPBin { url in
            let api = client(url)
            let slideshow = try await api.slideshow()
            #expect(slideshow.status == .ok)
            #expect(try JSON(parsing: [UInt8](slideshow.value))["slideshow"]?["title"] == "Sample Slide Show")
            let random = try await api.optionalBytes(count: 64)
            #expect(random?.count == 64)
        }
    }

    @Test("Keyword labels are sent without their backticks")
    func keywordLabels() async throws {
        try await withHTTPBin { url in
            let echo = try await client(url).keywords(default: "x", for: 2)
            #expect(echo["args"] == ["default": "x", "for": "2"])
        }
    }

    @Test("Cancelling a call stops waiting for a slow server")
    func cancellation() async throws {
        try await withHTTPBin { url in
            let api = client(url)
            let call = Task { try await api.delay(seconds: 10) }
            try await Task.sleep(for: .milliseconds(200))
            call.cancel()
            do {
                _ = try await call.value
                Issue.record("expected cancellation")
            } catch let error as RestError {
                guard case .cancelled = error.reason else {
                    Issue.record("expected cancelled, got \(error)")
                    return
                }
            }
        }
    }
}
