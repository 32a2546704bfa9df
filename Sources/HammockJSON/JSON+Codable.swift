extension JSON: Codable {
    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Decodes any JSON value from a decoder (`JSONDecoder`, say).
    ///
    /// Prefer ``JSON/init(parsing:maximumDepth:duplicateKeys:)-(Collection<UInt8>,_,_)`` where you have the bytes: it keeps the order of
    /// object keys, which Foundation's decoders do not report, and always tells `1` from `1.0`.
    public init(from decoder: any Decoder) throws {
        if let container = try? decoder.container(keyedBy: Key.self) {
            var object = JSONObject(minimumCapacity: container.allKeys.count)
            for key in container.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
                object[key.stringValue] = try container.decode(JSON.self, forKey: key)
            }
            self = .object(object)
        } else if var container = try? decoder.unkeyedContainer() {
            var elements: [JSON] = []
            while !container.isAtEnd { elements.append(try container.decode(JSON.self)) }
            self = .array(elements)
        } else {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let flag = try? container.decode(Bool.self) {
                self = .bool(flag)
            } else if let number = try? container.decode(Int.self) {
                self = .integer(number)
            } else if let number = try? container.decode(Double.self) {
                self = .double(number)
            } else {
                self = .string(try container.decode(String.self))
            }
        }
    }

    /// Encodes the value, objects with their keys in order.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let flag):
            var container = encoder.singleValueContainer()
            try container.encode(flag)
        case .integer(let number):
            var container = encoder.singleValueContainer()
            try container.encode(number)
        case .double(let number):
            var container = encoder.singleValueContainer()
            try container.encode(number)
        case .string(let text):
            var container = encoder.singleValueContainer()
            try container.encode(text)
        case .array(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements { try container.encode(element) }
        case .object(let object):
            var container = encoder.container(keyedBy: Key.self)
            for (key, value) in object { try container.encode(value, forKey: Key(stringValue: key)) }
        }
    }
}
