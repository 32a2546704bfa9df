public import HTTPTypes
import Synchronization

/// Where resources keep their data between launches, so that it shows before the network answers.
///
/// ```swift
/// let cache = try FileEntityCache(directory: cachesDirectory.appendingPathComponent("api"))
/// service.configure { $0.cache = cache }
/// ```
/// The cache holds responses as they came (bytes and header fields); they go through the pipeline again
/// when read, so a changed pipeline never meets stale models. Data read from a cache counts as stale:
/// the next `loadIfNeeded()` revalidates it with the server, usually at the cost of a 304.
/// Implementations must be safe to call from any task.
public protocol EntityCache: Sendable {
    /// The entry for `key` (a resource's canonical URL), if any.
    func readEntity(forKey key: String) async -> CachedEntity?
    /// Saves `entity` under `key`, replacing what was there.
    func writeEntity(_ entity: CachedEntity, forKey key: String) async
    /// Removes the entry for `key`.
    func removeEntity(forKey key: String) async
}

/// A response as a cache keeps it: the body and the header fields, before the pipeline.
///
/// ```swift
/// await cache.writeEntity(CachedEntity(bytes: Array(#"{"name":"Ada"}"#.utf8),
///                                      headerFields: [.contentType: "application/json"]), forKey: url)
/// ```
public struct CachedEntity: Sendable, Hashable {
    /// The body.
    public var bytes: [UInt8]
    /// The response header fields (content type and validators among them).
    public var headerFields: HTTPFields

    /// An entry.
    public init(bytes: [UInt8], headerFields: HTTPFields) {
        self.bytes = bytes
        self.headerFields = headerFields
    }
}

/// A cache in memory: survives resource eviction and service re-creation within one process.
///
/// ```swift
/// let cache = MemoryEntityCache()
/// service.configure { $0.cache = cache }
/// ```
public final class MemoryEntityCache: EntityCache {
    private let entries = Mutex<[String: CachedEntity]>([:])

    /// An empty cache.
    public init() {}

    /// How many entries it holds.
    public var count: Int { entries.withLock { $0.count } }

    public func readEntity(forKey key: String) async -> CachedEntity? { entries.withLock { $0[key] } }

    public func writeEntity(_ entity: CachedEntity, forKey key: String) async {
        entries.withLock { $0[key] = entity }
    }

    public func removeEntity(forKey key: String) async {
        _ = entries.withLock { $0.removeValue(forKey: key) }
    }
}
