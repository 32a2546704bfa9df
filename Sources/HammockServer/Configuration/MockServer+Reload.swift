import HammockJSON
import HammockStore
import Synchronization

/// What a server runs from its configuration: the file's contents, the routes it added.
struct LoadedConfiguration: Sendable {
    var configuration: ServerConfiguration?
    var routeIDs: [Int] = []
    var latency: Latency?
    /// The faults the configuration (and the command line) put in force, which ``MockServer/reset()``
    /// returns to.
    var faults: [Fault] = []
}

/// What ``MockServer/reload(_:)`` changed.
public struct ReloadReport: Sendable, Hashable, CustomStringConvertible {
    /// Resources served from now on.
    public var added: [String] = []
    /// Resources rebuilt from a changed definition (their records kept, reshaped).
    public var changed: [String] = []
    /// Resources no longer served (their records dropped).
    public var removed: [String] = []
    /// How many routes of the file now answer (all of the file's routes are replaced).
    public var routes = 0
    /// Whether the latency changed.
    public var latencyChanged = false
    /// Whether the faults changed.
    public var faultsChanged = false
    /// Settings that changed in the file but take a restart (`port`, `store`, `basePath`, …).
    public var needsRestart: [String] = []

    /// Whether anything in force changed.
    public var changedAnything: Bool {
        !added.isEmpty || !changed.isEmpty || !removed.isEmpty || latencyChanged || faultsChanged
    }

    /// `added cars; changed people; removed pets; 2 routes` and what needs a restart.
    public var description: String {
        var parts: [String] = []
        if !added.isEmpty { parts.append("added \(added.joined(separator: ", "))") }
        if !changed.isEmpty { parts.append("changed \(changed.joined(separator: ", "))") }
        if !removed.isEmpty { parts.append("removed \(removed.joined(separator: ", "))") }
        if latencyChanged { parts.append("latency changed") }
        if faultsChanged { parts.append("faults changed") }
        parts.append("\(routes) route\(routes == 1 ? "" : "s") of the file")
        var text = parts.joined(separator: "; ")
        if !needsRestart.isEmpty { text += " (restart to change \(needsRestart.joined(separator: ", ")))" }
        return text
    }
}

extension MockServer {
    /// Stops serving the resource `name` and drops its records; its children stay, their foreign keys to
    /// it set to `null`, with no nested route under it.
    /// - Throws: 404 ``HTTPProblem`` for an unknown name; the store's error.
    public func removeResource(named name: String) async throws { try await resources.remove(name) }

    /// Puts a changed configuration in force while the server runs: resources added, rebuilt (records
    /// kept, reshaped to the new fields) or removed; the file's routes replaced (routes added over the
    /// admin API or in Swift stay); the latency. The data of unchanged resources is untouched, and an
    /// added resource gets its `data` section. Settings that need a restart (`host`, `port`, `store`,
    /// `basePath`, …) are reported, not applied.
    ///
    /// ```swift
    /// let report = try await server.reload(try ServerConfiguration(contentsOfFile: "mock.json"))
    /// print(report)   // added cars; changed people; 3 routes of the file
    /// ```
    /// - Throws: `SchemaError` or the store's error; the server is then as far as the reload got.
    @discardableResult
    public func reload(_ configuration: ServerConfiguration) async throws -> ReloadReport {
        var report = ReloadReport()
        let previous = loaded.withLock { $0 }
        // The new definitions, resolved among themselves as a fresh server would.
        var catalog = SchemaCatalog()
        for resource in configuration.resources { catalog.insert(try catalog.resolve(resource)) }
        let wanted = Set(configuration.resources.map(\.name))
        for schema in schemas.reversed() where !wanted.contains(schema.name) {
            try await removeResource(named: schema.name)
            report.removed.append(schema.name)
        }
        report.removed.reverse()
        for resource in configuration.resources {
            guard let current = schema(named: resource.name) else {
                try await addResource(resource)
                report.added.append(resource.name)
                if let records = configuration.data.first(where: { $0.resource == resource.name })?.records {
                    try await addData(records, for: resource.name)
                }
                continue
            }
            if catalog.schemas[resource.name] != current {
                _ = try await resources.replace(resource)
                report.changed.append(resource.name)
            }
        }
        // A reset returns an added resource to the data the file gave it, not to nothing.
        let added = report.added.compactMap { schema(named: $0) }
        if !added.isEmpty { baseline.merge(try await store.snapshot(of: added)) }
        // The file's routes, faults and latency change in one step: a request sees the old three or the
        // new three, never the old routes gone and the new ones not yet there.
        let replaced = Set(previous.routeIDs)
        let fileRoutes = configuration.routes.map { (id: customRoutes.nextID(), entry: CustomRoutes.Entry.stub($0)) }
        let ids = fileRoutes.map(\.id)
        report.routes = ids.count
        report.latencyChanged = configuration.latency != previous.latency
        report.faultsChanged = configuration.faults != previous.faults
        // The login's keys are made before the step (a new key takes a moment); the same settings keep the
        // authority in force, and so every token it handed out.
        var authority = runtimeCell.runtime.settings.authority
        if authority?.settings != configuration.auth {
            authority = nil
            if let auth = configuration.auth {
                authority = try await MockAuthority.make(auth, signer: try requireSigner(), now: tokenClock)
            }
        }
        runtimeCell.change { [report, authority] settings in
            settings.routes.removeAll { replaced.contains($0.id) }
            settings.routes = CustomRoutes.ordered(settings.routes + fileRoutes)
            if report.latencyChanged { settings.latency = configuration.latency }
            if report.faultsChanged { settings.faults = Interventions.named(configuration.faults) }
            settings.requestChecks = configuration.requestChecks
            settings.webhooks = configuration.webhooks
            settings.authority = authority
        }
        if let old = previous.configuration { report.needsRestart = Self.restartSettings(from: old, to: configuration) }
        loaded.withLock {
            $0 = LoadedConfiguration(
                configuration: configuration, routeIDs: ids, latency: configuration.latency, faults: configuration.faults)
        }
        return report
    }

    /// The settings that differ between two configurations and only take effect at start.
    static func restartSettings(from old: ServerConfiguration, to new: ServerConfiguration) -> [String] {
        var names: [String] = []
        if old.host != new.host { names.append("host") }
        if old.port != new.port { names.append("port") }
        if old.store != new.store { names.append("store") }
        if old.basePath != new.basePath { names.append("basePath") }
        if old.adminPath != new.adminPath { names.append("adminPath") }
        if old.maximumBodySize != new.maximumBodySize { names.append("maximumBodySize") }
        if old.allowsCrossOrigin != new.allowsCrossOrigin { names.append("cors") }
        if old.idleTimeout != new.idleTimeout { names.append("idleTimeout") }
        if old.requestTimeout != new.requestTimeout { names.append("requestTimeout") }
        if old.journalSize != new.journalSize { names.append("journalSize") }
        if old.strict != new.strict { names.append("strict") }
        if old.allowedHosts != new.allowedHosts { names.append("allowedHosts") }
        if old.redactedHeaders != new.redactedHeaders { names.append("redactHeaders") }
        return names
    }
}
