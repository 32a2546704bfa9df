public import Foundation
import HammockWire

extension Service {
    /// One `configure` call: which resources, and what to do to their configuration.
    struct ConfigurationRule {
        let description: String
        let matches: @MainActor (URL) -> Bool
        let apply: @MainActor (inout ResourceConfiguration) -> Void
    }

    /// Configures the resources under the base URL whose path (relative to it, without query)
    /// matches `pattern`.
    ///
    /// ```swift
    /// api.configure { $0.headers[.accept] = "application/json" }       // "/**": everything under the base URL
    /// api.configure("/items/*") { $0.expirationTime = .seconds(5) }
    /// ```
    /// Only URLs with the base URL's scheme, host and port, and its path as a prefix, match: headers set
    /// here (a token, an API key) never go to another host, even to a link found in content. Reach
    /// other hosts with ``configure(whenURLMatches:description:_:)``. Rules apply in the order added,
    /// later ones winning. Resources pick up a new rule the next time they read their configuration.
    public func configure(
        _ pattern: String = "/**", description: String? = nil,
        _ configure: @escaping @MainActor (inout ResourceConfiguration) -> Void
    ) {
        let urlPattern = URLPattern(pattern)
        let core = self.core
        addRule(
            ConfigurationRule(
                description: description ?? pattern,
                matches: { [unowned core] url in core.url(url, matches: urlPattern) },
                apply: configure))
    }

    /// Configures the resources whose URL passes `predicate`: the way to configure other hosts.
    public func configure(
        whenURLMatches predicate: @escaping @MainActor (URL) -> Bool, description: String = "custom",
        _ configure: @escaping @MainActor (inout ResourceConfiguration) -> Void
    ) {
        addRule(ConfigurationRule(description: description, matches: predicate, apply: configure))
    }

    private func addRule(_ rule: ConfigurationRule) {
        // A cache named by the rule is known from now on, so sign-out reaches entries of earlier launches.
        var probe = ResourceConfiguration()
        rule.apply(&probe)
        if let cache = probe.cache { core.register(cache) }
        core.configurationRules.append(rule)
        invalidateConfiguration()
    }

    /// Makes every resource compute its configuration again on next use: call it when something the
    /// configuration closures read (a token, a user setting) has changed. Observed resources start or
    /// stop polling at once if their polling interval changed.
    public func invalidateConfiguration() {
        core.configurationGeneration += 1
        for resource in core.liveResources where resource.hasObservers { resource.updatePolling() }
    }

    /// The descriptions of the rules that apply to `url`, in order (for debugging configuration).
    public func configurationDescriptions(for url: URL) -> [String] {
        core.configurationRules.filter { $0.matches(url) }.map(\.description)
    }
}
