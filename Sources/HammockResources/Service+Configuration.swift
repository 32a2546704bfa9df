public import Foundation
import HammockWire

extension Service {
    /// One `configure` call: which resources, and what to do to their configuration.
    struct ConfigurationRule {
        let description: String
        let matches: @MainActor (URL) -> Bool
        let apply: @MainActor (inout ResourceConfiguration) -> Void
    }

    /// Configures the resources whose path (relative to the base URL, without query) matches `pattern`.
    ///
    /// ```swift
    /// api.configure { $0.headers[.accept] = "application/json" }       // "/**": everything
    /// api.configure("/items/*") { $0.expirationTime = .seconds(5) }
    /// ```
    /// Rules apply in the order added, later ones winning. Resources pick up a new rule the next time
    /// they read their configuration.
    public func configure(
        _ pattern: String = "/**", description: String? = nil,
        _ configure: @escaping @MainActor (inout ResourceConfiguration) -> Void
    ) {
        let urlPattern = URLPattern(pattern)
        let baseURL = self.baseURL
        configurationRules.append(ConfigurationRule(
            description: description ?? pattern,
            matches: { url in urlPattern.matches(ResourceURL.relativePath(of: url, base: baseURL)) },
            apply: configure))
        invalidateConfiguration()
    }

    /// Configures the resources whose URL passes `predicate`.
    public func configure(
        whenURLMatches predicate: @escaping @MainActor (URL) -> Bool, description: String = "custom",
        _ configure: @escaping @MainActor (inout ResourceConfiguration) -> Void
    ) {
        configurationRules.append(ConfigurationRule(description: description, matches: predicate, apply: configure))
        invalidateConfiguration()
    }

    /// Makes every resource compute its configuration again on next use: call it when something the
    /// configuration closures read (a token, a user setting) has changed.
    public func invalidateConfiguration() {
        configurationGeneration += 1
    }

    /// The descriptions of the rules that apply to `url`, in order (for debugging configuration).
    public func configurationDescriptions(for url: URL) -> [String] {
        configurationRules.filter { $0.matches(url) }.map(\.description)
    }

    func computeConfiguration(for url: URL) -> ResourceConfiguration {
        var configuration = ResourceConfiguration()
        for rule in configurationRules where rule.matches(url) { rule.apply(&configuration) }
        return configuration
    }
}
