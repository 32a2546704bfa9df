public import HammockJSON
import Yams

/// YAML read into the same ``HammockJSON/JSON`` value a JSON file gives, and written from one: how a
/// configuration or an OpenAPI document may be YAML as well as JSON.
///
/// Plain scalars are read by YAML 1.2's core schema, as JSON would read them: `true`/`false`, `null`/`~`
/// or nothing, integers, decimals; everything else, and every quoted scalar, is a string (`yes` stays
/// the string "yes", unlike YAML 1.1). Keys keep their order. Anchors and aliases are followed.
public enum YAMLText {
    /// Why YAML could not be read: where, and what.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// 1-based line and column, when known.
        public var line: Int?
        public var column: Int?
        /// The key path of the value at fault (`routes[2].body`), when known.
        public var keyPath: String
        /// What is wrong.
        public var message: String

        public var description: String {
            let place = line.map { "line \($0)" + (column.map { ", column \($0)" } ?? "") }
            return [place, keyPath.isEmpty ? nil : keyPath, message].compactMap { $0 }.joined(separator: ": ")
        }
    }

    /// At most this many values come out of one document: aliases may repeat a subtree, and a few lines
    /// that nest aliases ten deep would otherwise expand into billions of values.
    public static let maximumValues = 2_000_000

    /// Lists and mappings nest at most this deep, as a JSON file may (`JSON(parsing:)`'s default).
    public static let maximumDepth = JSON.defaultMaximumDepth

    /// The value `text` holds; an empty document is `null`.
    /// - Throws: ``Failure`` for text that is not YAML, a key given twice in one mapping, a key that is
    ///   not a string, a tag of another kind, or more than ``maximumValues`` values.
    public static func json(from text: String) throws(Failure) -> JSON {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text, .basic)
        } catch let error as YamlError {
            throw failure(from: error)
        } catch {
            throw Failure(line: nil, column: nil, keyPath: "", message: String(describing: error))
        }
        guard let root else { return .null }
        var budget = maximumValues
        return try convert(root, path: JSONPath([]), depth: 0, budget: &budget)
    }

    private static func failure(from error: YamlError) -> Failure {
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            let text = context.map { "\($0.text) … \(problem)" } ?? problem
            return Failure(line: mark.line, column: mark.column, keyPath: "", message: "not valid YAML: \(text)")
        case .duplicatedKeysInMapping(let duplicates, let context):
            let names = duplicates.map { "'\($0)'" }.joined(separator: ", ")
            return Failure(
                line: context.mark.line, column: context.mark.column, keyPath: "",
                message: "\(names) declared twice in the mapping that starts here; the second would replace the first")
        default:
            return Failure(line: nil, column: nil, keyPath: "", message: "not valid YAML: \(error)")
        }
    }

    private static func convert(_ node: Node, path: JSONPath, depth: Int, budget: inout Int) throws(Failure) -> JSON {
        budget -= 1
        guard depth <= maximumDepth else {
            throw Failure(
                line: node.mark?.line, column: node.mark?.column, keyPath: "",
                message: "lists and mappings nested more than \(maximumDepth) deep; refused")
        }
        guard budget >= 0 else {
            throw Failure(
                line: node.mark?.line, column: node.mark?.column, keyPath: path.description,
                message: "more than \(maximumValues) values (aliases repeat what they name); refused")
        }
        switch node {
        case .scalar(let scalar):
            return scalarValue(scalar)
        case .sequence(let sequence):
            var values: [JSON] = []
            values.reserveCapacity(sequence.count)
            for (index, element) in sequence.enumerated() {
                values.append(try convert(element, path: path.appending(.index(index)), depth: depth + 1, budget: &budget))
            }
            return .array(values)
        case .mapping(let mapping):
            var object = JSONObject(minimumCapacity: mapping.count)
            for (key, value) in mapping {
                guard case .scalar(let keyScalar) = key else {
                    throw Failure(
                        line: key.mark?.line, column: key.mark?.column, keyPath: path.description,
                        message: "a key must be a string, not a list or a mapping")
                }
                let name = keyScalar.string
                let keyPath = path.appending(.key(name))
                // Yams reports a key given twice itself; this keeps a later change of it from dropping a value.
                if object[name] != nil {
                    throw Failure(
                        line: key.mark?.line, column: key.mark?.column, keyPath: keyPath.description,
                        message: "declared twice in one mapping; the second would replace the first")
                }
                object[name] = try convert(value, path: keyPath, depth: depth + 1, budget: &budget)
            }
            return .object(object)
        case .alias:
            throw Failure(
                line: node.mark?.line, column: node.mark?.column, keyPath: path.description,
                message: "an alias to an anchor that is not defined before it")
        }
    }

    /// A scalar as JSON reads the same text: quoted is a string; plain by the core schema.
    private static func scalarValue(_ scalar: Node.Scalar) -> JSON {
        let text = scalar.string
        guard scalar.style == .plain || scalar.style == .any else { return .string(text) }
        switch text {
        case "", "~", "null", "Null", "NULL": return .null
        case "true", "True", "TRUE": return .bool(true)
        case "false", "False", "FALSE": return .bool(false)
        default: break
        }
        if looksNumeric(text), let number = try? JSON(parsing: Array(text.utf8)) {
            switch number {
            case .integer, .double: return number
            default: break
            }
        }
        return .string(text)
    }

    /// Whether `text` is a number in JSON's own form (no leading `+`, no `.5`, no hex): the form JSON
    /// reads, so that YAML and JSON give one value for one text.
    private static func looksNumeric(_ text: String) -> Bool {
        guard let first = text.utf8.first else { return false }
        return first == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first)
    }

    /// `value` as YAML text: block style, keys in their order, strings quoted wherever a plain scalar
    /// would read back as something else.
    public static func text(from value: JSON) -> String {
        // Serialising a tree of plain scalars, mappings and sequences cannot fail; an empty string would
        // only come from an emitter error, which the round-trip tests would show.
        (try? Yams.serialize(node: node(for: value), width: -1, allowUnicode: true)) ?? ""
    }

    private static func node(for value: JSON) -> Node {
        switch value {
        case .object(let object):
            return .mapping(Node.Mapping(object.keys.map { key in (stringNode(key), node(for: object[key] ?? .null)) }))
        case .array(let values):
            return .sequence(Node.Sequence(values.map(node(for:))))
        case .string(let string):
            return stringNode(string)
        default:
            // null, booleans and numbers in their JSON form, which the core schema reads back alike.
            return .scalar(Node.Scalar(value.serializedString(), Tag(.implicit), .plain))
        }
    }

    private static func stringNode(_ string: String) -> Node {
        let plain = scalarValue(Node.Scalar(string, Tag(.implicit), .plain)) == .string(string) && isPlainSafe(string)
        return .scalar(Node.Scalar(string, Tag(.implicit), plain ? .plain : .doubleQuoted))
    }

    /// Letters, digits and `_ . / - { } $ #` inside, starting with a letter, `_` or `/`: a plain scalar
    /// that no YAML reader takes for anything but this string.
    private static func isPlainSafe(_ string: String) -> Bool {
        guard let first = string.unicodeScalars.first,
            first.properties.isAlphabetic || first == "_" || first == "/"
        else { return false }
        return string.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "_./-{}$".unicodeScalars.contains(scalar))
        }
    }
}
