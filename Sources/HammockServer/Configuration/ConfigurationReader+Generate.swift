import HammockJSON
import HammockStore

extension ConfigurationReader {
    static let generateKeys = ["count", "fields", "keys"]
    static let ruleKeys = ["kind", "min", "max", "oneOf", "pattern"]

    /// The `generate` object: resource names mapped to a count, or to `{"count": N, "fields": {...}}`.
    func generate(_ value: JSON?, resources: [MockResource]) throws(ConfigurationError) -> DataGeneration? {
        guard let value, !value.isNull else { return nil }
        guard case .object(let object) = value else {
            throw fail("generate", "expected an object of resource names and counts, such as {\"people\": 50}")
        }
        var generated: [DataGeneration.Resource] = []
        for (name, entry) in object {
            let path = "generate.\(name)"
            guard let resource = resources.first(where: { $0.name == name }) else {
                throw fail(path, "no such resource; there are \(resources.map(\.name).joined(separator: ", "))")
            }
            var planned: DataGeneration.Resource
            if case .object(let details) = entry {
                for key in details.keys where !Self.generateKeys.contains(key) {
                    throw fail("\(path).\(key)", "unknown key; expected count, fields and keys")
                }
                guard let count = try integer(details["count"], at: "\(path).count", in: 0...1_000_000) else {
                    throw fail("\(path).count", "missing; say how many records to make")
                }
                planned = DataGeneration.Resource(name, count: count, fields: try rules(details["fields"], at: "\(path).fields"))
                if let keys = details["keys"], !keys.isNull {
                    guard case .array(let list) = keys, list.count <= 1_000 else {
                        throw fail("\(path).keys", "expected an array of at most 1,000 keys")
                    }
                    planned.keys = list
                }
            } else {
                guard case .integer = entry else {
                    throw fail(path, "expected a count, or {\"count\": N, \"fields\": {...}}; found \(entry.kindName)")
                }
                planned = DataGeneration.Resource(name, count: try integer(entry, at: path, in: 0...1_000_000) ?? 0)
            }
            var types = Dictionary(resource.fields.map { ($0.name, $0.type) }) { first, _ in first }
            for parent in resource.parents where types[parent.foreignKey] == nil {
                // A foreign key has its parent's key type: an integer unless the parent names a key field.
                let parentResource = resources.first { $0.name == parent.resource }
                types[parent.foreignKey] =
                    parentResource.flatMap { parent in parent.fields.first { $0.name == parent.primaryKey }?.type } ?? .integer
            }
            let generatedKey = resource.fields.contains { $0.name == resource.primaryKey } ? nil : resource.primaryKey
            if let problem = planned.problem(
                fields: types, foreignKeys: Set(resource.parents.map(\.foreignKey)), generatedKey: generatedKey,
                key: resource.primaryKey)
            {
                throw fail("generate.\(problem.path)", problem.message)
            }
            generated.append(planned)
        }
        return DataGeneration(generated)
    }

    /// `fields`: field names mapped to `{"kind": ..., "min": ..., "max": ..., "oneOf": [...]}`.
    func rules(_ value: JSON?, at path: String) throws(ConfigurationError) -> [String: DataGeneration.FieldRule] {
        guard let value, !value.isNull else { return [:] }
        guard case .object(let object) = value else { throw fail(path, "expected an object of field names and rules") }
        var rules: [String: DataGeneration.FieldRule] = [:]
        for (field, ruleValue) in object {
            let rulePath = "\(path).\(field)"
            guard case .object(let members) = ruleValue else {
                throw fail(rulePath, "expected a rule such as {\"min\": 0, \"max\": 5} or {\"oneOf\": [\"red\", \"blue\"]}")
            }
            for key in members.keys where !Self.ruleKeys.contains(key) {
                throw fail("\(rulePath).\(key)", "unknown key; expected one of \(Self.ruleKeys.joined(separator: ", "))")
            }
            var rule = DataGeneration.FieldRule(minimum: members["min"], maximum: members["max"])
            if let kindName = try string(members["kind"], at: "\(rulePath).kind") {
                guard let kind = DataGeneration.TextKind(rawValue: kindName) else {
                    let kinds = DataGeneration.TextKind.allCases.map(\.rawValue).joined(separator: ", ")
                    throw fail("\(rulePath).kind", "unknown kind '\(kindName)'; use one of \(kinds)")
                }
                rule.kind = kind
            }
            rule.pattern = try string(members["pattern"], at: "\(rulePath).pattern")
            if let choices = members["oneOf"] {
                guard case .array(let values) = choices else { throw fail("\(rulePath).oneOf", "expected an array of values") }
                rule.choices = values
            }
            rules[field] = rule
        }
        return rules
    }
}
