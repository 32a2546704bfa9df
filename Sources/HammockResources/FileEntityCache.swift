public import Foundation
import HTTPTypes
import HammockClient
import HammockJSON
import Synchronization

/// A cache on disk: one JSON file per resource in a directory, written atomically.
///
/// ```swift
/// let cache = try FileEntityCache(directory: URL(fileURLWithPath: "/var/cache/myapp/api"),
///                                 maximumEntries: 500, maximumBytes: 64 << 20)
/// service.configure { $0.cache = cache }
/// ```
/// The directory is readable by its owner only (0700) and so is each file (0600): cached responses are
/// the user's data. Past either limit, the least recently used entries go. File names are hashes of the
/// resource URLs; each file also records its URL, so a hash collision reads as a miss rather than
/// someone else's data. Unreadable or corrupt files read as misses too. File access runs on a dispatch
/// queue of its own, never on the concurrency pool's threads.
public final class FileEntityCache: EntityCache {
    /// The directory holding the entries.
    public let directory: URL
    /// The most entries kept.
    public let maximumEntries: Int
    /// The most bytes of files kept.
    public let maximumBytes: Int
    private let queue = DispatchQueue(label: "hammock.file-entity-cache")
    /// File sizes and last uses, read from the directory on first use (touched only on `queue`).
    private let index = Mutex<[String: (bytes: Int, lastUse: Double)]?>(nil)

    /// A cache in `directory`, created if missing, holding at most `maximumEntries` entries and
    /// `maximumBytes` bytes of files.
    public init(directory: URL, maximumEntries: Int = 1_000, maximumBytes: Int = 64 << 20) throws {
        self.directory = directory
        self.maximumEntries = max(1, maximumEntries)
        self.maximumBytes = max(0, maximumBytes)
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
    }

    public func readEntity(forKey key: String) async -> CachedEntity? {
        let file = fileURL(forKey: key)
        return await onQueue { [self] in
            guard let data = try? Data(contentsOf: file) else { return nil }
            touch(file.lastPathComponent, bytes: data.count)
            return Self.decode(Array(data), key: key)
        }
    }

    public func writeEntity(_ entity: CachedEntity, forKey key: String) async {
        let file = fileURL(forKey: key)
        let bytes = Self.encode(entity, key: key)
        await onQueue { [self] in
            guard bytes.count <= maximumBytes else {
                remove(file)
                return
            }
            // Written to a private temporary file of our own name, then renamed: atomic, and never
            // readable by others. Not `FileManager.createFile`, whose own `.dat.nosync…` temporary file a
            // killed process left behind whole, where no wipe looked.
            let temporary = directory.appendingPathComponent(".\(UUID().uuidString).tmp")
            guard PrivateFile.write(bytes, to: temporary.path), rename(temporary.path, file.path) == 0 else {
                try? FileManager.default.removeItem(at: temporary)
                return
            }
            touch(file.lastPathComponent, bytes: bytes.count)
            evict()
        }
    }

    public func removeEntity(forKey key: String) async {
        let file = fileURL(forKey: key)
        await onQueue { [self] in remove(file) }
    }

    public func removeEntities(where predicate: @Sendable (String) -> Bool) async {
        // The queue reads the keys and removes the files; the predicate runs here, within this call.
        // Handing a non-escaping predicate to the queue (through `withoutActuallyEscaping`) trapped:
        // the dispatch block could still hold it after the continuation resumed, in 5 sign-outs of 6 on
        // a busy machine.
        let entries = await onQueue { [self] in
            sweepTemporaryFiles()
            return entryFiles().map { file in
                // Files that cannot be read back are no use to anyone: they go too (key `nil`).
                (file: file, key: (try? Data(contentsOf: file)).flatMap { Self.key(in: Array($0)) })
            }
        }
        let doomed = entries.filter { entry in entry.key.map(predicate) ?? true }.map(\.file)
        guard !doomed.isEmpty else { return }
        await onQueue { [self] in
            for file in doomed { remove(file) }
        }
    }

