public import HammockJSON
import HammockStore

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
    /// Sample data by resource name, loaded into an empty store. A record that names its store-made key
    /// as a positive integer (`"id": 4`) keeps it; keys made later come after.
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
    /// Requests the mock makes of its own after answering (`webhooks`).
    public var webhooks: [Webhook] = []
    /// Host names the admin API answers besides localhost and IP addresses (`allowedHosts`; see
    /// ``MockServer/Options/adminHosts``).
    public var allowedHosts: [String] = []
    /// Header fields the admin API hides in the journal besides the usual credentials (`redactHeaders`;
    /// see ``MockServer/Options/redactedHeaders``).
    public var redactedHeaders: [String] = []
    /// Requests the mock does not answer that go to a real backend (`proxy`), tried in order after
    /// everything else; carried out by `HammockProxy`.
    public var proxies: [ProxyRule] = []
    /// The API document's checks of requests (`validation`, which an imported OpenAPI document writes);
    /// `nil` to check nothing.
    public var requestChecks: RequestChecks?
    /// The mock's login (`auth`): users, clients, tokens and the routes they protect; `nil` for none.
    public var auth: AuthSettings?

    static let topLevelKeys = [
        "host", "port", "store", "latency", "maximumBodySize", "cors", "idleTimeout", "requestTimeout", "resources", "data",
        "routes", "basePath", "generate", "adminPath", "journalSize", "strict", "faults", "allowedHosts", "redactHeaders",
        "validation", "proxy", "webhooks", "auth",
    ]
    static let resourceKeys = [
        "name", "fields", "primaryKey", "keyFormat", "actions", "parents", "omitNulls", "queryNames", "made", "statuses",
        "listEnvelope", "topLevel", "answersKey", "keyReadOnly", "pageSize",
    ]

    /// A configuration in code: `resources` (none for a server that only proxies) in `store` (the memory
    /// store when `nil` here, not the file-side default of an SQLite file).
    public init(resources: [MockResource] = [], store: StoreLocation? = .memory) {
        self.resources = resources
        self.store = store
        data = []
    }

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
        resolveRelativePaths(against: path)
    }

    /// Resolves a relative SQLite path against the directory of `file`, as ``init(contentsOfFile:)`` does
    /// (for a configuration read in another syntax, YAML say).
    public mutating func resolveRelativePaths(against file: String) {
        let directory = FileContents.directory(of: file)
        if let location = store, location.scheme == "sqlite", !location.address.hasPrefix("/") {
            store = .sqlite(path: directory + location.address)
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
        try self.init(root: root, file: file)
    }

    /// Reads a configuration already parsed, from JSON or another syntax (YAML): the same keys and the same
    /// errors, each naming `file` and the key path.
    public init(root: JSON, file: String) throws(ConfigurationError) {
        func fail(_ keyPath: String, _ message: String) -> ConfigurationError {
            ConfigurationError(file: file, keyPath: keyPath, message: message)
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
                throw fail(
                    "store", "expected \"memory\", \"sqlite:PATH\" or another SCHEME:ADDRESS, found \"\(text.prefix(200))\"")
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
            for (parameter, resource) in route.requiredRecords.sorted(by: { $0.key < $1.key })
            where !resources.contains(where: { $0.name == resource }) {
                throw fail("routes[\(index)].requires.\(parameter)", "no resource is named '\(resource.prefix(100))'")
            }
            for (position, answer) in route.answers.enumerated() {
                guard case .webSocket(let script)? = answer.body else { continue }
                for name in script.feed where name != "*" && !resources.contains(where: { $0.name == name }) {
                    let at = route.answers.count == 1 ? "routes[\(index)]" : "routes[\(index)].responses[\(position)]"
                    throw fail("\(at).websocket.feed", "no resource is named '\(name.prefix(100))'")
                }
            }
        }
        // Proxy rules are something to serve too; a `proxy` that is not an array is reported below.
        let hasProxy = object["proxy"].map { !$0.isNull && !($0.arrayValue?.isEmpty ?? false) } ?? false
        if resources.isEmpty && routes.isEmpty && !hasProxy {
            let found = object["resources"] == nil ? "missing" : "empty"
            throw fail(
                "resources",
                "\(found); list at least one resource, or give routes or proxy rules (a file of routes alone is fine)")
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
                do throws(FaultError) {
                    let fault = try Fault(json: element)
                    if let name = fault.name, faults.contains(where: { $0.name == name }) {
                        throw FaultError(key: "name", "'\(name)' names an earlier fault too; names are unique")
                    }
                    faults.append(fault)
                } catch {
                    throw fail(error.key.map { "faults[\(index)].\($0)" } ?? "faults[\(index)]", error.message)
                }
            }
        }
        if let value = object["webhooks"], !value.isNull {
            guard case .array(let elements) = value else { throw fail("webhooks", "expected an array of webhooks") }
            for (index, element) in elements.enumerated() {
                do throws(WebhookError) {
                    let webhook = try Webhook(json: element)
                    if webhooks.contains(where: { $0.name == webhook.name }) {
                        throw WebhookError("'\(webhook.name)' names an earlier webhook too; names are unique", key: "name")
                    }
                    webhooks.append(webhook)
                } catch {
                    throw fail(error.key.map { "webhooks[\(index)].\($0)" } ?? "webhooks[\(index)]", error.message)
                }
            }
        }
        allowedHosts = try Self.names(object["allowedHosts"], at: "allowedHosts", fail: fail, isValid: Self.isHostName)
        redactedHeaders = try Self.names(object["redactHeaders"], at: "redactHeaders", fail: fail, isValid: Self.isFieldName)
        if let value = object["validation"], !value.isNull {
            requestChecks = try RequestChecks(json: value, at: "validation", fail: fail)
        }
        proxies = try ProxyRule.rules(object["proxy"], fail: fail)
        if let value = object["auth"], !value.isNull {
            do throws(AuthSettingsError) {
                let settings = try AuthSettings(json: value)
                try MockServer.checkRules(of: settings, resources: resources.map(\.name))
                auth = settings
            } catch {
                throw fail(error.key.map { "auth.\($0)" } ?? "auth", error.message)
            }
        }
        try checkAdminPath(file: file)
    }

    /// Whether `name` is a host name as a URL has it: letters, digits, dots and hyphens (an IP address
    /// needs no entry in ``allowedHosts``).
    public static func isHostName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 253
            && name.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "." || $0 == "-")
            }
    }

    /// Whether `name` is an HTTP field name (RFC 9110 §5.1: a token).
    public static func isFieldName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 200
            && name.unicodeScalars.allSatisfy {
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "!#$%&'*+-.^_`|~".unicodeScalars.contains($0))
            }
    }

    /// An array of names each `isValid` accepts.
    static func names(
        _ value: JSON?, at key: String, fail: (String, String) -> ConfigurationError, isValid: (String) -> Bool
    ) throws(ConfigurationError) -> [String] {
        guard let value, !value.isNull else { return [] }
        guard case .array(let elements) = value else { throw fail(key, "expected an array of names") }
        var names: [String] = []
        for (index, element) in elements.enumerated() {
            guard case .string(let name) = element, isValid(name) else {
                throw fail("\(key)[\(index)]", "expected a name (letters, digits and the characters a name may have)")
            }
            names.append(name)
        }
        return names
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
