/// A path into a JSON value: keys and array indices, written `attributes.name`, `offers[0].price` or
/// `matrix[1][2]`.
///
/// ```swift
/// let path = try JSONPath(parsing: "offers[0].price")
/// let json: JSON = ["offers": [["price": 9.5]]]
/// json[path]                                   // .double(9.5)
/// var copy = json
/// try copy.set(12, at: path)                   // ["offers": [["price": 12]]]
/// JSONPath([.key("a.b"), .index(2)])           // keys holding "." or "[" need the programmatic form
/// ```
public struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    /// One step of a path.
    public enum Component: Sendable, Hashable {
        /// A member of an object.
        case key(String)
        /// An element of an array (zero-based).
        case index(Int)
    }

    /// The steps, outermost first.
    public var components: [Component]

    /// A path from its components; any key, including ones holding `.` or `[`, is allowed.
    public init(_ components: [Component]) { self.components = components }

    /// Parses the dotted form: keys separated by `.`, indices in `[n]`, in any nesting.
    /// - Throws: ``JSONPathError`` for an empty path or segment, an unbalanced bracket, or an index
    ///   that is not a non-negative integer.
    public init(parsing text: String) throws(JSONPathError) {
        var components: [Component] = []
        let characters = Array(text.utf8)
        var index = 0
        func fail(_ reason: JSONPathError.Reason, at offset: Int) -> JSONPathError {
            JSONPathError(path: text, reason: reason, offset: offset)
        }
        guard !characters.isEmpty else { throw fail(.empty, at: 0) }
        var expectKey = true  // at the start or after a dot
        while index < characters.count {
            let byte = characters[index]
            if byte == UInt8(ascii: "[") {
                guard !(expectKey && !components.isEmpty) else { throw fail(.emptySegment, at: index) }
                let start = index
                index += 1
                var digits = 0
                var value = 0
                while index < characters.count, characters[index] != UInt8(ascii: "]") {
                    let digit = characters[index] &- UInt8(ascii: "0")
                    guard digit < 10 else {
                        throw fail(characters[index] == UInt8(ascii: "-") ? .negativeIndex : .invalidIndex, at: index)
                    }
                    guard value < Int.max / 10 - 9 else { throw fail(.invalidIndex, at: index) }
                    value = value * 10 + Int(digit)
                    digits += 1
                    index += 1
                }
                guard index < characters.count else { throw fail(.unbalancedBracket, at: start) }
                guard digits > 0 else { throw fail(.invalidIndex, at: start) }
                index += 1  // ]
                components.append(.index(value))
                expectKey = false
                if index < characters.count {
                    guard characters[index] == UInt8(ascii: ".") || characters[index] == UInt8(ascii: "[") else {
                        throw fail(.unexpectedCharacter, at: index)
                    }
                    if characters[index] == UInt8(ascii: ".") {
                        index += 1
                        expectKey = true
                        guard index < characters.count else { throw fail(.emptySegment, at: index) }
                    }
                }
            } else if byte == UInt8(ascii: "]") {
                throw fail(.unbalancedBracket, at: index)
            } else if byte == UInt8(ascii: ".") {
                throw fail(.emptySegment, at: index)
            } else {
                guard expectKey else { throw fail(.unexpectedCharacter, at: index) }
                let start = index
                while index < characters.count,
                    characters[index] != UInt8(ascii: "."), characters[index] != UInt8(ascii: "["),
                    characters[index] != UInt8(ascii: "]")
                {
                    index += 1
                }
                components.append(.key(String(decoding: characters[start..<index], as: UTF8.self)))
                expectKey = false
                if index < characters.count, characters[index] == UInt8(ascii: ".") {
                    index += 1
                    expectKey = true
                    guard index < characters.count else { throw fail(.emptySegment, at: index) }
                }
            }
        }
        self.components = components
    }

    /// The dotted form; keys that the dotted form cannot express are written as `["key"]`.
    public var description: String {
        var text = ""
        for component in components {
            switch component {
            case .index(let index):
                text += "[\(index)]"
            case .key(let key):
                if key.isEmpty || key.contains(where: { $0 == "." || $0 == "[" || $0 == "]" }) {
                    text += "[" + JSON.string(key).serializedString() + "]"
                } else {
                    text += text.isEmpty ? key : "." + key
                }
            }
        }
        return text
    }

    /// A path with `component` appended.
    public func appending(_ component: Component) -> JSONPath { JSONPath(components + [component]) }
}

