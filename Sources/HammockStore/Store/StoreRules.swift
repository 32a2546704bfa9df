public import HammockJSON

/// The few operations on single records that a store's unit of work offers (a transaction, or a lock
/// held): everything ``StoreRules`` needs to carry out a ``StoreWrite`` with the store's integrity rules.
///
/// A new store writes these and gets parents, key nulling, dependents and conditions from the rules,
/// the same as Hammock's stores:
///
/// ```swift
/// func perform(_ write: StoreWrite) async throws -> ConditionalWrite<WriteResult> {
///     try state.withLock { state in try StoreRules.perform(write, in: &state) }
/// }
/// ```
public protocol StoreTransaction {
    /// The resources the store holds now: the rules look among them for the children of a deleted record.
    var schemas: [ResourceSchema] { get }
    /// The record of `schema` with `key`, as this unit of work sees it (its own writes included).
    /// - Throws: ``StoreError/unknownResource(_:)`` for a resource the store was never given.
    mutating func record(of schema: ResourceSchema, withKey key: JSON) throws -> JSONObject?
    /// The keys of the records of `schema` whose `foreignKey` field names `parentKey`.
    mutating func keys(of schema: ResourceSchema, where foreignKey: String, is parentKey: JSON) throws -> [JSON]
    /// Stores a new record (every column, made by ``ResourceSchema/makeRecord(key:values:)``) and returns
    /// it as stored. Its key is `null` when the store generates it: the next integer never handed out.
    /// The rules have checked that a client key is free.
    mutating func insert(_ record: JSONObject, of schema: ResourceSchema) throws -> JSONObject
    /// Replaces the record with `record`'s key by `record` (every column).
    mutating func replace(_ record: JSONObject, of schema: ResourceSchema) throws
    /// Removes the record with `key`.
    mutating func remove(key: JSON, of schema: ResourceSchema) throws
    /// Notes that `resources` changed at `second`, in this unit of work (see ``ModificationLog``).
    mutating func noteChange(of resources: [String], at second: Int) throws
}

/// A store's integrity rules, once for every store, over the operations of a ``StoreTransaction``:
///
/// - A foreign key given in a write names an existing parent, or the write is refused
///   (``StoreError/missingParent(field:parent:key:)``); a parent resource the store does not hold is
///   not checked.
/// - A client-supplied key is present and free (``StoreError/duplicateKey(_:)``), also within one batch.
/// - An update or a delete reads its record once, and checks its ``StoreWrite/Condition`` on that read.
/// - A delete removes its dependents' records first, and sets to `null` every foreign key that named a
///   removed record.
/// - Everything is checked before anything is written, so a refused write leaves the store as it was
///   even in a store without transactions.
/// - The change date goes with the write (``StoreWrite/changedAt``).
public enum StoreRules {
    /// Carries out `write` in `transaction`.
    /// - Throws: ``StoreError`` for a refused write; what the transaction throws.
    public static func perform<Transaction: StoreTransaction>(
        _ write: StoreWrite, in transaction: inout Transaction
    ) throws -> ConditionalWrite<WriteResult> {
        let schema = write.schema
        var result: WriteResult
        switch write.action {
        case .create(let batch):
            result = WriteResult(records: try create(batch, of: schema, in: &transaction), changedResources: [schema.name])
        case .update(let key, let values):
            let current = try transaction.record(of: schema, withKey: key)
            if let outcome: ConditionalWrite<WriteResult> = write.condition?.outcome(for: current) { return outcome }
            guard var record = current else { return .missing }
            try checkParents(of: values, for: schema, in: &transaction)
            for column in schema.columns.dropFirst() {
                if let value = values[column.name] { record[column.name] = column.normalized(value) }
            }
            try transaction.replace(record, of: schema)
            result = WriteResult(records: [record], changedResources: [schema.name])
        case .delete(let key, let dependents):
            let current = try transaction.record(of: schema, withKey: key)
            if let outcome: ConditionalWrite<WriteResult> = write.condition?.outcome(for: current) { return outcome }
            guard let record = current else { return .missing }
            // Every dependent found before the first removal: a resource the store lacks fails here, with
            // nothing removed yet.
            var doomed: [(ResourceSchema, JSON)] = []
            for dependent in dependents {
                for childKey in try transaction.keys(of: dependent.schema, where: dependent.foreignKey.name, is: key) {
                    doomed.append((dependent.schema, childKey))
                }
            }
            var changed = [schema.name]
            for (child, childKey) in doomed {
                try remove(childKey, of: child, in: &transaction, changed: &changed)
            }
            try remove(key, of: schema, in: &transaction, changed: &changed)
            result = WriteResult(records: [record], dependentsRemoved: doomed.count, changedResources: changed)
        }
        if let second = write.changedAt { try transaction.noteChange(of: result.changedResources, at: second) }
        return .written(result)
    }

