public import HTTPTypes
public import HammockJSON
import HammockStore

/// An error that answers with an `application/problem+json` body (RFC 9457).
///
/// Throw it from a controller or serializer to end a request with a clear client error:
///
/// ```swift
/// throw HTTPProblem(.forbidden, detail: "cars cannot be renamed on Sundays")
/// ```
/// Extra members (such as `errors` for field problems) travel in ``extensions``.
public struct HTTPProblem: Error, Sendable, CustomStringConvertible {
    /// The status.
    public var status: HTTPResponse.Status
    /// A short summary; the status's reason phrase by default.
    public var title: String
    /// What happened in this case.
    public var detail: String?
    /// Header fields to send along, such as `Allow`.
    public var headerFields: HTTPFields
    /// Extension members added to the problem object.
    public var extensions: JSONObject

    /// Creates a problem.
    public init(
        _ status: HTTPResponse.Status,
        title: String? = nil,
        detail: String? = nil,
        headerFields: HTTPFields = [:],
        extensions: JSONObject = [:]
    ) {
        self.status = status
        self.title = title ?? status.reasonPhrase
        self.detail = detail
        self.headerFields = headerFields
        self.extensions = extensions
    }

    /// The problem as a response.
    public var response: MockResponse {
        var object: JSONObject = ["type": "about:blank", "title": .string(title), "status": .integer(status.code)]
        if let detail { object["detail"] = .string(detail) }
        for (key, value) in extensions { object[key] = value }
        var fields = headerFields
        fields[.contentType] = "application/problem+json"
        return MockResponse(status: status, headerFields: fields, body: JSON.object(object).serialized())
    }

    /// `404: detail`.
    public var description: String { "\(status.code): \(detail ?? title)" }
}

/// One field that failed validation, listed under `errors` in a 422 problem.
///
/// ```swift
/// throw HTTPProblem.invalidFields([FieldProblem(field: "email", detail: "must contain @")])
/// ```
public struct FieldProblem: Sendable, Hashable {
    /// The field's name.
    public var field: String
    /// What is wrong with it.
    public var detail: String

    /// Creates a field problem.
    public init(field: String, detail: String) {
        self.field = field
        self.detail = detail
    }
}

extension HTTPProblem {
    /// 404 Not Found.
    public static func notFound(_ detail: String) -> HTTPProblem { HTTPProblem(.notFound, detail: detail) }

    /// 400 Bad Request.
    public static func badRequest(_ detail: String) -> HTTPProblem { HTTPProblem(.badRequest, detail: detail) }

    /// 422 Unprocessable Content naming each bad field.
    public static func invalidFields(_ problems: [FieldProblem], detail: String? = nil) -> HTTPProblem {
        let errors = problems.map { JSON.object(["field": .string($0.field), "detail": .string($0.detail)]) }
        let summary = problems.map { "\($0.field): \($0.detail)" }.joined(separator: "; ")
        return HTTPProblem(
            .unprocessableContent, detail: detail ?? summary, extensions: ["errors": .array(errors)])
    }

    /// 405 Method Not Allowed with an `Allow` header.
    public static func methodNotAllowed(_ method: HTTPRequest.Method, allowed: [HTTPRequest.Method]) -> HTTPProblem {
        var fields = HTTPFields()
        fields[.allow] = allowed.map(\.rawValue).joined(separator: ", ")
        return HTTPProblem(
            .methodNotAllowed, detail: "\(method.rawValue) is not allowed here", headerFields: fields,
            extensions: ["allowed": .array(allowed.map { .string($0.rawValue) })])
    }
}

extension HTTPProblem {
    /// 412: a conditional write found the record changed (or gone) after its conditions were checked.
    public static func preconditionFailed(_ schema: ResourceSchema, key: JSON) -> HTTPProblem {
        HTTPProblem(
            .preconditionFailed,
            detail: "\(schema.name) \(key) changed while the request's conditions were checked; read it again")
    }
}
