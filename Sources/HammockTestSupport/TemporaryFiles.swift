import Foundation

/// Paths for the files and directories a test makes, all inside one directory per test process that
/// is removed when the process exits, so that a run leaves nothing behind in the system's temporary
/// directory.
///
/// ```swift
/// let store = try SQLiteStore(path: TemporaryFiles.path("people", extension: "sqlite"))
/// let directory = TemporaryFiles.directory("cache")   // made, ends with "/"
/// ```
///
/// A store or a child process may still hold a file when the process ends: removing it then is safe on
/// Linux and macOS, and the tests that start a child process stop it themselves first.
public enum TemporaryFiles {
    /// The process's directory, made on first use; removed when the process exits normally.
    public static let root: String = {
        let path =
            NSTemporaryDirectory() + "hammock-test-run-\(ProcessInfo.processInfo.processIdentifier)-"
            + UUID().uuidString + "/"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: TemporaryFiles.root) }
        return path
    }()

    /// A fresh, empty directory named after `prefix`; its path ends with a slash.
    public static func directory(_ prefix: String) -> String {
        let path = root + prefix + "-" + UUID().uuidString + "/"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A fresh path for a file named after `prefix`, with `extension` if given; nothing is made there.
    public static func path(_ prefix: String, extension fileExtension: String? = nil) -> String {
        root + prefix + "-" + UUID().uuidString + (fileExtension.map { "." + $0 } ?? "")
    }
}
