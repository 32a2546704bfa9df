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
    var values = ParserStack<JSON>()
    var keys = ParserStack<String>()
    /// The keys of the last object closed at each depth (up to `shapeDepths`). Arrays of records repeat
    /// one set of keys: an object whose keys match its predecessor's shares that array, so its keys need
    /// neither an allocation nor a duplicate check.
    var shapes: [Shape?] = []

    /// The keys of an object, and whether each key's raw bytes are its value (no quote, backslash or
    /// control character), so the next object's keys can be compared without decoding them.
    struct Shape {
        var keys: [String]
        var isPlain: Bool

        init(keys: [String]) {
            self.keys = keys
            isPlain = keys.allSatisfy { key in
                key.utf8.allSatisfy { $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
            }
        }
    }
    static let shapeDepths = 16

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
                values.push(try parseValue())
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
                return .array(values.popArray(from: base))
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
        let shapeSlot = depth < Self.shapeDepths ? depth : nil
        if let shapeSlot, shapes.count <= shapeSlot {
            shapes.append(contentsOf: repeatElement(nil, count: shapeSlot + 1 - shapes.count))
        }
        /// The previous object's keys at this depth, while this one's keys have followed them in order;
        /// `matched` of them so far, kept off the key stack.
        var shape: Shape? = shapeSlot.flatMap { shapes[$0] }
        var matched = 0
        /// Set once the object outgrows the stacks.
        var large: JSONObject?
        while true {
            skipWhitespace()
            guard position < bytes.count else { throw error(.unexpectedEnd) }
            guard bytes[position] == UInt8(ascii: "\"") else { throw error(.unexpectedByte(bytes[position])) }
            let keyOffset = position
            let key: String
            if let known = shape, known.isPlain, matched < known.keys.count, skipKey(matching: known.keys[matched]) {
                key = known.keys[matched]
            } else {
                key = try parseString()
            }
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
            if let known = shape?.keys {
                if matched < known.count && known[matched] == key {
                    // The shape's keys are unique, so a key that follows it is no duplicate.
                    values.push(value)
                    matched += 1
                    skipWhitespace()
                    guard position < bytes.count else { throw error(.unexpectedEnd) }
                    switch bytes[position] {
                    case UInt8(ascii: ","):
                        position += 1
                        continue
                    case UInt8(ascii: "}"):
                        position += 1
                        depth -= 1
                        let objectKeys = matched == known.count ? known : Array(known[..<matched])
                        return .object(JSONObject(uniqueKeys: objectKeys, values: values.popArray(from: valueBase)))
                    case let byte: throw error(.unexpectedByte(byte))
                    }
                }
                // The keys part ways: the ones matched so far go on the stack, and the usual checks resume.
                keys.push(contentsOf: known[..<matched])
                shape = nil
            }
            // Duplicate keys: the last one wins, at the position of the first (unless they are refused).
            if large != nil {
                if rejectsDuplicateKeys && large?[key] != nil { throw error(.duplicateKey(key), at: keyOffset) }
                large?[key] = value
            } else if let existing = keys.firstIndex(from: keyBase, where: { $0 == key }) {
                if rejectsDuplicateKeys { throw error(.duplicateKey(key), at: keyOffset) }
                values[valueBase + (existing - keyBase)] = value
            } else if keys.count - keyBase < Self.stackedMemberLimit {
                keys.push(key)
                values.push(value)
            } else {
                var object = JSONObject(uniqueKeys: keys.popArray(from: keyBase), values: values.popArray(from: valueBase))
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
                let object =
                    large ?? JSONObject(uniqueKeys: keys.popArray(from: keyBase), values: values.popArray(from: valueBase))
                if let shapeSlot { shapes[shapeSlot] = Shape(keys: object.keys) }
                return .object(object)
            case let byte: throw error(.unexpectedByte(byte))
            }
        }
    }
}
