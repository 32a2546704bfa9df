public import HammockJSON

/// Where a mock server keeps its records.
///
/// Records are objects holding a schema's columns in order (see ``ResourceSchema/makeRecord(key:values:)``).
/// A store generates integer keys that are never reused, lists records ordered by key, and keeps
/// references whole: a record's foreign key names an existing parent or is `null`. A create or an
/// update that names a missing parent is refused (``StoreError/missingParent(field:parent:key:)``),
/// and a deleted parent's children get `null`; each check and its write are one atomic step.
/// ``MemoryStore`` and `SQLiteStore` behave identically. A custom store (a JSON file, a remote service)
/// writes ten calls; for ``perform(_:)`` it offers the few operations of a ``StoreTransaction`` and
/// ``StoreRules`` keeps the integrity rules, as Hammock's own stores do:
///
/// ```swift
/// let store = try SQLiteStore(path: "db.sqlite")
/// let server = try await MockServer(resources: [people], store: store)
/// ```
public protocol MockStore: Sendable {
    // Ten requirements a store must write, and six with defaults. Every write is one ``StoreWrite``
    // (``perform(_:)``); the plain reads and the old per-case writes are extensions over these.

    /// Prepares storage for a resource (creating or migrating its table). Parents come before children.
    func addResource(_ schema: ResourceSchema) async throws
    /// Removes a resource and all its records.
    func dropResource(_ schema: ResourceSchema) async throws
    /// The record with `key` and its serialized JSON, if any.
    func storedRecord(of schema: ResourceSchema, withKey key: JSON) async throws -> StoredRecord?
    /// The records that answer a list query (filtered, searched, sorted and cut to its window) and how
    /// many matched before the cut; an empty query is every record, ordered by key. A store without
    /// indexes applies the query to every record (``ListQuery/apply(to:schema:)``); ``MemoryStore`` and
    /// `SQLiteStore` answer from indexes they build on first use and keep on every write.
    func storedRecords(
        of schema: ResourceSchema, answering query: ListQuery
    ) async throws -> (page: [StoredRecord], total: Int)
    /// Carries out a write whole, in one unit of work: its condition checked on the one read of its record,
    /// the integrity rules kept (``StoreRules``, which a store can run over a ``StoreTransaction``), and its
    /// change date noted with it. Returns what changed; ``ConditionalWrite/missing`` when an update or
    /// delete finds no record, ``ConditionalWrite/changed`` when its condition does not hold.
    /// - Throws: ``StoreError/duplicateKey(_:)`` if a client-supplied key is taken,
    ///   ``StoreError/missingParent(field:parent:key:)`` if a foreign key names no existing parent. A
    ///   refused write changes nothing.
    func perform(_ write: StoreWrite) async throws -> ConditionalWrite<WriteResult>
    /// Every record of `schemas` and each one's last generated key, read in one consistent step.
    func snapshot(of schemas: [ResourceSchema]) async throws -> StoreSnapshot
    /// Replaces every record of `schemas` with the snapshot's, keys and key counters included, in one
    /// atomic step: a resource the snapshot lacks is emptied, records of a resource whose fields changed since
    /// are rebuilt with the new fields, and foreign keys naming a parent left out become `null`.
    func restore(_ snapshot: StoreSnapshot, schemas: [ResourceSchema]) async throws
    /// When the records of the latest-changed of `resources` last changed, in seconds since 1970 (for
    /// `Last-Modified`); with `marking`, notes that an answer carries that date, so that a change in the
    /// same second moves the date on (see ``ModificationLog``, which a store in one process holds).
    /// `nil` while that date is still ahead of `now`. Servers sharing a store share these dates.
    func lastChange(of resources: [String], now: Int, marking: Bool) async throws -> Int?
    /// Notes that the records of `resources` changed at `second`, outside a write: the server calls it
    /// after a restore and a reshape. (A write notes its own date: ``StoreWrite/changedAt``.)
    func noteChange(of resources: [String], at second: Int) async throws
    /// Releases what the store holds (files, connections); later calls fail. `hammock serve` calls it
    /// after stopping. (No default: a default `async` one would be chosen over a store's own synchronous
    /// `close()` in async code, and quietly do nothing.)
    func close() async throws