    /// Removes every entry.
    public func removeAll() async {
        await removeEntities { _ in true }
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

    /// The entries in the directory: files named as this cache names them (16 hex digits, `.json`).
    /// Anything else in the directory is not ours, and no wipe or eviction touches it.
    private func entryFiles() -> [URL] {
        directoryFiles().filter { Self.isEntryName($0.lastPathComponent) }
    }

    private func directoryFiles() -> [URL] {
        (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
    }

    static func isEntryName(_ name: String) -> Bool {
        let utf8 = name.utf8
        guard utf8.count == 21, name.hasSuffix(".json") else { return false }
        return utf8.prefix(16).allSatisfy {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
        }
    }

    /// A write's temporary file: `.` + a UUID + `.tmp`.
    static func isOwnTemporaryName(_ name: String) -> Bool {
        name.utf8.count == 41 && name.hasPrefix(".") && name.hasSuffix(".tmp")
            && UUID(uuidString: String(name.dropFirst().dropLast(4))) != nil
    }

    /// Removes the temporary files of writes that never finished (the process ended between writing
    /// and renaming): ours (`.UUID.tmp`), and those Foundation writes for an atomic write
    /// (`.dat.nosync…`, `….tmp` names an earlier version of this cache left through
    /// `FileManager.createFile`). On first use and on every wipe (on `queue`, where no write of ours is
    /// under way).
    private func sweepTemporaryFiles() {
        for file in directoryFiles() where Self.isTemporaryName(file.lastPathComponent) {
            try? FileManager.default.removeItem(at: file)
        }
    }

    /// A temporary file of an interrupted write: ours, or Foundation's own for an atomic write.
    static func isTemporaryName(_ name: String) -> Bool {
        isOwnTemporaryName(name) || name.hasPrefix(".dat.nosync")
    }

    private func remove(_ file: URL) {
        try? FileManager.default.removeItem(at: file)
        _ = index.withLock { $0?.removeValue(forKey: file.lastPathComponent) }
    }

    /// Notes a use of `name` (on `queue`), reading the directory into the index the first time.
    private func touch(_ name: String, bytes: Int) {
        loadIndexIfNeeded()
        index.withLock { $0?[name] = (bytes, Date().timeIntervalSince1970) }
    }

    private func loadIndexIfNeeded() {
        guard index.withLock({ $0 == nil }) else { return }
        sweepTemporaryFiles()
        var entries: [String: (bytes: Int, lastUse: Double)] = [:]
        for file in entryFiles() {
            let attributes = try? FileManager.default.attributesOfItem(atPath: file.path)
            let size = (attributes?[.size] as? NSNumber)?.intValue ?? 0
            let modified = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            entries[file.lastPathComponent] = (size, modified)
        }
        index.withLock { $0 = entries }
    }

    /// Removes the least recently used entries until both limits hold (on `queue`).
    private func evict() {
        let victims = index.withLock { index -> [String] in
            guard var entries = index else { return [] }
            var total = entries.values.reduce(0) { $0 + $1.bytes }
            var victims: [String] = []
            while entries.count > maximumEntries || total > maximumBytes,
                let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse })
            {
                entries.removeValue(forKey: oldest.key)
                total -= oldest.value.bytes
                victims.append(oldest.key)
            }
            index = entries
            return victims
        }
        for name in victims { try? FileManager.default.removeItem(at: directory.appendingPathComponent(name)) }
    }

    private func onQueue<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: work()) }
        }
    }

    static func encode(_ entity: CachedEntity, key: String) -> [UInt8] {
        func list(_ fields: HTTPFields) -> JSON { .array(fields.map { .array([.string($0.name.rawName), .string($0.value)]) }) }
        let json: JSON = [
            "url": .string(key),
            "headers": list(entity.headerFields),
            "requestHeaders": list(entity.requestHeaderFields),
            "body": .string(Data(entity.bytes).base64EncodedString()),
        ]
        return json.serialized()
    }

    static func key(in bytes: [UInt8]) -> String? {
        guard case .object(let object)? = try? JSON(parsing: bytes), case .string(let url)? = object["url"] else { return nil }
        return url
    }

    static func decode(_ bytes: [UInt8], key: String) -> CachedEntity? {
        guard case .object(let object)? = try? JSON(parsing: bytes),
            case .string(let url)? = object["url"], url == key,
            case .string(let body)? = object["body"], let data = Data(base64Encoded: body),
            let fields = headerFields(from: object["headers"]),
            let requestFields = object["requestHeaders"] == nil ? HTTPFields() : headerFields(from: object["requestHeaders"])
        else { return nil }
        return CachedEntity(bytes: Array(data), headerFields: fields, requestHeaderFields: requestFields)
    }

    static func headerFields(from value: JSON?) -> HTTPFields? {
        guard case .array(let list)? = value else { return nil }
        var fields = HTTPFields()
        for pair in list {
            guard case .array(let parts) = pair, parts.count == 2, case .string(let name) = parts[0],
                case .string(let value) = parts[1], let fieldName = HTTPField.Name(name)
            else { return nil }
            fields.append(HTTPField(name: fieldName, value: value))
        }
        return fields
    }
}
