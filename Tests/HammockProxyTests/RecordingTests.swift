import Foundation
import HTTPTypes
import HammockHTTPServer
import HammockJSON
import HammockServer
import HammockTestSupport
import Testing

@testable import HammockProxy

/// Recording what the proxy passes on, and serving the recording without the backend: against httpbin
/// (PyPI), which no one here wrote, and against a Hammock server standing in for a backend with
/// collections.
@Suite("Recording what the proxy passes on", .timeLimit(.minutes(2)))
struct RecordingTests {
    /// The secrets the requests below carry: none may be in the file written.
    static let secrets = [
        "bearer-t0ken-4711", "c00kie-value-99", "k3y-in-the-query", "hunter2-password", "form-s3cret-value",
        "basic-pa55word", "custom-h3ader-value",
    ]

    /// The requests the httpbin test sends: every method, secrets in each place a client puts them, a
    /// binary answer, a status without a body, and one request whose answer changes every time.
    static func requests() -> [MockRequest] {
        var requests: [MockRequest] = []
        var bearer = MockRequest(.get, "/headers")
        bearer.headerFields[.authorization] = "Bearer bearer-t0ken-4711"
        bearer.headerFields[HTTPField.Name("X-Custom-Key")!] = "custom-h3ader-value"
        requests.append(bearer)
        var cookie = MockRequest(.get, "/cookies")
        cookie.headerFields[.cookie] = "session=c00kie-value-99; theme=dark"
        requests.append(cookie)
        requests.append(MockRequest(.get, "/get?page=2&api_key=k3y-in-the-query"))
        requests.append(MockRequest(.post, "/post", json: ["user": "amy", "password": "hunter2-password"]))
        var form = MockRequest(.post, "/anything/login", body: Array("user=amy&password=form-s3cret-value".utf8))
        form.headerFields[.contentType] = "application/x-www-form-urlencoded"
        requests.append(form)
        var basic = MockRequest(.get, "/anything/basic")
        basic.headerFields[.authorization] = "Basic " + Data("amy:basic-pa55word".utf8).base64EncodedString()
        requests.append(basic)
        requests.append(MockRequest(.put, "/put", json: ["n": 1]))
        requests.append(MockRequest(.patch, "/patch", json: ["n": 2]))
        requests.append(MockRequest(.delete, "/delete"))
        requests.append(MockRequest(.get, "/bytes/64?seed=3"))
        requests.append(MockRequest(.get, "/status/418"))
        requests.append(MockRequest(.get, "/status/204"))
        requests.append(MockRequest(.get, "/uuid"))
        requests.append(MockRequest(.get, "/uuid"))
        requests.append(MockRequest(.get, "/base64/e3t0ZW1wbGF0ZX19"))  // "{{template}}": served as written
        // A HEAD replays with the length the backend gave it, not its empty body's 0.
        requests.append(MockRequest(.head, "/bytes/1234?seed=1"))
        return requests
    }

    /// An answer as the client sees it: status, type, and the body (as JSON when it is JSON).
    struct Seen: Equatable, CustomStringConvertible {
        var status: Int
        var type: String?
        var json: JSON?
        var bytes: [UInt8]
        /// Set in process for a HEAD only (the engine's HEAD step writes it; other lengths are the wire's).
        var length: String?

        init(_ response: MockResponse) async throws {
            status = Int(response.status.code)
            type = response.headerFields[.contentType]
            length = response.headerFields[.contentLength]
            bytes = try await response.stream?.collect() ?? response.body
            json = type?.hasPrefix("application/json") == true ? try? JSON(parsing: bytes) : nil
            if json != nil { bytes = [] }
        }

        var description: String {
            "\(status) \(type ?? "-") \(json?.serializedString() ?? String(decoding: bytes, as: UTF8.self))"
        }
    }

    static func temporaryFile(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("hammock-\(name)-\(UUID().uuidString).json").path
    }

