public import Foundation
import HammockJSON
import HTTPTypes

/// A cache on disk: one JSON file per resource in a directory, written atomically.
///
/// ```swift
/// let cache = try FileEntityCache(directory: URL(fileURLWithPath: "/var/cache/myapp/api"))
/// service.configure { $0.cache = cache }
/// ```
/// File names are hashes of the resource URLs; each file also records its URL, so a hash collision
/// reads as a miss rather than someone else's data. Unreadable or corrupt files read as misses too.
/// File access runs on a dispatch queue of its own, never on the concurrency pool's threads.
public final class FileEntityCache: EntityCache {
    /// The directory holding the entries.
    public let directory: URL
    private let queue = DispatchQueue(label: "hammock.file-entity-cache")

    /// A cache in `directory`, created if missing.
    public init(directory: URL) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    public func readEntity(forKey key: String) async -> CachedEntity? {
        let file = fileURL(forKey: key)
        return await onQueue {
            guard let data = try? Data(contentsOf: file) else { return nil }
            return Self.decode(Array(data), key: key)
        }
    }

    public func writeEntity(_ entity: CachedEntity, forKey key: String) async {
        let file = fileURL(forKey: key)
        let bytes = Self.encode(entity, key: key)
        await onQueue { try? Data(bytes).write(to: file, options: .atomic) }
    }

    public func removeEntity(forKey key: String) async {
        let file = fileURL(forKey: key)
        await onQueue { try? FileManager.default.removeItem(at: file) }
    }

    /// Removes every entry.
    public func removeAll() async {
        let directory = self.directory
        await onQueue {
            let files = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
            for file in files where file.pathExtension == "json" { try? FileManager.default.removeItem(at: file) }
        }
    }

    func fileURL(forKey key: String) -> URL {
        // FNV-1a, 64 bits: stable across runs and platforms, unlike `Hasher`.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let name = String(hash, radix: 16)
        return directory.appendingPathComponent(String(repeating: "0", count: 16 - name.count) + name + ".json")
    }

    private func onQueue<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: work()) }
        }
    }

    static func encode(_ entity: CachedEntity, key: String) -> [UInt8] {
        let headers = JSON.array(entity.headerFields.map { .array([.string($0.name.rawName), .string($0.value)]) })
        let json: JSON = [
            "url": .string(key),
            "headers": headers,
            "body": .string(Data(entity.bytes).base64EncodedString()),
        ]
        return json.serialized()
    }

    static func decode(_ bytes: [UInt8], key: String) -> CachedEntity? {
        guard case .object(let object)? = try? JSON(parsing: bytes),
            case .string(let url)? = object["url"], url == key,
            case .string(let body)? = object["body"], let data = Data(base64Encoded: body),
            case .array(let headerList)? = object["headers"]
        else { return nil }
        var fields = HTTPFields()
        for pair in headerList {
            guard case .array(let parts) = pair, parts.count == 2, case .string(let name) = parts[0],
                case .string(let value) = parts[1], let fieldName = HTTPField.Name(name)
            else { return nil }
            fields.append(HTTPField(name: fieldName, value: value))
        }
        return CachedEntity(bytes: Array(data), headerFields: fields)
    }
}
