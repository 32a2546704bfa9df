extension JSON {
    /// How ``JSON/serialized(options:)`` lays out its output.
    public struct WritingOptions: OptionSet, Sendable, Hashable {
        /// The raw bits.
        public let rawValue: Int
        /// Creates options from raw bits.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Newlines and two-space indentation.
        public static let prettyPrinted = WritingOptions(rawValue: 1 << 0)
        /// Object keys in byte order instead of their stored order.
        public static let sortedKeys = WritingOptions(rawValue: 1 << 1)
    }

    /// The UTF-8 bytes of this value as compact JSON, keys in their stored order.
    ///
    /// ```swift
    /// let bytes = JSON(["id": 1, "name": "john"]).serialized()   // {"id":1,"name":"john"}
    /// ```
    /// Non-finite doubles, which JSON cannot express, are written as `null`.
    public func serialized(options: WritingOptions = []) -> [UInt8] {
        var output = JSONByteWriter(capacity: 256)
        var writer = JSONWriter(options: options)
        writer.write(self, into: &output)
        return output.finish()
    }

    /// Appends the serialized bytes of this value to `output`.
    public func serialize(into output: inout [UInt8], options: WritingOptions = []) {
        var bytes = JSONByteWriter(capacity: 256)
        var writer = JSONWriter(options: options)
        writer.write(self, into: &bytes)
        bytes.finish(into: &output)
    }

    /// This value as a JSON string.
    public func serializedString(options: WritingOptions = []) -> String {
        String(decoding: serialized(options: options), as: UTF8.self)
    }
}

struct JSONWriter {
    let options: JSON.WritingOptions
    let isPretty: Bool
    var indentation = 0

    init(options: JSON.WritingOptions) {
        self.options = options
        isPretty = options.contains(.prettyPrinted)
    }

    mutating func write(_ value: JSON, into output: inout JSONByteWriter) {
        switch value {
        case .null: output.append("null")
        case .bool(let flag): output.append(flag ? "true" : "false")
        case .integer(let number): output.appendInteger(number)
        case .double(let number):
            if number.isFinite {
                if let exact = Int(exactly: number), abs(number) < 1e15, number != 0 || number.sign == .plus {
                    // Keep the decimal point so the value reads back as a double.
                    output.appendInteger(exact)
                    output.append(".0")
                } else {
                    // Up to 15 bytes, Swift keeps the text inline: no allocation for most numbers.
                    var text = number.description
                    text.withUTF8 { output.append($0) }
                }
            } else {
                output.append("null")
            }
        case .string(let string): Self.writeString(string, into: &output)
        case .array(let elements): writeArray(elements, into: &output)
        case .object(let object): writeObject(object, into: &output)
        }
    }

    mutating func writeArray(_ elements: [JSON], into output: inout JSONByteWriter) {
        guard !elements.isEmpty else { return output.append("[]") }
        output.append(UInt8(ascii: "["))
        indentation += 1
        // Elements by index, not by iterator: the iterator hands out copies, a retain and a release each.
        for index in elements.indices {
            if index != 0 { output.append(UInt8(ascii: ",")) }
            newline(&output)
            write(elements[index], into: &output)
        }
        indentation -= 1
        newline(&output)
        output.append(UInt8(ascii: "]"))
    }

    mutating func writeObject(_ object: JSONObject, into output: inout JSONByteWriter) {
        guard !object.isEmpty else { return output.append("{}") }
        output.append(UInt8(ascii: "{"))
        indentation += 1
        if options.contains(.sortedKeys) {
            let order = object._keys.indices.sorted { object._keys[$0].utf8.lexicographicallyPrecedes(object._keys[$1].utf8) }
            for (count, index) in order.enumerated() {
                writeMember(object._keys[index], object._values[index], isFirst: count == 0, into: &output)
            }
        } else {
            // Stored order: no index array to build.
            for index in 0..<object._keys.count {
                writeMember(object._keys[index], object._values[index], isFirst: index == 0, into: &output)
            }
        }
        indentation -= 1
        newline(&output)
        output.append(UInt8(ascii: "}"))
    }

    @inline(__always)
    mutating func writeMember(_ key: String, _ value: JSON, isFirst: Bool, into output: inout JSONByteWriter) {
        if !isFirst { output.append(UInt8(ascii: ",")) }
        newline(&output)
        Self.writeString(key, into: &output)
        output.append(UInt8(ascii: ":"))
        if isPretty { output.append(UInt8(ascii: " ")) }
        write(value, into: &output)
    }

    @inline(__always)
    func newline(_ output: inout JSONByteWriter) {
        guard isPretty else { return }
        output.append(UInt8(ascii: "\n"))
        for _ in 0..<indentation { output.append("  ") }
    }

    static let hexDigits: StaticString = "0123456789abcdef"

    /// Whether a byte must be escaped in a JSON string: control characters, quote, backslash.
    @inline(__always)
    static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    static func writeString(_ string: String, into output: inout JSONByteWriter) {
        // Native strings lend their bytes without a copy; others (bridged ones) are made contiguous.
        let written: Void? = string.utf8.withContiguousStorageIfAvailable { writeString(bytes: $0, into: &output) }
        guard written == nil else { return }
        var copy = string
        copy.withUTF8 { writeString(bytes: $0, into: &output) }
    }

    static func writeString(bytes: UnsafeBufferPointer<UInt8>, into output: inout JSONByteWriter) {
        output.reserve(bytes.count + 2)
        output.appendReserved(UInt8(ascii: "\""))
        if ByteScan.isPlain(bytes) {
            // Most strings: copied as they are.
            output.appendReserved(bytes)
            output.appendReserved(UInt8(ascii: "\""))
            return
        }
        var runStart = 0
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard needsEscape(byte) else {
                index += 1
                continue
            }
            if runStart < index { output.append(UnsafeBufferPointer(rebasing: bytes[runStart..<index])) }
            index += 1
            runStart = index
            output.append(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""): output.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): output.append(UInt8(ascii: "\\"))
            case 0x0A: output.append(UInt8(ascii: "n"))
            case 0x0D: output.append(UInt8(ascii: "r"))
            case 0x09: output.append(UInt8(ascii: "t"))
            case 0x08: output.append(UInt8(ascii: "b"))
            case 0x0C: output.append(UInt8(ascii: "f"))
            default:
                output.append("u00")
                let hex = hexDigits.utf8Start
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            }
        }
        if runStart < bytes.count {
            output.append(UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
        }
        output.append(UInt8(ascii: "\""))
    }
}
