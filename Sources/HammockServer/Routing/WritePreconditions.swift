import Foundation
import HTTPTypes
import HammockJSON
import HammockWire

/// `If-Match`, `If-Unmodified-Since` and `If-None-Match` on `PUT`, `PATCH` and `DELETE` of a record
/// (RFC 9110 §13.1.1, §13.1.4, §13.1.2): a client that read a record writes it back only if nobody
/// changed it since, so two people editing the same record cannot silently overwrite each other; and
/// `If-None-Match: *` writes only where there is no record yet, never over one.
///
/// The conditions are checked against the record and the representation a `GET` of it gives (its
/// `ETag`, compared strongly; its resource's `Last-Modified`). The record read for the check goes to the
/// controller as ``ActionRequest/expectedRecord``, and the write is conditional on it in the store
/// (``MockStore/updateRecord(of:withKey:with:ifCurrent:)``): a write landing between the check and this
/// one makes this one a 412, never a lost update.
struct WritePreconditions {
    var ifMatch: String?
    var ifUnmodifiedSince: String?
    var ifNoneMatch: String?

    /// The request's conditions; `nil` when it has none.
    init?(_ request: MockRequest) {
        ifMatch = request.headerFields[.ifMatch]
        ifUnmodifiedSince = request.headerFields[.ifUnmodifiedSince]
        ifNoneMatch = request.headerFields[.ifNoneMatch]
        if ifMatch == nil && ifUnmodifiedSince == nil && ifNoneMatch == nil { return nil }
    }

    /// Checks the conditions; `lastModified` is the resource's, `nil` while it is ahead of the clock.
    /// Returns the record they held for, which the write must still find (`nil`
    /// when there is none and no condition needs one: the action answers 404).
    /// - Throws: ``HTTPProblem`` 412 when a condition fails.
    func check(
        _ request: ActionRequest, key: JSON, controller: any MockController, lastModified: Date?, now: Date
    ) async throws -> JSONObject? {
        let record = try await request.store.record(of: request.schema, withKey: key)
        // In RFC 9110 §13.2.2's order: If-Match (else If-Unmodified-Since), then If-None-Match.
        var tag: String?
        try await checkMatch(
            request, key: key, record: record, tag: &tag, controller: controller, lastModified: lastModified, now: now)
        if let ifNoneMatch, let record {
            if ifNoneMatch.trimmingCharacters(in: .whitespaces) == "*" {
                throw HTTPProblem(
                    .preconditionFailed,
                    detail: "If-None-Match: *: \(request.schema.name) with \(request.schema.key.name) \(key) exists already")
            }
            var current = tag ?? ""
            if tag == nil { current = try await Self.entityTag(of: record, request, controller: controller) }
            // Compared weakly, as If-None-Match always is (§13.1.2).
            if ConditionalRequestMiddleware.matches(ifNoneMatch, current) {
                throw HTTPProblem(
                    .preconditionFailed,
                    detail: "If-None-Match: \(request.schema.name) \(key) is still \(current)",
                    headerFields: [.eTag: current], extensions: ["etag": .string(current)])
            }
        }
        return record
    }

    /// If-Match, else If-Unmodified-Since; `tag` is set when the record's tag was computed.
    private func checkMatch(
        _ request: ActionRequest, key: JSON, record: JSONObject?, tag: inout String?, controller: any MockController,
        lastModified: Date?, now: Date
    ) async throws {
        if let ifMatch {
            guard let record else {
                throw HTTPProblem(
                    .preconditionFailed,
                    detail: "If-Match: \(request.schema.name) with \(request.schema.key.name) \(key) does not exist")
            }
            if ifMatch.trimmingCharacters(in: .whitespaces) == "*" { return }
            let current = try await Self.entityTag(of: record, request, controller: controller)
            tag = current
            guard ConditionalRequestMiddleware.matches(ifMatch, current, strongly: true) else {
                throw HTTPProblem(
                    .preconditionFailed,
                    detail: "If-Match: \(request.schema.name) \(key) has changed; its ETag is now \(current)",
                    headerFields: [.eTag: current], extensions: ["etag": .string(current)])
            }
            return
        }
        // If-Unmodified-Since counts only without If-Match, and only when it is a date (§13.1.4).
        guard let ifUnmodifiedSince, let since = HTTPDate.parse(ifUnmodifiedSince, now: now), record != nil else { return }
        // No date means the resource changed in a second an answer already carried: its date is ahead of
        // the clock, and so after any date the client can hold.
        guard let modified = lastModified, modified <= since else {
            let stamp = HTTPDate.format(lastModified ?? now)
            throw HTTPProblem(
                .preconditionFailed,
                detail: "If-Unmodified-Since: \(request.schema.name) changed at \(stamp), after \(ifUnmodifiedSince)",
                extensions: ["lastModified": .string(stamp)])
        }
    }

    /// The tag a `GET` of the record answers: the controller's own show, so a serializer's or a custom
    /// controller's representation is the one compared.
    static func entityTag(
        of record: JSONObject, _ request: ActionRequest, controller: any MockController
    ) async throws
        -> String
    {
        var show = request
        show.request = MockRequest(.get, request.request.path, headerFields: request.request.headerFields)
        show.parameters = nil
        let response =
            request.schema.resource.actions.contains(.show)
            ? try await controller.show(show) : request.respond(with: record)
        return response.headerFields[.eTag] ?? ConditionalRequestMiddleware.entityTag(of: response.body)
    }
}
