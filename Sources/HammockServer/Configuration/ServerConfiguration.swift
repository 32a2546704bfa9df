public import HammockJSON

/// Where records are stored.
///
/// ```swift
/// let location = try StoreLocation(parsing: "sqlite:db.sqlite")   // or "memory"
/// let store = try location.makeStore()
/// ```
public enum StoreLocation: Sendable, Hashable, CustomStringConvertible {
    /// In memory: gone when the process ends.
    case memory
    /// An SQLite file.
    case sqlite(path: String)

    /// Parses `memory` or `sqlite:PATH`.
    public init?(parsing text: String) {
        if text == "memory" {
            self = .memory
        } else if text.hasPrefix("sqlite:"), text.count > "sqlite:".count {
            self = .sqlite(path: String(text.dropFirst("sqlite:".count)))
        } else {
            return nil
        }
    }

    /// Opens the store.
    public func makeStore() throws -> any MockStore {
        switch self {
        case .memory: MemoryStore()
        case .sqlite(let path): try SQLiteStore(path: path)
        }
    }

    /// `memory` or `sqlite:PATH`.
    public var description: String {
        switch self {
        case .memory: "memory"
        case .sqlite(let path): "sqlite:\(path)"
        }
    }
}

/// A server described in a JSON file that a team can share.
///
/// ```json
/// {"port": 8888, "store": "sqlite:db.sqlite", "latency": {"min": 0.2, "max": 0.5},
///  "resources": [{"name": "people", "fields": {"name": "string", "numberOfKids": "integer"}},
///                {"name": "cars", "fields": {"name": "string"}, "parents": ["people"]}],
///  "data": {"people": [{"name": "john"}]}}
/// ```
/// ```swift
/// let configuration = try ServerConfiguration(contentsOfFile: "Examples/people.json")
/// ```
/// Relative SQLite paths are resolved against the file's directory.
public struct ServerConfiguration: Sendable {
    /// The host to bind; `127.0.0.1` when absent.
    public var host: String?
    /// The port to bind; 8888 when absent.
    public var port: Int?
    /// The store; an SQLite file next to the configuration when absent.
    public var store: StoreLocation?
    /// Simulated response times.
    public var latency: Latency?
    /// The largest accepted body in bytes.
    public var maximumBodySize: Int?
    /// Whether CORS headers are sent.
    public var allowsCrossOrigin: Bool?
    /// The resources, parents before children.
    public var resources: [Resource]
    /// Sample data by resource name, loaded into an empty store.
    public var data: [(resource: String, records: JSON)]

    static let topLevelKeys = ["host", "port", "store", "latency", "maximumBodySize", "cors", "resources", "data"]
    static let resourceKeys = ["name", "fields", "primaryKey", "actions", "parents"]

    /// Reads and parses a configuration file.
    /// - Throws: ``ConfigurationError`` naming the file, the key and the problem.
    public init(contentsOfFile path: String) throws(ConfigurationError) {
        let bytes: [UInt8]
        do {
            bytes = try FileContents.read(path)
        } catch {
            throw ConfigurationError(file: path, keyPath: "", message: "cannot read the file: \(error)")
        }
        try self.init(parsing: bytes, file: path)
        let directory = FileContents.directory(of: path)
        if case .sqlite(let storePath) = store, !storePath.hasPrefix("/") {
            store = .sqlite(path: directory + storePath)
        }
    }

    /// Parses configuration JSON; `file` names it in errors.
    public init(parsing bytes: [UInt8], file: String) throws(ConfigurationError) {
        func fail(_ keyPath: String, _ message: String) -> ConfigurationError {
            ConfigurationError(file: file, keyPath: keyPath, message: message)
        }
        let root: JSON
        do {
            root = try JSON(parsing: bytes)
        } catch {
            throw fail("", "not valid JSON: \(error.description)")
        }
        guard case .object(let object) = root else { throw fail("", "the top level must be an object") }
        for key in object.keys where !Self.topLevelKeys.contains(key) {
            throw fail(key, "unknown key; expected one of \(Self.topLevelKeys.joined(separator: ", "))")
        }
        let reader = Reader(fail: fail)
        host = try reader.string(object["host"], at: "host")
        port = try reader.integer(object["port"], at: "port", in: 0...65535)
        maximumBodySize = try reader.integer(object["maximumBodySize"], at: "maximumBodySize", in: 1...Int.max)
        allowsCrossOrigin = try reader.bool(object["cors"], at: "cors")
        if let text = try reader.string(object["store"], at: "store") {
            guard let location = StoreLocation(parsing: text) else {
                throw fail("store", "expected \"memory\" or \"sqlite:PATH\", found \"\(text)\"")
            }
            store = location
        }
        latency = try reader.latency(object["latency"])
        resources = try reader.resources(object["resources"])
        data = try reader.data(object["data"], resources: resources)
    }
}

/// Reads typed values out of configuration JSON, failing with key paths.
struct Reader {
    let fail: (String, String) -> ConfigurationError

    func string(_ value: JSON?, at path: String) throws(ConfigurationError) -> String? {
        guard let value, !value.isNull else { return nil }
        guard case .string(let text) = value else { throw fail(path, "expected a string, found \(value.kindName)") }
        return text
    }

