public import Logging

/// A swift-log handler that prints lines as swift-log's `StreamLogHandler` does
/// (`2026-11-24T04:22:42+0000 info hammock: [HammockServer] GET /people/1 200`) into a
/// ``BufferedLogOutput``, which writes them from a thread of its own.
///
/// ```swift
/// let logger = Logger(label: "hammock") { BufferedLogHandler(label: $0, output: .standardOutput) }
/// let server = try await MockServer(resources: [people], logger: logger)
/// ```
public struct BufferedLogHandler: LogHandler {
    public let label: String
    public let output: BufferedLogOutput
    public var logLevel: Logger.Level = .info
    public var metadataProvider: Logger.MetadataProvider?
    public var metadata: Logger.Metadata = [:]

    public init(label: String, output: BufferedLogOutput, metadataProvider: Logger.MetadataProvider? = nil) {
        self.label = label
        self.output = output
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let explicit = event.metadata { merged.merge(explicit) { _, new in new } }
        if let error = event.error {
            merged["error.message"] = "\(error)"
            merged["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        var line = "\(event.level)"
        if !label.isEmpty { line += " " + label }
        line += ":"
        if !merged.isEmpty {
            line += " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        line += " [\(event.source)] \(event.message)"
        output.appendLine(line)
    }
}
