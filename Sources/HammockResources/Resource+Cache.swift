import Foundation
import HTTPTypes

extension Resource {
    /// Reads the persistent cache (if the configuration names one) and shows its data, unless data
    /// from elsewhere arrived first, or the entry was stored for other request headers than this
    /// resource sends now (`Vary`). Cached data counts as stale.
    func readCacheIfConfigured() {
        let configuration = self.configuration
        guard let cache = configuration.cache else { return }
        let key = url.absoluteString
        let version = ledger.cacheReadStarted()
        let pipeline = configuration.pipeline
        let requestHeaders = configuration.headers
        core.cacheOperations.enqueue { [weak self] in
            guard let cached = await cache.readEntity(forKey: key), cached.matches(requestHeaders) else { return }
            guard let entity = await Self.process(cached, pipeline: pipeline) else { return }
            await self?.showCached(entity, askedAt: version)
        }
    }

    private func showCached(_ entity: Entity, askedAt version: Int) {
        guard latestData == nil, ledger.cacheReadAnswered(askedAt: version) else { return }
        var fresh = entity
        fresh.timestamp = core.now
        serverEntity = fresh
        latestData = fresh
        dataVersion += 1
        dataLifetime = fresh.freshnessLifetime
        isInvalidated = true
        notifyObservers(.newData(.cache))
    }

    /// Runs a cached response through the pipeline, off the main actor.
    nonisolated static func process(_ cached: CachedEntity, pipeline: ResponsePipeline) async -> Entity? {
        let raw = RequestPlan.entity(bytes: cached.bytes, headerFields: cached.headerFields)
        return try? pipeline.process(raw)
    }

    /// Saves a response to the cache, after every cache operation scheduled before. A response marked
    /// `Cache-Control: no-store` is never saved, and removes what was saved before; cookies and
    /// hop-by-hop header fields are never saved. The request fields `Vary` names are taken from `sent`,
    /// the request as it went out (interceptors included), and saved as digests.
    func writeToCache(_ entity: Entity, sent: HTTPFields, configuration: ResourceConfiguration) {
        guard let cache = configuration.cache else { return }
        let key = url.absoluteString
        if entity.isNoStore {
            core.cacheOperations.enqueue { await cache.removeEntity(forKey: key) }
            return
        }
        var fields = HTTPFields()
        for field in entity.headerFields where !Self.unsavedFields.contains(field.name) { fields.append(field) }
        let varying = CachedEntity.requestFields(varyingOn: entity.headerFields, in: sent)
        let cached = CachedEntity(bytes: entity.bytes, headerFields: fields, requestHeaderFields: varying)
        core.cacheOperations.enqueue { await cache.writeEntity(cached, forKey: key) }
    }

    /// Removes this resource's cached copy, after every cache operation scheduled before.
    func removeFromCache() {
        guard let cache = configuration.cache else { return }
        let key = url.absoluteString
        core.cacheOperations.enqueue { await cache.removeEntity(forKey: key) }
    }

    /// Response header fields a cache never keeps: credentials, and fields about one connection.
    static let unsavedFields: Set<HTTPField.Name> = Set(
        [.setCookie, .connection, .proxyAuthenticate, .proxyAuthorization, .te, .trailer, .transferEncoding, .upgrade]
            + ["Set-Cookie2", "Keep-Alive"].compactMap { HTTPField.Name($0) })
}
