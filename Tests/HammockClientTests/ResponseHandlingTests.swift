import Foundation
import HammockClient
import Synchronization
import Testing

@Suite("Responses, errors and interceptors")
struct ResponseHandlingTests {
    @Test("2xx bodies decode into the asked type; 204 and empty bodies are nil for optionals")
    func decoding() async throws {
        let repos = Recorder(body: #"[{"id":1,"name":"hammock"}]"#)
        #expect(
            try await repos.client().send(RequestBuilder(.get, "/repos"), decoding: [Repo].self) == [Repo(id: 1, name: "hammock")]
        )
        let empty = Recorder(status: .noContent, body: "")
        #expect(try await empty.client().sendOptional(RequestBuilder(.get, "/repo"), decoding: Repo.self) == nil)
        let withHeaders = Recorder(headers: [.eTag: "\"v1\""], body: #"{"id":2,"name":"x"}"#)
        let response = try await withHeaders.client().sendForResponse(RequestBuilder(.get, "/repo"), decoding: Repo.self)
        #expect(response.status == .ok && response.headerFields[.eTag] == "\"v1\"" && response.value.id == 2)
        let json = try await repos.client().send(RequestBuilder(.get, "/repos"), decoding: JSON.self)
        #expect(json[0]?["name"] == "hammock")
    }

    @Test("A non-2xx status is an error carrying status, headers, body and the request")
    func unacceptableStatus() async throws {
        struct Problem: Decodable { var title: String }
        let recorder = Recorder(
            status: .notFound, headers: [.contentType: "application/problem+json"], body: #"{"title":"Not Found"}"#)
        do {
            let error = try await #require(throws: RestError.self) {
                _ = try await recorder.client().send(RequestBuilder(.get, "/repos/42"), decoding: Repo.self)
            }
            guard case .unacceptableStatus = error.reason else {
                Issue.record("wrong reason")
                return
            }
            #expect(error.status == .notFound && error.method == .get)
            #expect(error.url == "https://api.example.com/v1/repos/42")
            #expect(error.headerFields?[.contentType] == "application/problem+json")
            #expect(error.request?.path == "/v1/repos/42" && error.request?.method == .get)
            #expect(try error.decodeBody(as: Problem.self).title == "Not Found")
            #expect(error.description == #"GET https://api.example.com/v1/repos/42: 404 Not Found: {"title":"Not Found"}"#)
        }
        let anyStatus = try await recorder.client().send(RequestBuilder(.get, "/repos/42"), acceptingAnyStatus: true)
        #expect(anyStatus.status == .notFound)
    }

    @Test("Decoding, transport and encoding failures are distinct")
    func distinctFailures() async throws {
        let decoding = try await #require(throws: RestError.self) {
            try await Recorder(body: #"{"id":"one"}"#).client().send(RequestBuilder(.get, "/repo"), decoding: Repo.self)
        }
        if case .decoding = decoding.reason {} else { Issue.record("expected decoding, got \(decoding.reason)") }
        #expect(decoding.status == .ok && decoding.body == Array(#"{"id":"one"}"#.utf8))

        let failing = RestClient(
            baseURL: URL(string: "https://x")!, transport: MockTransport { _, _ in throw URLError(.cannotConnectToHost) })
        let transport = try await #require(throws: RestError.self) { try await failing.send(RequestBuilder(.get, "/")) }
        if case .transport(let underlying) = transport.reason {
            #expect((underlying as? URLError)?.code == .cannotConnectToHost)
        } else {
            Issue.record("expected transport, got \(transport.reason)")
        }
        #expect(transport.status == nil)

        struct Unencodable: Encodable, Sendable {
            func encode(to encoder: any Encoder) throws {
                throw EncodingError.invalidValue(self, .init(codingPath: [], debugDescription: "no"))
            }
        }
        var request = RequestBuilder(.post, "/x")
        request.setBody(Unencodable())
        let encoding = try await #require(throws: RestError.self) { try await Recorder().client().send(request) }
        if case .encoding = encoding.reason {} else { Issue.record("expected encoding, got \(encoding.reason)") }
    }

    @Test("Cancelling the task cancels the request in flight")
    func cancellation() async throws {
        let started = Mutex(false)
        let transport = MockTransport { _, _ in
            started.withLock { $0 = true }
            try await Task.sleep(for: .seconds(60))
            return (HTTPResponse(status: .ok), [])
        }
        let client = RestClient(baseURL: URL(string: "https://x")!, transport: transport)
        let task = Task { try await client.send(RequestBuilder(.get, "/slow")) }
        while !started.withLock({ $0 }) { await Task.yield() }
        task.cancel()
        do {
            _ = try await task.value
            Issue.record("expected cancellation")
        } catch let error as RestError {
            guard case .cancelled = error.reason else {
                Issue.record("expected cancelled, got \(error.reason)")
                return
            }
        }
    }

    final class Log: Sendable { let entries = Mutex<[String]>([]) }

    @Test("Interceptors run in order: the first sees the request first and the response last")
    func interceptorOrder() async throws {
        let log = Log()
        let first = TaggingBox(tag: "1", log: log)
        let second = TaggingBox(tag: "2", log: log)
        let recorder = Recorder()
        _ = try await recorder.client(interceptors: [first, second, BearerAuthentication { "s3cret" }]).send(
            RequestBuilder(.get, "/"))
        #expect(log.entries.withLock { $0 } == ["→1", "→2", "←2", "←1"])
        #expect(recorder.last?.request.headerFields[.authorization] == "Bearer s3cret")
    }

    struct TaggingBox: ClientInterceptor {
        let tag: String
        let log: Log
        func intercept(_ request: HTTPRequest, body: [UInt8]?, next: Next) async throws -> (HTTPResponse, [UInt8]) {
            log.entries.withLock { $0.append("→\(tag)") }
            let result = try await next(request, body)
            log.entries.withLock { $0.append("←\(tag)") }
            return result
        }
    }

    @Test("Retries repeat idempotent requests on 503 and transport errors, never POST")
    func retries() async throws {
        let attempts = Mutex(0)
        let transport = MockTransport { request, _ in
            let attempt = attempts.withLock { count -> Int in
                count += 1
                return count
            }
            if attempt == 1 { throw URLError(.networkConnectionLost) }
            if attempt == 2 { return (HTTPResponse(status: .serviceUnavailable), []) }
            return (HTTPResponse(status: .ok), Array("{}".utf8))
        }
        let client = RestClient(
            baseURL: URL(string: "https://x")!, transport: transport,
            interceptors: [RetryPolicy(maximumAttempts: 3, initialDelay: .zero)])
        #expect(try await client.send(RequestBuilder(.get, "/")).status == .ok)
        #expect(attempts.withLock { $0 } == 3)

        attempts.withLock { $0 = 1 }  // the next attempt answers 503
        let error = await #expect(throws: RestError.self) { try await client.send(RequestBuilder(.post, "/")) }
        #expect(error?.status == .serviceUnavailable)
        #expect(attempts.withLock { $0 } == 2)  // POST: one attempt only

        let stubborn = RestClient(
            baseURL: URL(string: "https://x")!, transport: MockTransport { _, _ in (HTTPResponse(status: .badGateway), []) },
            interceptors: [RetryPolicy(maximumAttempts: 2, initialDelay: .zero)])
        let last = await #expect(throws: RestError.self) { try await stubborn.send(RequestBuilder(.get, "/")) }
        #expect(last?.status == .badGateway)
    }

    @Test("Logging redacts secrets in headers and query items")
    func redaction() {
        let fields: HTTPFields = [.authorization: "Bearer abc", .cookie: "id=1", .accept: "application/json"]
        #expect(
            RequestLogging.redactedHeaderText(fields) == "Authorization: <redacted>; Cookie: <redacted>; Accept: application/json"
        )
        #expect(
            RequestLogging.redactedPath("/login?user=ada&access_token=xyz&apiKey=1&page=2")
                == "/login?user=ada&access_token=<redacted>&apiKey=<redacted>&page=2")
    }

    @Test(
        "Logging redacts tokens in paths: after a segment that holds one, and any that looks like one",
        arguments: [
            ("/password/reset/8f14e45fceea167a5a36dedd4bea2543", "/password/reset/<redacted>"),
            ("/invite/XK2-99Q", "/invite/<redacted>"),
            ("/api-keys/k-42/usage", "/api-keys/<redacted>/usage"),
            ("/files/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlc2lnbmF0dXJl", "/files/<redacted>"),
            ("/people/3f0c5a8e-2b1d-4c7a-9e6f-1a2b3c4d5e6f/cars", "/people/3f0c5a8e-2b1d-4c7a-9e6f-1a2b3c4d5e6f/cars"),
            ("/monkeys/7?page=2", "/monkeys/7?page=2"),
        ])
    func pathRedaction(path: String, logged: String) {
        #expect(RequestLogging.redactedPath(path) == logged)
    }

    @Test("Logging shows only the values of describing headers: an API key of the app's own is secret by default")
    func redactionByDefault() {
        let fields: HTTPFields = [
            HTTPField.Name("X-Api-Key")!: "key-123", HTTPField.Name("Private-Token")!: "glpat", .accept: "application/json",
            .userAgent: "App/1", HTTPField.Name("X-Hammock-Made-Up")!: "per-call",
        ]
        let text = RequestLogging.redactedHeaderText(fields)
        for secret in ["key-123", "glpat", "per-call"] { #expect(!text.contains(secret)) }
        #expect(text.contains("Accept: application/json") && text.contains("User-Agent: App/1"))
        // A field the app names as visible is shown; credentials never are.
        let visible = RequestLogging.defaultVisibleHeaders.union([HTTPField.Name("X-Api-Key")!, .authorization])
        let widened = RequestLogging.redactedHeaderText(
            fields + [HTTPField(name: .authorization, value: "Bearer t")], visible: visible)
        #expect(widened.contains("X-Api-Key: key-123") && widened.contains("Authorization: <redacted>"))
    }

    @Test(
        "URLs inside logged errors lose their secret query items and user info; sig, code and credential are secret words",
        arguments: [
            (
                "Error Domain=NSURLErrorDomain Code=-1004 \"Could not connect\" UserInfo={NSErrorFailingURLKey=https://s3.example/x?X-Amz-Signature=abc&X-Amz-Credential=AKIA&part=1}",
                "https://s3.example/x?X-Amz-Signature=<redacted>&X-Amz-Credential=<redacted>&part=1}"
            ),
            (
                "failed: http://user:pa55@api.example/cb?code=123&state=ok then",
                "http://<redacted>@api.example/cb?code=<redacted>&state=ok then"
            ),
            ("GET https://a.example/q?sig=s1, retrying", "https://a.example/q?sig=<redacted>, retrying"),
            ("no url here, only http and https words", "no url here, only http and https words"),
        ])
    func redactedErrors(text: String, expectedTail: String) {
        let redacted = RequestLogging.redactedURLs(in: text)
        #expect(redacted.hasSuffix(expectedTail), "\(redacted)")
        for secret in ["abc", "AKIA", "pa55", "123", "s1"] where text.contains("=\(secret)") || text.contains(":\(secret)@") {
            #expect(!redacted.contains(secret))
        }
    }
}
