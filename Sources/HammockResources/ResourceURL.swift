import Foundation
import HammockClient
import HammockWire

/// Building and canonicalizing resource URLs: one spelling per resource, so one instance per resource.
enum ResourceURL {
    /// `url` with its query items sorted by name (values of one name keep their order) and an empty
    /// query or fragment removed.
    static func canonical(_ url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return url }
        components.fragment = nil
        if let items = components.percentEncodedQueryItems {
            let sorted = items.enumerated().sorted { lhs, rhs in
                lhs.element.name != rhs.element.name ? lhs.element.name < rhs.element.name : lhs.offset < rhs.offset
            }.map(\.element)
            components.percentEncodedQueryItems = sorted.isEmpty ? nil : sorted
        }
        return components.url ?? url
    }

    /// A URL no transport is asked to fetch, for text that is not a URL. Loading it fails with
    /// ``ResourceError/Cause/invalidURL(_:)``.
    static func invalid(_ text: String) -> URL {
        let encoded = text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        return URL(string: "invalid:" + encoded) ?? URL(fileURLWithPath: "/")
    }

    /// `base` + `path`, keeping the base's path (`/api` + `/items` → `/api/items`).
    static func join(_ base: URL, _ path: String) -> URL {
        var baseText = base.absoluteString
        while baseText.hasSuffix("/") { baseText.removeLast() }
        let relative = path.hasPrefix("/") || path.isEmpty || path.hasPrefix("?") ? path : "/" + path
        return URL(string: baseText + relative) ?? invalid(baseText + relative)
    }

    /// `url` with `name` added as more path segments: `/items` + `123/related` → `/items/123/related`.
    /// Characters that a path cannot hold are percent-encoded; the query is dropped.
    static func child(of url: URL, _ name: String) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return url }
        var path = components.percentEncodedPath
        while path.hasSuffix("/") { path.removeLast() }
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#;")
        let encoded = name.split(separator: "/", omittingEmptySubsequences: true)
            .map { String($0).addingPercentEncoding(withAllowedCharacters: allowed) ?? "" }
        components.percentEncodedPath = path + "/" + encoded.joined(separator: "/")
        components.percentEncodedQuery = nil
        return components.url ?? invalid(url.absoluteString + "/" + name)
    }

    /// `url` with the query item `name` set to `value` (replacing any), or removed for `nil`. Both are
    /// encoded strictly: only RFC 3986 unreserved characters stay, so `+`, `&` and `=` survive any server.
    static func settingParameter(_ name: String, to value: String?, in url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return url }
        var items = (components.percentEncodedQueryItems ?? []).filter { $0.name.removingPercentEncoding != name }
        if let value { items.append(URLQueryItem(name: PercentEncoding.encode(name), value: PercentEncoding.encode(value))) }
        components.percentEncodedQueryItems = items.isEmpty ? nil : items
        return components.url ?? url
    }

    /// The URL's path relative to `base`'s path (what patterns match), or its whole path when it is
    /// not under the base.
    static func relativePath(of url: URL, base: URL?) -> String {
        let path = URLComponents(url: url, resolvingAgainstBaseURL: true)?.percentEncodedPath ?? ""
        guard let base, let baseComponents = URLComponents(url: base, resolvingAgainstBaseURL: true),
            baseComponents.host == url.host, baseComponents.port == url.port
        else { return path.isEmpty ? "/" : path }
        var basePath = baseComponents.percentEncodedPath
        while basePath.hasSuffix("/") { basePath.removeLast() }
        guard path.hasPrefix(basePath) else { return path.isEmpty ? "/" : path }
        let rest = String(path.dropFirst(basePath.count))
        if rest.isEmpty { return "/" }
        return rest.hasPrefix("/") ? rest : path
    }
}
