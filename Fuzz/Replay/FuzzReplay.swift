import FuzzSupport
import HTTPTypes
import HammockJSON
import HammockProxy
import HammockServer

/// A recording's promise: replayed in the order it was recorded, a recording answers every request as
/// the backend did (the status, the body, every field the backend sent but the framing ones), whether it
/// was written as a configuration of stubs or as a HAR file read back. The bytes choose the exchanges:
/// methods, paths with segments a pattern would misread, queries with repeated and empty items, JSON,
/// form, text and binary bodies both ways, statuses with and without a body, and answers that differ for
/// one request. A quarter of the inputs check resources inferred from a recording instead
/// (``InferredResources``).
@main
struct FuzzTarget {
    static func main() {
        Fuzzer.run { data, count in
            let bytes = Fuzzer.bytes(data, count)
            // A quarter of the inputs (a first byte ending in binary 11) drive a backend with collections,
            // recorded with resources inferred (InferredResources); the rest, exchanges written as stubs.
            if let first = bytes.first, first & 3 == 3 {
                InferredResources.run(Array(bytes.dropFirst()))
            } else {
                FuzzTarget.replay(bytes)
            }
            return 0
        }
    }

    static let methods: [HTTPRequest.Method] = [
        .get, .get, .post, .put, .patch, .delete, .head, .options, HTTPRequest.Method("PURGE") ?? .get,
    ]
    /// Segments a stub pattern reads specially (`:id`, `*`), encoded ones, and plain ones.
    static let segments = [
        "people", "people", "3", "a1", ":id", "*", "**", "a%20b", "%C3%A9t%C3%A9", "x.json", "under_score", "A-Z", "%2F",
        "~tilde", "semi;colon", "eq=1", "+plus",
    ]
    static let queryNames = ["q", "page", "a%20b", "sort", "x%26y", "empty", "q"]
    static let queryValues = ["", "1", "a+b", "%20", "x=y", "%C3%A9", "true", "[1]", "null"]
    static let memberNames = ["name", "age", "tags", "/pointer", "id", "nested", "n"]
    static let statuses = [200, 200, 201, 202, 203, 204, 205, 206, 301, 302, 304, 400, 401, 404, 409, 418, 422, 500, 503, 599]
    static let contentTypes = [
        "application/json", "application/json; charset=utf-8", "text/plain", "text/html; charset=utf-8",
        "application/octet-stream", "application/problem+json", "application/vnd.api+json", "image/png", "",
    ]
    static let fieldNames = ["X-Trace", "Cache-Control", "ETag", "Last-Modified", "Location", "Vary", "X-Trace", "Link"]
    static let fieldValues = [
        "1", "no-store", "\"abc\"", "W/\"1\"", "Tue, 01 Dec 2026 10:00:00 GMT", "/people/3", "a, b", "x;y=z",
    ]

    /// A JSON value of a little depth.
    static func json(_ reader: inout ByteReader, depth: Int = 0) -> JSON {
        switch reader.choose(depth > 1 ? 6 : 8) {
        case 0: return .null
        case 1: return .bool(reader.byte() & 1 == 0)
        case 2: return .integer(Int(reader.byte()) - 100)
        case 3: return .double(Double(reader.byte()) / 4)
        case 4: return .string(reader.pick(["", "ada", "\"q\"", "{{request.path}}", "é", "a\nb", "${x}"]))
        case 5: return .string(String(reader.byte()))
        case 6:
            return .array((0..<reader.choose(3)).map { _ in json(&reader, depth: depth + 1) })
        default:
            var object = JSONObject()
            for _ in 0..<reader.choose(4) { object[reader.pick(memberNames)] = json(&reader, depth: depth + 1) }
            return .object(object)
        }
    }

    /// A body (empty, a JSON object, any JSON, text, or bytes) and the content type it is sent with.
    static func body(_ reader: inout ByteReader) -> (bytes: [UInt8], type: String) {
        let type = reader.pick(contentTypes)
        let media = type.split(separator: ";").first.map(String.init) ?? ""
        switch reader.choose(5) {
        case 0: return ([], type)
        case 1 where media.hasSuffix("json"):
            var object = JSONObject()
            for _ in 0..<reader.choose(4) { object[reader.pick(memberNames)] = json(&reader) }
            return (JSON.object(object).serialized(), type)
        case 1, 2:
            return (json(&reader).serialized(), type)
        case 3:
            let text = reader.pick(["plain text", "a=1&b=2", "{\"broken\": ", "<p>page</p>", "line\r\nline", " "])
            return (Array(text.utf8), type)
        default:
            return ((0..<(1 + reader.choose(8))).map { _ in reader.byte() }, type)
        }
    }

    struct Recorded {
        var request: MockRequest
        var status: Int
        var fields: HTTPFields
        var body: [UInt8]
    }

