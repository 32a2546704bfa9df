import Foundation

extension Resource {
    /// Reads the persistent cache (if the configuration names one) and shows its data, unless data
    /// from elsewhere arrived first. Cached data counts as stale.
    func readCacheIfConfigured() {
        let configuration = self.configuration
        guard let cache = configuration.cache else { return }
        let key = url.absoluteString
        let generation = dataGeneration
        let pipeline = configuration.pipeline
        Task {
            guard let cached = await cache.readEntity(forKey: key) else { return }
            guard let entity = await Self.process(cached, pipeline: pipeline) else { return }
            guard self.dataGeneration == generation, self.latestData == nil else { return }
            var fresh = entity
            fresh.timestamp = self.service.now
            self.latestData = fresh
            self.isInvalidated = true
            self.notifyObservers(.newData(.cache))
        }
    }

    /// Runs a cached response through the pipeline, off the main actor.
    nonisolated static func process(_ cached: CachedEntity, pipeline: ResponsePipeline) async -> Entity? {
        let raw = RequestPlan.entity(bytes: cached.bytes, headerFields: cached.headerFields)
        return try? pipeline.process(raw)
    }

    func writeToCache(_ entity: Entity, configuration: ResourceConfiguration) {
        guard let cache = configuration.cache else { return }
        let cached = CachedEntity(bytes: entity.bytes, headerFields: entity.headerFields)
        let key = url.absoluteString
        Task { await cache.writeEntity(cached, forKey: key) }
    }
}