    /// How many records a resource has. The default answers an empty query.
    func count(of schema: ResourceSchema) async throws -> Int
    /// Every record with its serialized JSON, ordered by key. The default answers an empty query.
    func storedRecords(of schema: ResourceSchema) async throws -> [StoredRecord]
    /// The records whose foreign key equals `parentKey`, with their serialized JSON, ordered by key. The
    /// default answers a query with that one filter.
    func storedRecords(
        of schema: ResourceSchema, where foreignKey: ResourceSchema.ForeignKey, is parentKey: JSON
    ) async throws -> [StoredRecord]
    /// Runs `body` while no other server sharing this store runs one of its own: of several servers that
    /// start together on one database, the first loads the seed data and the others find it loaded. The
    /// default just runs it: a store in one process shares it with no other server.
    func exclusively<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T
    /// Whether the store can serve now; the admin API's `GET /__hammock/health` asks it. The default
    /// says yes.
    func health() async -> StoreHealth
    /// After a start that failed: closes the store and removes what opening it created (a new database
    /// file), so a mistake leaves nothing behind. The default closes.
    func abandon() async
    /// After `records` records of `schema` were loaded at once (seed data, generated records, the admin
    /// API's data), before the server answers: a chance to prepare for the queries to come. The default
    /// does nothing; PostgreSQL vacuums and analyzes the table after a large load.
    func finishLoad(of schema: ResourceSchema, records: Int) async throws
}

/// What ``MockStore/health()`` says.
public enum StoreHealth: Sendable, Hashable {
    /// The store answers.
    case available
    /// The store cannot serve now, and why (for the log and the admin API; not a client's business).
    case unavailable(String)
}

extension MockStore {
    public func count(of schema: ResourceSchema) async throws -> Int {
        try await storedRecords(of: schema, answering: ListQuery()).total
    }
    public func health() async -> StoreHealth { .available }
    public func exclusively<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T { try await body() }
    public func abandon() async { try? await close() }
    public func finishLoad(of schema: ResourceSchema, records: Int) async throws {}

    public func storedRecords(of schema: ResourceSchema) async throws -> [StoredRecord] {
        try await storedRecords(of: schema, answering: ListQuery()).page
    }

    public func storedRecords(
        of schema: ResourceSchema, where foreignKey: ResourceSchema.ForeignKey, is parentKey: JSON
    ) async throws -> [StoredRecord] {
        let query = ListQuery(filters: [ListQuery.Filter(field: foreignKey.name, values: [parentKey])])
        return try await storedRecords(of: schema, answering: query).page
    }
}

// MARK: Reads and writes over the requirements

extension MockStore {
    /// The record with `key`, if any.
    public func record(of schema: ResourceSchema, withKey key: JSON) async throws -> JSONObject? {
        try await storedRecord(of: schema, withKey: key)?.fields
    }

    /// Every record, ordered by key.
    public func records(of schema: ResourceSchema) async throws -> [JSONObject] {
        try await storedRecords(of: schema).map(\.fields)
    }

    /// The records whose foreign key equals `parentKey`, ordered by key.
    public func records(
        of schema: ResourceSchema, where foreignKey: ResourceSchema.ForeignKey, is parentKey: JSON
    ) async throws -> [JSONObject] {
        try await storedRecords(of: schema, where: foreignKey, is: parentKey).map(\.fields)
    }

    /// Stores a new record built from validated values and returns it (``StoreWrite/Action/create(_:)``).
    /// - Throws: ``StoreError/duplicateKey(_:)`` if a client-supplied key is taken,
    ///   ``StoreError/missingParent(field:parent:key:)`` if a foreign key names no existing parent.
    public func createRecord(of schema: ResourceSchema, with values: JSONObject) async throws -> JSONObject {
        guard case .written(let result) = try await perform(StoreWrite(schema, .create([values]))),
            let record = result.records.first
        else { throw StoreError.storageFailure("a create of \(schema.name) stored nothing") }
        return record
    }