    func integer(_ value: JSON?, at path: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        guard let value, !value.isNull else { return nil }
        guard case .integer(let number) = value else { throw fail(path, "expected an integer, found \(value.kindName)") }
        guard range.contains(number) else { throw fail(path, "\(number) is out of range \(range.lowerBound)...\(range.upperBound)") }
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

    func latency(_ value: JSON?) throws(ConfigurationError) -> Latency? {
        guard let value, !value.isNull else { return nil }
        guard case .object(let object) = value else { throw fail("latency", "expected {\"min\": seconds, \"max\": seconds}") }
        for key in object.keys where key != "min" && key != "max" { throw fail("latency.\(key)", "unknown key; expected min and max") }
        let minimum = try seconds(object["min"], at: "latency.min")
        let maximum = try object["max"] == nil ? minimum : seconds(object["max"], at: "latency.max")
        guard minimum <= maximum else { throw fail("latency", "min (\(minimum)) is greater than max (\(maximum))") }
        return Latency(minimumSeconds: minimum, maximumSeconds: maximum)
    }

    func resources(_ value: JSON?) throws(ConfigurationError) -> [Resource] {
        guard let value else { throw fail("resources", "missing; list at least one resource") }
        guard case .array(let elements) = value else { throw fail("resources", "expected an array of resources") }
        var resources: [Resource] = []
        for (index, element) in elements.enumerated() {
            resources.append(try resource(element, at: "resources[\(index)]"))
        }
        // Resolve them as a server would, so definition mistakes point at the file.
        var registry = ResourceRegistry()
        let ordered: [Resource]
        do {
            ordered = try MockServer.parentsFirst(resources)
        } catch {
            throw fail("resources", error.message)
        }
        for resource in ordered {
            do {
                registry.insert(try registry.resolve(resource))
            } catch {
                let index = resources.firstIndex { $0.name == resource.name } ?? 0
                throw fail("resources[\(index)]", error.description)
            }
        }
        return ordered
    }

    func resource(_ value: JSON, at path: String) throws(ConfigurationError) -> Resource {
        guard case .object(let object) = value else { throw fail(path, "expected an object, found \(value.kindName)") }
        for key in object.keys where !ServerConfiguration.resourceKeys.contains(key) {
            throw fail("\(path).\(key)", "unknown key; expected one of \(ServerConfiguration.resourceKeys.joined(separator: ", "))")
        }
        guard let name = try string(object["name"], at: "\(path).name") else { throw fail("\(path).name", "missing") }
        guard case .object(let fieldsObject)? = object["fields"] else {
            throw fail("\(path).fields", "expected an object mapping field names to types")
        }
        var fields: [Field] = []
        for (fieldName, typeValue) in fieldsObject {
            let typeNames = FieldType.allCases.map(\.rawValue).joined(separator: ", ")
            guard case .string(let typeName) = typeValue else {
                throw fail("\(path).fields.\(fieldName)", "expected a type name (\(typeNames))")
            }
            guard let type = FieldType(rawValue: typeName) ?? Self.typeAliases[typeName] else {
                throw fail("\(path).fields.\(fieldName)", "unknown type '\(typeName)'; use one of \(typeNames)")
            }
            fields.append(Field(fieldName, type))
        }
        let primaryKey = try string(object["primaryKey"], at: "\(path).primaryKey") ?? "id"
        var actions = Resource.Actions.all
        if let actionsValue = object["actions"] {
            guard case .array(let names) = actionsValue else { throw fail("\(path).actions", "expected an array of action names") }
            actions = []
            for (index, nameValue) in names.enumerated() {
                let known = Resource.Actions.names.map(\.0)
                guard case .string(let actionName) = nameValue,
                    let action = Resource.Actions.names.first(where: { $0.0 == actionName.lowercased() })?.1
                else {
                    throw fail("\(path).actions[\(index)]", "unknown action; use \(known.joined(separator: ", "))")
                }
                actions.insert(action)
            }
        }
        var parents: [Resource.Parent] = []
        if let parentsValue = object["parents"] {
            guard case .array(let elements) = parentsValue else { throw fail("\(path).parents", "expected an array") }
            for (index, element) in elements.enumerated() {
                let parentPath = "\(path).parents[\(index)]"
                switch element {
                case .string(let parent):
                    parents.append(Resource.Parent(parent))
                case .object(let link):
                    guard let parent = try string(link["resource"], at: "\(parentPath).resource") else {
                        throw fail("\(parentPath).resource", "missing")
                    }
                    parents.append(Resource.Parent(parent, foreignKey: try string(link["foreignKey"], at: "\(parentPath).foreignKey")))
                default:
                    throw fail(parentPath, "expected a resource name or {\"resource\": name, \"foreignKey\": name}")
                }
            }
        }
        return Resource(name, fields: fields, primaryKey: primaryKey, actions: actions, parents: parents)
    }

    static let typeAliases: [String: FieldType] = [
        "int": .integer, "number": .float, "double": .float, "bool": .boolean, "text": .string, "datetime": .date,
    ]

    func data(_ value: JSON?, resources: [Resource]) throws(ConfigurationError) -> [(resource: String, records: JSON)] {
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
