import Foundation
import HammockClient
import HammockJSON
import Testing

/// What exactly reaches the transport: method, URL, headers and body bytes.
@Suite("Request building")
struct RequestBuildingTests {
    @Test("Path values are encoded as one segment; the base URL's path is kept")
    func paths() async throws {
        let recorder = Recorder()
        var request = RequestBuilder(.get, "/users/{user}/repos")
        request.setPathValue("octo/cat ü+", for: "user")
        _ = try await recorder.client().send(request)
        let sent = try #require(recorder.last?.request)
        #expect(sent.method == .get)
        #expect(sent.scheme == "https" && sent.authority == "api.example.com")
        #expect(sent.path == "/v1/users/octo%2Fcat%20%C3%BC%2B/repos")
        #expect(sent.url?.absoluteString == "https://api.example.com/v1/users/octo%2Fcat%20%C3%BC%2B/repos")

        _ = try await recorder.client("http://127.0.0.1:8080/api/").send(RequestBuilder(.get, "things"))
        #expect(recorder.last?.request.path == "/api/things")
        #expect(recorder.last?.request.authority == "127.0.0.1:8080")

        _ = try await recorder.client("http://[::1]:8080").send(RequestBuilder(.get, "/things"))
        #expect(recorder.last?.request.authority == "[::1]:8080")  // bracketed once, not twice
    }

    @Test("Placeholders may sit anywhere in a segment")
    func placeholderInSegment() async throws {
        let recorder = Recorder()
        var request = RequestBuilder(.get, "/files/{name}.{ext}")
        request.setPathValue("report", for: "name")
        request.setPathValue("tar gz", for: "ext")
        _ = try await recorder.client().send(request)
        #expect(recorder.last?.request.path == "/v1/files/report.tar%20gz")
    }

    @Test("Bad path values are refused before anything is sent", arguments: ["..", ".", ""])
    func badPathValues(value: String) async throws {
        let recorder = Recorder()
        var request = RequestBuilder(.delete, "/users/{user}")
        request.setPathValue(value, for: "user")
        await #expect(throws: RestError.self) { try await recorder.client().send(request) }
        #expect(recorder.count == 0)
        let error = try await #require(throws: RestError.self) {
            try await recorder.client().send(RequestBuilder(.get, "/users/{user}"))
        }
        guard case .invalidRequest(let message) = error.reason else {
            Issue.record("wrong reason \(error.reason)")
            return
        }
        #expect(message == "no value for the placeholder {user}")
        #expect(error.description.hasPrefix("GET https://api.example.com/v1/users/{user}: invalid request"))
        #expect(recorder.count == 0)
    }

    @Test("Query items: static ones kept, strict encoding, nil omitted, arrays repeated, typed values")
    func query() async throws {
        let recorder = Recorder()
        var request = RequestBuilder(.get, "/search?type=repo")
        request.addQuery("q", "a+b c&d=e/f")
        request.addQuery("sort", Sort.updated)
        request.addQuery("page", 2)
        request.addQuery("draft", false)
        request.addQuery("missing", String?.none)
        request.addQuery("tag", ["x", "y z"])
        request.addQuery("since", Date(timeIntervalSince1970: 0))
        request.addQuery("ratio", 0.5)
        _ = try await recorder.client().send(request)
        #expect(
            recorder.last?.request.path
                == "/v1/search?type=repo&q=a%2Bb%20c%26d%3De%2Ff&sort=updated&page=2&draft=false&tag=x&tag=y%20z&since=1970-01-01T00%3A00%3A00Z&ratio=0.5"
        )
    }

    @Test("Headers: defaults, overrides ignoring case, nil omitted, line breaks refused")
    func headers() async throws {
        let recorder = Recorder()
        let client = recorder.client(defaultHeaders: ["Accept": "application/json", "X-Client": "hammock"])
        var request = RequestBuilder(.get, "/user")
        request.setHeader("accept", "application/vnd.github+json")
        request.setHeader("If-None-Match", String?.none)
        request.removeHeader("X-Client")
        _ = try await client.send(request)
        let fields = try #require(recorder.last?.request.headerFields)
        #expect(fields[.accept] == "application/vnd.github+json")
        #expect(fields[.ifNoneMatch] == nil && fields[HTTPField.Name("X-Client")!] == nil)
        #expect(fields[.contentType] == nil)  // no body, no Content-Type

        var injected = RequestBuilder(.get, "/user")
        injected.setHeader("X-Name", "a\r\nX-Evil: 1")
        do {
            let error = try await #require(throws: RestError.self) {
                _ = try await client.send(injected)
            }
            guard case .invalidRequest(let message) = error.reason else {
                Issue.record("wrong reason")
                return
            }
            #expect(message.contains("line break"))
        }
        var badName = RequestBuilder(.get, "/user")
        badName.setHeader("Bad Name", "x")
        await #expect(throws: RestError.self) { try await client.send(badName) }
        #expect(recorder.count == 1)
    }

    @Test("JSON bodies have sorted keys and a Content-Type")
    func jsonBody() async throws {
        struct NewIssue: Encodable, Sendable {
            var title: String
            var labels: [String]
            var body: String?
            var due: Date
        }
        let recorder = Recorder()
        var request = RequestBuilder(.post, "/repos/{owner}/{repo}/issues")
        request.setPathValue("apple", for: "owner")
        request.setPathValue("swift", for: "repo")
        request.setBody(NewIssue(title: "Crash", labels: ["bug"], body: nil, due: Date(timeIntervalSince1970: 86400)))
        _ = try await recorder.client().send(request)
        #expect(recorder.last?.bodyText == #"{"due":"1970-01-02T00:00:00Z","labels":["bug"],"title":"Crash"}"#)
        #expect(recorder.last?.request.headerFields[.contentType] == "application/json")

        var raw = RequestBuilder(.put, "/things/1")
        raw.setBody(["z": 1, "a": [true, nil]] as JSON)
        _ = try await recorder.client().send(raw)
        #expect(recorder.last?.bodyText == #"{"a":[true,null],"z":1}"#)
    }

    @Test("Form bodies encode strictly, with + for spaces")
    func formBody() async throws {
        let recorder = Recorder()
        var request = RequestBuilder(.post, "/oauth/token")
        request.addFormField("grant_type", "password")
        request.addFormField("username", "ada lovelace")
        request.addFormField("password", "p+ss&w=rd/ü")
        request.addFormField("scope", String?.none)
        _ = try await recorder.client().send(request)
        #expect(recorder.last?.bodyText == "grant_type=password&username=ada+lovelace&password=p%2Bss%26w%3Drd%2F%C3%BC")
        #expect(recorder.last?.request.headerFields[.contentType] == "application/x-www-form-urlencoded")
    }

    @Test("Multipart bodies use a boundary that occurs in no part")
    func multipartBody() async throws {
        let recorder = Recorder()
        var request = RequestBuilder(.post, "/upload")
        request.addPart("description", "a \"quoted\" cat")
        let data = Array("--hammock-fake-boundary\r\nbinary\u{0}".utf8)
        request.addPart("photo", FilePart(filename: "cat.jpg", contentType: "image/jpeg", data: data))
        _ = try await recorder.client().send(request)
        let contentType = try #require(recorder.last?.request.headerFields[.contentType])
        #expect(contentType.hasPrefix("multipart/form-data; boundary=hammock-"))
        let boundary = String(contentType.split(separator: "=", maxSplits: 1)[1])
        let text = try #require(recorder.last?.bodyText)
        #expect(
            text == """
                --\(boundary)\r
                Content-Disposition: form-data; name="description"\r
                \r
                a "quoted" cat\r
                --\(boundary)\r
                Content-Disposition: form-data; name="photo"; filename="cat.jpg"\r
                Content-Type: image/jpeg\r
                \r
                --hammock-fake-boundary\r
                binary\u{0}\r
                --\(boundary)--\r

                """)
        #expect(!String(decoding: data, as: UTF8.self).contains(boundary))
    }
}

