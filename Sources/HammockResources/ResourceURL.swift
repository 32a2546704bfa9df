import Foundation
import HammockClient
import HammockWire

/// Building and canonicalizing resource URLs: one spelling per resource, so one instance per resource.
enum ResourceURL {
    /// `url` with dot segments resolved (`/a/../b` and `/a/%2E%2E/b` are `/b`, as a server resolves them), query items sorted
    /// by name (values of one name keep their order), and an empty query or a fragment removed.
    static func canonical(_ url: URL) -> URL {
        guard url.scheme != "invalid", var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            return url
        }
        components.fragment = nil
        // RFC 3986 §6.2.2: scheme and host are case-insensitive, a default port says nothing, and an
        // escaped unreserved character is that character; so `HTTP://API.example:443/%7Eada` and
        // `https://api.example/~ada` are one resource and one cache key.
        let scheme = components.scheme?.lowercased()
        components.scheme = scheme
        if let host = components.percentEncodedHost { components.percentEncodedHost = host.lowercased() }
        if (scheme == "http" && components.port == 80) || (scheme == "https" && components.port == 443) {
            components.port = nil
        }
        // `%2E` is `.`: decoded before dot segments go, so `/users/%2E%2E/admin` is `/admin` here as on
        // a server that decodes it.
        let path = components.percentEncodedPath
        components.percentEncodedPath = removingDotSegments(path.contains("%") ? normalizingEscapes(path) : path)
        // §6.2.3: for http(s) an empty path is `/`; `https://h.example` and `https://h.example/` both send `GET /`.
        if components.percentEncodedPath.isEmpty, scheme == "http" || scheme == "https", components.host != nil {
            components.percentEncodedPath = "/"
        }
        if let items = components.percentEncodedQueryItems {
            let sorted = items.map { item in
                URLQueryItem(name: normalizingEscapes(item.name), value: item.value.map(normalizingEscapes))
            }.enumerated().sorted { lhs, rhs in
                lhs.element.name != rhs.element.name ? lhs.element.name < rhs.element.name : lhs.offset < rhs.offset
            }.map(\.element)
            components.percentEncodedQueryItems = sorted.isEmpty ? nil : sorted
        }
        return components.url ?? url
    }

    /// Percent-encoded text with escaped unreserved characters (letters, digits, `-._~`) decoded and
    /// every other escape in uppercase hexadecimal (RFC 3986 §6.2.2.1-2).
    static func normalizingEscapes(_ text: String) -> String {
        guard text.contains("%") else { return text }
        let bytes = Array(text.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        func hexValue(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "%"), index + 2 < bytes.count, let high = hexValue(bytes[index + 1]),
                let low = hexValue(bytes[index + 2])
            else {
                output.append(byte)
                index += 1
                continue
            }
            let decoded = high << 4 | low
            let isUnreserved =
                (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(decoded)
                || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(decoded)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(decoded) || Array("-._~".utf8).contains(decoded)
            if isUnreserved {
                output.append(decoded)
            } else {
                let digits = Array("0123456789ABCDEF".utf8)
                output.append(contentsOf: [UInt8(ascii: "%"), digits[Int(decoded >> 4)], digits[Int(decoded & 0x0f)]])
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// RFC 3986 §5.2.4: `.` segments go, `..` removes the segment before it (never above the root).
    static func removingDotSegments(_ path: String) -> String {
        guard path.contains(".") else { return path }
        var output: [Substring] = []
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        for (index, segment) in segments.enumerated() {
            let isLast = index == segments.count - 1
            switch segment {
            case ".":
                if isLast { output.append("") }
            case "..":
                if output.count > 1 { output.removeLast() }
                if isLast { output.append("") }
            default:
                output.append(segment)
            }
        }
        let joined = output.joined(separator: "/")
        return path.hasPrefix("/") && !joined.hasPrefix("/") ? "/" + joined : joined
    }

    /// A URL no transport is asked to fetch, for text that is not a URL (or a path under a base URL
    /// that cannot be used). Loading it fails with ``ResourceError/Cause/invalidURL(_:)`` and `reason`
    /// as the message, if given.
    static func invalid(_ text: String, reason: String? = nil) -> URL {
        let encoded = text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let because = reason.map { "?" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "") } ?? ""
        return URL(string: "invalid:" + encoded + because) ?? URL(fileURLWithPath: "/")
    }

    /// The text and reason an invalid URL was made from.
    static func invalidParts(_ url: URL) -> (text: String, reason: String?)? {
        guard url.scheme == "invalid" else { return nil }
        let rest = url.absoluteString.dropFirst("invalid:".count)
        let parts = rest.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let text = String(parts[0]).removingPercentEncoding ?? String(parts[0])
        return (text, parts.count > 1 ? String(parts[1]).removingPercentEncoding : nil)
    }

    /// Why `url` cannot be a base URL, if it cannot: `RestClient` refuses the same ones.
    static func problem(withBase url: URL) -> String? {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        if components?.percentEncodedQuery != nil {
            return "the base URL '\(url.absoluteString)' has a query; send parameters per request, or API keys in headers"
        }
        if components?.user != nil || components?.password != nil {
            return "the base URL '\(url.absoluteString)' has user info; send credentials in an Authorization header"
        }
        if components?.fragment != nil { return "the base URL '\(url.absoluteString)' has a fragment" }
        return nil
    }

    /// `base` + `path`, keeping the base's path (`/api` + `/items` → `/api/items`).
    static func join(_ base: URL, _ path: String) -> URL {
        var baseText = base.absoluteString
        while baseText.hasSuffix("/") { baseText.removeLast() }
        let relative = path.hasPrefix("/") || path.isEmpty || path.hasPrefix("?") ? path : "/" + path
        // What a URL cannot hold (`filter[name]`, a space) escaped once here: `URL(string:)` would escape
        // every `%XX` of the path again beside it (`a%20b` as `a%2520b`).
        return URL(string: PercentEncoding.encodeURLText(baseText + relative)) ?? invalid(baseText + relative)
    }

    /// `url` with `name` added as more path segments: `/items` + `123/related` → `/items/123/related`.
    /// Characters that a path cannot hold are percent-encoded; the query is dropped. A `.` or `..`
    /// segment is refused (the resource fails to load, saying why): a child built from input must stay
    /// below its parent.
    static func child(of url: URL, _ name: String) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return url }
        let segments = name.split(separator: "/", omittingEmptySubsequences: true)
        if segments.contains(where: { $0 == "." || $0 == ".." }) {
            return invalid(
                url.absoluteString + "/" + name, reason: "'\(name)' would leave \(url.path): '.' and '..' are not child names")
        }
        var path = components.percentEncodedPath
        while path.hasSuffix("/") { path.removeLast() }
        let encoded = segments.map { PercentEncoding.encodePathSegment(String($0)) }
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

    /// The path of `url` relative to `base`'s path (what patterns match), or `nil` when it is not under
    /// the base: another scheme, host or port, or a path that does not start with the base path at a
    /// segment boundary (`/api` is not a prefix of `/apikeys`).
    static func relativePath(of url: URL, under base: URL) -> String? {
        guard Origin(url) != nil, Origin(url) == Origin(base),
            let baseComponents = URLComponents(url: base, resolvingAgainstBaseURL: true)
        else { return nil }
        let path = URLComponents(url: url, resolvingAgainstBaseURL: true)?.percentEncodedPath ?? ""
        var basePath = baseComponents.percentEncodedPath
        while basePath.hasSuffix("/") { basePath.removeLast() }
        guard path.hasPrefix(basePath) else { return nil }
        let rest = String(path.dropFirst(basePath.count))
        if rest.isEmpty { return "/" }
        return rest.hasPrefix("/") ? rest : nil
    }
}
