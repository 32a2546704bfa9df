import HammockJSON
import HammockSchema
import HammockStore

extension MockServer {
    /// Fills each resource of `generation` that has no records yet with made-up ones, parents before
    /// children so that foreign keys point at records that exist. A resource that has records is left
    /// alone, so a restart with a persistent store does not add more.
    ///
    /// The same `seed` makes the same records. Each resource draws from its own sequence (the seed and
    /// its name), so adding a resource to the generation does not change the others.
    ///
    /// ```swift
    /// try await server.generateData(DataGeneration([.init("people", count: 50)]), seed: 42)
    /// ```
    /// - Returns: A report per resource filled.
    /// - Throws: ``DataGeneration/Problem`` for a resource or field that does not exist or a rule that does
    ///   not suit its field; the store's error.
    @discardableResult
    public func generateData(
        _ generation: DataGeneration, seed: UInt64
    ) async throws -> [(resource: String, report: LoadReport)] {
        let schemas = self.schemas
        for resource in generation.resources {
            guard let schema = schemas.first(where: { $0.name == resource.name }) else {
                throw DataGeneration.Problem(
                    path: resource.name,
                    message: "no such resource; there are \(schemas.map(\.name).joined(separator: ", "))")
            }
            if let problem = resource.problem(
                fields: Dictionary(schema.columns.map { ($0.name, $0.type) }) { first, _ in first },
                foreignKeys: Set(schema.foreignKeys.map(\.name)), generatedKey: schema.isKeyGenerated ? schema.key.name : nil,
                key: schema.key.name)
            {
                throw problem
            }
        }
        // Servers starting together on one shared store: one generates, the others then find records.
        return try await store.exclusively {
            var reports: [(resource: String, report: LoadReport)] = []
            for schema in schemas {
                guard let resource = generation.resources.last(where: { $0.name == schema.name }),
                    max(resource.count, resource.keys.count) > 0,
                    try await self.store.count(of: schema) == 0
                else { continue }
                var parentKeys: [String: [JSON]] = [:]
                for foreignKey in schema.foreignKeys {
                    guard let parent = schemas.first(where: { $0.name == foreignKey.parent }) else { continue }
                    parentKeys[parent.name] = try await self.store.storedRecords(of: parent).map {
                        $0.fields[parent.key.name] ?? .null
                    }
                }
                var maker = RecordMaker(random: SeededRandom(seed: seed ^ Self.nameHash(schema.name)))
                let keyMaker = try KeyMaker(schema.resource)
                var keys = Set<RecordKey>()
                var records: [JSON] = []
                let count = max(resource.count, resource.keys.count)
                // Made and loaded in parts, each freed before the next is made: the made objects (their
                // own key lists and values) are copies the store does not keep, and a million of them made
                // first and freed after the load left 390 MB of holes among the stored records that the
                // allocator never returned (RSS 1,269 MB, 883 MB in use; glibc's malloc_stats).
                let part = 10_000
                var report = LoadReport(loaded: 0, skipped: 0, droppedValues: 0)
                records.reserveCapacity(min(count, part))
                for number in 1...count {
                    var record = maker.record(
                        for: schema, rules: resource.fields, number: number, parentKeys: parentKeys, keyMaker: keyMaker)
                    // The keys asked for first (checked against the key's type before anything was made).
                    if number <= resource.keys.count, !schema.isKeyGenerated,
                        case .success(let key) = ResourceSchema.convert(
                            resource.keys[number - 1], to: schema.key.type, encoding: .json)
                    {
                        record[schema.key.name] = key
                    }
                    // A key the client supplies must be unique: a repeat is made again in the key's format,
                    // else gets the record's number.
                    if !schema.isKeyGenerated, let key = record[schema.key.name] {
                        if keys.contains(RecordKey(key)), let keyMaker {
                            for _ in 0..<KeyMaker.attempts where keys.contains(RecordKey(record[schema.key.name] ?? .null)) {
                                record[schema.key.name] = .string(keyMaker.make(using: &maker.random))
                            }
                        }
                        if let key = record[schema.key.name], keys.contains(RecordKey(key)), case .string(let text) = key {
                            record[schema.key.name] = .string("\(text)-\(number)")
                        }
                        keys.insert(RecordKey(record[schema.key.name] ?? .null))
                    }
                    records.append(.object(record))
                    if records.count == part || number == count {
                        let loaded = try await self.resources.addData(.array(records), for: schema.name, announcing: false)
                        report.loaded += loaded.loaded
                        report.skipped += loaded.skipped
                        report.droppedValues += loaded.droppedValues
                        records.removeAll(keepingCapacity: true)
                    }
                }
                if report.loaded > 0 { try await self.resources.announceLoad(of: schema, records: report.loaded) }
                reports.append((schema.name, report))
            }
            return reports
        }
    }