/// Dictionaries as query items, form fields, parts and header fields, from an `@API` method's parameters.
@Suite("Parameter maps")
struct ParameterMapTests {
    @API
    protocol Search: Sendable {
        @HeaderMap("extra")
        @GET("/search")
        func search(
            q: String, filters: [String: String], tags: [String: [String]]?, extra: [String: String?]?
        ) async throws -> JSON

        @FormURLEncoded
        @POST("/forms")
        func submit(fields: [String: String]) async throws

        @Multipart
        @POST("/parts")
        func upload(parts: [String: Int]) async throws
    }

    @Test("A dictionary parameter spreads its pairs as query items in key order: arrays repeat, nil sends none")
    func query() async throws {
        let recorder = Recorder()
        let search = SearchClient(client: recorder.client())
        _ = try await search.search(
            q: "rope", filters: ["size": "10 m", "color": "red&blue"], tags: ["t": ["a", "b"]], extra: nil)
        #expect(recorder.last?.request.path == "/v1/search?q=rope&color=red%26blue&size=10%20m&t=a&t=b")
        _ = try await search.search(q: "x", filters: [:], tags: nil, extra: nil)
        #expect(recorder.last?.request.path == "/v1/search?q=x")
    }

    @Test(
        "@HeaderMap sends a dictionary as header fields; a nil value leaves its header out; a bad name is refused before sending")
    func headers() async throws {
        let recorder = Recorder()
        let search = SearchClient(client: recorder.client(defaultHeaders: ["X-Trace": "default"]))
        _ = try await search.search(q: "x", filters: [:], tags: nil, extra: ["X-Team": "core", "X-Trace": nil])
        let fields = try #require(recorder.last?.request.headerFields)
        #expect(fields[HTTPField.Name("X-Team")!] == "core")
        #expect(fields[HTTPField.Name("X-Trace")!] == nil)
        let error = await #expect(throws: RestError.self) {
            try await search.search(q: "x", filters: [:], tags: nil, extra: ["Bad Name": "v"])
        }
        #expect(error?.kind == .invalidRequest)
        #expect(recorder.count == 1)
    }

    @Test("A dictionary becomes form fields or parts in key order, under @FormURLEncoded and @Multipart")
    func bodies() async throws {
        let recorder = Recorder()
        let search = SearchClient(client: recorder.client())
        try await search.submit(fields: ["b": "2 3", "a": "1"])
        #expect(recorder.last?.bodyText == "a=1&b=2+3")
        try await search.upload(parts: ["second": 2, "first": 1])
        let text = try #require(recorder.last?.bodyText)
        let first = try #require(text.range(of: #"name="first""#))
        let second = try #require(text.range(of: #"name="second""#))
        #expect(first.lowerBound < second.lowerBound)
    }
}
