import Foundation
public import HammockJSON
public import HammockServer
import OpenAPIKit
import OpenAPIKit30

/// A mock made from an OpenAPI 3.0 or 3.1 document: what `hammock serve api.yaml` runs.
///
/// Paths shaped like a collection and its items (`/pets`, `/pets/{petId}`) whose operations carry a JSON
/// object schema become resources with storage: fields typed from the schema, the actions the document
/// lists, a parent for a nested collection (`/owners/{ownerId}/pets` when a pet has `ownerId`), records
/// from the documented examples (or made up from the schema when there are none). Every other operation
/// becomes a stub answering its documented success status with its example, or a body made from its
/// schema. What cannot be mocked, or is mocked differently from the document, is listed in ``notes``.
///
/// ```swift
/// let mock = try OpenAPIImport.make(from: document, file: "api.yaml")
/// let configuration = try ServerConfiguration(root: mock.configuration, file: "api.yaml")
/// for note in mock.notes { print(note) }   // "security: not checked; every request is let in"
/// ```
public struct OpenAPIImport: Sendable {
    /// Something in the document that is not mocked, or mocked otherwise than it says.
    public struct Note: Sendable, Hashable, CustomStringConvertible {
        /// Where: an operation (`GET /pets/{petId}`), or a part of the document (`webhooks.newPet`).
        public var place: String
        /// What happens instead.
        public var message: String

        public init(place: String, message: String) {
            self.place = place
            self.message = message
        }

        /// `place: message`.
        public var description: String { "\(place): \(message)" }
    }

    /// The document's `openapi` version, such as `3.0.3`.
    public var version: String
    /// The document's `info.title`.
    public var title: String
    /// The Hammock configuration made from the document (the same keys as a configuration file), to read
    /// with `ServerConfiguration(root:file:)` or print for a team that wants to take it over.
    public var configuration: JSON
    /// The resources made, parents first.
    public var resources: [String]
    /// The stubs made, as `METHOD /path` in the document's words.
    public var stubs: [String]
    /// What is not mocked, or mocked otherwise than the document says.
    public var notes: [Note]

    /// Whether `root` is an OpenAPI (or Swagger) document rather than a Hammock configuration.
    public static func isOpenAPI(_ root: JSON) -> Bool {
        guard case .object(let object) = root else { return false }
        return object["openapi"] != nil || object["swagger"] != nil
    }

    /// A mock from an OpenAPI document already parsed (from JSON or YAML); `file` names it in errors.
    /// - Throws: `ConfigurationError` for a Swagger 2.0 document, an OpenAPI version other than 3.0,
    ///   3.1 or 3.2, a document that is not valid OpenAPI (naming where, as OpenAPIKit reads it), or one
    ///   with no operation that can be mocked.
    public static func make(from root: JSON, file: String) throws(ConfigurationError) -> OpenAPIImport {
        guard case .object(let object) = root else {
            throw ConfigurationError(file: file, keyPath: "", message: "an OpenAPI document must be an object")
        }
        if object["swagger"] != nil {
            throw ConfigurationError(
                file: file, keyPath: "swagger",
                message: "Swagger 2.0 is not read; convert the document to OpenAPI 3 first (swagger2openapi does)")
        }
        guard case .string(let version)? = object["openapi"] else {
            throw ConfigurationError(
                file: file, keyPath: "openapi", message: "expected the OpenAPI version as a string, such as \"3.1.0\"")
        }
        var notes = try check(root, version: version, file: file)
        var mapper = OpenAPIMapper(schemas: DocumentSchemas(root: root))
        mapper.map()
        guard !mapper.resourceNames.isEmpty || !mapper.stubPlaces.isEmpty else {
            throw ConfigurationError(file: file, keyPath: "paths", message: "no operation to mock")
        }
        notes += mapper.notes
        return OpenAPIImport(
            version: version, title: object["info"]?.objectValue?["title"]?.stringValue ?? "",
            configuration: mapper.configuration, resources: mapper.resourceNames, stubs: mapper.stubPlaces, notes: notes)
    }

    /// Reads the document with OpenAPIKit: a document it cannot decode is refused with its words; what its
    /// validation finds (an undefined path parameter, an operation without responses, …) is noted.
    static func check(_ root: JSON, version: String, file: String) throws(ConfigurationError) -> [Note] {
        let isThreeZero = version.hasPrefix("3.0.")
        guard isThreeZero || version.hasPrefix("3.1.") || version.hasPrefix("3.2.") else {
            throw ConfigurationError(
                file: file, keyPath: "openapi", message: "OpenAPI \(version) is not read; 3.0, 3.1 and 3.2 are")
        }
        guard nesting(of: root, limit: maximumCheckedNesting) <= maximumCheckedNesting else {
            let message = "nested deeper than \(maximumCheckedNesting) levels: mocked without OpenAPIKit's check"
            return [Note(place: "document", message: message)]
        }
        let data = Data(root.serialized())
        let decoder = JSONDecoder()
        do {
            let problems: [String]
            if isThreeZero {
                let document = try decoder.decode(OpenAPIKit30.OpenAPI.Document.self, from: data)
                problems = validationProblems { try document.validate(strict: false) }
            } else {
                let document = try decoder.decode(OpenAPIKit.OpenAPI.Document.self, from: data)
                problems = validationProblems { try document.validate(strict: false) }
            }
            return problems.map { Note(place: "document", message: $0) }
        } catch {
            let readable = OpenAPIKit.OpenAPI.Error(from: error)
            throw ConfigurationError(
                file: file, keyPath: readable.codingPathString.trimmingPrefix("."),
                message: "not a valid OpenAPI document: \(readable.localizedDescription)")
        }
    }

    /// How deep a document OpenAPIKit is given. Decoding costs grow with the cube of the depth (Foundation's
    /// decoder builds each coding path afresh, and OpenAPIKit asks for it at every level): 0.4 s at 40
    /// levels, 4.4 s at 80, over two minutes at 200 (debug build). Real documents nest about 20 deep.
    static let maximumCheckedNesting = 48

    /// How deeply `value` nests, counted up to just past `limit`.
    static func nesting(of value: JSON, limit: Int) -> Int {
        var deepest = 0
        var stack: [(JSON, Int)] = [(value, 1)]
        while let (current, depth) = stack.popLast() {
            deepest = max(deepest, depth)
            if deepest > limit { return deepest }
            switch current {
            case .object(let object): for (_, member) in object { stack.append((member, depth + 1)) }
            case .array(let elements): for element in elements { stack.append((element, depth + 1)) }
            default: continue
            }
        }
        return deepest
    }

    /// What a validation throws, one line per problem.
    static func validationProblems(_ validate: () throws -> Any) -> [String] {
        do {
            _ = try validate()
            return []
        } catch let errors as OpenAPIKit.ValidationErrorCollection {
            return errors.values.map { "not valid OpenAPI (mocked anyway): \($0.reason) at \($0.codingPathString)" }
        } catch let errors as OpenAPIKit30.ValidationErrorCollection {
            return errors.values.map { "not valid OpenAPI (mocked anyway): \($0.reason) at \($0.codingPathString)" }
        } catch {
            return ["not valid OpenAPI (mocked anyway): \(error)"]
        }
    }
}

extension String {
    fileprivate func trimmingPrefix(_ prefix: String) -> String {
        hasPrefix(prefix) ? String(dropFirst(prefix.count)) : self
    }
}
