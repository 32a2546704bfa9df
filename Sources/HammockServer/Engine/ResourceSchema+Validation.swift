import HTTPTypes
public import HammockJSON
import HammockStore
import HammockWire

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
        // `{}` creates a record of defaults and nulls where nothing is required (an API document's create
        // whose every member is optional); a body naming only unknown members is still refused, as a typo.
        var createsEmpty = false
        if case .create = mode, parameters.isEmpty { createsEmpty = true }
        if values.isEmpty && !createsEmpty {
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
    package static func unreachableKeyProblem(_ key: String) -> String? {
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
}
