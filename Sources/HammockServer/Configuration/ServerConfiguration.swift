public import HammockJSON

/// Where records are stored.
///
/// ```swift
/// let location = try StoreLocation(parsing: "sqlite:db.sqlite")   // or "memory"
/// let store = try location.makeStore()   // with HammockSQLite
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
    /// Seconds a connection may stay idle (`idleTimeout`), and may take to send one request
    /// (`requestTimeout`); `ConnectionLimits`' defaults when absent.
    public var idleTimeout: Double?
    /// Seconds a client may take to send one whole request.
    public var requestTimeout: Double?
    /// The resources, parents before children.
    public var resources: [MockResource]
    /// Sample data by resource name, loaded into an empty store.
    public var data: [(resource: String, records: JSON)]
    /// Routes of your own (`routes`), tried in order before the resources' routes.
    public var routes: [StubRoute] = []
    /// The prefix every route is served under (`basePath`), normalized, if any.
    public var basePath: String?
    /// Records to make up for resources that are still empty after `data` (`generate`).
    public var generate: DataGeneration?
    /// Where the admin API is served (`adminPath`, normalized); `/__hammock` when absent.
    public var adminPath: String?
    /// How many requests the journal keeps (`journalSize`); 1,000 when absent, 0 for none.
    public var journalSize: Int?
    /// Whether requests may not ask for their own delay or status (`strict`); false when absent.
    public var strict: Bool?
    /// Failures injected on purpose (`faults`), tried in order.
    public var faults: [Fault] = []

    static let topLevelKeys = [
        "host", "port", "store", "latency", "maximumBodySize", "cors", "idleTimeout", "requestTimeout", "resources", "data",
        "routes", "basePath", "generate", "adminPath", "journalSize", "strict", "faults",
    ]
    static let resourceKeys = ["name", "fields", "primaryKey", "actions", "parents"]

    /// Reads and parses a configuration file.
    /// - Throws: ``ConfigurationError`` naming the file, the key and the problem.
    public init(contentsOfFile path: String) throws(ConfigurationError) {
        let bytes: [UInt8]
        do {
            bytes = try FileContents.read(path)
        } catch {
            throw ConfigurationError(file: path, keyPath: "", message: "cannot read the file: \(error.reason)")
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
            root = try JSON(parsing: bytes, duplicateKeys: .reject)
        } catch {
            if case .duplicateKey(let key) = error.reason {
                throw fail(
                    error.path.appending(.key(key)).description,
                    "declared twice in one object (line \(error.line), column \(error.column)); the second would replace the first"
                )
            }
            throw fail(error.path.description, "not valid JSON: \(error.description)")
        }
        guard case .object(let object) = root else { throw fail("", "the top level must be an object") }
        for key in object.keys where !Self.topLevelKeys.contains(key) {
            throw fail(key, "unknown key; expected one of \(Self.topLevelKeys.joined(separator: ", "))")
        }
        let reader = ConfigurationReader(fail: fail, directory: FileContents.directory(of: file))
        host = try reader.string(object["host"], at: "host")
        port = try reader.integer(object["port"], at: "port", in: 0...65535)
        maximumBodySize = try reader.integer(object["maximumBodySize"], at: "maximumBodySize", in: 1...Int.max)
        allowsCrossOrigin = try reader.bool(object["cors"], at: "cors")
        func timeout(_ key: String) throws(ConfigurationError) -> Double? {
            guard object[key] != nil else { return nil }
            let seconds = try reader.seconds(object[key], at: key)
            guard seconds > 0 else { throw fail(key, "a timeout must be more than 0 seconds") }
            return seconds
        }
        idleTimeout = try timeout("idleTimeout")
        requestTimeout = try timeout("requestTimeout")
        if let text = try reader.string(object["store"], at: "store") {
            guard let location = StoreLocation(parsing: text) else {
                throw fail("store", "expected \"memory\" or \"sqlite:PATH\", found \"\(text)\"")
            }
            store = location
        }
        latency = try reader.latency(object["latency"])
        resources = try reader.resources(object["resources"])
        data = try reader.data(object["data"], resources: resources)
        routes = try reader.routes(object["routes"])
        for (index, route) in routes.enumerated() {
            for (position, creation) in route.creates.enumerated()
            where !resources.contains(where: { $0.name == creation.resource }) {
                let key = route.creates.count == 1 ? "create" : "create[\(position)]"
                throw fail("routes[\(index)].\(key).resource", "no resource is named '\(creation.resource)'")
            }
        }
        if resources.isEmpty && routes.isEmpty {
            let found = object["resources"] == nil ? "missing" : "empty"
            throw fail("resources", "\(found); list at least one resource, or give routes (a file of routes alone is fine)")
        }
        generate = try reader.generate(object["generate"], resources: resources)
        if let text = try reader.string(object["basePath"], at: "basePath") {
            guard MockServer.Options.isValidBasePath(text) else {
                throw fail("basePath", "expected a path such as \"/api/v1\", found \"\(text)\"")
            }
            basePath = MockServer.Options.normalizedBasePath(text)
        }
        if let text = try reader.string(object["adminPath"], at: "adminPath") {
            guard let path = MockServer.Options.normalizedBasePath(text) else {
                throw fail("adminPath", "expected a path such as \"/__hammock\", found \"\(text)\"")
            }
            adminPath = path
        }
        journalSize = try reader.integer(object["journalSize"], at: "journalSize", in: 0...1_000_000)
        strict = try reader.bool(object["strict"], at: "strict")
        if let value = object["faults"], !value.isNull {
            guard case .array(let elements) = value else { throw fail("faults", "expected an array of faults") }
            for (index, element) in elements.enumerated() {
                do {
                    faults.append(try Fault(json: element))
                } catch {
                    throw fail(error.key.map { "faults[\(index)].\($0)" } ?? "faults[\(index)]", error.message)
                }
            }
        }
        try checkAdminPath(file: file)
    }

    /// The admin API's prefix in force: ``adminPath``, else `/__hammock`.
    public var effectiveAdminPath: String { adminPath ?? "/__hammock" }

    /// Checks that no resource, route or base path lies under the admin API's prefix, where it could
    /// never be reached.
    /// - Throws: ``ConfigurationError`` naming `file` and the key of the first one that does.
    public func checkAdminPath(file: String) throws(ConfigurationError) {
        let admin = effectiveAdminPath
        func isUnderAdmin(_ path: String) -> Bool { path == admin || path.hasPrefix(admin + "/") }
        let message = "lies under \(admin), the admin API's prefix, where it could never be reached; rename it or set adminPath"
        if let basePath, isUnderAdmin(basePath) { throw ConfigurationError(file: file, keyPath: "basePath", message: message) }
        for (index, resource) in resources.enumerated() where isUnderAdmin((basePath ?? "") + "/" + resource.name) {
            throw ConfigurationError(file: file, keyPath: "resources[\(index)].name", message: message)
        }
        for (index, route) in routes.enumerated() where isUnderAdmin((basePath ?? "") + route.path.description) {
            throw ConfigurationError(file: file, keyPath: "routes[\(index)].path", message: message)
        }
    }
}
