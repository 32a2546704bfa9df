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

    /// The configuration in the file at `path`, relative SQLite paths resolved against its directory.
    /// - Throws: `ConfigurationError` naming the file, and the key or the line at fault.
    public static func read(_ path: String) throws(ConfigurationError) -> ServerConfiguration {
        guard isYAML(path) else { return try ServerConfiguration(contentsOfFile: path) }
        let bytes: [UInt8]
        do {
            bytes = try FileContents.read(path)
        } catch {
            throw ConfigurationError(file: path, keyPath: "", message: "cannot read the file: \(error.reason)")
        }
        // Never replace bytes that are not UTF-8: a key or a value would change without a word.
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigurationError(file: path, keyPath: "", message: "not UTF-8 text")
        }
        var configuration = try parse(text, file: path)
        configuration.resolveRelativePaths(against: path)
        return configuration
    }

    /// A configuration from YAML text; `file` names it in errors.
    public static func parse(_ text: String, file: String) throws(ConfigurationError) -> ServerConfiguration {
        let root: JSON
        do {
            root = try YAMLText.json(from: text)
        } catch {
            let place = error.line.map { "line \($0)" + (error.column.map { ", column \($0)" } ?? "") + ": " } ?? ""
            throw ConfigurationError(file: file, keyPath: error.keyPath, message: place + error.message)
        }
        if case .object(let object) = root, object["openapi"] != nil || object["swagger"] != nil {
            throw ConfigurationError(
                file: file, keyPath: "openapi",
                message: "this is an OpenAPI document, not a Hammock configuration; starting a mock from one is not supported yet"
            )
        }
        return try ServerConfiguration(root: root, file: file)
    }
}
