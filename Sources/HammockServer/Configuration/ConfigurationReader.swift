import HammockJSON
import HammockStore

/// Reads typed values out of configuration JSON, failing with key paths.
struct ConfigurationReader {
    let fail: (String, String) -> ConfigurationError
    /// Where relative file paths (a stub's `file`) start: the configuration file's directory.
    var directory = ""

    func string(_ value: JSON?, at path: String) throws(ConfigurationError) -> String? {
        guard let value, !value.isNull else { return nil }
        guard case .string(let text) = value else { throw fail(path, "expected a string, found \(value.kindName)") }
        return text
    }

    func integer(_ value: JSON?, at path: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        guard let value, !value.isNull else { return nil }
        guard case .integer(let number) = value else { throw fail(path, "expected an integer, found \(value.kindName)") }
        guard range.contains(number) else {
            throw fail(path, "\(number) is out of range \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }

    func bool(_ value: JSON?, at path: String) throws(ConfigurationError) -> Bool? {
        guard let value, !value.isNull else { return nil }
        guard case .bool(let flag) = value else { throw fail(path, "expected true or false, found \(value.kindName)") }
        return flag
    }

    func seconds(_ value: JSON?, at path: String) throws(ConfigurationError) -> Double {
        guard let value, let number = value.doubleValue else {
            throw fail(path, "expected a number of seconds, found \(value?.kindName ?? "nothing")")
        }
        guard number >= 0, number <= 3600 else { throw fail(path, "expected 0 to 3600 seconds, found \(number)") }
        return number
    }

    func latency(_ value: JSON?, at path: String = "latency") throws(ConfigurationError) -> Latency? {
        guard let value, !value.isNull else { return nil }
        guard case .object(let object) = value else { throw fail(path, "expected {\"min\": seconds, \"max\": seconds}") }
        for key in object.keys where key != "min" && key != "max" {
            throw fail("\(path).\(key)", "unknown key; expected min and max")
        }
        let minimum = try seconds(object["min"], at: "\(path).min")
        let maximum = try object["max"] == nil ? minimum : seconds(object["max"], at: "\(path).max")
        guard minimum <= maximum else { throw fail(path, "min (\(minimum)) is greater than max (\(maximum))") }
        return Latency(minimumSeconds: minimum, maximumSeconds: maximum)
    }

    /// The `resources` array; none when it is absent (a file of routes alone).
    func resources(_ value: JSON?) throws(ConfigurationError) -> [MockResource] {
        guard let value, !value.isNull else { return [] }
        guard case .array(let elements) = value else { throw fail("resources", "expected an array of resources") }
        var resources: [MockResource] = []
        for (index, element) in elements.enumerated() {
            resources.append(try resource(element, at: "resources[\(index)]"))
        }
        // Resolve them as a server would, so definition mistakes point at the file.
        var catalog = SchemaCatalog()
        let ordered: [MockResource]
        do {
            ordered = try MockResource.parentsFirst(resources)
        } catch {
            throw fail("resources", error.message)
        }
        for resource in ordered {
            let index = resources.firstIndex { $0.name == resource.name } ?? 0
            let schema: ResourceSchema
            do {
                schema = try catalog.resolve(resource)
            } catch {
                throw fail("resources[\(index)]", error.description)
            }
            catalog.insert(schema)
            for (name, target) in resource.queryNames.sorted(by: { $0.key < $1.key })
            where !ListQuery.isAliasable(target, for: schema) {
                throw fail(
                    "resources[\(index)].queryNames.\(name)",
                    "'\(target.prefix(100))' is no list parameter; use one of \(ListQuery.aliasableParameters.joined(separator: ", ")), a field, or a field with an operator (createdAt_gte)"
                )
            }
        }
        return ordered
    }

    static let fieldKeys = ["type", "required", "default", "writeOnly"]

    /// A field: its type's name, or `{"type": "string", "required": true, "default": "…"}`.
    func field(_ name: String, _ value: JSON, at path: String) throws(ConfigurationError) -> MockResource.Field {
        let typeNames = FieldType.allCases.map(\.rawValue).joined(separator: ", ")
        var details = JSONObject()
        var typePath = path
        switch value {
        case .string: details["type"] = value
        case .object(let object):
            for key in object.keys where !Self.fieldKeys.contains(key) {
                throw fail("\(path).\(key)", "unknown key; expected type, required, default and writeOnly")
            }
            details = object
            typePath = "\(path).type"
        default:
            throw fail(
                path, "expected a type name (\(typeNames)) or {\"type\": \"string\", \"required\": true, \"default\": ...}")
        }
        guard case .string(let typeName)? = details["type"] else {
            throw fail(typePath, "expected a type name (\(typeNames))")
        }
        guard let type = FieldType(rawValue: typeName) ?? Self.typeAliases[typeName] else {
            throw fail(typePath, "unknown type '\(typeName)'; use one of \(typeNames)")
        }
        let isRequired = try bool(details["required"], at: "\(path).required") ?? false
        var defaultValue: JSON?
        if let given = details["default"] {
            switch ResourceSchema.convert(given, to: type, encoding: .json) {
            case .success(.null): throw fail("\(path).default", "null is no default; leave it out")
            case .success(let converted): defaultValue = converted
            case .failure(let problem): throw fail("\(path).default", problem.message)
            }
        }
        var field = MockResource.Field(name, type, isRequired: isRequired, defaultValue: defaultValue)
        field.isWriteOnly = try bool(details["writeOnly"], at: "\(path).writeOnly") ?? false
        return field
    }

    func resource(_ value: JSON, at path: String) throws(ConfigurationError) -> MockResource {
        guard case .object(let object) = value else { throw fail(path, "expected an object, found \(value.kindName)") }
        for key in object.keys where !ServerConfiguration.resourceKeys.contains(key) {
            throw fail(
                "\(path).\(key)", "unknown key; expected one of \(ServerConfiguration.resourceKeys.joined(separator: ", "))")
        }
        guard let name = try string(object["name"], at: "\(path).name") else { throw fail("\(path).name", "missing") }
        guard case .object(let fieldsObject)? = object["fields"] else {
            throw fail("\(path).fields", "expected an object mapping field names to types")
        }
        var fields: [MockResource.Field] = []
        for (fieldName, fieldValue) in fieldsObject {
            fields.append(try field(fieldName, fieldValue, at: "\(path).fields.\(fieldName)"))
        }
        let primaryKey = try string(object["primaryKey"], at: "\(path).primaryKey") ?? "id"
        if object["primaryKey"] != nil, !fields.contains(where: { $0.name == primaryKey }) {
            // Naming an undeclared field would quietly give the resource a generated key of that name.
            throw fail(
                "\(path).primaryKey",
                "'\(primaryKey)' is not a declared field; declare it as a string or integer field, or leave primaryKey out for generated integer ids"
            )
        }
        var actions = MockResource.Actions.all
        if let actionsValue = object["actions"] {
            guard case .array(let names) = actionsValue else {
                throw fail("\(path).actions", "expected an array of action names")
            }
            actions = []
            for (index, nameValue) in names.enumerated() {
                let known = MockResource.Actions.names.map(\.0)
                guard case .string(let actionName) = nameValue,
                    let action = MockResource.Actions.names.first(where: { $0.0 == actionName.lowercased() })?.1
                else {
                    throw fail("\(path).actions[\(index)]", "unknown action; use \(known.joined(separator: ", "))")
                }
                actions.insert(action)
            }
        }
        var parents: [MockResource.Parent] = []
        if let parentsValue = object["parents"] {
            guard case .array(let elements) = parentsValue else { throw fail("\(path).parents", "expected an array") }
            for (index, element) in elements.enumerated() {
                let parentPath = "\(path).parents[\(index)]"
                switch element {
                case .string(let parent):
                    parents.append(MockResource.Parent(parent))
                case .object(let link):
                    guard let parent = try string(link["resource"], at: "\(parentPath).resource") else {
                        throw fail("\(parentPath).resource", "missing")
                    }
                    for key in link.keys where !["resource", "foreignKey", "onDelete"].contains(key) {
                        throw fail("\(parentPath).\(key)", "unknown key; expected resource, foreignKey and onDelete")
                    }
                    let onDelete = try string(link["onDelete"], at: "\(parentPath).onDelete") ?? "setNull"
                    guard onDelete == "setNull" || onDelete == "cascade" else {
                        throw fail(
                            "\(parentPath).onDelete",
                            "'\(onDelete.prefix(40))'; expected \"cascade\" (deleted with the parent) or \"setNull\" (the default)"
                        )
                    }
                    parents.append(
                        MockResource.Parent(
                            parent, foreignKey: try string(link["foreignKey"], at: "\(parentPath).foreignKey"),
                            deletesWithParent: onDelete == "cascade"))
                default:
                    throw fail(
                        parentPath, "expected a resource name or {\"resource\": name, \"foreignKey\": name, \"onDelete\": …}")
                }
            }
        }
        if fields.isEmpty && parents.isEmpty {
            throw fail("\(path).fields", "empty; declare at least one field, or the resource can never be written")
        }
        var resource = MockResource(name, fields: fields, primaryKey: primaryKey, actions: actions, parents: parents)
        resource.keyFormat = try keyFormat(object["keyFormat"], of: resource, at: "\(path).keyFormat")
        resource.keyIsReadOnly = try bool(object["keyReadOnly"], at: "\(path).keyReadOnly") ?? false
        resource.defaultPageSize = try integer(object["pageSize"], at: "\(path).pageSize", in: 1...100_000)
        if resource.keyIsReadOnly, resource.keyFormat == nil {
            throw fail("\(path).keyReadOnly", "true needs a keyFormat: the server must be able to make every key")
        }
        // `true`, or the fields whose nulls are left out: `["topic", "private"]`.
        if case .array(let names)? = object["omitNulls"] {
            var omitted = Set<String>()
            for (index, name) in names.enumerated() {
                guard case .string(let field) = name, resource.field(named: field) != nil else {
                    throw fail("\(path).omitNulls[\(index)]", "expected the name of a declared field")
                }
                omitted.insert(field)
            }
            resource.omitsNulls = true
            resource.nullOmittedFields = omitted
        } else {
            resource.omitsNulls = try bool(object["omitNulls"], at: "\(path).omitNulls") ?? false
        }
        resource.servesTopLevel = try bool(object["topLevel"], at: "\(path).topLevel") ?? true
        resource.answersKey = try bool(object["answersKey"], at: "\(path).answersKey") ?? true
        if !resource.servesTopLevel, parents.isEmpty {
            throw fail("\(path).topLevel", "false needs a parent: without one, nothing could list or create its records")
        }
        if let value = object["listEnvelope"], !value.isNull {
            let at = "\(path).listEnvelope"
            guard case .object(let envelope) = value else {
                throw fail(
                    at,
                    "expected {\"items\": \"data\", \"total\": \"total\", \"hasMore\": \"has_more\", \"nextCursor\": \"next_cursor\", \"members\": {...}}"
                )
            }
            for key in envelope.keys where !["items", "total", "hasMore", "nextCursor", "members"].contains(key) {
                throw fail("\(at).\(key)", "unknown key; expected items, total, hasMore, nextCursor and members")
            }
            guard let items = try string(envelope["items"], at: "\(at).items"), !items.isEmpty else {
                throw fail("\(at).items", "missing; name the member that holds the records, such as \"data\"")
            }
            var members = JSONObject()
            if let given = envelope["members"], !given.isNull {
                guard case .object(let object) = given else { throw fail("\(at).members", "expected an object") }
                members = object
            }
            let total = try string(envelope["total"], at: "\(at).total")
            let hasMore = try string(envelope["hasMore"], at: "\(at).hasMore")
            let nextCursor = try string(envelope["nextCursor"], at: "\(at).nextCursor")
            let names = [items] + [total, hasMore, nextCursor].compactMap { $0 }
            guard Set(names).count == names.count else {
                throw fail(at, "items, total, hasMore and nextCursor must name different members")
            }
            resource.listEnvelope = MockResource.ListEnvelope(
                items: items, total: total, hasMore: hasMore, nextCursor: nextCursor, members: members)
        }
        if let value = object["statuses"], !value.isNull {
            guard case .object(let entries) = value else {
                throw fail("\(path).statuses", "expected an object such as {\"create\": 200, \"delete\": 200}")
            }
            for (name, entry) in entries {
                guard let action = MockResource.Actions.names.first(where: { $0.0 == name })?.1 else {
                    throw fail("\(path).statuses.\(name)", "unknown action; expected list, show, create, update or delete")
                }
                guard case .integer(let status) = entry, (200...299).contains(status) else {
                    throw fail("\(path).statuses.\(name)", "expected a success status from 200 to 299")
                }
                resource.successStatuses[action] = status
            }
        }
        if let value = object["made"], !value.isNull {
            guard case .object(let entries) = value else {
                throw fail(
                    "\(path).made", "expected an object such as {\"created\": \"now\", \"code\": {\"pattern\": \"^[A-Z]{6}$\"}}")
            }
            for (field, entry) in entries {
                guard let made = MockResource.MadeValue(configurationValue: entry) else {
                    throw fail(
                        "\(path).made.\(field)", "expected \"now\", \"today\", \"uuid\" or {\"pattern\": a regular expression}")
                }
                resource.madeFields[field] = made
                do {
                    _ = try MemberMaker.all(resource)
                } catch {
                    throw fail("\(path).made.\(field)", error.message)
                }
            }
        }
        if let value = object["queryNames"], !value.isNull {
            guard case .object(let names) = value else {
                throw fail("\(path).queryNames", "expected an object such as {\"limit\": \"_limit\", \"offset\": \"_start\"}")
            }
            for (name, target) in names {
                guard case .string(let parameter) = target, !name.isEmpty else {
                    throw fail("\(path).queryNames.\(name)", "expected the query language's name as a string, such as \"_limit\"")
                }
                resource.queryNames[name] = parameter
            }
        }
        return resource
    }

    /// `"keyFormat": "uuid"` or `{"pattern": "^ord_[0-9a-f]{8}$"}`, for a declared string primary key.
    func keyFormat(
        _ value: JSON?, of resource: MockResource, at path: String
    ) throws(ConfigurationError)
        -> MockResource.KeyFormat?
    {
        guard let value else { return nil }
        guard let format = MockResource.KeyFormat(configurationValue: value) else {
            throw fail(path, "expected \"uuid\" or {\"pattern\": a regular expression}")
        }
        guard resource.field(named: resource.primaryKey)?.type == .string else {
            throw fail(path, "a key format makes string keys: declare the primary key '\(resource.primaryKey)' as a string field")
        }
        var checked = resource
        checked.keyFormat = format
        do {
            try checked.checkKeyFormat()
        } catch {
            throw fail(path, error.message)
        }
        return format
    }

    static let typeAliases: [String: FieldType] = [
        "int": .integer, "number": .float, "double": .float, "bool": .boolean, "text": .string, "datetime": .date,
    ]

    func data(_ value: JSON?, resources: [MockResource]) throws(ConfigurationError) -> [(resource: String, records: JSON)] {
        guard let value, !value.isNull else { return [] }
        guard case .object(let object) = value else { throw fail("data", "expected an object mapping resource names to arrays") }
        var sets: [(String, JSON)] = []
        for (name, records) in object {
            guard resources.contains(where: { $0.name == name }) else { throw fail("data.\(name)", "no resource has this name") }
            guard case .array = records else { throw fail("data.\(name)", "expected an array of objects") }
            sets.append((name, records))
        }
        // Load parents first so children's foreign keys can refer to them.
        let order = resources.map(\.name)
        return sets.sorted { (order.firstIndex(of: $0.0) ?? 0) < (order.firstIndex(of: $1.0) ?? 0) }
    }
}
