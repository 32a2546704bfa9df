import HammockJSON
import HammockSchema
import HammockStore

/// Makes the string keys of a resource with a ``MockResource/KeyFormat``: for a create that leaves
/// its key out, for loaded records without one, and for generated records.
struct KeyMaker: Sendable {
    enum Format: Sendable {
        case uuid
        case pattern(TextPattern)
    }

    let format: Format

    /// How many keys a make tries before it gives up on one a URL can reach: a pattern that makes an
    /// empty key one time in seventeen (`[a-z]*`) still gives a usable one.
    static let attempts = 16

    /// The maker of `resource`'s keys, or `nil` when it has no key format.
    /// - Throws: ``SchemaError`` for a pattern that cannot be read, or that makes no key a URL can reach.
    init?(_ resource: MockResource) throws(SchemaError) {
        guard let format = resource.keyFormat else { return nil }
        try self.init(format, resource: resource.name, what: "its key", forKeys: true)
    }

    /// The maker of strings of `format`, for `resource`'s key or one of its made fields (`what`, for
    /// errors); one `forKeys` must make strings a URL can reach.
    init(_ format: MockResource.KeyFormat, resource: String, what: String, forKeys: Bool) throws(SchemaError) {
        switch format {
        case .uuid:
            self.format = .uuid
        case .pattern(let source):
            do {
                self.format = .pattern(try TextPattern(source))
            } catch {
                throw SchemaError(resource: resource, message: "\(what) format: \(error)")
            }
            // `^$`, `\.{1,2}` or `[a-z]{3000}`: every create would fail on the key the server made.
            guard forKeys else { return }
            var random = SeededRandom(seed: 0x4B45_59)
            guard (0..<64).contains(where: { _ in ResourceSchema.unreachableKeyProblem(makeOnce(using: &random)) == nil })
            else {
                throw SchemaError(
                    resource: resource,
                    message: "\(what) pattern '\(source.prefix(200))' makes no key a URL can reach (empty, '.', '..' or too long)"
                )
            }
        }
    }

    /// A key a URL can reach (almost always the first one made).
    func make<R: RandomNumberGenerator>(using random: inout R) -> String {
        var key = makeOnce(using: &random)
        for _ in 1..<Self.attempts where ResourceSchema.unreachableKeyProblem(key) != nil {
            key = makeOnce(using: &random)
        }
        return key
    }

    func makeOnce<R: RandomNumberGenerator>(using random: inout R) -> String {
        switch format {
        case .uuid: Self.uuid(using: &random)
        case .pattern(let pattern): pattern.make(using: &random)
        }
    }

    /// A version 4 UUID in lowercase.
    static func uuid<R: RandomNumberGenerator>(using random: inout R) -> String {
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }
        return [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]].map { $0.joined() }.joined(separator: "-")
    }
}

extension MockResource.KeyFormat {
    /// The format as a configuration file writes it: `"uuid"` or `{"pattern": "^ord_[0-9a-f]{8}$"}`.
    package var configurationValue: JSON {
        switch self {
        case .uuid: "uuid"
        case .pattern(let pattern): ["pattern": .string(pattern)]
        }
    }

    /// The format a configuration file's value names, or `nil` for a value that names none.
    package init?(configurationValue value: JSON) {
        switch value {
        case .string("uuid"): self = .uuid
        case .object(let object) where object.count == 1:
            guard case .string(let pattern)? = object["pattern"] else { return nil }
            self = .pattern(pattern)
        default: return nil
        }
    }
}

extension MockResource {
    /// Checks that the server can make keys in this resource's key format (a pattern it can read, that
    /// makes keys a URL can reach): what adding the resource checks, for an importer that chooses a
    /// format before the resource exists.
    package func checkKeyFormat() throws(SchemaError) { _ = try KeyMaker(self) }
}
