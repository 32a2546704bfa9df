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
        var output: [UInt8] = []
        output.reserveCapacity(64)
        var writer = JSONWriter(options: options)
        writer.write(self, into: &output)
        return output
    }

    /// Appends the serialized bytes of this value to `output`.
    public func serialize(into output: inout [UInt8], options: WritingOptions = []) {
        var writer = JSONWriter(options: options)
        writer.write(self, into: &output)
    }

    /// This value as a JSON string.
    public func serializedString(options: WritingOptions = []) -> String {
        String(decoding: serialized(options: options), as: UTF8.self)
    }
}

struct JSONWriter {
    let options: JSON.WritingOptions
    var indentation = 0

    init(options: JSON.WritingOptions) { self.options = options }

    mutating func write(_ value: JSON, into output: inout [UInt8]) {
        switch value {
        case .null: append("null", to: &output)
        case .bool(let flag): append(flag ? "true" : "false", to: &output)
        case .integer(let number): Self.writeInteger(number, into: &output)
        case .double(let number):
            if number.isFinite {
                if let exact = Int(exactly: number), abs(number) < 1e15, number != 0 || number.sign == .plus {
                    // Keep the decimal point so the value reads back as a double.
                    Self.writeInteger(exact, into: &output)
                    append(".0", to: &output)
                } else {
                    output.append(contentsOf: number.description.utf8)
                }
            } else {
                append("null", to: &output)
            }
        case .string(let string): Self.writeString(string, into: &output)
        case .array(let elements): writeArray(elements, into: &output)
        case .object(let object): writeObject(object, into: &output)
        }
    }

    mutating func writeArray(_ elements: [JSON], into output: inout [UInt8]) {
        guard !elements.isEmpty else { return append("[]", to: &output) }
        output.append(UInt8(ascii: "["))
        indentation += 1
        for (index, element) in elements.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            newline(&output)
            write(element, into: &output)
        }
        indentation -= 1
        newline(&output)
        output.append(UInt8(ascii: "]"))
    }

    mutating func writeObject(_ object: JSONObject, into output: inout [UInt8]) {
        guard !object.isEmpty else { return append("{}", to: &output) }
        output.append(UInt8(ascii: "{"))
        indentation += 1
        var order = Array(object._keys.indices)
        if options.contains(.sortedKeys) {
            order.sort { object._keys[$0].utf8.lexicographicallyPrecedes(object._keys[$1].utf8) }
        }
        let pretty = options.contains(.prettyPrinted)
        for (count, index) in order.enumerated() {
            if count > 0 { output.append(UInt8(ascii: ",")) }
            newline(&output)
            Self.writeString(object._keys[index], into: &output)
            output.append(UInt8(ascii: ":"))
            if pretty { output.append(UInt8(ascii: " ")) }
            write(object._values[index], into: &output)
        }
        indentation -= 1
        newline(&output)
        output.append(UInt8(ascii: "}"))
    }

    @inline(__always)
    func newline(_ output: inout [UInt8]) {
        guard options.contains(.prettyPrinted) else { return }
        output.append(UInt8(ascii: "\n"))
        for _ in 0..<indentation { output.append(contentsOf: [0x20, 0x20]) }
    }

    @inline(__always)
    func append(_ literal: StaticString, to output: inout [UInt8]) {
        output.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    static func writeInteger(_ value: Int, into output: inout [UInt8]) {
        if value >= 0 && value < 10 {
            output.append(UInt8(ascii: "0") &+ UInt8(value))
            return
        }
        // Write digits backwards into a stack buffer; magnitude handles Int.min.
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            var index = 20
            repeat {
                index -= 1
                buffer[index] = UInt8(ascii: "0") &+ UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 { output.append(UInt8(ascii: "-")) }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[index..<20]))
        }
    }

    static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    static func writeString(_ string: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { bytes in
            var runStart = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if runStart < index { output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index])) }
                runStart = index + 1
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
                    output.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                    output.append(hexDigits[Int(byte >> 4)])
                    output.append(hexDigits[Int(byte & 0x0F)])
                }
            }
            if runStart < bytes.count {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