    /// FNV-1a of the name's bytes: the same on every run, unlike `Hasher`.
    package static func nameHash(_ name: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in name.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01B3
        }
        return hash
    }
}

extension DataGeneration {
    /// A generation that names something that does not exist, or a rule that does not suit its field.
    public struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// Where: `people`, `people.fields.age.min`.
        public var path: String
        /// What is wrong.
        public var message: String

        public var description: String { "generate.\(path): \(message)" }
    }
}

extension DataGeneration.Resource {
    /// The first thing wrong with this resource's rules, given its fields' types, its foreign keys and
    /// its generated key (if any); nil when every rule suits its field.
    func problem(
        fields: [String: FieldType], foreignKeys: Set<String>, generatedKey: String?, key: String
    ) -> DataGeneration.Problem? {
        if count < 0 { return DataGeneration.Problem(path: "\(name).count", message: "must be 0 or more") }
        if !keys.isEmpty {
            if generatedKey != nil {
                return DataGeneration.Problem(
                    path: "\(name).keys", message: "the store generates this resource's keys; leave keys out")
            }
            var seen = Set<RecordKey>()
            for (index, given) in keys.enumerated() {
                guard let type = fields[key],
                    case .success(let converted) = ResourceSchema.convert(given, to: type, encoding: .json),
                    !converted.isNull
                else {
                    return DataGeneration.Problem(
                        path: "\(name).keys[\(index)]", message: "\(given.serializedString().prefix(60)) is not a key of \(name)")
                }
                guard seen.insert(RecordKey(converted)).inserted else {
                    return DataGeneration.Problem(path: "\(name).keys[\(index)]", message: "is given twice")
                }
            }
        }
        for (field, rule) in fields.keys.sorted().compactMap({ field in self.fields[field].map { (field, $0) } }) {
            guard let type = fields[field] else { continue }
            if let problem = rule.problem(for: type, isForeignKey: foreignKeys.contains(field)) {
                return DataGeneration.Problem(path: "\(name).fields.\(field).\(problem.key)", message: problem.message)
            }
        }
        for field in self.fields.keys.sorted() where fields[field] == nil || field == generatedKey {
            let message =
                field == generatedKey
                ? "the store generates this key; leave it out"
                : "no such field; \(name) has \(fields.keys.filter { $0 != generatedKey }.sorted().joined(separator: ", "))"
            return DataGeneration.Problem(path: "\(name).fields.\(field)", message: message)
        }
        return nil
    }
}

extension DataGeneration.FieldRule {
    /// What is wrong with this rule for a field of `type`: the rule's key and a message.
    func problem(for type: FieldType, isForeignKey: Bool) -> (key: String, message: String)? {
        if let choices {
            if choices.isEmpty { return ("oneOf", "list at least one value") }
            for (index, choice) in choices.enumerated() {
                guard case .success = ResourceSchema.convert(choice, to: type, encoding: .json) else {
                    return ("oneOf[\(index)]", "\(choice.serializedString()) is not a \(type.rawValue) value")
                }
            }
        }
        if isForeignKey, kind != nil || minimum != nil || maximum != nil {
            return (
                kind != nil ? "kind" : minimum != nil ? "min" : "max", "a foreign key takes its parent's keys; only oneOf applies"
            )
        }
        if kind != nil, type != .string { return ("kind", "applies to string fields; this one is \(type.rawValue)") }
        if let pattern {
            guard type == .string, !isForeignKey else {
                return ("pattern", "applies to string fields that are not foreign keys; this one is \(type.rawValue)")
            }
            do {
                _ = try TextPattern(pattern)
            } catch {
                return ("pattern", error.description)
            }
        }
        var bounds: [Double] = []
        for (key, bound) in [("min", minimum), ("max", maximum)] {
            guard let bound else { continue }
            switch type {
            case .integer:
                guard let value = bound.intValue, case .integer = bound else { return (key, "expected an integer") }
                bounds.append(Double(value))
            case .float:
                guard let value = bound.doubleValue else { return (key, "expected a number") }
                bounds.append(value)
            case .date:
                guard let text = bound.stringValue, let day = CivilDate.days(from: text) else {
                    return (key, "expected a date, YYYY-MM-DD")
                }
                bounds.append(Double(day))
            default:
                return (key, "min and max apply to integer, float and date fields; this one is \(type.rawValue)")
            }
        }
        if minimum != nil, maximum != nil, bounds.count == 2, bounds[0] > bounds[1] {
            return ("min", "is greater than max")
        }
        return nil
    }
}
