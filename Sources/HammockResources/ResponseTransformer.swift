public import Foundation
public import HammockClient
import HammockJSON
public import HammockModel

/// One step of a response pipeline: turns an entity's content into something more useful.
///
/// ```swift
/// // Decodable models straight from the bytes:
/// ResponseTransformer.decoding(User.self)
/// // HammockModel recipes from JSON:
/// ResponseTransformer.recipe(userRecipe, base: User())
/// // Anything else:
/// ResponseTransformer(contentTypes: ["text/csv"]) { entity in
///     var entity = entity
///     entity.content = try CSV(entity.bytes)
///     return entity
/// }
/// ```
/// A transformer applies only to responses whose media type matches one of its `contentTypes`
/// (`*` matches one part: `*/json`, `application/*`, `*/*`); a thrown error becomes the request's
/// ``ResourceError`` with ``ResourceError/Cause/pipeline(_:)``.
public struct ResponseTransformer: Sendable {
    /// Media type patterns this transformer accepts.
    public var contentTypes: [String]
    /// Whether it runs on error bodies too (the JSON parser does, so that errors carry messages).
    public var appliesToErrors: Bool
    let transform: @Sendable (Entity) throws -> Entity

    /// A transformer for responses matching `contentTypes`.
    public init(
        contentTypes: [String] = ["*/*"], appliesToErrors: Bool = false,
        transform: @escaping @Sendable (Entity) throws -> Entity
    ) {
        self.contentTypes = contentTypes
        self.appliesToErrors = appliesToErrors
        self.transform = transform
    }

    /// Whether this transformer accepts `contentType` (already lowercased, without parameters).
    public func accepts(_ contentType: String) -> Bool {
        contentTypes.contains { Self.mediaType(contentType, matches: $0.lowercased()) }
    }

    static func mediaType(_ type: String, matches pattern: String) -> Bool {
        if pattern == "*/*" || pattern == type { return true }
        let typeParts = type.split(separator: "/", maxSplits: 1)
        let patternParts = pattern.split(separator: "/", maxSplits: 1)
        guard typeParts.count == 2, patternParts.count == 2 else { return false }
        func part(_ value: Substring, matches pattern: Substring) -> Bool {
            if pattern == "*" || pattern == value { return true }
            // "*+json" matches structured suffixes such as "problem+json".
            if pattern.hasPrefix("*+") { return value.hasSuffix(pattern.dropFirst()) }
            return false
        }
        return part(typeParts[0], matches: patternParts[0]) && part(typeParts[1], matches: patternParts[1])
    }
}

extension ResponseTransformer {
    /// Text media types become a `String`: UTF-8 (or ASCII), Latin-1, Windows-1252 or UTF-16. A body in a
    /// charset it cannot read, or not valid in the one it names, stays bytes rather than failing the load.
    public static let text = ResponseTransformer(contentTypes: ["text/*"], appliesToErrors: true) { entity in
        var entity = entity
        let bytes = entity.bytes
        switch entity.charset?.lowercased() {
        case "iso-8859-1", "latin1", "l1":
            entity.content = String(decoding: bytes.map { UInt16($0) }, as: UTF16.self)
        case "windows-1252", "cp1252":
            guard let text = String(bytes: bytes, encoding: .windowsCP1252) else { return entity }
            entity.content = text
        case "utf-16", "utf-16be", "utf-16le":
            guard
                let text = String(
                    bytes: bytes,
                    encoding: entity.charset?.lowercased() == "utf-16le"
                        ? .utf16LittleEndian
                        : entity.charset?.lowercased() == "utf-16be" ? .utf16BigEndian : .utf16)
            else { return entity }
            entity.content = text
        case nil, "utf-8", "utf8", "us-ascii", "ascii":
            guard let text = String(validating: bytes, as: UTF8.self) else { return entity }
            entity.content = text
        default:
            return entity
        }
        return entity
    }

    /// JSON media types (`application/json`, `*/*+json`) become `JSON`. An empty body stays bytes.
    public static let json = ResponseTransformer(contentTypes: ["*/json", "*/*+json"], appliesToErrors: true) { entity in
        guard !entity.bytes.isEmpty else { return entity }
        var entity = entity
        do {
            entity.content = try JSON(parsing: entity.bytes)
        } catch {
            throw PipelineError(message: "the response is not valid JSON: \(error)")
        }
        return entity
    }

    /// Decodes the body's bytes as `T` with `decoder` (the client's: ISO 8601 dates).
    public static func decoding<T: Decodable & Sendable>(
        _ type: T.Type, contentTypes: [String] = ["*/json", "*/*+json"],
        decoder: @escaping @Sendable () -> JSONDecoder = RestClient.defaultDecoder
    ) -> ResponseTransformer {
        ResponseTransformer(contentTypes: contentTypes) { entity in
            var entity = entity
            entity.content = try decoder().decode(T.self, from: Data(entity.bytes))
            return entity
        }
    }

    /// Maps JSON content onto a copy of `base` with a HammockModel recipe. An array becomes `[Model]`.
    public static func recipe<Model: Sendable>(_ recipe: Recipe<Model>, base: Model) -> ResponseTransformer {
        ResponseTransformer(contentTypes: ["*/json", "*/*+json"]) { entity in
            guard let json = entity.content as? JSON else {
                throw PipelineError(message: "a recipe needs JSON content, not \(type(of: entity.content))")
            }
            var entity = entity
            if case .array(let items) = json {
                var models: [Model] = []
                models.reserveCapacity(items.count)
                for item in items { models.append(try Oven.baked(base, from: item, recipe: recipe)) }
                entity.content = models
            } else {
                entity.content = try Oven.baked(base, from: json, recipe: recipe)
            }
            return entity
        }
    }

    /// Transforms content of type `Input` into `Output`; content of another type is left alone.
    public static func content<Input, Output: Sendable>(
        _ input: Input.Type, contentTypes: [String] = ["*/*"],
        _ transform: @escaping @Sendable (Input) throws -> Output
    ) -> ResponseTransformer {
        ResponseTransformer(contentTypes: contentTypes) { entity in
            guard let value = entity.content as? Input else { return entity }
            var entity = entity
            entity.content = try transform(value)
            return entity
        }
    }

}

/// A pipeline step that refused a body. Throw it from your own transformers:
///
/// ```swift
/// guard entity.bytes.count < 1_000_000 else { throw PipelineError(message: "the feed is too large") }
/// ```
public struct PipelineError: Error, Sendable, CustomStringConvertible {
    /// What was wrong.
    public var message: String
    /// An error saying `message`.
    public init(message: String) { self.message = message }
    public var description: String { message }
}
