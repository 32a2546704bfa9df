/// Why a JSON text could not be parsed, and where.
///
/// ```swift
/// do { _ = try JSON(parsing: #"{"a": tru}"#) }
/// catch { print(error) }   // Invalid literal at byte 6 (line 1, column 7)
/// ```
public struct JSONParsingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Sendable, Hashable {
        /// The text ended in the middle of a value (or was empty).
        case unexpectedEnd
        /// A byte that cannot start or continue a value here.
        case unexpectedByte(UInt8)
        /// `true`, `false` or `null` misspelled.
        case invalidLiteral
        /// A number that breaks the RFC 8259 grammar.
        case invalidNumber
        /// A backslash followed by something other than `" \ / b f n r t u`.
        case invalidEscape
        /// A `\u` escape with bad hex digits, or a lone UTF-16 surrogate.
        case invalidUnicodeEscape
        /// An unescaped control character (U+0000 to U+001F) inside a string.
        case controlCharacterInString
        /// Bytes that are not valid UTF-8.
        case invalidUTF8
        /// Arrays and objects nested deeper than the limit.
        case tooDeep(limit: Int)
        /// Non-whitespace after the top-level value.
        case trailingCharacters
        /// A key that appears twice in one object, when the parser was asked to refuse repeats.
        case duplicateKey(String)
    }

    /// What went wrong.
    public var reason: Reason
    /// The zero-based byte offset of the problem in the input.
    public var offset: Int
    /// The one-based line of the problem.
    public var line: Int
    /// The one-based column (in bytes) of the problem.
    public var column: Int
    /// Where in the document the problem is: the keys and indices of the containers around it
    /// (`resources[1].fields`); empty at the top level.
    public var path: JSONPath

    /// Creates an error; the parser fills in every field.
    public init(reason: Reason, offset: Int, line: Int, column: Int, path: JSONPath = JSONPath([])) {
        self.reason = reason
        self.offset = offset
        self.line = line
        self.column = column
        self.path = path
    }

    /// The same error one container further out.
    func nested(in component: JSONPath.Component) -> JSONParsingError {
        var copy = self
        copy.path.components.insert(component, at: 0)
        return copy
    }

    /// A one-line message naming the problem and its position.
    public var description: String {
        "\(reasonDescription) at byte \(offset) (line \(line), column \(column))"
    }

    /// The problem without its position.
    public var reasonDescription: String {
        switch reason {
        case .unexpectedEnd: "Unexpected end of input"
        case .unexpectedByte(let byte): "Unexpected \(Self.describe(byte))"
        case .invalidLiteral: "Invalid literal"
        case .invalidNumber: "Invalid number"
        case .invalidEscape: "Invalid escape sequence"
        case .invalidUnicodeEscape: "Invalid \\u escape or lone surrogate"
        case .controlCharacterInString: "Unescaped control character in string"
        case .invalidUTF8: "Invalid UTF-8"
        case .tooDeep(let limit): "Nesting deeper than \(limit) levels"
        case .trailingCharacters: "Unexpected data after the JSON value"
        case .duplicateKey(let key): "The key \"\(key)\" appears twice in one object"
        }
    }

    private static func describe(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return "character '\(Character(Unicode.Scalar(byte)))'" }
        let hex = String(byte, radix: 16, uppercase: true)
        return "byte 0x\(hex.count == 1 ? "0" + hex : hex)"
    }
}