/// A dotted path that cannot be parsed, or a value that cannot be written at a path.
///
/// ```swift
/// do { _ = try JSONPath(parsing: "items[-1]") }
/// catch { print(error) }   // invalid path 'items[-1]': negative index at offset 6
/// ```
public struct JSONPathError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public enum Reason: Sendable, Hashable {
        /// The path is empty.
        case empty
        /// Two dots in a row, or a dot at the start or end.
        case emptySegment
        /// A `[` without `]`, or a `]` without `[`.
        case unbalancedBracket
        /// An index that is negative.
        case negativeIndex
        /// An index that is not a number (or is empty, or too large).
        case invalidIndex
        /// A key right after `]` without a dot.
        case unexpectedCharacter
        /// Writing needs an object (or array) where the value holds something else.
        case typeConflict(expected: String, found: String)
    }

    /// The path as written.
    public var path: String
    /// What is wrong.
    public var reason: Reason
    /// The byte offset in the path where the problem is (for parsing), or the component index (for writing).
    public var offset: Int

    /// A one-line message.
    public var description: String {
        let what: String
        switch reason {
        case .empty: what = "the path is empty"
        case .emptySegment: what = "empty segment at offset \(offset)"
        case .unbalancedBracket: what = "unbalanced bracket at offset \(offset)"
        case .negativeIndex: what = "negative index at offset \(offset)"
        case .invalidIndex: what = "invalid index at offset \(offset)"
        case .unexpectedCharacter: what = "expected '.' or '[' at offset \(offset)"
        case .typeConflict(let expected, let found): what = "expected \(expected) at component \(offset), found \(found)"
        }
        return "invalid path '\(path)': \(what)"
    }
}

extension JSON {
    /// The value at `path`, or `nil` if any step is missing or of the wrong kind.
    public subscript(path: JSONPath) -> JSON? {
        // One key, the usual path of a recipe's field: no copy of the value to walk from.
        if path.components.count == 1, case .key(let key) = path.components[0] { return self[key] }
        var current = self
        for component in path.components {
            switch component {
            case .key(let key):
                guard let next = current[key] else { return nil }
                current = next
            case .index(let index):
                guard let next = current[index] else { return nil }
                current = next
            }
        }
        return current
    }

    /// Writes `value` at `path`, creating objects and arrays on the way (arrays are padded with `null`).
    /// - Throws: ``JSONPathError`` with ``JSONPathError/Reason/typeConflict(expected:found:)`` when a
    ///   step needs an object or array but the value there is something else.
    public mutating func set(_ value: JSON, at path: JSONPath) throws(JSONPathError) {
        self = try Self.setting(value, at: path.components[...], in: self, path: path)
    }

    private static func setting(
        _ value: JSON, at components: ArraySlice<JSONPath.Component>, in container: JSON?, path: JSONPath
    )
        throws(JSONPathError) -> JSON
    {
        guard let component = components.first else { return value }
        let position = components.startIndex
        let rest = components.dropFirst()
        switch (component, container) {
        case (.key(let key), .object(var object)?):
            object[key] = try setting(value, at: rest, in: object[key], path: path)
            return .object(object)
        case (.key(let key), nil), (.key(let key), .null?):
            var object = JSONObject()
            object[key] = try setting(value, at: rest, in: nil, path: path)
            return .object(object)
        case (.index(let index), .array(var elements)?):
            while elements.count <= index { elements.append(.null) }
            elements[index] = try setting(value, at: rest, in: elements[index], path: path)
            return .array(elements)
        case (.index(let index), nil), (.index(let index), .null?):
            var elements = [JSON](repeating: .null, count: index + 1)
            elements[index] = try setting(value, at: rest, in: nil, path: path)
            return .array(elements)
        case (.key, let found?):
            throw JSONPathError(
                path: path.description, reason: .typeConflict(expected: "object", found: found.kindName), offset: position)
        case (.index, let found?):
            throw JSONPathError(
                path: path.description, reason: .typeConflict(expected: "array", found: found.kindName), offset: position)
        }
    }
}
