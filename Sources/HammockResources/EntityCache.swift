import Foundation
public import HTTPTypes
import Synchronization

/// Where resources keep their data between launches, so that it shows before the network answers.
///
/// ```swift
/// let cache = try FileEntityCache(directory: cachesDirectory.appendingPathComponent("api"))
/// service.configure { $0.cache = cache }
/// ```
/// The cache holds responses as they came (bytes and header fields, less cookies and hop-by-hop
/// fields); they go through the pipeline again when read, so a changed pipeline never meets stale
/// models. Data read from a cache counts as stale: the next `loadIfNeeded()` revalidates it with the
/// server, usually at the cost of a 304. Responses marked `Cache-Control: no-store` are never written.
/// Implementations must be safe to call from any task; the service calls them one at a time, in order.
public protocol EntityCache: Sendable {
    /// The entry for `key` (a resource's canonical URL), if any.
    func readEntity(forKey key: String) async -> CachedEntity?
    /// Saves `entity` under `key`, replacing what was there.
    func writeEntity(_ entity: CachedEntity, forKey key: String) async
    /// Removes the entry for `key`.
    func removeEntity(forKey key: String) async
    /// Removes every entry whose key passes `predicate` (every entry for sign-out): entries written by
    /// earlier launches included.
    func removeEntities(where predicate: @Sendable (String) -> Bool) async
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
    /// The request header fields the response's `Vary` names, each value a digest of what was sent
    /// (`sha256:` and 64 hexadecimal digits), never the value itself: with `Vary: Authorization`, a
    /// cache file must not hold the token. An entry serves only requests whose configured fields have
    /// the same digests (another `Accept-Language`, another `Authorization`, is a miss), and none while
    /// it records a field the configuration does not set (an interceptor's token, which a read cannot
    /// check).
    public var requestHeaderFields: HTTPFields

    /// An entry.
    public init(bytes: [UInt8], headerFields: HTTPFields, requestHeaderFields: HTTPFields = [:]) {
        self.bytes = bytes
        self.headerFields = headerFields
        self.requestHeaderFields = requestHeaderFields
    }

    /// The names `Vary` lists; `["*"]` for `Vary: *`.
    var varyingNames: [String] {
        guard let vary = headerFields[.vary] else { return [] }
        return vary.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Whether a request with `fields` may be answered from this entry.
    func matches(_ fields: HTTPFields) -> Bool {
        for name in varyingNames {
            // `Vary: *` matches no request (RFC 9111 §4.1); `*` is a valid field name, so it is named here.
            guard name != "*", let fieldName = HTTPField.Name(name) else { return false }  // nonsense matches nothing
            if fields[fieldName].map(Self.digest) != requestHeaderFields[fieldName] { return false }
        }
        return true
    }

    /// What a cache stores for a request header value.
    static func digest(_ value: String) -> String { "sha256:" + SHA256.hex(Array(value.utf8)) }

    /// The fields of `request` named by the response's `Vary`, as digests.
    static func requestFields(varyingOn response: HTTPFields, in request: HTTPFields) -> HTTPFields {
        var varying = HTTPFields()
        for name in CachedEntity(bytes: [], headerFields: response).varyingNames {
            guard let fieldName = HTTPField.Name(name), let value = request[fieldName] else { continue }
            varying[fieldName] = digest(value)
        }
        return varying
    }
}

/// A cache in memory: survives resource eviction and service re-creation within one process.
///
/// ```swift
/// let cache = MemoryEntityCache(maximumEntries: 200, maximumBytes: 8 << 20)
/// service.configure { $0.cache = cache }
/// ```
/// Past either limit, the least recently used entries go.
public final class MemoryEntityCache: EntityCache {
    private struct State {
        var entries: [String: (entity: CachedEntity, lastUse: Int)] = [:]
        var clock = 0
        var bytes = 0
    }

    private let state = Mutex(State())
    /// The most entries kept.
    public let maximumEntries: Int
    /// The most body bytes kept.
    public let maximumBytes: Int

    /// An empty cache holding at most `maximumEntries` entries and `maximumBytes` body bytes.
    public init(maximumEntries: Int = 1_000, maximumBytes: Int = 32 << 20) {
        self.maximumEntries = max(1, maximumEntries)
        self.maximumBytes = max(0, maximumBytes)
    }

    /// How many entries it holds.
    public var count: Int { state.withLock { $0.entries.count } }

    /// How many body bytes it holds.
    public var byteCount: Int { state.withLock { $0.bytes } }

    public func readEntity(forKey key: String) async -> CachedEntity? {
        state.withLock { state in
            guard let entry = state.entries[key] else { return nil }
            state.clock += 1
            state.entries[key]?.lastUse = state.clock
            return entry.entity
        }
    }

    public func writeEntity(_ entity: CachedEntity, forKey key: String) async {
        let maximumEntries = self.maximumEntries
        let maximumBytes = self.maximumBytes
        state.withLock { state in
            state.clock += 1
            state.bytes -= state.entries[key]?.entity.bytes.count ?? 0
            guard entity.bytes.count <= maximumBytes else {
                state.entries.removeValue(forKey: key)
                return
            }
            state.entries[key] = (entity, state.clock)
            state.bytes += entity.bytes.count
            while state.entries.count > maximumEntries || state.bytes > maximumBytes,
                let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })
            {
                state.bytes -= oldest.value.entity.bytes.count
                state.entries.removeValue(forKey: oldest.key)
            }
        }
    }

    public func removeEntity(forKey key: String) async {
        state.withLock { state in
            if let removed = state.entries.removeValue(forKey: key) { state.bytes -= removed.entity.bytes.count }
        }
    }

    public func removeEntities(where predicate: @Sendable (String) -> Bool) async {
        state.withLock { state in
            for key in state.entries.keys where predicate(key) {
                if let removed = state.entries.removeValue(forKey: key) { state.bytes -= removed.entity.bytes.count }
            }
        }
    }
}
