import HammockServer
import Testing

/// Every bad request gets a 4xx with a problem body, and changes nothing.
@Suite("Bad input (in process)")
struct BadInputTests {
    /// Sends `request` and checks the status, the problem body, and that no person was created or changed.
    func expectProblem(
        _ request: MockRequest, status: HTTPResponse.Status, detail: String? = nil, on kind: StoreKind = .memory,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> JSON {
        let server = try await Fixtures.server(kind, options: MockServer.Options(maximumBodySize: 1024))
        _ = await server.send(.post, "/people", json: ["name": "john", "numberOfKids": 1])
        let before = await server.send(.get, "/people").1
        let response = await server.respond(to: request)
        #expect(response.status == status, sourceLocation: sourceLocation)
        #expect(response.headerFields[.contentType] == "application/problem+json", sourceLocation: sourceLocation)
        let problem = try response.json()
        #expect(problem["status"] == .integer(status.code), sourceLocation: sourceLocation)
        #expect(problem["type"] == "about:blank", sourceLocation: sourceLocation)
        if let detail {
            #expect(problem["detail"]?.stringValue?.contains(detail) == true, "\(problem)", sourceLocation: sourceLocation)
        }
        #expect(await server.send(.get, "/people").1 == before, "the failed request changed data", sourceLocation: sourceLocation)
        return problem
    }

    func raw(_ method: HTTPRequest.Method, _ path: String, _ body: String, type: String? = "application/json") -> MockRequest {
        var fields = HTTPFields()
        if let type { fields[.contentType] = type }
        return MockRequest(method, path, headerFields: fields, body: Array(body.utf8))
    }

    @Test("Malformed JSON is a 400 naming the position", arguments: StoreKind.allCases)
    func malformed(kind: StoreKind) async throws {
        let problem = try await expectProblem(
            raw(.post, "/people", #"{"name": "x",}"#), status: .badRequest, detail: "byte 13", on: kind)
        #expect(problem["offset"] == 13)
        _ = try await expectProblem(raw(.put, "/people/1", #"{"name": "#), status: .badRequest, on: kind)
        _ = try await expectProblem(raw(.post, "/people", ""), status: .badRequest, detail: "empty")
    }

    @Test("A body that is not an object is a 400")
    func notObject() async throws {
        _ = try await expectProblem(raw(.post, "/people", #"[{"name": "x"}]"#), status: .badRequest, detail: "not an array")
        _ = try await expectProblem(raw(.patch, "/people/1", "42"), status: .badRequest, detail: "not an integer")
    }

    @Test("Fields of the wrong type are a 422 naming each one", arguments: StoreKind.allCases)
    func wrongTypes(kind: StoreKind) async throws {
        let body = #"{"name": 5, "numberOfKids": "two", "kilometersWalked": true, "avatar": "***", "extra": 1}"#
        let problem = try await expectProblem(raw(.post, "/people", body), status: .unprocessableContent, on: kind)
        let fields = problem["errors"]?.arrayValue?.compactMap { $0["field"]?.stringValue }
        #expect(fields == ["name", "numberOfKids", "kilometersWalked", "avatar"])
        #expect(problem["errors"]?[1]?["detail"] == "expected an integer, found string")
        _ = try await expectProblem(raw(.patch, "/people/1", #"{"numberOfKids": 1.5}"#), status: .unprocessableContent, on: kind)
    }

    @Test("A body with no known field is a 422 listing the known ones")
    func noKnownField() async throws {
        let problem = try await expectProblem(raw(.post, "/people", #"{"nom": "x"}"#), status: .unprocessableContent)
        #expect(problem["knownFields"] == ["name", "numberOfKids", "kilometersWalked", "avatar"])
        _ = try await expectProblem(raw(.put, "/people/1", "{}"), status: .unprocessableContent)
    }

    @Test(
        "Integers out of the 64-bit range are a 422 in both directions, not a silent change",
        arguments: [
            "-9223372036854775809", "9223372036854775808", "-1e19", "1e300", "123456789012345678901234567890",
        ])
    func integerRange(number: String) async throws {
        let problem = try await expectProblem(
            raw(.post, "/people", #"{"numberOfKids": \#(number)}"#), status: .unprocessableContent)
        #expect(problem["errors"]?[0]?["field"] == "numberOfKids")
        #expect(problem["errors"]?[0]?["detail"]?.stringValue?.contains("out of range") == true)
    }

    @Test("Integers at the 64-bit bounds, and exact integers written with an exponent, are kept")
    func integerBounds() async throws {
        let server = try await Fixtures.server()
        for (text, expected) in [("-9223372036854775808", Int.min), ("9223372036854775807", Int.max), ("1e3", 1000), ("2.0", 2)] {
            let response = await server.respond(to: raw(.post, "/people", #"{"numberOfKids": \#(text)}"#))
            #expect(response.status == .created, "\(text)")
            #expect(try response.json()["numberOfKids"] == .integer(expected), "\(text)")
        }
        // Past 2^53 a double cannot say which integer was meant: write it without an exponent.
        _ = try await expectProblem(
            raw(.post, "/people", #"{"numberOfKids": 1e17}"#), status: .unprocessableContent, detail: "2^53")
    }

    @Test("A double below the smallest subnormal becomes zero, as in JavaScript; one beyond the largest is a 400")
    func doubleRange() async throws {
        let server = try await Fixtures.server()
        let tiny = await server.respond(to: raw(.post, "/people", #"{"kilometersWalked": 1e-400}"#))
        #expect(tiny.status == .created)
        #expect(try tiny.json()["kilometersWalked"] == .double(0))
        let subnormal = await server.respond(to: raw(.post, "/people", #"{"kilometersWalked": 5e-324}"#))
        #expect(try subnormal.json()["kilometersWalked"] == .double(.leastNonzeroMagnitude))
        _ = try await expectProblem(raw(.post, "/people", #"{"kilometersWalked": 1e400}"#), status: .badRequest)
    }

    @Test("An empty string primary key is a 422, on every store", arguments: StoreKind.allCases)
    func emptyKey(kind: StoreKind) async throws {
        let server = try await Fixtures.server(kind, resources: [Fixtures.categories])
        let (response, problem) = await server.send(.post, "/categories", json: ["slug": "", "title": "nowhere"])
        #expect(response.status == .unprocessableContent)
        #expect(response.headerFields[.location] == nil)
        #expect(problem?["errors"]?[0]?["detail"] == "the primary key cannot be empty")
        #expect(await server.send(.get, "/categories").1 == [])
        #expect(await server.send(.post, "/categories", json: ["slug": " "]).0.status == .created)  // a space is a key
    }

    @Test("MockResource names that differ only in case are refused")
    func namesDifferingInCase() async throws {
        let server = try await Fixtures.server(resources: [Fixtures.people])
        await #expect(throws: SchemaError.self) { try await server.addResource(MockResource("People", fields: ["x": .string])) }
        await #expect(throws: SchemaError.self) {
            try await MockServer(resources: [Fixtures.people, MockResource("PEOPLE", fields: ["x": .string])])
        }
        #expect(server.schemas.map(\.name) == ["people"])
    }

    @Test("Unknown fields are ignored")
    func unknownIgnored() async throws {
        let server = try await Fixtures.server()
        let (response, person) = await server.send(.post, "/people", json: ["name": "x", "shoeSize": 44])
        #expect(response.status == .created)
        #expect(person?["shoeSize"] == nil)
    }

    @Test(
        "Unknown routes and keys are 404",
        arguments: [
            "/nothing", "/people/1/2/3", "/people/abc", "/people/1/people", "//people", "people", "/people/9",
            "/people/01", "/people/+1", "/people/1.0", "/people/-0", "/people/01/cars",
        ])
    func unknownRoutes(path: String) async throws {
        _ = try await expectProblem(MockRequest(.get, path), status: .notFound)
    }

    @Test("Malformed percent-encoding in the path is a 400")
    func badPercentEncoding() async throws {
        _ = try await expectProblem(MockRequest(.get, "/people/%zz"), status: .badRequest, detail: "percent-encoding")
        _ = try await expectProblem(MockRequest(.get, "/people/%C3%28"), status: .badRequest)
    }

    @Test("A method the route does not have is a 405 with Allow")
    func methodNotAllowed() async throws {
        let server = try await Fixtures.server()
        let response = await server.respond(to: MockRequest(.delete, "/people"))
        #expect(response.status == .methodNotAllowed)
        #expect(response.headerFields[.allow] == "GET, HEAD, POST")
        _ = try await expectProblem(raw(.post, "/people/1", #"{"name": "x"}"#), status: .methodNotAllowed)
    }

    @Test("A body over the limit is a 413")
    func tooLarge() async throws {
        let body = #"{"name": ""# + String(repeating: "x", count: 2000) + #""}"#
        let problem = try await expectProblem(raw(.post, "/people", body), status: .contentTooLarge)
        #expect(problem["limit"] == 1024)
    }

    @Test("Unsupported media types are a 415", arguments: ["text/plain", "application/xml", "multipart/mixed; boundary=x"])
    func unsupportedMediaType(type: String) async throws {
        _ = try await expectProblem(raw(.post, "/people", "name=x", type: type), status: .unsupportedMediaType)
    }

    @Test("Form bodies are accepted and converted to field types")
    func formBodies() async throws {
        let server = try await Fixtures.server()
        let form = MockRequest(
            .post, "/people", headerFields: [.contentType: "application/x-www-form-urlencoded; charset=utf-8"],
            body: Array("name=J%C3%BCrgen+Smith&numberOfKids=3&kilometersWalked=2.5&unknown=1".utf8))
        let response = await server.respond(to: form)
        #expect(response.status == .created)
        #expect(
            try response.json() == ["id": 1, "name": "Jürgen Smith", "numberOfKids": 3, "kilometersWalked": 2.5, "avatar": nil])
        _ = try await expectProblem(
            raw(.post, "/people", "numberOfKids=many", type: "application/x-www-form-urlencoded"), status: .unprocessableContent)
        _ = try await expectProblem(
            raw(.post, "/people", "name=%E0%A4", type: "application/x-www-form-urlencoded"), status: .badRequest)
    }

    @Test("Multipart bodies are accepted: text parts converted to field types, a file part as base64 in a blob field")
    func multipartBodies() async throws {
        let server = try await Fixtures.server()
        let head: String = """
            --B\r
            Content-Disposition: form-data; name="name"\r
            \r
            Ada\r
            --B\r
            Content-Disposition: form-data; name="numberOfKids"\r
            \r
            2\r
            --B\r
            Content-Disposition: form-data; name="avatar"; filename="a.png"\r
            Content-Type: image/png\r
            \r

            """
        let file: [UInt8] = [0, 1, 2, 255]
        let tail: [UInt8] = Array("\r\n--B--\r\n".utf8)
        let body: [UInt8] = Array(head.utf8) + file + tail
        let response = await server.respond(
            to: MockRequest(.post, "/people", headerFields: [.contentType: "multipart/form-data; boundary=B"], body: body))
        #expect(response.status == .created)
        #expect(try response.json()["numberOfKids"] == 2)
        #expect(try response.json()["avatar"] == "AAEC/w==")
        let open = try await expectProblem(
            raw(
                .post, "/people", "--B\r\nContent-Disposition: form-data; name=name\r\n\r\nAda",
                type: "multipart/form-data; boundary=B"),
            status: .badRequest)
        #expect(open["detail"]?.stringValue?.contains("ends before its closing") == true)
        _ = try await expectProblem(raw(.post, "/people", "--B--", type: "multipart/form-data"), status: .badRequest)
        let latinHead: [UInt8] = Array("--B\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\n".utf8)
        let latinBody: [UInt8] = latinHead + [0xE9] + tail
        let latin = MockRequest(
            .post, "/people", headerFields: [.contentType: "multipart/form-data; boundary=B"], body: latinBody)
        _ = try await expectProblem(latin, status: .badRequest)
        #expect(try await server.respond(to: MockRequest(.get, "/people")).json().arrayValue?.count == 1)
    }

    @Test("JSON with a charset or a +json type is accepted; no Content-Type means JSON")
    func jsonVariants() async throws {
        let server = try await Fixtures.server()
        for type in ["application/json; charset=utf-8", "application/merge-patch+json", nil] {
            #expect(await server.respond(to: raw(.post, "/people", #"{"name":"x"}"#, type: type)).status == .created)
        }
    }
}
