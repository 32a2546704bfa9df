import HTTPTypes
public import HammockJSON
import HammockWire

/// Why a value could not be converted to a field's type.
package struct ConversionError: Error {
    package let message: String
    init(_ message: String) { self.message = message }
}

extension ResourceSchema {
    /// What a validated body is for.
    public enum WriteMode: Sendable, Hashable {
        /// A new record: a client-supplied key is required, a generated one ignored.
        case create
        /// Changes to the record with this key: the key cannot change.
        case update(key: JSON)
    }

    /// Checks a request's parameters against the schema and returns the values to store.
    ///
    /// Unknown members are ignored; a generated key is ignored on create. Each known member must have
    /// its column's type (`null` clears a field); form values are converted from their string form.
    /// - Throws: a 422 ``HTTPProblem`` listing every bad field, or saying that no known field was sent.
    public func validate(
        _ parameters: JSONObject, encoding: BodyEncoding = .json, mode: WriteMode
    )
        throws(HTTPProblem) -> JSONObject
    {
        var values = JSONObject(minimumCapacity: columns.count)
        var problems: [FieldProblem] = []
        for column in columns {
            guard let raw = parameters[column.name] else { continue }
            let converted = Self.convert(raw, to: column.type, encoding: encoding)
            if column.name == key.name {
                switch mode {
                case .create where isKeyGenerated:
                    continue  // generated keys are never taken from clients
                case .create:
                    if case .success(.null) = converted {
                        problems.append(FieldProblem(field: column.name, detail: "the primary key cannot be null"))
                        continue
                    }
                    if case .success(.string(let text)) = converted, let problem = Self.unreachableKeyProblem(text) {
                        problems.append(FieldProblem(field: column.name, detail: problem))
                        continue
                    }
                case .update(let current):
                    if case .success(let value) = converted, value == current { continue }
                    problems.append(FieldProblem(field: column.name, detail: "the primary key cannot be changed"))
                    continue
                }
            }
            switch converted {
            case .success(let value): values[column.name] = value
            case .failure(let problem): problems.append(FieldProblem(field: column.name, detail: problem.message))
            }
        }
        if case .create = mode, !isKeyGenerated, parameters[key.name] == nil {
            problems.append(FieldProblem(field: key.name, detail: "the primary key is required"))
        }
        // Defaults are added after the check for a body with no known field: `{}` is still refused.
        var defaults: [(String, JSON)] = []
        for field in ruledFields {
            switch (mode, values[field.name]) {
            case (.create, nil):
                if let value = field.defaultValue {
                    defaults.append((field.name, value))
                } else if field.isRequired {
                    problems.append(FieldProblem(field: field.name, detail: "required"))
                }
            case (_, .null?) where field.isRequired:
                problems.append(FieldProblem(field: field.name, detail: "required: it cannot be null"))
            default: continue
            }
        }
        guard problems.isEmpty else { throw HTTPProblem.invalidFields(problems) }
        if values.isEmpty {
            let known = columns.filter { !(isKeyGenerated && $0.name == key.name) }.map(\.name)
            throw HTTPProblem(
                .unprocessableContent,
                detail: "The body has no known field; known fields are \(known.joined(separator: ", "))",
                extensions: ["errors": [], "knownFields": .array(known.map { .string($0) })])
        }
        for (name, value) in defaults { values[name] = value }
        return values
    }

    /// The most bytes a string key may take in a URL, percent-encoded. A record's URL must reach it
    /// again: a 70,000-character key made a `Location` the server itself answered with 431. 2 KiB
    /// stays far inside every server's and browser's limit on a request line (8 KiB for nginx and for
    /// this server's default header budget of 64 KiB, about 2,000 characters for old browsers).
    public static let maximumKeyBytesInURL = 2_048

    /// Why a client-chosen string key could not round-trip through a URL, or `nil` when it can.
    static func unreachableKeyProblem(_ key: String) -> String? {
        // An empty key has no path: the record could never be read, changed or deleted.
        if key.isEmpty { return "the primary key cannot be empty" }
        // `.` and `..` are dot segments: clients and proxies remove them from a path before sending it,
        // and they do the same to `%2E`.
        if key == "." || key == ".." { return "the primary key cannot be '\(key)', which URLs remove as a dot segment" }
        let encoded = PercentEncoding.encode(key).utf8.count
        if encoded > maximumKeyBytesInURL {
            return "the primary key takes \(encoded) bytes in a URL, more than the \(maximumKeyBytesInURL) a URL can carry"
        }
        return nil
    }

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

    static func convertForm(_ text: String, to type: FieldType) -> Result<JSON, ConversionError> {
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
    var expectation: String {
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
