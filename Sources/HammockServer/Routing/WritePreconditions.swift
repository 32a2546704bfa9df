import Foundation
import HTTPTypes
import HammockJSON
import HammockStore
import HammockWire

/// `If-Match`, `If-Unmodified-Since` and `If-None-Match` on `PUT`, `PATCH` and `DELETE` of a record
/// (RFC 9110 §13.1.1, §13.1.4, §13.1.2): a client that read a record writes it back only if nobody
/// changed it since, so two people editing the same record cannot silently overwrite each other; and
/// `If-None-Match: *` writes only where there is no record yet, never over one.
///
/// The conditions become a `StoreWrite.Condition` that the store checks on the one read its write
/// makes, in the write's unit of work: nothing can land between the check and the write, and the record
/// is read once. Tags are the resource serializer's representation of the record (what a `GET`
/// answers), compared strongly; the date is the resource's `Last-Modified`.
struct WritePreconditions: Sendable {
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

    /// Whether the resource's `Last-Modified` is compared: If-Unmodified-Since counts only without If-Match.
    var readsLastModified: Bool { ifMatch == nil && ifUnmodifiedSince != nil }

    /// The condition a write of record `key` carries; `lastModified` is the resource's, `nil` while it
    /// is ahead of the clock. It refuses with ``HTTPProblem`` 412 when a condition fails, and passes when
    /// there is no record and no condition needs one (the write then answers 404).
    func condition(
        key: JSON, schema: ResourceSchema, serializer: any MockSerializer, lastModified: Date?, now: Date
    ) -> StoreWrite.Condition {
        let conditions = self
        return .check { record in
            do {
                try conditions.check(
                    record, key: key, schema: schema, serializer: serializer, lastModified: lastModified, now: now)
                return nil
            } catch {
                return error
            }
        }
    }

    func check(
        _ record: JSONObject?, key: JSON, schema: ResourceSchema, serializer: any MockSerializer, lastModified: Date?,
        now: Date
    ) throws(HTTPProblem) {
        // In RFC 9110 §13.2.2's order: If-Match (else If-Unmodified-Since), then If-None-Match.
        var tag: String?
        try checkMatch(record, key: key, schema: schema, serializer: serializer, tag: &tag, lastModified: lastModified, now: now)
        guard let ifNoneMatch, let record else { return }
        if ifNoneMatch.trimmingCharacters(in: .whitespaces) == "*" {
            throw HTTPProblem(
                .preconditionFailed,
                detail: "If-None-Match: *: \(schema.name) with \(schema.key.name) \(key) exists already")
        }
        let current = tag ?? Self.entityTag(of: record, schema: schema, serializer: serializer)
        // Compared weakly, as If-None-Match always is (§13.1.2).
        if ConditionalRequestMiddleware.matches(ifNoneMatch, current) {
            throw HTTPProblem(
                .preconditionFailed,
                detail: "If-None-Match: \(schema.name) \(key) is still \(current)",
                headerFields: [.eTag: current], extensions: ["etag": .string(current)])
        }
    }

    /// If-Match, else If-Unmodified-Since; `tag` is set when the record's tag was computed.
    private func checkMatch(
        _ record: JSONObject?, key: JSON, schema: ResourceSchema, serializer: any MockSerializer, tag: inout String?,
        lastModified: Date?, now: Date
    ) throws(HTTPProblem) {
        if let ifMatch {
            guard let record else {
                throw HTTPProblem(
                    .preconditionFailed, detail: "If-Match: \(schema.name) with \(schema.key.name) \(key) does not exist")
            }
            if ifMatch.trimmingCharacters(in: .whitespaces) == "*" { return }
            let current = Self.entityTag(of: record, schema: schema, serializer: serializer)
            tag = current
            guard ConditionalRequestMiddleware.matches(ifMatch, current, strongly: true) else {
                throw HTTPProblem(
                    .preconditionFailed,
                    detail: "If-Match: \(schema.name) \(key) has changed; its ETag is now \(current)",
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
                detail: "If-Unmodified-Since: \(schema.name) changed at \(stamp), after \(ifUnmodifiedSince)",
                extensions: ["lastModified": .string(stamp)])
        }
    }

    /// The tag a `GET` of the record answers: the hash of the serializer's representation, as
    /// ``ConditionalRequestMiddleware`` tags the body of a `GET`.
    static func entityTag(of record: JSONObject, schema: ResourceSchema, serializer: any MockSerializer) -> String {
        ConditionalRequestMiddleware.entityTag(of: serializer.serialize(record: record, of: schema.resource).serialized())
    }
}
