/// A configuration file that cannot be used: which file, which key, and what is wrong.
///
/// ```text
/// Examples/people.json: resources[1].fields.age: unknown type 'int'; use one of string, integer, ...
/// ```
public struct ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file's path as given.
    public var file: String
    /// The key path of the bad value (`resources[1].fields.age`); empty for the whole file.
    public var keyPath: String
    /// What is wrong.
    public var message: String

    /// Creates an error.
    public init(file: String, keyPath: String, message: String) {
        self.file = file
        self.keyPath = keyPath
        self.message = message
    }

    /// `file: key.path: message`.
    public var description: String {
        keyPath.isEmpty ? "\(file): \(message)" : "\(file): \(keyPath): \(message)"
    }
}
