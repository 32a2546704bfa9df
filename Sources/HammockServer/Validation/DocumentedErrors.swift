import HTTPTypes
import HammockJSON
import HammockSchema

/// The error answers an API document gives an operation, which the mock sends in place of its own
/// problem+json: the documented status, content type and body shape, with the problem's words put where
/// the body has a place for them. A team's client decodes its API's error type (`{"error": {"message":
/// …, "code": …}}`), so a mock that answers `application/problem+json` where the document says otherwise
/// breaks the very code paths it is there to exercise.
///
/// In an operation of the configuration's `validation` section (`OpenAPIImport` writes them):
/// ```json
/// "errors": [
///   {"status": "404", "contentType": "application/json", "body": {"code": 404, "message": "Not found"},
///    "fill": {"/code": "status", "/message": "detail"}, "schema": {"$ref": "#/components/schemas/Error"}},
///   {"status": "default", "contentType": "application/json", "body": {"message": ""}, "fill": {"/message": "detail"}}
/// ]
/// ```
/// `status` is a code, `4XX`/`5XX` or `default`; `body` the documented example (or one made from the
/// schema); `fill` says which member takes which of the problem's: `detail`, `title` or `status`. A
/// filled value the `schema` refuses (an enum of codes, a pattern) is left as the example had it.
struct DocumentedErrors: Sendable {
    /// Which statuses an entry covers, as OpenAPI's response keys say.
    enum Statuses: Sendable, Equatable {
        case exactly(Int)
        /// `4XX`: the hundreds digit.
        case range(Int)
        case any
    }

    /// The problem member a body member takes.
    enum Member: String, Sendable, CaseIterable {
        case detail, title, status
    }

    struct Entry: Sendable {
        var statuses: Statuses
        /// `nil`: the documented answer has no body.
        var contentType: String?
        var body: JSON?
        var fill: [(pointer: [String], member: Member)]
        var schema: SchemaSet.Handle?
    }

    var entries: [Entry]

    static let entryKeys = ["status", "contentType", "body", "fill", "schema"]

    /// Reads an operation's `errors`; `fail` names the key path of a mistake.
    init(
        json: JSON, at path: String, schemas: inout SchemaSet, place: String, fail: (String, String) -> ConfigurationError
    ) throws(ConfigurationError) {
        guard case .array(let list) = json else { throw fail(path, "expected an array of documented error answers") }
        var entries: [Entry] = []
        for (index, element) in list.enumerated() {
            let at = "\(path)[\(index)]"
            guard case .object(let object) = element else { throw fail(at, "expected {\"status\": \"404\", ...}") }
            for key in object.keys where !Self.entryKeys.contains(key) {
                throw fail("\(at).\(key)", "unknown key; expected one of \(Self.entryKeys.joined(separator: ", "))")
            }
            guard case .string(let text)? = object["status"], let statuses = Self.statuses(text) else {
                throw fail("\(at).status", "expected a status from 400 to 599, \"4XX\", \"5XX\" or \"default\"")
            }
            var contentType: String?
            if let value = object["contentType"], !value.isNull {
                guard case .string(let type) = value, !type.isEmpty, type.utf8.count <= 200,
                    type.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F })
                else { throw fail("\(at).contentType", "expected a media type such as \"application/json\"") }
                contentType = type
            }
            var fill: [(pointer: [String], member: Member)] = []
            if let value = object["fill"], !value.isNull {
                guard case .object(let pairs) = value else {
                    throw fail("\(at).fill", "expected {\"/pointer\": \"detail\"} naming detail, title or status")
                }
                for (pointer, name) in pairs {
                    guard let tokens = JSONPointer.tokens(of: pointer) else {
                        throw fail("\(at).fill.\(pointer)", "expected a JSON pointer such as \"/error/message\"")
                    }
                    guard case .string(let text) = name, let member = Member(rawValue: text) else {
                        throw fail("\(at).fill.\(pointer)", "expected detail, title or status")
                    }
                    fill.append((tokens, member))
                }
            }
            let schema = object["schema"].flatMap { $0.isNull ? nil : schemas.add($0, place: "\(place) \(text) answer") }
            entries.append(
                Entry(
                    statuses: statuses, contentType: contentType, body: object["body"].flatMap { $0.isNull ? nil : $0 },
                    fill: fill, schema: schema))
        }
        self.entries = entries
    }

    static func statuses(_ text: String) -> Statuses? {
        switch text.uppercased() {
        case "DEFAULT": return .any
        case "4XX": return .range(4)
        case "5XX": return .range(5)
        default:
            guard let code = Int(text), (400...599).contains(code) else { return nil }
            return .exactly(code)
        }
    }

    /// The documented entry for a status, and the status to answer: the status itself when the document
    /// lists it; for a request the mock refuses as malformed (400, 415, 422) that the document does not
    /// list, the one of 400 and 422 it does (its words for "this request is wrong"); then `4XX`/`5XX`;
    /// then `default`. `nil` when the document says nothing that covers it.
    func entry(for status: Int) -> (Entry, Int)? {
        if let exact = entries.first(where: { $0.statuses == .exactly(status) }) { return (exact, status) }
        if [400, 415, 422].contains(status) {
            for other in [400, 422] where other != status {
                if let entry = entries.first(where: { $0.statuses == .exactly(other) }) { return (entry, other) }
            }
        }
        if let range = entries.first(where: { $0.statuses == .range(status / 100) }) { return (range, status) }
        if let any = entries.first(where: { $0.statuses == .any }) { return (any, status) }
        return nil
    }

    /// The documented answer in place of `problem`, or `nil` when the document does not cover its status.
    func answer(to problem: HTTPProblem, schemas: SchemaSet) -> MockResponse? {
        guard let (entry, code) = entry(for: problem.status.code) else { return nil }
        var fields = problem.headerFields
        fields[.contentType] = nil
        let status = HTTPResponse.Status(code: code)
        guard let contentType = entry.contentType else { return MockResponse(status: status, headerFields: fields) }
        fields[.contentType] = contentType
        guard RequestChecks.isJSON(contentType) else {
            // A text error (`text/plain`): the problem's words.
            return MockResponse(status: status, headerFields: fields, body: Array((problem.detail ?? problem.title).utf8))
        }
        var body = entry.body ?? .object([:])
        for (pointer, member) in entry.fill {
            let value: JSON
            switch member {
            case .detail: value = .string(problem.detail ?? problem.title)
            case .title: value = .string(problem.title)
            case .status: value = .integer(code)
            }
            guard let current = JSONPointer.value(at: pointer[...], in: body) else { continue }
            // A status member typed as text takes the code as text; a member the schema constrains keeps
            // the example's value when the problem's does not fit.
            let fitted: JSON =
                if case .string = current, case .integer(let number) = value { .string(String(number)) } else { value }
            var filled = body
            guard JSONPointer.set(fitted, at: pointer[...], in: &filled) else { continue }
            if let schema = entry.schema, !schemas.validate(filled, against: schema, direction: .response, limit: 1).isEmpty {
                continue
            }
            body = filled
        }
        return MockResponse(status: status, headerFields: fields, body: body.serialized())
    }
}
