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
        var metadataText = ""
        let provided = metadataProvider?.get() ?? [:]
        if !metadata.isEmpty || !provided.isEmpty || event.metadata?.isEmpty == false || event.error != nil {
            var merged = metadata
            merged.merge(provided) { _, new in new }
            if let explicit = event.metadata { merged.merge(explicit) { _, new in new } }
            if let error = event.error {
                merged["error.message"] = "\(error)"
                merged["error.type"] = "\(String(reflecting: type(of: error)))"
            }
            metadataText = " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        // The pieces go into the output's buffer as they are: no line is assembled as a String first.
        let label = self.label
        let message = event.message.description
        let source = event.source
        output.appendLine { line in
            line.append(contentsOf: event.level.rawValue.utf8)
            if !label.isEmpty {
                line.append(UInt8(ascii: " "))
                line.append(contentsOf: label.utf8)
            }
            line.append(UInt8(ascii: ":"))
            line.append(contentsOf: metadataText.utf8)
            line.append(contentsOf: " [".utf8)
            line.append(contentsOf: source.utf8)
            line.append(contentsOf: "] ".utf8)
            line.append(contentsOf: message.utf8)
        }
    }
}