    /// All or nothing: every parent and every client key is checked before the first insert. A store-made
    /// key given as a positive integer (sample data that names its records) is kept, checked as a client
    /// key is; the store's next key then comes after it.
    static func create<Transaction: StoreTransaction>(
        _ batch: [JSONObject], of schema: ResourceSchema, in transaction: inout Transaction
    ) throws -> [JSONObject] {
        for values in batch { try checkParents(of: values, for: schema, in: &transaction) }
        var keys: [JSON] = []
        var seen = Set<RecordKey>()
        keys.reserveCapacity(batch.count)
        for values in batch {
            if schema.isKeyGenerated {
                guard let key = explicitGeneratedKey(in: values, of: schema) else {
                    keys.append(.null)
                    continue
                }
                guard seen.insert(RecordKey(key)).inserted, try transaction.record(of: schema, withKey: key) == nil else {
                    throw StoreError.duplicateKey(key)
                }
                keys.append(key)
                continue
            }
            guard let key = values[schema.key.name], !key.isNull else {
                throw StoreError.storageFailure("a record of \(schema.name) needs a \(schema.key.name)")
            }
            guard seen.insert(RecordKey(key)).inserted, try transaction.record(of: schema, withKey: key) == nil else {
                throw StoreError.duplicateKey(key)
            }
            keys.append(key)
        }
        // The records that name their key first: the store's keys for the others then come after every
        // key the batch names, the same on every store (PostgreSQL moves its sequence first too).
        var created = [JSONObject?](repeating: nil, count: batch.count)
        for pass in [true, false] {
            for (index, values) in batch.enumerated() where keys[index].isNull != pass {
                created[index] = try transaction.insert(schema.makeRecord(key: keys[index], values: values), of: schema)
            }
        }
        return created.compactMap { $0 }
    }

    /// The key a create gives for a resource whose keys the store makes: a positive integer, else `nil`
    /// (the store makes one). HTTP creates never pass one (the request's key is dropped before the store).
    public static func explicitGeneratedKey(in values: JSONObject, of schema: ResourceSchema) -> JSON? {
        guard schema.isKeyGenerated, let number = values[schema.key.name]?.intValue, number > 0 else { return nil }
        return .integer(number)
    }

    /// Each non-null foreign key among `values` must name an existing parent.
    public static func checkParents<Transaction: StoreTransaction>(
        of values: JSONObject, for schema: ResourceSchema, in transaction: inout Transaction
    ) throws {
        guard !schema.foreignKeys.isEmpty else { return }
        let held = transaction.schemas
        for foreignKey in schema.foreignKeys {
            guard let value = values[foreignKey.name], !value.isNull,
                let parent = held.first(where: { $0.name == foreignKey.parent })
            else { continue }
            if try transaction.record(of: parent, withKey: value) == nil {
                throw StoreError.missingParent(field: foreignKey.name, parent: foreignKey.parent, key: value)
            }
        }
    }

    /// Removes one record and sets to `null` the foreign keys that named it.
    static func remove<Transaction: StoreTransaction>(
        _ key: JSON, of schema: ResourceSchema, in transaction: inout Transaction, changed: inout [String]
    ) throws {
        try transaction.remove(key: key, of: schema)
        for child in transaction.schemas {
            for foreignKey in child.foreignKeys where foreignKey.parent == schema.name {
                for childKey in try transaction.keys(of: child, where: foreignKey.name, is: key) {
                    guard var record = try transaction.record(of: child, withKey: childKey) else { continue }
                    record[foreignKey.name] = .null
                    try transaction.replace(record, of: child)
                    if !changed.contains(child.name) { changed.append(child.name) }
                }
            }
        }
        if !changed.contains(schema.name) { changed.append(schema.name) }
    }
}
