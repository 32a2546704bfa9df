extension JSON {
    /// The default limit on how deeply arrays and objects may nest.
    public static let defaultMaximumDepth = 512

    /// What the parser does with a key that appears twice in one object.
    ///
    /// ```swift
    /// try JSON(parsing: #"{"a": 1, "a": 2}"#)                            // ["a": 2]
    /// try JSON(parsing: #"{"a": 1, "a": 2}"#, duplicateKeys: .reject)    // throws .duplicateKey("a")
    /// ```
    public enum DuplicateKeyPolicy: Sendable, Hashable {
        /// The last value wins, at the position of the first key (what most parsers do).
        case lastWins
        /// A repeated key is an error: for files people write by hand, where a repeat is a mistake.
        case reject
    }

    /// Parses a UTF-8 JSON text (RFC 8259). Any value may stand at the top level.
    ///
    /// ```swift
    /// let value = try JSON(parsing: Array(#"[1, 2.5, "three"]"#.utf8))
    /// ```
    /// - Throws: ``JSONParsingError`` naming the problem and its byte offset.
    public init(
        parsing bytes: some Collection<UInt8>, maximumDepth: Int = JSON.defaultMaximumDepth,
        duplicateKeys: DuplicateKeyPolicy = .lastWins
    ) throws(JSONParsingError) {
        let result: Result<JSON, JSONParsingError>? = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONParsingError) in
                try JSON.parse(buffer, maximumDepth: maximumDepth, duplicateKeys: duplicateKeys)
            }
        }
        if let result {
            self = try result.get()
        } else {
            let copy = Array(bytes)
            let result = copy.withUnsafeBufferPointer { buffer in
                Result { () throws(JSONParsingError) in
                    try JSON.parse(buffer, maximumDepth: maximumDepth, duplicateKeys: duplicateKeys)
                }
            }
            self = try result.get()
        }
    }

    /// Parses a JSON text held in a string.
    ///
    /// ```swift
    /// let value = try JSON(parsing: #"{"name": "john"}"#)
    /// ```
    /// - Throws: ``JSONParsingError`` naming the problem and its byte offset in the UTF-8 form.
    public init(
        parsing text: String, maximumDepth: Int = JSON.defaultMaximumDepth, duplicateKeys: DuplicateKeyPolicy = .lastWins
    ) throws(JSONParsingError) {
        var text = text
        let result = text.withUTF8 { buffer in
            Result { () throws(JSONParsingError) in
                try JSON.parse(buffer, maximumDepth: maximumDepth, duplicateKeys: duplicateKeys)
            }
        }
        self = try result.get()
    }

    static func parse(
        _ buffer: UnsafeBufferPointer<UInt8>, maximumDepth: Int, duplicateKeys: DuplicateKeyPolicy
    )
        throws(JSONParsingError) -> JSON
    {
        var parser = JSONParser(bytes: buffer, maximumDepth: maximumDepth, rejectsDuplicateKeys: duplicateKeys == .reject)
        return try parser.parseDocument()
    }
}

/// A recursive-descent parser over a contiguous UTF-8 buffer.
struct JSONParser: ~Copyable {
    let bytes: UnsafeBufferPointer<UInt8>
    let maximumDepth: Int
    let rejectsDuplicateKeys: Bool
    var position = 0
    var depth = 0
    /// Scratch space for strings with escapes, reused across strings.
    var scratch: [UInt8] = []
    /// The elements and members of the arrays and objects being parsed, innermost last: each container
    /// is built with one allocation of its final size, instead of growing an array member by member.
    var values: [JSON] = []
    var keys: [String] = []

