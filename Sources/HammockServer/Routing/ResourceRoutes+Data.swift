import HammockJSON
import HammockStore
import Synchronization

/// What ``MockServer/addData(_:for:progress:)`` did with the objects it was given.
///
/// ```swift
/// let report = try await server.addData([["name": "ada"], ["nope": 1]], for: "people")
/// report.loaded    // 1
/// report.skipped   // 1
/// ```
public struct LoadReport: Sendable, Hashable, CustomStringConvertible {
    /// Objects stored as new records.
    public var loaded: Int
    /// Objects skipped: not an object, no known field, or a missing or taken client key.
    public var skipped: Int
    /// Values dropped from loaded objects because they did not have their field's type, or named a
    /// parent that does not exist (the record is loaded with `null` there).
    public var droppedValues: Int

    /// Creates a report.
    public init(loaded: Int, skipped: Int, droppedValues: Int) {
        self.loaded = loaded
        self.skipped = skipped
        self.droppedValues = droppedValues
    }

    /// `loaded 3, skipped 1`.
    public var description: String {
        "loaded \(loaded), skipped \(skipped)"
            + (droppedValues > 0 ? ", dropped \(droppedValues) mistyped values or dangling keys" : "")
    }
}

extension ResourceRoutes {
    /// Loads sample data into a resource; see ``MockServer/addData(_:for:progress:)``.
    /// `announcing: false` leaves the change unannounced (no modification date, no invalidation): for a
    /// caller loading in parts, which announces once with ``announceLoad(of:records:)`` at the end.
    func addData(
        _ data: JSON, for resource: String, announcing: Bool = true,
        progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil
    ) async throws -> LoadReport {
        guard
            let (schema, keyMaker) = registry.withLock({ registry in
                registry.schemas[resource].map { ($0, registry.keyMakers[resource]) }
            })
        else {
            throw HTTPProblem.notFound("No resource named '\(resource)'")
        }
        var random = SystemRandomNumberGenerator()
        let objects: [JSON] = data.arrayValue ?? [data]
        var report = LoadReport(loaded: 0, skipped: 0, droppedValues: 0)
        var batch: [JSONObject] = []
        var batchKeys = Set<RecordKey>()
        let batchSize = 500
        for (index, element) in objects.enumerated() {
            if var values = harvest(element, schema: schema, report: &report, makingKeys: keyMaker, using: &random) {
                for foreignKey in schema.foreignKeys {
                    guard let value = values[foreignKey.name], !value.isNull,
                        let parent = registry.withLock({ $0.schemas[foreignKey.parent] }),
                        try await store.record(of: parent, withKey: value) == nil
                    else { continue }
                    values[foreignKey.name] = .null
                    report.droppedValues += 1
                }
                if schema.isKeyGenerated && StoreRules.explicitGeneratedKey(in: values, of: schema) == nil {
                    batch.append(values)
                } else if let key = values[schema.key.name], !batchKeys.contains(RecordKey(key)),
                    try await store.record(of: schema, withKey: key) == nil
                {
                    batchKeys.insert(RecordKey(key))
                    batch.append(values)
                } else {
                    report.skipped += 1
                }
            }
            if batch.count == batchSize || index == objects.count - 1 {
                report.loaded += try await store.createRecords(of: schema, with: batch)
                batch.removeAll(keepingCapacity: true)
                batchKeys.removeAll(keepingCapacity: true)
                progress?(index + 1, objects.count)
            }
        }
        if report.loaded > 0, announcing { try await announceLoad(of: schema, records: report.loaded) }
        return report
    }

    /// Dates a bulk load of `schema` and tells listeners its records changed: one word for the load, not
    /// a change per record (a feed listening would overflow).
    func announceLoad(of schema: ResourceSchema, records: Int) async throws {
        try await store.finishLoad(of: schema, records: records)
        try await modifications.record(schema)
        changes.publish([ResourceChange(.invalidated, resource: schema.name)])
    }

    /// The values of a record to load, or `nil` (counted as skipped) when it cannot be one. A record
    /// without its key gets one from `keyMaker`, if the resource has a key format.
    func harvest<R: RandomNumberGenerator>(
        _ element: JSON, schema: ResourceSchema, report: inout LoadReport, makingKeys keyMaker: KeyMaker?,
        using random: inout R
    ) -> JSONObject? {
        guard case .object(let object) = element else {
            report.skipped += 1
            return nil
        }
        var values = JSONObject(minimumCapacity: schema.columns.count)
        for column in schema.columns {
            // A store-made key is kept when the data names it (`"id": 4`): children's foreign keys and the
            // URLs a team shares refer to it. Anything but a positive integer is left to the store.
            if schema.isKeyGenerated && column.name == schema.key.name {
                if let number = object[column.name]?.intValue, number > 0 { values[column.name] = .integer(number) }
                continue
            }
            guard let raw = object[column.name] else { continue }
            switch ResourceSchema.convert(raw, to: column.type, encoding: .json) {
            case .success(let value): values[column.name] = value
            case .failure: report.droppedValues += 1
            }
        }
        // Only for a record with something besides its key: `{}` is skipped, as before.
        if let keyMaker, values[schema.key.name]?.isNull ?? true, values.contains(where: { $0.key != schema.key.name }) {
            values[schema.key.name] = .string(keyMaker.make(using: &random))
        }
        var hasKey = schema.isKeyGenerated || !(values[schema.key.name]?.isNull ?? true)
        if case .string(let key) = values[schema.key.name], ResourceSchema.unreachableKeyProblem(key) != nil {
            hasKey = false  // a record no URL could reach again
        }
        guard !values.isEmpty, hasKey else {
            report.skipped += 1
            return nil
        }
        // Defaults as a create gets them; a record without a required field is skipped, as a create is refused.
        for field in schema.ruledFields where values[field.name]?.isNull ?? true {
            if values[field.name] == nil, let value = field.defaultValue {
                values[field.name] = value
            } else if field.isRequired {
                report.skipped += 1
                return nil
            }
        }
        return values
    }
}
