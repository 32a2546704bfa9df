import HTTPTypes
import HammockJSON
import HammockStore

/// Whose records one request may reach: the caller, in every resource an owner rule holds them to
/// (``AccessRule/Ownership``). The login's check makes one when it lets a request through; the resource
/// routes then see the store through an ``OwnerScopedStore``.
///
/// A class, so that the request every middleware passes on grows by one pointer, and only on requests
/// an owner rule covers.
final class OwnerScope: Sendable {
    /// The caller's id: a token's `sub`, an API key's or a Basic user's id; `nil` for a caller who said
    /// nothing (on an open route), who owns nothing.
    let subject: String?
    /// The field naming the owner, by resource (`*` for every resource).
    let fields: [String: String]

    init(subject: String?, fields: [String: String]) {
        self.subject = subject
        self.fields = fields
    }

    /// The owner field of `resource`, when the caller is held to their own records of it.
    func field(of resource: String) -> String? { fields[resource] ?? fields["*"] }

    /// The values of `field` that name the caller: the id as text, and as a number where it is one and
    /// the field is not declared text (an `ownerId` column of integers, a user with `"id": "7"`).
    func ownerValues(of schema: ResourceSchema, field: String) -> [JSON] {
        guard let subject else { return [] }
        let number = Int(subject)
        switch schema.columns.first(where: { $0.name == field })?.type {
        case .integer?: return number.map { [.integer($0)] } ?? [.string(subject)]
        case nil, .json?: return [.string(subject)] + (number.map { [.integer($0)] } ?? [])
        default: return [.string(subject)]
        }
    }

    /// Whether the caller owns `record` of `schema`, held to its owner `field`.
    func owns(_ record: JSONObject, of schema: ResourceSchema, field: String) -> Bool {
        guard let value = record[field] else { return false }
        return ownerValues(of: schema, field: field).contains(value)
    }

    /// The 403 for reaching another's record.
    func refusal(_ schema: ResourceSchema, key: JSON?, field: String, doing action: String) -> HTTPProblem {
        let record = key.map { "\(schema.name) \($0.serializedString().prefix(100))" } ?? "a record of \(schema.name)"
        return HTTPProblem(
            .forbidden,
            detail: "\(record) belongs to another user: its \(field) is not '\(subject?.prefix(100) ?? "")', "
                + "and only its owner may \(action) it")
    }

    /// Values for a create or a replacement with the owner field filled in when left out (or null), or
    /// the 403 for values that name another owner.
    func stamped(
        _ values: JSONObject, of schema: ResourceSchema, doing action: String
    ) throws(HTTPProblem)
        -> JSONObject
    {
        guard let field = field(of: schema.name) else { return values }
        let candidates = ownerValues(of: schema, field: field)
        guard let owner = candidates.first else {
            throw HTTPProblem(.forbidden, detail: "\(schema.name) records have owners: sign in to \(action) one")
        }
        var values = values
        switch values[field] {
        case nil, .null?: values[field] = owner
        case let given?:
            guard candidates.contains(given) else {
                throw HTTPProblem(
                    .forbidden,
                    detail: "\(schema.name)'s \(field) must be your own id ('\(subject?.prefix(100) ?? "")'): "
                        + "you may not \(action) a record for another user")
            }
        }
        return values
    }
}

/// The store as a request held to its own records sees it: lists and relations of an owned resource
/// hold the caller's records only; reading, updating or deleting the record the route names answers 403
/// when another owns it (any other read of another's record finds nothing); creates and updates may not
/// name another owner. Ownership is checked inside the write's unit of work, on the record the write
/// finds, beside the request's preconditions.
struct OwnerScopedStore: RequestScopedStore {
    let base: any MockStore
    let scope: OwnerScope
    /// The record the route names (`/notes/3`), whose refusal is a 403, not a miss.
    let routeRecord: (schema: String, key: JSON)?

    func storedRecord(of schema: ResourceSchema, withKey key: JSON) async throws -> StoredRecord? {
        let found = try await base.storedRecord(of: schema, withKey: key)
        guard let field = scope.field(of: schema.name), let stored = found else { return found }
        guard scope.owns(stored.fields, of: schema, field: field) else {
            if let routeRecord, routeRecord.schema == schema.name, key.isSameKey(as: routeRecord.key) {
                throw scope.refusal(schema, key: key, field: field, doing: "read")
            }
            return nil
        }
        return stored
    }

    func storedRecords(of schema: ResourceSchema, answering query: ListQuery) async throws -> (page: [StoredRecord], total: Int) {
        guard let field = scope.field(of: schema.name) else { return try await base.storedRecords(of: schema, answering: query) }
        let owner = scope.ownerValues(of: schema, field: field)
        guard !owner.isEmpty else { return ([], 0) }
        // One more filter: the stores answer it (and count the total) as any other.
        var scoped = query
        scoped.filters.append(ListQuery.Filter(field: field, values: owner))
        return try await base.storedRecords(of: schema, answering: scoped)
    }

    func storedRecords(of schema: ResourceSchema) async throws -> [StoredRecord] {
        let all = try await base.storedRecords(of: schema)
        guard let field = scope.field(of: schema.name) else { return all }
        return all.filter { scope.owns($0.fields, of: schema, field: field) }
    }

    func storedRecords(
        of schema: ResourceSchema, where foreignKey: ResourceSchema.ForeignKey, is parentKey: JSON
    ) async throws -> [StoredRecord] {
        let children = try await base.storedRecords(of: schema, where: foreignKey, is: parentKey)
        guard let field = scope.field(of: schema.name) else { return children }
        return children.filter { scope.owns($0.fields, of: schema, field: field) }
    }

    func count(of schema: ResourceSchema) async throws -> Int {
        guard scope.field(of: schema.name) != nil else { return try await base.count(of: schema) }
        return try await storedRecords(of: schema).count
    }

    func perform(_ write: StoreWrite) async throws -> ConditionalWrite<WriteResult> {
        guard let field = scope.field(of: write.schema.name) else { return try await base.perform(write) }
        let (schema, scope) = (write.schema, self.scope)
        var write = write
        let key: JSON
        let action: String
        switch write.action {
        case .create(let records):
            do {
                write.action = .create(try records.map { try scope.stamped($0, of: schema, doing: "create") })
            } catch { return .refused(error) }
            return try await base.perform(write)
        case .update(let updated, let values):
            if let given = values[field], !scope.ownerValues(of: schema, field: field).contains(given) {
                return .refused(
                    HTTPProblem(
                        .forbidden,
                        detail: "\(schema.name)'s \(field) must stay your own id ('\(scope.subject?.prefix(100) ?? "")'): "
                            + "you may not give a record to another user"))
            }
            (key, action) = (updated, "update")
        case .delete(let deleted, _):
            (key, action) = (deleted, "delete")
        }
        // The owner checked on the record the write finds, in its unit of work, before the request's own
        // condition (If-Match…): another's record is refused whatever its ETag.
        let inner = write.condition
        write.condition = .check { record in
            if let record, !scope.owns(record, of: schema, field: field) {
                return scope.refusal(schema, key: key, field: field, doing: action)
            }
            switch inner {
            case nil: return nil
            case .check(let check)?: return check(record)
            case .unchanged(let expected)?:
                guard let record, record != expected else { return nil }
                return ChangedSinceRead()
            }
        }
        let outcome = try await base.perform(write)
        if case .refused(let reason) = outcome, reason is ChangedSinceRead { return .changed }
        return outcome
    }

    /// An `unchanged` condition's miss, carried through the combined check and answered as
    /// ``ConditionalWrite/changed`` again.
    private struct ChangedSinceRead: Error {}
}