    init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int, rejectsDuplicateKeys: Bool = false) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
        self.rejectsDuplicateKeys = rejectsDuplicateKeys
    }

    mutating func parseDocument() throws(JSONParsingError) -> JSON {
        // RFC 8259 §8.1: a parser may ignore a UTF-8 byte order mark (some servers send one).
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { position = 3 }
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        if position < bytes.count { throw error(.trailingCharacters) }
        return value
    }

    // MARK: Errors

    func error(_ reason: JSONParsingError.Reason, at offset: Int? = nil) -> JSONParsingError {
        let offset = min(offset ?? position, bytes.count)
        var line = 1
        var lineStart = 0
        for index in 0..<offset where bytes[index] == UInt8(ascii: "\n") {
            line += 1
            lineStart = index + 1
        }
        return JSONParsingError(reason: reason, offset: offset, line: line, column: offset - lineStart + 1)
    }

    // MARK: Values

    @inline(__always)
    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    mutating func parseValue() throws(JSONParsingError) -> JSON {
        guard position < bytes.count else { throw error(.unexpectedEnd) }
        switch bytes[position] {
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case let byte: throw error(.unexpectedByte(byte))
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONParsingError) {
        let start = position
        let count = literal.utf8CodeUnitCount
        guard bytes.count - position >= count else { throw error(.invalidLiteral, at: start) }
        let expected = literal.utf8Start
        for offset in 0..<count where bytes[position + offset] != expected[offset] {
            throw error(.invalidLiteral, at: start)
        }
        position += count
    }

    mutating func enter() throws(JSONParsingError) {
        depth += 1
        if depth > maximumDepth { throw error(.tooDeep(limit: maximumDepth)) }
    }

    mutating func parseArray() throws(JSONParsingError) -> JSON {
        try enter()
        position += 1  // [
        skipWhitespace()
        if position < bytes.count && bytes[position] == UInt8(ascii: "]") {
            position += 1
            depth -= 1
            return .array([])
        }
        let base = values.count
        var index = 0
        while true {
            skipWhitespace()
            do {
                values.append(try parseValue())
            } catch {
                // Counted here: a failed element may have left its own members on the stack.
                throw error.nested(in: .index(index))
            }
            index += 1
            skipWhitespace()
            guard position < bytes.count else { throw error(.unexpectedEnd) }
            switch bytes[position] {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"):
                position += 1
                depth -= 1
                let elements = Array(values[base...])
                values.removeSubrange(base...)
                return .array(elements)
            case let byte: throw error(.unexpectedByte(byte))
            }
        }
    }

    /// Objects up to this many members are gathered on the stacks, with duplicates found by a linear
    /// scan; a larger one moves into a `JSONObject`, whose index finds them.
    static let stackedMemberLimit = 16

    mutating func parseObject() throws(JSONParsingError) -> JSON {
        try enter()
        position += 1  // {
        skipWhitespace()
        if position < bytes.count && bytes[position] == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            return .object(JSONObject())
        }
        let keyBase = keys.count
        let valueBase = values.count
        /// Set once the object outgrows the stacks.
        var large: JSONObject?
        while true {
            skipWhitespace()
            guard position < bytes.count else { throw error(.unexpectedEnd) }
            guard bytes[position] == UInt8(ascii: "\"") else { throw error(.unexpectedByte(bytes[position])) }
            let keyOffset = position
            let key = try parseString()
            skipWhitespace()
            guard position < bytes.count else { throw error(.unexpectedEnd) }
            guard bytes[position] == UInt8(ascii: ":") else { throw error(.unexpectedByte(bytes[position])) }
            position += 1
            skipWhitespace()
            let value: JSON
            do {
                value = try parseValue()
            } catch {
                throw error.nested(in: .key(key))
            }
            // Duplicate keys: the last one wins, at the position of the first (unless they are refused).
            if large != nil {
                if rejectsDuplicateKeys && large?[key] != nil { throw error(.duplicateKey(key), at: keyOffset) }
                large?[key] = value
            } else if let existing = keys[keyBase...].firstIndex(of: key) {
                if rejectsDuplicateKeys { throw error(.duplicateKey(key), at: keyOffset) }
                values[valueBase + (existing - keyBase)] = value
            } else if keys.count - keyBase < Self.stackedMemberLimit {
                keys.append(key)
                values.append(value)
            } else {
                var object = JSONObject(uniqueKeys: Array(keys[keyBase...]), values: Array(values[valueBase...]))
                keys.removeSubrange(keyBase...)
                values.removeSubrange(valueBase...)
                object[key] = value
                large = object
            }
            skipWhitespace()
            guard position < bytes.count else { throw error(.unexpectedEnd) }
            switch bytes[position] {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"):
                position += 1
                depth -= 1
                if let large { return .object(large) }
                let object = JSONObject(uniqueKeys: Array(keys[keyBase...]), values: Array(values[valueBase...]))
                keys.removeSubrange(keyBase...)
                values.removeSubrange(valueBase...)
                return .object(object)
            case let byte: throw error(.unexpectedByte(byte))
            }
        }
    }
}