    /// Stores many records in one step and returns how many were stored: all of them, or none when one
    /// of them fails as ``createRecord(of:with:)`` would.
    public func createRecords(of schema: ResourceSchema, with values: [JSONObject]) async throws -> Int {
        guard !values.isEmpty else { return 0 }
        guard case .written(let result) = try await perform(StoreWrite(schema, .create(values))) else {
            throw StoreError.storageFailure("a create of \(schema.name) stored nothing")
        }
        return result.records.count
    }

    /// Merges values into the record with `key`; `nil` if there is none.
    /// - Throws: ``StoreError/missingParent(field:parent:key:)`` if a foreign key given names no existing parent.
    public func updateRecord(of schema: ResourceSchema, withKey key: JSON, with values: JSONObject) async throws -> JSONObject? {
        try await perform(StoreWrite(schema, .update(key: key, values: values))).value?.records.first
    }

    /// Merges values into the record with `key` only if its fields are still `expected`, checked and
    /// written in one step (``StoreWrite/Condition/unchanged(_:)``).
    public func updateRecord(
        of schema: ResourceSchema, withKey key: JSON, with values: JSONObject, ifCurrent expected: JSONObject
    ) async throws -> ConditionalWrite<JSONObject> {
        try await perform(StoreWrite(schema, .update(key: key, values: values), condition: .unchanged(expected)))
            .map { $0.records.first ?? [:] }
    }

    /// Deletes the record with `key`, nulling its children's foreign keys; `false` if there was none.
    public func deleteRecord(of schema: ResourceSchema, withKey key: JSON) async throws -> Bool {
        try await perform(StoreWrite(schema, .delete(key: key, dependents: []))).value != nil
    }

    /// Deletes the record with `key` and first every record of each dependent that points at it, all in
    /// one step, only if its fields are still `expected` when given. Returns how many dependents went with it.
    public func deleteRecord(
        of schema: ResourceSchema, withKey key: JSON, dependents: [(ResourceSchema, ResourceSchema.ForeignKey)],
        ifCurrent expected: JSONObject?
    ) async throws -> ConditionalWrite<Int> {
        let write = StoreWrite(
            schema, .delete(key: key, dependents: dependents.map { StoreWrite.Dependent($0.0, $0.1) }),
            condition: expected.map { .unchanged($0) })
        return try await perform(write).map(\.dependentsRemoved)
    }

    /// Deletes the record with `key` only if its fields are still `expected`, checked and deleted in one step.
    public func deleteRecord(
        of schema: ResourceSchema, withKey key: JSON, ifCurrent expected: JSONObject
    ) async throws -> ConditionalWrite<Void> {
        try await deleteRecord(of: schema, withKey: key, dependents: [], ifCurrent: expected).map { _ in () }
    }
}

