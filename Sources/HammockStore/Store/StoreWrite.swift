public import HammockJSON

/// A change to a resource's records, as one value that a store carries out whole
/// (``MockStore/perform(_:)``): the action, the condition it holds under, and the second to note as
/// the change date of what it changed, all in the same unit of work.
///
/// ```swift
/// let write = StoreWrite(people, .update(key: 3, values: ["name": "Ada"]), condition: .unchanged(read), changedAt: now)
/// switch try await store.perform(write) {
/// case .written(let result): print(result.records[0])
/// case .missing: print("no person 3")
/// case .changed: print("someone wrote it first")
/// }
/// ```
public struct StoreWrite: Sendable {
    /// What the write does.
    public enum Action: Sendable {
        /// Stores new records built from validated values: all of them, or none when one fails (a taken
        /// client key, a missing parent). A generated key is made by the store.
        case create([JSONObject])
        /// Merges values into the record with `key`; the key itself never changes.
        case update(key: JSON, values: JSONObject)
        /// Deletes the record with `key`, after every record of each dependent that points at it
        /// (`DELETE /people/1?_dependent=cars`); the foreign keys of the other children become `null`.
        case delete(key: JSON, dependents: [Dependent])
    }

    /// A child resource whose records go with their parent (`_dependent=cars`).
    public struct Dependent: Sendable, Hashable {
        /// The child resource.
        public var schema: ResourceSchema
        /// Its foreign key to the parent being deleted.
        public var foreignKey: ResourceSchema.ForeignKey

        public init(_ schema: ResourceSchema, _ foreignKey: ResourceSchema.ForeignKey) {
            self.schema = schema
            self.foreignKey = foreignKey
        }
    }

    /// What must hold of the record an update or delete finds, checked on the very read the write
    /// makes, in its unit of work: nothing can land between the check and the write.
    public enum Condition: Sendable {
        /// The record's fields are still these (as a read gave them); otherwise nothing is written and
        /// the outcome is ``ConditionalWrite/changed``.
        case unchanged(JSONObject)
        /// A check of the caller's on the record as the write finds it (`nil` when there is none): the
        /// reason to refuse the write, or `nil` to let it go ahead. A refused write changes nothing and
        /// answers ``ConditionalWrite/refused(_:)`` with the reason (the server's `If-Match` check gives
        /// its 412 with the record's current `ETag`).
        case check(@Sendable (JSONObject?) -> (any Error)?)
    }

    /// The resource written.
    public var schema: ResourceSchema
    /// What is done.
    public var action: Action
    /// What must hold first (update and delete); `nil` for none.
    public var condition: Condition?
    /// The second (since 1970) to note as the change date of every resource the write changed, in the
    /// same unit of work (``MockStore/lastChange(of:now:marking:)`` reads it); `nil` notes nothing.
    public var changedAt: Int?

    public init(_ schema: ResourceSchema, _ action: Action, condition: Condition? = nil, changedAt: Int? = nil) {
        self.schema = schema
        self.action = action
        self.condition = condition
        self.changedAt = changedAt
    }
}

/// What a write did (``MockStore/perform(_:)``), inside ``ConditionalWrite/written(_:)``.
public struct WriteResult: Sendable, Hashable {
    /// The records created or the record updated, as stored (keys made, values normalized); for a
    /// delete, the record deleted.
    public var records: [JSONObject]
    /// How many dependents went with a deleted record.
    public var dependentsRemoved: Int
    /// The resources whose records changed, the written one first: those whose foreign keys a delete set
    /// to `null` and the dependents it removed follow. Their change date was noted when the write had one.
    public var changedResources: [String]

    public init(records: [JSONObject], dependentsRemoved: Int = 0, changedResources: [String]) {
        self.records = records
        self.dependentsRemoved = dependentsRemoved
        self.changedResources = changedResources
    }
}

extension StoreWrite.Condition {
    /// Checks the record a write found: `nil` when the write may go ahead, otherwise what the write
    /// answers instead (``ConditionalWrite/changed`` or ``ConditionalWrite/refused(_:)``). No record
    /// passes ``unchanged(_:)``: the write then answers ``ConditionalWrite/missing``.
    public func outcome<Value: Sendable>(for record: JSONObject?) -> ConditionalWrite<Value>? {
        switch self {
        case .unchanged(let expected):
            guard let record, record != expected else { return nil }
            return .changed
        case .check(let check):
            return check(record).map { .refused($0) }
        }
    }
}
