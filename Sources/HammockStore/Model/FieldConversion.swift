package import HammockJSON

/// How a request body was encoded, which decides how strictly field types are read.
///
/// ```swift
/// let values = try schema.validate(body, encoding: .form, mode: .create)   // "3" becomes 3 for integers
/// ```
public enum BodyEncoding: Sendable, Hashable {
    /// `application/json` (or any `+json` type, or no `Content-Type` at all).
    case json
    /// `application/x-www-form-urlencoded`: every value arrives as a string and is converted.
    case form
}

/// Why a value could not be converted to a field's type.
package struct ConversionError: Error {
    package let message: String
    package init(_ message: String) { self.message = message }
}

extension ResourceSchema {
    /// Converts one value to a column type, or describes why it cannot be.
    package static func convert(_ value: JSON, to type: FieldType, encoding: BodyEncoding) -> Result<JSON, ConversionError> {
        if case .null = value { return .success(.null) }
        if encoding == .form, case .string(let text) = value {
            return convertForm(text, to: type)
        }
        switch (type, value) {
        case (.string, .string), (.integer, .integer), (.float, .double), (.boolean, .bool), (.json, _):
            return .success(value)
        case (.integer, .double(let number)):
            // A number written with a fraction or an exponent (`1e3`, `2.0`) is an integer only if it is
            // one exactly. Beyond 2^53 a double no longer says which integer was written: a literal
            // below Int64.min rounds to exactly -2^63, so it would be stored as Int64.min.
            guard number.magnitude < 9_223_372_036_854_775_808.0 else {
                return .failure(ConversionError("\(number) is out of range for a 64-bit integer"))
            }
            // At 2^53 itself a double is already ambiguous: 9007199254740993.0 reads as 2^53.
            guard number.magnitude < 9_007_199_254_740_992 else {
                return .failure(ConversionError("write integers beyond 2^53 without a fraction or exponent"))
            }
            guard let exact = Int(exactly: number) else {
                return .failure(ConversionError("expected an integer, found \(number)"))
            }
            return .success(.integer(exact))
        case (.float, .integer(let number)):
            return .success(.double(Double(number)))
        case (.blob, .string(let text)):
            guard Base64.decode(text) != nil else { return .failure(ConversionError("expected a base64 string")) }
            return .success(value)
        case (.date, .string(let text)):
            guard ISO8601.isValid(text) else {
                return .failure(ConversionError("expected an ISO 8601 date or date-time, found '\(text)'"))
            }
            return .success(value)
        default:
            return .failure(ConversionError("expected \(type.expectation), found \(value.kindName)"))
        }
    }

    package static func convertForm(_ text: String, to type: FieldType) -> Result<JSON, ConversionError> {
        if text.isEmpty && type != .string { return .success(.null) }
        switch type {
        case .string:
            return .success(.string(text))
        case .integer:
            guard let number = Int(text) else { return .failure(ConversionError("expected an integer, found '\(text)'")) }
            return .success(.integer(number))
        case .float:
            guard let number = Double(text), number.isFinite else {
                return .failure(ConversionError("expected a number, found '\(text)'"))
            }
            return .success(.double(number))
        case .boolean:
            switch text.lowercased() {
            case "true", "1", "on", "yes": return .success(.bool(true))
            case "false", "0", "off", "no": return .success(.bool(false))
            default: return .failure(ConversionError("expected a boolean, found '\(text)'"))
            }
        case .json:
            return .success((try? JSON(parsing: text)) ?? .string(text))
        case .blob, .date:
            return convert(.string(text), to: type, encoding: .json)
        }
    }
}

extension FieldType {
    /// "a string", "an integer", ... for messages.
    package var expectation: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .float: "a number"
        case .boolean: "a boolean"
        case .blob: "a base64 string"
        case .date: "an ISO 8601 date string"
        case .json: "any JSON value"
        }
    }
}