    static func replay(_ bytes: [UInt8]) {
        var reader = ByteReader(bytes)
        var recorded: [Recorded] = []
        for _ in 0..<(1 + reader.choose(6)) {
            // Often the request before again, so that one request gets different answers in turn.
            if let last = recorded.last, reader.choose(4) == 0 {
                var again = last
                again.status = reader.pick(statuses)
                again.body = body(&reader).bytes
                recorded.append(again)
                continue
            }
            let method = reader.pick(methods)
            let path = "/" + (0..<(1 + reader.choose(3))).map { _ in reader.pick(segments) }.joined(separator: "/")
            var target = path
            if reader.choose(2) == 0 {
                let items = (0..<(1 + reader.choose(3))).map { _ in
                    reader.pick(queryNames) + (reader.choose(4) == 0 ? "" : "=" + reader.pick(queryValues))
                }
                target += "?" + items.joined(separator: "&")
            }
            var fields = HTTPFields()
            fields[.accept] = reader.pick(["*/*", "application/json", "text/html"])
            // What the engine acts on for answers of its own: the backend's answer stands on replay.
            switch reader.choose(8) {
            case 0: fields[.ifNoneMatch] = reader.pick(["\"abc\"", "W/\"1\"", "*"])
            case 1: fields[.ifModifiedSince] = "Wed, 02 Dec 2026 10:00:00 GMT"
            case 2: fields[.range] = reader.pick(["bytes=0-1", "bytes=-2", "bytes=1-"])
            case 3: fields[.acceptEncoding] = "gzip"
            case 4: fields[.ifMatch] = reader.pick(["\"abc\"", "\"zzz\""])
            case 5: fields[.origin] = "http://app.example"
            default: break
            }
            var requestBody: [UInt8] = []
            if [.post, .put, .patch].contains(method) || reader.choose(8) == 0 {
                let (bytes, type) = body(&reader)
                requestBody = bytes
                if !type.isEmpty { fields[.contentType] = type }
            }
            var answerFields = HTTPFields()
            let (answer, type) = body(&reader)
            if !type.isEmpty { answerFields[.contentType] = type }
            for _ in 0..<reader.choose(3) {
                guard let name = HTTPField.Name(reader.pick(fieldNames)) else { continue }
                answerFields.append(HTTPField(name: name, value: reader.pick(fieldValues)))
            }
            recorded.append(
                Recorded(
                    request: MockRequest(method, target, headerFields: fields, body: requestBody),
                    status: reader.pick(statuses), fields: answerFields, body: method == .head ? [] : answer))
        }
        let recording = ProxyRecording()
        for exchange in recorded {
            recording.add(
                request: exchange.request, status: HTTPResponse.Status(code: exchange.status), fields: exchange.fields,
                body: exchange.body)
        }
        let kept = recording.exchanges
        Fuzzer.check(kept.count == recorded.count, "the recording kept \(kept.count) of \(recorded.count) exchanges")

        let (configuration, summary) = recording.configuration(inferringResources: false)
        check(configuration, summary: summary, recorded: recorded, kept: kept, as: "a configuration")
        let archive = recording.archive().archive.serialized()
        guard let read = try? HTTPArchive.read(archive, file: "fuzz.har", inferringResources: false) else {
            return Fuzzer.check(false, "the HAR written cannot be read back: \(String(decoding: archive, as: UTF8.self))")
        }
        check(read.configuration, summary: read.summary, recorded: recorded, kept: kept, as: "a HAR read back")
    }

    /// Serves `configuration` and replays every request in order; each answer must be the one recorded.
    static func check(
        _ configuration: JSON, summary: ProxyRecording.Summary, recorded: [Recorded], kept: [ProxyRecording.Exchange],
        as written: String
    ) {
        let text = configuration.serializedString()
        Fuzzer.check(summary.skipped == 0, "\(written) left \(summary.skipped) exchanges out: \(text)")
        let parsed: ServerConfiguration
        do {
            parsed = try ServerConfiguration(root: configuration, file: "fuzz.json")
        } catch {
            return Fuzzer.check(false, "\(written) the reader refuses: \(error)\n\(text)")
        }
        let requests = recorded.map(\.request)
        let outcome = Fuzzer.wait { () async -> Result<[MockResponse], FailedStart> in
            do {
                let server = try await MockServer.inMemory(parsed)
                var answers: [MockResponse] = []
                for request in requests { answers.append(await server.respond(to: request)) }
                return .success(answers)
            } catch {
                return .failure(FailedStart(description: String(describing: error)))
            }
        }
        let answers: [MockResponse]
        switch outcome {
        case .success(let value): answers = value
        case .failure(let error): return Fuzzer.check(false, "\(written) cannot start a server: \(error)\n\(text)")
        }
        for (index, (exchange, answer)) in zip(kept, answers).enumerated() {
            let request = recorded[index].request
            let target = request.path + (request.query.map { "?" + $0 } ?? "")
            let context = "\(written), request \(index) (\(request.method) \(target)):"
            Fuzzer.check(
                Int(answer.status.code) == exchange.status,
                "\(context) answered \(answer.status.code) where the backend answered \(exchange.status)\n\(text)")
            let allowsBody = MockResponse.allowsBody(HTTPResponse.Status(code: exchange.status)) && request.method != .head
            let expected = allowsBody ? exchange.responseBody : []
            Fuzzer.check(
                sameBody(answer.body, expected, type: answer.headerFields[.contentType]),
                "\(context) answered \(String(decoding: answer.body, as: UTF8.self)) where the backend answered \(String(decoding: expected, as: UTF8.self))\n\(text)"
            )
            for field in exchange.responseHeaders where field.name != .contentLength {
                let values = answer.headerFields[values: field.name]
                let joined = values.joined(separator: ", ")
                Fuzzer.check(
                    values.contains(field.value) || joined.contains(field.value),
                    "\(context) answered \(field.name): \(values) where the backend sent \(field.value)\n\(text)")
            }
        }
    }

    struct FailedStart: Error, CustomStringConvertible {
        var description: String
    }

    /// The same bytes, or the same JSON value when the answer says it is JSON (a stub writes JSON anew).
    static func sameBody(_ answer: [UInt8], _ expected: [UInt8], type: String?) -> Bool {
        if answer == expected { return true }
        guard let type, type.lowercased().contains("json"), let a = try? JSON(parsing: answer),
            let b = try? JSON(parsing: expected)
        else { return false }
        return a == b
    }
}
