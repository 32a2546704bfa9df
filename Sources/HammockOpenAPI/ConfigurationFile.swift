import HammockJSON
public import HammockServer

/// A configuration file in either syntax: `.yaml` and `.yml` files are YAML, anything else JSON. Both
/// give the same ``HammockServer/ServerConfiguration`` and the same errors, naming the file and the key.
///
/// ```swift
/// let configuration = try ConfigurationFile.read("Examples/people.yaml")
/// ```
public enum ConfigurationFile {
    /// Whether `path` names a YAML file (by its extension).
    public static func isYAML(_ path: String) -> Bool {
        let lowered = path.lowercased()
        return lowered.hasSuffix(".yaml") || lowered.hasSuffix(".yml")
    }

    /// What a file gave: the configuration, and the mock made from it when it is an OpenAPI document.
    public struct Loaded: Sendable {
        /// The configuration to serve.
        public var configuration: ServerConfiguration
        /// The mock made from an OpenAPI document (what is stubbed, what is not mocked), or `nil` for a
        /// Hammock configuration.
        public var openAPI: OpenAPIImport?

        /// A configuration loaded some other way (a HAR file read as stubs, say), with its OpenAPI mock if any.
        public init(configuration: ServerConfiguration, openAPI: OpenAPIImport? = nil) {
            self.configuration = configuration
            self.openAPI = openAPI
        }
    }

    /// The configuration in the file at `path`, relative SQLite paths resolved against its directory. An
    /// OpenAPI 3.0 or 3.1 document gives the mock made from it (``OpenAPIImport``).
    /// - Throws: `ConfigurationError` naming the file, and the key or the line at fault.
    public static func read(_ path: String) throws(ConfigurationError) -> ServerConfiguration {
        try load(path).configuration
    }

    /// The configuration in the file at `path`, with the mock made from it when it is an OpenAPI document.
    /// - Throws: `ConfigurationError` naming the file, and the key or the line at fault.
    public static func load(_ path: String) throws(ConfigurationError) -> Loaded {
        let bytes: [UInt8]
        do {
            bytes = try FileContents.read(path)
        } catch {
            throw ConfigurationError(file: path, keyPath: "", message: "cannot read the file: \(error.reason)")
        }
        var loaded: Loaded
        if isYAML(path) {
            // Never replace bytes that are not UTF-8: a key or a value would change without a word.
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw ConfigurationError(file: path, keyPath: "", message: "not UTF-8 text")
            }
            loaded = try load(root: try yamlRoot(text, file: path), file: path)
        } else if let root = try? JSON(parsing: bytes, duplicateKeys: .reject), OpenAPIImport.isOpenAPI(root) {
            loaded = try load(root: root, file: path)
        } else {
            // A Hammock configuration, or JSON that is not valid: its reader names the line and the key.
            loaded = Loaded(configuration: try ServerConfiguration(parsing: bytes, file: path))
        }
        loaded.configuration.resolveRelativePaths(against: path)
        return loaded
    }

    /// A login (what a configuration's `auth` section holds) from its own file, JSON or YAML, for a mock
    /// whose configuration has none, such as one made from an OpenAPI document (`hammock serve --auth`).
    /// - Throws: `ConfigurationError` naming the file and the key.
    public static func readAuth(_ path: String) throws(ConfigurationError) -> AuthSettings {
        let bytes: [UInt8]
        do {
            bytes = try FileContents.read(path)
        } catch {
            throw ConfigurationError(file: path, keyPath: "", message: "cannot read the file: \(error.reason)")
        }
        let root: JSON
        if isYAML(path) {
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw ConfigurationError(file: path, keyPath: "", message: "not UTF-8 text")
            }
            root = try yamlRoot(text, file: path)
        } else {
            do {
                root = try JSON(parsing: bytes, duplicateKeys: .reject)
            } catch {
                throw ConfigurationError(
                    file: path, keyPath: error.path.description, message: "not valid JSON: \(error.description)")
            }
        }
        do {
            return try AuthSettings(json: root)
        } catch {
            throw ConfigurationError(file: path, keyPath: error.key ?? "", message: error.message)
        }
    }

    /// A configuration from YAML text; `file` names it in errors.
    public static func parse(_ text: String, file: String) throws(ConfigurationError) -> ServerConfiguration {
        try load(root: try yamlRoot(text, file: file), file: file).configuration
    }

    static func yamlRoot(_ text: String, file: String) throws(ConfigurationError) -> JSON {
        do {
            return try YAMLText.json(from: text)
        } catch {
            let place = error.line.map { "line \($0)" + (error.column.map { ", column \($0)" } ?? "") + ": " } ?? ""
            throw ConfigurationError(file: file, keyPath: error.keyPath, message: place + error.message)
        }
    }

    /// A configuration, or the mock made from an OpenAPI document, from a parsed file.
    static func load(root: JSON, file: String) throws(ConfigurationError) -> Loaded {
        guard OpenAPIImport.isOpenAPI(root) else { return Loaded(configuration: try ServerConfiguration(root: root, file: file)) }
        let mock = try OpenAPIImport.make(from: root, file: file)
        do {
            return Loaded(configuration: try ServerConfiguration(root: mock.configuration, file: file), openAPI: mock)
        } catch {
            // The mapping should only make configurations Hammock reads; if not, say where in the document.
            throw ConfigurationError(
                file: file, keyPath: "",
                message: "the mock made from this document is refused (\(error.keyPath): \(error.message)); please report it")
        }
    }
}
