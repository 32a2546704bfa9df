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
        write(level: event.level, metadata: event.metadata, error: event.error, source: event.source) { line in
            line.append(contentsOf: event.message.description.utf8)
        }
    }

    /// The server's line per request, written straight into the buffer when there is no metadata.
    public func logRequest(method: String, path: String, status: Int) {
        write(level: .info, metadata: nil, error: nil, source: "HammockServer") { line in
            line.append(contentsOf: method.utf8)
            line.append(UInt8(ascii: " "))
            line.append(contentsOf: path.utf8)
            line.append(UInt8(ascii: " "))
            Self.appendDecimal(status, to: &line)
        }
    }

    static func appendDecimal(_ number: Int, to line: inout [UInt8]) {
        guard number >= 0 && number < 1000 else { return line.append(contentsOf: String(number).utf8) }
        if number >= 100 { line.append(UInt8(ascii: "0") + UInt8(number / 100)) }
        if number >= 10 { line.append(UInt8(ascii: "0") + UInt8(number / 10 % 10)) }
        line.append(UInt8(ascii: "0") + UInt8(number % 10))
    }

    /// `level label: metadata [source] ` and then what `message` appends.
    private func write(
        level: Logger.Level, metadata explicit: Logger.Metadata?, error: (any Error)?, source: String,
        message: (inout [UInt8]) -> Void
    ) {
        var metadataText = ""
        let provided = metadataProvider?.get() ?? [:]
        if !metadata.isEmpty || !provided.isEmpty || explicit?.isEmpty == false || error != nil {
            var merged = metadata
            merged.merge(provided) { _, new in new }
            if let explicit { merged.merge(explicit) { _, new in new } }
            if let error {
                merged["error.message"] = "\(error)"
                merged["error.type"] = "\(String(reflecting: type(of: error)))"
            }
            metadataText = " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        // The pieces go into the output's buffer as they are: no line is assembled as a String first.
        let label = self.label
        output.appendLine { line in
            line.append(contentsOf: level.rawValue.utf8)
            if !label.isEmpty {
                line.append(UInt8(ascii: " "))
                line.append(contentsOf: label.utf8)
            }
            line.append(UInt8(ascii: ":"))
            line.append(contentsOf: metadataText.utf8)
            line.append(contentsOf: " [".utf8)
            line.append(contentsOf: source.utf8)
            line.append(contentsOf: "] ".utf8)
            message(&line)
        }
    }
}

extension BufferedLogHandler: RequestLineLogHandler {}