    @Test("A recording of httpbin replays what it answered, in order, and no secret sent reaches the file")
    func replay() async throws {
        let file = Self.temporaryFile("recording")
        defer { try? FileManager.default.removeItem(atPath: file) }
        var first: [Seen] = []
        try await withHTTPBin { upstream in
            // A header of the API's own named; the rest are the defaults.
            let recording = ProxyRecording(redaction: RecordingRedaction(headers: ["X-Custom-Key"]))
            let proxy = try await MockServer(resources: [])
            proxy.addRoutes(try ProxyRoutes(upstream: upstream, recording: recording), first: false)
            for request in Self.requests() { first.append(try await Seen(proxy.respond(to: request))) }
            let summary = try recording.write(toFile: file, inferringResources: false)
            #expect(summary.exchanges == Self.requests().count && summary.skipped == 0)
            #expect(summary.resources.isEmpty)
        }
        // Redaction: on disk, no secret in any form a request carried it (the Basic pair decoded too).
        let written = try String(contentsOfFile: file, encoding: .utf8)
        for secret in Self.secrets { #expect(!written.contains(secret), "\(secret) is in the recording") }
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        // Replay without the backend: the same requests get the same answers, but what was redacted.
        let configuration = try ServerConfiguration(contentsOfFile: file)
        let replay = try await MockServer.inMemory(configuration)
        let carriedSecrets: Set<Int> = [0, 1, 2, 3, 4, 5]
        for (index, request) in Self.requests().enumerated() {
            let again = try await Seen(replay.respond(to: request))
            if carriedSecrets.contains(index) {
                #expect(again.status == first[index].status, "\(request.path)")
                #expect(!Self.secrets.contains { again.description.contains($0) }, "\(request.path)")
            } else {
                #expect(again == first[index], "\(request.method) \(request.path)")
            }
        }
        // The two /uuid answers differed, and came back in that order; a third repeats the last.
        #expect(first[12] != first[13])
        #expect(try await Seen(replay.respond(to: MockRequest(.get, "/uuid"))) == first[13])
        #expect(String(decoding: first[14].bytes, as: UTF8.self) == "{{template}}")
        #expect(first[15].length == "1234" && first[15].bytes.isEmpty)
    }

    @Test("A collection's exchanges become a resource holding the backend's last state; CRUD then works on it")
    func resources() async throws {
        // The backend: a Hammock server over loopback, with records whose ids have a gap.
        let people = MockResource("people", fields: ["name": .string, "numberOfKids": .integer])
        let cars = MockResource("cars", fields: ["name": .string], parents: ["people"])
        let backend = try await MockServer(resources: [people, cars])
        _ = try await backend.addData(
            [
                ["id": 1, "name": "Amy", "numberOfKids": 2], ["id": 4, "name": "Kofi", "numberOfKids": 0],
                ["id": 7, "name": "Rosa"],
            ],
            for: "people")
        _ = try await backend.addData([["name": "Beetle", "person_id": 4]], for: "cars")
        let file = Self.temporaryFile("resources")
        defer { try? FileManager.default.removeItem(atPath: file) }
        try await backend.whileServing { port in
            let recording = ProxyRecording()
            let proxy = try await MockServer(resources: [])
            proxy.addRoutes(
                try ProxyRoutes(upstream: try #require(URL(string: "http://127.0.0.1:\(port)")), recording: recording),
                first: false)
            // Each answer read to its end, as a client does: an exchange is kept once its answer has ended.
            func send(_ request: MockRequest) async throws -> Int { try await Seen(proxy.respond(to: request)).status }
            #expect(try await send(MockRequest(.get, "/people")) == 200)
            #expect(try await send(MockRequest(.get, "/people/4")) == 200)
            #expect(try await send(MockRequest(.post, "/people", json: ["name": "Zed", "numberOfKids": 1])) == 201)
            #expect(try await send(MockRequest(.patch, "/people/1", json: ["numberOfKids": 3])) == 200)
            #expect(try await send(MockRequest(.delete, "/people/7")) == 204)
            #expect(try await send(MockRequest(.get, "/people/7")) == 404)
            #expect(try await send(MockRequest(.get, "/cars")) == 200)
            #expect(try await send(MockRequest(.get, "/people/4/cars")) == 200)
            #expect(try await send(MockRequest(.post, "/people/1/cars", json: ["name": "Golf"])) == 201)
            let summary = try recording.write(toFile: file)
            #expect(summary.resources == ["people", "cars"])
            #expect(summary.stubs == 0, "the nested list and create are the cars resource's, linked to people")
            // The backend's state now is the oracle for what the recording holds.
            let backendPeople = try await Seen(backend.respond(to: MockRequest(.get, "/people"))).json
            let backendCars = try await Seen(backend.respond(to: MockRequest(.get, "/cars"))).json

            let replay = try await MockServer.inMemory(try ServerConfiguration(contentsOfFile: file))
            #expect(try await Seen(replay.respond(to: MockRequest(.get, "/people"))).json == backendPeople)
            #expect(try await Seen(replay.respond(to: MockRequest(.get, "/cars"))).json == backendCars)
            // The nested route answers from the records, as the backend's does.
            let backendNested = try await Seen(backend.respond(to: MockRequest(.get, "/people/1/cars"))).json
            #expect(try await Seen(replay.respond(to: MockRequest(.get, "/people/1/cars"))).json == backendNested)
            #expect(backendNested?.arrayValue?.count == 1)
            // CRUD on the recorded data: keys continue after the recorded ones, and the links hold.
            let created = try await Seen(replay.respond(to: MockRequest(.post, "/people", json: ["name": "New"])))
            #expect(created.status == 201 && (created.json?["id"]?.intValue ?? 0) > 8)
            let updated = try await Seen(replay.respond(to: MockRequest(.patch, "/people/4", json: ["name": "Kofi O."])))
            #expect(updated.json?["name"] == "Kofi O." && updated.json?["numberOfKids"] == 0)
            #expect(await replay.respond(to: MockRequest(.delete, "/people/1")).status == .noContent)
            #expect(await replay.respond(to: MockRequest(.get, "/people/1")).status == .notFound)
            #expect(try await Seen(replay.respond(to: MockRequest(.get, "/cars/1"))).json?["person_id"] == 4)
            // The link is a parent's: a deleted person's car keeps no dangling key, and a new car under Kofi is his.
            #expect(try await Seen(replay.respond(to: MockRequest(.get, "/cars/2"))).json?["person_id"] == .null)
            let added = try await Seen(replay.respond(to: MockRequest(.post, "/people/4/cars", json: ["name": "Fiat"])))
            #expect(added.status == 201 && added.json?["person_id"] == 4)
        }
    }

    @Test(
        "A collection seen only under its parent's records becomes a child resource; one whose records name a parent never seen stays stubs"
    )
    func nestedOnly() async throws {
        let people = MockResource("people", fields: ["name": .string])
        let cars = MockResource("cars", fields: ["name": .string], parents: ["people"])
        let backend = try await MockServer(resources: [people, cars])
        _ = try await backend.addData([["name": "Amy"], ["name": "Kofi"]], for: "people")
        _ = try await backend.addData([["name": "Beetle", "person_id": 2], ["name": "Golf", "person_id": 2]], for: "cars")
        try await backend.whileServing { port in
            let upstream = try #require(URL(string: "http://127.0.0.1:\(port)"))
            // People listed, then Kofi's cars: the cars are a child resource.
            let recording = ProxyRecording()
            let proxy = try await MockServer(resources: [])
            proxy.addRoutes(try ProxyRoutes(upstream: upstream, recording: recording), first: false)
            #expect(try await Seen(proxy.respond(to: MockRequest(.get, "/people"))).status == 200)
            #expect(try await Seen(proxy.respond(to: MockRequest(.get, "/people/2/cars"))).status == 200)
            let (configuration, summary) = recording.configuration()
            #expect(summary.resources == ["people", "cars"] && summary.stubs == 0)
            let declared = configuration["resources"]?[1]
            #expect(declared?["parents"] == [["resource": "people", "foreignKey": "person_id"]])
            #expect(declared?["fields"]?["person_id"] == nil, "the parent link types it")
            let replay = try await MockServer.inMemory(
                try ServerConfiguration(parsing: configuration.serialized(), file: "recorded.json"))
            #expect(
                try await Seen(replay.respond(to: MockRequest(.get, "/people/2/cars"))).json
                    == Seen(backend.respond(to: MockRequest(.get, "/people/2/cars"))).json)
            #expect(try await Seen(replay.respond(to: MockRequest(.get, "/people/1/cars"))).json == [])

            // Kofi's cars without Kofi: a link the data would break is not made.
            let partial = ProxyRecording()
            let second = try await MockServer(resources: [])
            second.addRoutes(try ProxyRoutes(upstream: upstream, recording: partial), first: false)
            #expect(try await Seen(second.respond(to: MockRequest(.get, "/people/1"))).status == 200)
            #expect(try await Seen(second.respond(to: MockRequest(.get, "/people/2/cars"))).status == 200)
            let (stubbed, stubbedSummary) = partial.configuration()
            #expect(stubbedSummary.resources == ["people"] && stubbedSummary.stubs == 1)
            let again = try await MockServer.inMemory(
                try ServerConfiguration(parsing: stubbed.serialized(), file: "recorded.json"))
            #expect(try await Seen(again.respond(to: MockRequest(.get, "/people/2/cars"))).json?.arrayValue?.count == 2)
        }
    }

    @Test("A collection keyed by UUIDs the backend made keeps them, and the recording's mock makes new ones")
    func uuidKeys() async throws {
        var notes = MockResource(
            "notes", fields: [MockResource.Field("id", .string), MockResource.Field("text", .string)], primaryKey: "id")
        notes.keyFormat = .uuid
        let backend = try await MockServer(resources: [notes])
        try await backend.whileServing { port in
            let recording = ProxyRecording()
            let proxy = try await MockServer(resources: [])
            proxy.addRoutes(
                try ProxyRoutes(upstream: try #require(URL(string: "http://127.0.0.1:\(port)")), recording: recording),
                first: false)
            let made = try await Seen(proxy.respond(to: MockRequest(.post, "/notes", json: ["text": "a"])))
            let key = try #require(made.json?["id"]?.stringValue)
            #expect(try await Seen(proxy.respond(to: MockRequest(.get, "/notes/\(key)"))).status == 200)
            let (configuration, summary) = recording.configuration()
            #expect(summary.resources == ["notes"])
            #expect(
                configuration["resources"]?[0]?["keyFormat"] == "uuid" && configuration["resources"]?[0]?["primaryKey"] == "id")
            let replay = try await MockServer.inMemory(
                try ServerConfiguration(parsing: configuration.serialized(), file: "r.json"))
            #expect(try await Seen(replay.respond(to: MockRequest(.get, "/notes/\(key)"))).json?["text"] == "a")
            let another = try await Seen(replay.respond(to: MockRequest(.post, "/notes", json: ["text": "b"])))
            #expect(another.status == 201 && UUID(uuidString: another.json?["id"]?.stringValue ?? "") != nil)
        }
    }

    @Test("Redaction keeps what a value was (scheme, cookie names, attributes) and never the value")
    func redaction() {
        let redaction = RecordingRedaction(headers: ["X-Tenant"], members: ["ssn"])
        var secrets: Set<String> = []
        #expect(redaction.header("Authorization", "Bearer abcdefgh", secrets: &secrets) == "Bearer REDACTED")
        #expect(redaction.header("Cookie", "a=1234567; b=xyzxyzxyz", secrets: &secrets) == "a=REDACTED; b=REDACTED")
        #expect(
            redaction.header("Set-Cookie", "sid=q1w2e3r4; Path=/; HttpOnly", secrets: &secrets)
                == "sid=REDACTED; Path=/; HttpOnly")
        #expect(redaction.header("x-tenant", "tenant-123456", secrets: &secrets) == "REDACTED")
        #expect(redaction.header("Accept", "application/json", secrets: &secrets) == "application/json")
        #expect(secrets == ["abcdefgh", "1234567", "xyzxyzxyz", "q1w2e3r4", "tenant-123456"])
        let body: JSON = ["user": ["ssn": "123-45-6789", "name": "amy"], "Password": "pw-998877", "list": [["token": nil]]]
        #expect(
            redaction.json(body, secrets: &secrets)
                == ["user": ["ssn": "REDACTED", "name": "amy"], "Password": "REDACTED", "list": [["token": nil]]])
        #expect(secrets.contains("123-45-6789") && secrets.contains("pw-998877"))
        #expect(redaction.formEncoded("a=1&access_token=zz%2Bzzzzz&b", secrets: &secrets) == "a=1&access_token=REDACTED&b")
        #expect(secrets.contains("zz+zzzzz"))
        // Short values are redacted where they stand, but not hunted through every body.
        var few: Set<String> = []
        #expect(redaction.header("Authorization", "Bearer ab1", secrets: &few) == "Bearer REDACTED")
        #expect(few.isEmpty)
    }

    @Test(
        "Secrets in text that is not one JSON document (JSON Lines, broken JSON, JSON in a page) are redacted by their member names (found by fuzz-redaction)"
    )
    func membersInText() throws {
        let redaction = RecordingRedaction()
        var secrets: Set<String> = []
        func redacted(_ text: String) -> String? {
            redaction.jsonMembers(inText: Array(text.utf8), secrets: &secrets).map { String(decoding: $0, as: UTF8.self) }
        }
        #expect(
            redacted("{\"user\": \"ada\", \"token\": \"tk-123456\"}\n{\"Password\" :\t\"pw-\\\"quoted\\\"-1\"}\n")
                == "{\"user\": \"ada\", \"token\": \"REDACTED\"}\n{\"Password\" :\t\"REDACTED\"}\n")
        #expect(secrets.contains("tk-123456") && secrets.contains(#"pw-"quoted"-1"#))
        // Broken JSON, and JSON in a page's script: the member is found all the same.
        #expect(redacted(#"{"password": "pw-abcdef", "note": "a"b"}"#) == #"{"password": "REDACTED", "note": "a"b"}"#)
        #expect(
            redacted(#"<script>window.state = {"access_token": "at-998877"};</script>"#)
                == #"<script>window.state = {"access_token": "REDACTED"};</script>"#)
        // A number goes as in JSON that parses; names not redacted, and unclosed quotes, are left alone.
        #expect(
            redacted(#"{"pin": 1, "token": 123456, "name": "tokenless""#)
                == #"{"pin": 1, "token": "REDACTED", "name": "tokenless""#)
        #expect(secrets.contains("123456"))
        #expect(redacted(#"{"name": "tokenless", "x": "y, "token"#) == nil)

        // Through a recording: a JSON Lines body and a broken one, neither parsed as JSON.
        let recording = ProxyRecording()
        var lines = MockRequest(.post, "/events", body: Array("{\"event\": 1, \"secret\": \"sec-111222\"}\n".utf8))
        lines.headerFields[.contentType] = "application/x-ndjson"
        recording.add(request: lines, status: .ok, fields: [.contentType: "text/plain"], body: Array("got sec-111222".utf8))
        var broken = MockRequest(.post, "/login", body: Array(#"{"password": "pw-333444", "x": }"#.utf8))
        broken.headerFields[.contentType] = "application/json"
        recording.add(request: broken, status: .ok, fields: [:], body: [])
        let written = recording.archive().archive.serializedString()
        #expect(!written.contains("sec-111222") && !written.contains("pw-333444"))
        #expect(written.contains("REDACTED"))
    }

    @Test(
        "Copies under way are bound in all: an answer that would pass maximumInFlight is left out and counted, and each copy's bytes are given back when it ends"
    )
    func inFlightBound() async throws {
        // The bound itself: never passed, even for a moment, and no trap at its extremes.
        let bound = ProxyRecording(maximumInFlight: 1000)
        #expect(bound.reserve(600) && !bound.reserve(500) && bound.bytesInFlight == 600)
        bound.release(600)
        #expect(bound.reserve(1000) && !bound.reserve(1))
        let unbounded = ProxyRecording(maximumInFlight: .max)
        #expect(unbounded.reserve(.max) && !unbounded.reserve(1) && !unbounded.reserve(.max))
        #expect(!ProxyRecording(maximumInFlight: -5).reserve(1))

        try await withHTTPBin { upstream in
            // 100,000 bytes stream through (past the 64 KiB read whole): 150,000 hold one copy at a time,
            // 50,000 none.
            for (limit, kept) in [(150_000, 2), (50_000, 0)] {
                let recording = ProxyRecording(maximumInFlight: limit)
                let proxy = try await MockServer(resources: [])
                proxy.addRoutes(try ProxyRoutes(upstream: upstream, recording: recording), first: false)
                for seed in 1...2 {
                    let seen = try await Seen(proxy.respond(to: MockRequest(.get, "/bytes/100000?seed=\(seed)")))
                    #expect(seen.status == 200 && seen.bytes.count == 100_000, "the client gets it whole either way")
                }
                await proxy.stop()
                #expect(recording.exchanges.count == kept && recording.skipped == 2 - kept, "bound \(limit)")
                #expect(recording.bytesInFlight == 0, "bound \(limit): every copy's bytes given back")
            }
        }
    }

    @Test("A path a stub pattern would misread is written so it names that path only; a body over the limit is counted, not kept")
    func edges() async throws {
        try await withHTTPBin { upstream in
            let recording = ProxyRecording(maximumBodySize: 1000)
            let proxy = try await MockServer(resources: [])
            proxy.addRoutes(try ProxyRoutes(upstream: upstream, recording: recording), first: false)
            #expect(try await Seen(proxy.respond(to: MockRequest(.get, "/anything/:id/*"))).status == 200)
            _ = try await Seen(proxy.respond(to: MockRequest(.get, "/bytes/5000")))
            let (configuration, summary) = recording.configuration()
            #expect(summary.exchanges == 1 && summary.skipped == 1 && summary.stubs == 1)
            #expect(configuration["routes"]?[0]?["path"] == "/anything/%3Aid/%2A")
            let replay = try await MockServer.inMemory(
                try ServerConfiguration(parsing: configuration.serialized(), file: "recorded.json"))
            #expect(await replay.respond(to: MockRequest(.get, "/anything/:id/*")).status == .ok)
            #expect(await replay.respond(to: MockRequest(.get, "/anything/7/x")).status == .notFound)
        }
    }

    static let packageRoot =
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        + "/"

    /// A HAR entry's request, as the app sent it.
    static func request(of entry: JSON) throws -> MockRequest {
        let text = try #require(entry["request"]?["url"]?.stringValue)
        let url = try #require(URLComponents(string: text))
        let target = url.percentEncodedPath + (url.percentEncodedQuery.map { "?" + $0 } ?? "")
        let name = try #require(entry["request"]?["method"]?.stringValue)
        let method = try #require(HTTPRequest.Method(name))
        var request = MockRequest(method, target, body: Array((entry["request"]?["postData"]?["text"]?.stringValue ?? "").utf8))
        if let type = entry["request"]?["postData"]?["mimeType"]?.stringValue { request.headerFields[.contentType] = type }
        return request
    }

    @Test("A HAR mitmproxy wrote in front of httpbin is served: each request answered as recorded, a repeated one in order")
    func mitmproxyArchive() async throws {
        let path = Self.packageRoot + "Tests/HAR/mitmproxy-httpbin.har"
        let read = try HTTPArchive.read(contentsOfFile: path)
        #expect(read.origin?.hasPrefix("http://127.0.0.1:") == true)
        #expect(read.summary.exchanges == 10 && read.summary.skipped == 0)
        let server = try await MockServer.inMemory(try ServerConfiguration(root: read.configuration, file: path))
        // The oracle is the file itself: mitmproxy's decoded bodies (base64 for binary ones).
        let archive = try JSON(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        let entries = try #require(archive["log"]?["entries"]?.arrayValue)
        for entry in entries {
            let request = try Self.request(of: entry)
            let answer = try await Seen(server.respond(to: request))
            let content = entry["response"]?["content"]
            let text = content?["text"]?.stringValue ?? ""
            let bytes = content?["encoding"] == "base64" ? [UInt8](Data(base64Encoded: text) ?? Data()) : Array(text.utf8)
            #expect(answer.status == entry["response"]?["status"]?.intValue, "\(request.path)")
            if let json = answer.json {
                #expect(json == (try? JSON(parsing: bytes)), "\(request.path)")
            } else {
                #expect(answer.bytes == bytes, "\(request.path)")
            }
        }
        // httpbin's gzip answer: the HAR holds it decoded, so the replay sends no Content-Encoding.
        let gzip = await server.respond(to: MockRequest(.get, "/gzip"))
        #expect(gzip.headerFields[HTTPField.Name("Content-Encoding")!] == nil)
    }

    @Test("A recording written as HAR 1.2 has the fields the format requires and reads back to the same answers")
    func archiveRoundTrip() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("hammock-\(UUID().uuidString).har").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        var first: [Seen] = []
        let requests = Self.requests().filter {
            ["/put", "/patch", "/delete", "/bytes/64", "/uuid", "/status/418"].contains($0.path)
        }
        try await withHTTPBin { upstream in
            let recording = ProxyRecording()
            let proxy = try await MockServer(resources: [])
            proxy.addRoutes(try ProxyRoutes(upstream: upstream, recording: recording), first: false)
            for request in requests {
                var request = request
                request.headerFields[HTTPField.Name("Host")!] = "127.0.0.1:8888"
                first.append(try await Seen(proxy.respond(to: request)))
            }
            #expect(try recording.write(toFile: file).exchanges == requests.count)
        }
        let archive = try JSON(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: file))))
        #expect(archive["log"]?["version"] == "1.2" && archive["log"]?["creator"]?["name"] == "hammock")
        for entry in try #require(archive["log"]?["entries"]?.arrayValue) {
            for key in ["startedDateTime", "time", "request", "response", "cache", "timings"] {
                #expect(entry[key] != nil, "entry.\(key)")
            }
            for key in ["method", "url", "httpVersion", "cookies", "headers", "queryString", "headersSize", "bodySize"] {
                #expect(entry["request"]?[key] != nil, "request.\(key)")
            }
            for key in [
                "status", "statusText", "httpVersion", "cookies", "headers", "content", "redirectURL", "headersSize", "bodySize",
            ] {
                #expect(entry["response"]?[key] != nil, "response.\(key)")
            }
            #expect(entry["response"]?["content"]?["size"] != nil && entry["response"]?["content"]?["mimeType"] != nil)
            #expect(entry["request"]?["url"]?.stringValue?.hasPrefix("http://127.0.0.1:8888/") == true)
        }
        let read = try HTTPArchive.read(contentsOfFile: file)
        let replay = try await MockServer.inMemory(try ServerConfiguration(root: read.configuration, file: file))
        for (index, request) in requests.enumerated() {
            #expect(try await Seen(replay.respond(to: request)) == first[index], "\(request.method) \(request.path)")
        }
    }

    @Test("A recorded page from a third party's HAR is sandboxed: its scripts run in an opaque origin, away from the admin API")
    func sandboxedPages() async throws {
        let har =
            #"{"log": {"entries": ["#
            + #"{"request": {"method": "GET", "url": "http://evil.test/"}, "response": {"status": 200, "headers": [{"name": "Content-Type", "value": "text/html"}], "content": {"mimeType": "text/html", "text": "<script>fetch('/__hammock/requests')</script>"}}},"#
            + #"{"request": {"method": "GET", "url": "http://evil.test/data"}, "response": {"status": 200, "headers": [{"name": "Content-Type", "value": "application/json"}], "content": {"mimeType": "application/json", "text": "[1]"}}}]}}"#
        let read = try HTTPArchive.read(Array(har.utf8), file: "evil.har")
        let server = try await MockServer.inMemory(try ServerConfiguration(root: read.configuration, file: "evil.har"))
        let page = await server.respond(to: MockRequest(.get, "/"))
        #expect(page.headerFields[HTTPField.Name("Content-Security-Policy")!] == "sandbox allow-scripts allow-forms allow-popups")
        let data = await server.respond(to: MockRequest(.get, "/data"))
        #expect(data.headerFields[HTTPField.Name("Content-Security-Policy")!] == nil)
        // A FIFO in the file's place is refused, not waited on.
        let fifo = TemporaryFiles.path("fifo", extension: "har")
        #expect(mkfifo(fifo, 0o600) == 0)
        let error = #expect(throws: HTTPArchive.ReadError.self) { try HTTPArchive.read(contentsOfFile: fifo) }
        #expect(error?.description.contains("not a regular file") == true)
    }

    @Test(
        "Inferred collections make a file the reader takes: names that differ only in case, a prefix no base path can be (found by fuzz-har)"
    )
    func namesThatDifferInCase() async throws {
        func entry(_ method: String, _ path: String, _ status: Int, _ body: String) -> String {
            #"{"request": {"method": "\#(method)", "url": "http://h\#(path)"}, "response": {"status": \#(status), "#
                + #""headers": [{"name": "Content-Type", "value": "application/json"}], "content": {"mimeType": "application/json", "text": "\#(body)"}}}"#
        }
        let record = #"{\"id\": 1, \"name\": \"Ada\"}"#
        let entries = [
            entry("GET", "/people", 200, "[\(record)]"), entry("GET", "/people/1", 200, record),
            entry("GET", "/peoPle", 200, "[\(record)]"), entry("GET", "/peoPle/1", 200, record),
            entry("GET", "/people/1/cars", 200, #"[{\"id\": 7, \"personId\": 1}]"#),
            entry("GET", "/people/1/Cars", 200, #"[{\"id\": 8, \"personId\": 1}]"#),
        ]
        let har = #"{"log": {"entries": ["# + entries.joined(separator: ",") + "]}}"
        // Under a prefix no base path can be (an empty segment), no collection is inferred and no base
        // path written (it was, and the reader refused it).
        let odd =
            #"{"log": {"entries": ["#
            + entries.map { $0.replacingOccurrences(of: "http://h/", with: "http://h/a//b/") }
            .joined(separator: ",") + "]}}"
        let oddRead = try HTTPArchive.read(Array(odd.utf8), file: "odd.har", inferringResources: true)
        #expect(oddRead.configuration["basePath"] == nil)
        #expect(oddRead.summary.resources.isEmpty)
        let read = try HTTPArchive.read(Array(har.utf8), file: "case.har", inferringResources: true)
        try await withServer(try await MockServer.inMemory(try ServerConfiguration(root: read.configuration, file: "case.har"))) {
            server in
            #expect(read.summary.resources.contains("people"))
            #expect(!read.summary.resources.contains("peoPle"))
            // Every path still answers as recorded: the second spelling from its stubs.
            for path in ["/people/1", "/peoPle", "/peoPle/1", "/people/1/Cars"] {
                let answer = await server.respond(to: MockRequest(.get, path))
                #expect(answer.status == .ok, "\(path)")
            }
        }
    }

    @Test("A HAR answer with a body its status forbids (204, 205, 304) is served without it (found by fuzz-har)")
    func bodiesStatusesForbid() async throws {
        let entries = [204, 205, 304].map { status in
            #"{"request": {"method": "GET", "url": "http://h/s\#(status)"}, "response": {"status": \#(status), "#
                + #""headers": [{"name": "Content-Type", "value": "text/plain"}], "content": {"mimeType": "text/plain", "text": "stray"}}}"#
        }
        let har = #"{"log": {"entries": ["# + entries.joined(separator: ",") + "]}}"
        let read = try HTTPArchive.read(Array(har.utf8), file: "forbidden.har")
        try await withServer(
            try await MockServer.inMemory(try ServerConfiguration(root: read.configuration, file: "forbidden.har"))
        ) { server in
            for status in [204, 205, 304] {
                let answer = await server.respond(to: MockRequest(.get, "/s\(status)"))
                #expect(answer.status.code == status)
                #expect(answer.body.isEmpty)
            }
        }
    }

    /// A recording of `exchanges` (request, status, content type, body), written as stubs and as a HAR read
    /// back: each served by a fresh mock.
    static func replays(
        of exchanges: [(request: MockRequest, status: Int, type: String?, body: String)],
        _ body: (_ written: String, _ server: MockServer) async throws -> Void
    ) async throws {
        let recording = ProxyRecording()
        for exchange in exchanges {
            var fields = HTTPFields()
            if let type = exchange.type { fields[.contentType] = type }
            recording.add(
                request: exchange.request, status: HTTPResponse.Status(code: exchange.status), fields: fields,
                body: Array(exchange.body.utf8))
        }
        let har = try HTTPArchive.read(recording.archive().archive.serialized(), file: "r.har", inferringResources: false)
        for (written, configuration) in [
            ("stubs", recording.configuration(inferringResources: false).configuration), ("HAR", har.configuration),
        ] {
            let server = try await MockServer.inMemory(try ServerConfiguration(root: configuration, file: "r.json"))
            try await withServer(server) { try await body(written, $0) }
        }
    }

    @Test(
        "A repeated query parameter is matched on every value, in any order: ?q=a&q=b and ?q=a keep their own answers (found by fuzz-replay)"
    )
    func repeatedQueryParameters() async throws {
        let both = MockRequest(.get, "/search?q=a&q=b")
        let one = MockRequest(.get, "/search?q=a")
        // The same values in another order: one stub with `both`, answering in turn (no matcher tells them apart).
        let reversed = MockRequest(.get, "/search?q=b&q=a")
        let exchanges: [(request: MockRequest, status: Int, type: String?, body: String)] = [
            (one, 200, "text/plain", "one"), (both, 418, "text/plain", "both"), (reversed, 202, "text/plain", "reversed"),
            (MockRequest(.get, "/pages?x=1&y=2"), 200, "text/plain", "first"),
            (MockRequest(.get, "/pages?y=2&x=1"), 201, "text/plain", "second"),
        ]
        try await Self.replays(of: exchanges) { written, server in
            // `both` before `one`: neither answer depends on having been asked first.
            #expect(await server.respond(to: both).status.code == 418, "\(written)")
            #expect(await server.respond(to: one).status == .ok, "\(written)")
            #expect(await server.respond(to: reversed).status == .accepted, "\(written)")
            // Parameters in another order are the same request: the answers come in turn.
            #expect(await server.respond(to: MockRequest(.get, "/pages?x=1&y=2")).status == .ok, "\(written)")
            #expect(await server.respond(to: MockRequest(.get, "/pages?y=2&x=1")).status == .created, "\(written)")
        }
    }

    @Test(
        "A HAR's URL with brackets in its query keeps its escapes: filter[name]=a%20b is not read as a%2520b (found by fuzz-replay)"
    )
    func bracketsInQueries() async throws {
        let request = MockRequest(.get, "/people?filter[name]=a%20b&ids[]=1")
        try await Self.replays(of: [(request, 200, "application/json", #"[{"id": 1}]"#)]) { written, server in
            let answer = await server.respond(to: request)
            #expect(answer.status == .ok, "\(written)")
            #expect(String(decoding: answer.body, as: UTF8.self).contains(#""id""#), "\(written)")
            #expect(await server.respond(to: MockRequest(.get, "/people?filter[name]=a%2520b&ids[]=1")).status == .notFound)
        }
        // Spaces and non-ASCII written raw by a tool are escaped as a request line carries them.
        let raw =
            #"{"log": {"entries": [{"request": {"method": "GET", "url": "http://h/caf\u00e9 x?q=a b"}, "#
            + #""response": {"status": 200, "headers": [], "content": {"mimeType": "text/plain", "text": "ok"}}}]}}"#
        let read = try HTTPArchive.read(Array(raw.utf8), file: "raw.har", inferringResources: false)
        let server = try await MockServer.inMemory(try ServerConfiguration(root: read.configuration, file: "raw.har"))
        try await withServer(server) { server in
            #expect(await server.respond(to: MockRequest(.get, "/caf%C3%A9%20x?q=a%20b")).status == .ok)
        }
    }

    @Test(
        "A recorded OPTIONS answer, a JSON null body and a 200 to a conditional request replay as the backend gave them (found by fuzz-replay)"
    )
    func answersAsGiven() async throws {
        var conditional = MockRequest(.get, "/feed")
        conditional.headerFields[.ifNoneMatch] = "*"
        let exchanges: [(request: MockRequest, status: Int, type: String?, body: String)] = [
            (MockRequest(.options, "/things"), 301, "text/plain", "moved"),
            (MockRequest(.get, "/nothing"), 200, "application/json", "null"),
            (conditional, 200, "text/plain", "fresh"),
        ]
        try await Self.replays(of: exchanges) { written, server in
            #expect(await server.respond(to: MockRequest(.options, "/things")).status == .movedPermanently, "\(written)")
            let nothing = await server.respond(to: MockRequest(.get, "/nothing"))
            #expect(String(decoding: nothing.body, as: UTF8.self) == "null", "\(written)")
            // The backend ignored `If-None-Match: *`: no 304 of the mock's, and no ETag it never sent.
            let feed = await server.respond(to: conditional)
            #expect(feed.status == .ok && feed.body == Array("fresh".utf8), "\(written)")
            #expect(feed.headerFields[.eTag] == nil, "\(written)")
        }
        // A stub written for OPTIONS by hand answers it too, where the router's 204 stood.
        let configuration = #"{"routes": [{"method": "OPTIONS", "path": "/x", "status": 200, "text": "mine"}]}"#
        let server = try await MockServer.inMemory(try ServerConfiguration(parsing: Array(configuration.utf8), file: "o.json"))
        try await withServer(server) { server in
            let answer = await server.respond(to: MockRequest(.options, "/x"))
            #expect(answer.status == .ok && answer.body == Array("mine".utf8))
        }
    }

    /// A recording of `exchanges` (method, target, request body, status, answer as JSON text), written with
    /// resources inferred, served by a fresh mock.
    static func inferred(
        _ exchanges: [(method: HTTPRequest.Method, target: String, body: JSON?, status: Int, answer: String?)]
    ) async throws -> (JSON, ProxyRecording.Summary, MockServer) {
        let recording = ProxyRecording()
        for exchange in exchanges {
            var fields = HTTPFields()
            if exchange.answer != nil { fields[.contentType] = "application/json" }
            let request =
                exchange.body.map { MockRequest(exchange.method, exchange.target, json: $0) }
                ?? MockRequest(exchange.method, exchange.target)
            recording.add(
                request: request, status: HTTPResponse.Status(code: exchange.status), fields: fields,
                body: Array((exchange.answer ?? "").utf8))
        }
        let (configuration, summary) = recording.configuration(inferringResources: true)
        let server = try await MockServer.inMemory(try ServerConfiguration(root: configuration, file: "r.json"))
        return (configuration, summary, server)
    }

    @Test(
        "Records holding nothing but their generated ids stay stubs: a resource with no field to declare would not load (found by fuzz-replay)"
    )
    func recordsOfIdsAlone() async throws {
        let (configuration, summary, server) = try await Self.inferred([
            (.get, "/tags", nil, 200, #"[{"id": 1}, {"id": 2}]"#), (.get, "/people", nil, 200, #"[{"id": 1, "name": "Amy"}]"#),
        ])
        #expect(summary.resources == ["people"] && summary.stubs == 1)
        #expect(configuration["resources"]?.arrayValue?.count == 1)
        try await withServer(server) { server async throws in
            let tags = await server.respond(to: MockRequest(.get, "/tags"))
            #expect(try JSON(parsing: tags.body) == [["id": 1], ["id": 2]])
            #expect(try JSON(parsing: await server.respond(to: MockRequest(.get, "/people/1")).body)["name"] == "Amy")
        }
    }

    @Test(
        "A member the backend answered as null keeps its null, one it left out stays out, and one it did both answers null (found by fuzz-replay)"
    )
    func nullsAsAnswered() async throws {
        let list = #"[{"id": 1, "nick": null, "age": 3, "note": "x"}, {"id": 2, "age": 4}, {"id": 3, "note": null, "age": 5}]"#
        let (configuration, _, server) = try await Self.inferred([(.get, "/people", nil, 200, list)])
        // `nick` and `note` were null in a record: their nulls stay. No member was only ever left out here.
        #expect(configuration["resources"]?[0]?["omitNulls"] == nil)
        try await withServer(server) { server async throws in
            func record(_ id: Int) async throws -> JSON {
                try JSON(parsing: await server.respond(to: MockRequest(.get, "/people/\(id)")).body)
            }
            #expect(try await record(1) == ["id": 1, "nick": .null, "age": 3, "note": "x"])
            // Record 2 lacked both: it answers null for them (one shape per resource; documented in proxy.md).
            #expect(try await record(2) == ["id": 2, "nick": .null, "age": 4, "note": .null])
            #expect(try await record(3) == ["id": 3, "nick": .null, "age": 5, "note": .null])
        }
        // A member only ever left out, never null, stays out of the records that lacked it.
        let (omitting, _, other) = try await Self.inferred([
            (.get, "/pets", nil, 200, #"[{"id": 1, "chip": "A7"}, {"id": 2}, {"id": 3, "chip": null, "name": "Rex"}]"#)
        ])
        #expect(omitting["resources"]?[0]?["omitNulls"] == ["name"])
        try await withServer(other) { server async throws in
            #expect(try JSON(parsing: await server.respond(to: MockRequest(.get, "/pets/2")).body) == ["id": 2, "chip": .null])
            #expect(try JSON(parsing: await server.respond(to: MockRequest(.get, "/pets/1")).body) == ["id": 1, "chip": "A7"])
        }
    }

    @Test(
        "A child's link goes through the member named for its parent, not one that holds the same number by chance (found by fuzz-replay)"
    )
    func foreignKeyByName() async throws {
        let (configuration, summary, server) = try await Self.inferred([
            (.get, "/people", nil, 200, #"[{"id": 1, "name": "Amy"}, {"id": 2, "name": "Kofi"}]"#),
            (.get, "/people/1/cars", nil, 200, #"[{"id": 1, "seats": 1, "owner_id": 1, "person_id": 1}]"#),
            (.get, "/orders", nil, 200, #"[{"id": 5, "total": 3}]"#),
            (.get, "/orders/5/lines", nil, 200, #"[{"id": 9, "qty": 5, "orderId": 5}]"#),
            // None named for the parent: the one named like a key.
            (.get, "/people/2/bikes", nil, 200, #"[{"id": 3, "wheels": 2, "owner_id": 2}]"#),
        ])
        #expect(summary.resources == ["people", "orders", "cars", "lines", "bikes"])
        let declared = configuration["resources"]?.arrayValue ?? []
        #expect(declared.first { $0["name"] == "cars" }?["parents"] == [["resource": "people", "foreignKey": "person_id"]])
        #expect(declared.first { $0["name"] == "lines" }?["parents"] == [["resource": "orders", "foreignKey": "orderId"]])
        #expect(declared.first { $0["name"] == "bikes" }?["parents"] == [["resource": "people", "foreignKey": "owner_id"]])
        try await withServer(server) { server async throws in
            let cars = try JSON(parsing: await server.respond(to: MockRequest(.get, "/people/1/cars")).body)
            #expect(cars.arrayValue?.count == 1)
            let bikes = try JSON(parsing: await server.respond(to: MockRequest(.get, "/people/2/bikes")).body)
            #expect(bikes.arrayValue?.first?["wheels"] == 2)
        }
    }

    @Test("A recording that saw nothing a mock can serve leaves an earlier recording's file as it was")
    func nothingRecordedLeavesTheFile() async throws {
        for suffix in [".json", ".har"] {
            let file = Self.temporaryFile("empty") + suffix
            defer { try? FileManager.default.removeItem(atPath: file) }
            try Data("earlier recording".utf8).write(to: URL(fileURLWithPath: file))
            let summary = try ProxyRecording().write(toFile: file)
            #expect(summary.leftFileAlone && summary.exchanges == 0)
            #expect(summary.description.contains("left as it was"))
            #expect(try String(contentsOfFile: file, encoding: .utf8) == "earlier recording")
        }
        // One exchange is something to serve: the file is replaced.
        let file = Self.temporaryFile("one.json")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let recording = ProxyRecording()
        recording.add(request: MockRequest(.get, "/ping"), status: .ok, fields: HTTPFields(), body: Array("pong".utf8))
        #expect(try recording.write(toFile: file).leftFileAlone == false)
        let server = try await MockServer.inMemory(try ServerConfiguration(contentsOfFile: file))
        try await withServer(server) { server async throws in
            #expect(await server.respond(to: MockRequest(.get, "/ping")).body == Array("pong".utf8))
        }
    }

    @Test("A file that is not HAR, or holds no entry a stub can answer, is refused with what is wrong")
    func badArchives() {
        #expect(throws: HTTPArchive.ReadError.self) { try HTTPArchive.read(Array("{}".utf8), file: "x.har") }
        #expect(throws: HTTPArchive.ReadError.self) { try HTTPArchive.read(Array("[1,".utf8), file: "x.har") }
        // Entries without a usable URL or status are left out and counted, never a crash.
        let odd =
            #"{"log": {"entries": [{"request": {"method": "GET", "url": "not a url"}, "response": {"status": 200}},"#
            + #" {"request": {"method": "BREW", "url": "http://h/x"}, "response": {"status": 999}}, 7,"#
            + #" {"request": {"method": "GET", "url": "http://h/b64"}, "response": {"status": 200, "content": {"text": "%%%", "encoding": "base64"}}},"#
            // The console's own page, in a browser's HAR: the admin API answers there, never a stub.
            + #" {"request": {"method": "GET", "url": "http://h/__hammock/requests"}, "response": {"status": 200}}]}}"#
        let read = try? HTTPArchive.read(Array(odd.utf8), file: "odd.har")
        #expect(read?.summary.stubs == 0 && read?.summary.skipped == 5)
    }
}