/// Failures a store reports. The server answers them as 409 (a taken key), 422 (a missing parent) or 500.
///
/// ```swift
/// do { _ = try await store.createRecord(of: categories, with: ["slug": "tools"]) }
/// catch StoreError.duplicateKey(let key) { print("\(key) is taken") }
/// ```
public enum StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A client-supplied key that is already taken.
    case duplicateKey(JSON)
    /// A foreign key (`field`) that names no record of `parent`.
    case missingParent(field: String, parent: String, key: JSON)
    /// A resource the store was never given.
    case unknownResource(String)
    /// The storage itself failed (disk, corruption, SQL error). Answered 500; the text goes to the log,
    /// never into the response.
    case storageFailure(String)
    /// The store cannot be reached now (a database down, restarting, or out of connections): answered
    /// 503 with `Retry-After`, as a client should try again.
    case unavailable(String)
    /// The store did not answer in time: answered 503 with `Retry-After`.
    case timedOut(String)
    /// A write broke a rule of the store's own (a constraint Hammock does not know): answered 409.
    case constraint(String)
    /// A write collided with a concurrent one (a serialization failure): answered 409; retrying may succeed.
    case conflict(String)
    /// Another store, in this process or another, holds the database file.
    case fileInUse(path: String)
    /// The store holds records of `resource` written when `field` had another type: serving them under
    /// the new one would answer `"name": "Amy"` for an integer. Refused at start.
    case schemaChanged(resource: String, field: String, stored: String, declared: String)
    /// A ``StoreLocation`` whose scheme no driver in ``StoreDrivers`` opens.
    case unknownScheme(String, known: [String])
    /// The store holds records of `resource` written by a server (or an earlier run) that declared its
    /// references to parents otherwise (`stored`) than this one (`declared`): the two would keep
    /// different rules on one set of data. Refused at start.
    case relationsChanged(resource: String, stored: String, declared: String)

    /// A one-line message.
    public var description: String {
        switch self {
        case .duplicateKey(let key): "the key \(key) is already taken"
        case .missingParent(let field, let parent, let key):
            "\(field) names \(parent) \(key.serializedString()), which does not exist"
        case .unknownResource(let name): "the store has no resource '\(name)'"
        case .storageFailure(let message): "storage failure: \(message)"
        case .unavailable(let message): "the store is unavailable: \(message)"
        case .timedOut(let message): "the store did not answer in time: \(message)"
        case .constraint(let message): "the store refused the write: \(message)"
        case .conflict(let message): "the write collided with another: \(message)"
        case .fileInUse(let path):
            "\(path) is in use by another running server; stop it, or give this one another store"
        case .unknownScheme(let scheme, let known):
            "no store opens '\(scheme):' here; this program knows \(known.map { "\($0):" }.joined(separator: ", "))"
        case .relationsChanged(let resource, let stored, let declared):
            "\(resource) has \(declared) here, but the store holds \(resource) written where it had \(stored); "
                + "declare it the same way on every server sharing the store, or give this one another namespace"
        case .schemaChanged(let resource, let field, let stored, let declared):
            "\(resource).\(field) is \(declared) now, but the store holds \(resource) written when it was \(stored); "
                + "give it back its type, or start from an empty store (another file, or delete its records)"
        }
    }
}

extension StoreError {
    /// Whether the same request may succeed if sent again: the store was unavailable, slow, or the
    /// write collided with another.
    public var isTransient: Bool {
        switch self {
        case .unavailable, .timedOut, .conflict: true
        case .duplicateKey, .missingParent, .unknownResource, .storageFailure, .fileInUse, .schemaChanged, .constraint,
            .unknownScheme, .relationsChanged:
            false
        }
    }
}

/// What a conditional write (``MockStore/updateRecord(of:withKey:with:ifCurrent:)``) did.
public enum ConditionalWrite<Value: Sendable>: Sendable {
    /// The record was the one expected, and is written.
    case written(Value)
    /// There is no record with the key.
    case missing
    /// The record is no longer the one expected: another write came first. Nothing was written.
    case changed
    /// The write's ``StoreWrite/Condition/check(_:)`` gave this reason to refuse it. Nothing was written.
    case refused(any Error)

    /// The written value, if the write happened.
    public var value: Value? {
        if case .written(let value) = self { return value }
        return nil
    }

    /// The same outcome with the written value transformed.
    public func map<T: Sendable>(_ transform: (Value) throws -> T) rethrows -> ConditionalWrite<T> {
        switch self {
        case .written(let value): .written(try transform(value))
        case .missing: .missing
        case .changed: .changed
        case .refused(let reason): .refused(reason)
        }
    }
}

/// Orders keys the way SQLite's `ORDER BY` does: integers numerically, strings by UTF-8 bytes.
func keyPrecedes(_ lhs: JSON, _ rhs: JSON) -> Bool {
    switch (lhs, rhs) {
    case (.integer(let a), .integer(let b)): return a < b
    case (.string(let a), .string(let b)): return a.utf8.lexicographicallyPrecedes(b.utf8)
    case (.integer, .string): return true
    default: return false
    }
}
