public import Foundation
public import HTTPTypes
import HammockJSON

/// A configuration's `proxy` entry: requests the mock does not answer, on a path (and methods) it names,
/// go to a real backend. The `HammockProxy` product carries them out (`hammock serve` does).
///
/// ```json
/// "proxy": [{"path": "/invoices/**", "to": "http://127.0.0.1:8080/api"},
///           {"path": "/auth/**", "methods": ["POST"], "to": "http://127.0.0.1:9000"}]
/// ```
/// An upstream named in a file could carry an app's credentials anywhere, so `hammock serve` forwards from a
/// file only to loopback hosts unless the command line allows the host (`--allow-upstream`).
public struct ProxyRule: Sendable, Hashable {
    /// The paths forwarded; `nil` for every path.
    public var path: PathPattern?
    /// The methods forwarded; `nil` for every one.
    public var methods: Set<HTTPRequest.Method>?
    /// Where they go: scheme, host, port and a path prefix.
    public var upstream: URL

    /// A rule forwarding `path` (every path when `nil`) for `methods` (every one when `nil`) to `upstream`.
    public init(path: PathPattern? = nil, methods: Set<HTTPRequest.Method>? = nil, upstream: URL) {
        self.path = path
        self.methods = methods
        self.upstream = upstream
    }

    /// Whether the rule forwards `request`'s method and path.
    public func forwards(_ method: HTTPRequest.Method, _ path: String) -> Bool {
        (methods?.contains(method) ?? true) && (self.path.map { $0.match(path) != nil } ?? true)
    }

    /// Whether `host` is this machine's loopback (`localhost`, an IPv4 address `127.x.x.x`, `::1`): a file
    /// may proxy there. A name that only starts like one (`127.0.0.1.example.test`) is not.
    public static func isLoopback(_ host: String) -> Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        if bare == "localhost" || bare == "::1" { return true }
        let parts = bare.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127"
            && parts.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && UInt8($0) != nil }
    }

    static let keys = ["path", "methods", "to"]

    /// Reads the `proxy` array.
    static func rules(
        _ value: JSON?, fail: (String, String) -> ConfigurationError
    ) throws(ConfigurationError) -> [ProxyRule] {
        guard let value, !value.isNull else { return [] }
        guard case .array(let elements) = value else {
            throw fail("proxy", "expected an array: [{\"path\": \"/invoices/**\", \"to\": \"http://127.0.0.1:8080\"}]")
        }
        var rules: [ProxyRule] = []
        for (index, element) in elements.enumerated() {
            let at = "proxy[\(index)]"
            guard case .object(let object) = element else {
                throw fail(at, "expected {\"path\": \"/invoices/**\", \"to\": \"http://127.0.0.1:8080\"}")
            }
            for key in object.keys where !keys.contains(key) {
                throw fail("\(at).\(key)", "unknown key; expected path, methods or to")
            }
            guard case .string(let text)? = object["to"] else {
                throw fail("\(at).to", "missing; give the backend's URL, such as \"http://127.0.0.1:8080/api\"")
            }
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
                let host = url.host, !host.isEmpty, url.query == nil, url.fragment == nil
            else {
                throw fail("\(at).to", "'\(text.prefix(200))' is not an http:// or https:// URL with a host (and no query)")
            }
            var rule = ProxyRule(upstream: url)
            if let path = object["path"], !path.isNull {
                guard case .string(let pattern) = path else {
                    throw fail("\(at).path", "expected a path such as \"/invoices/**\"")
                }
                do {
                    rule.path = try PathPattern(pattern)
                } catch {
                    throw fail("\(at).path", error.description)
                }
            }
            if let methods = object["methods"], !methods.isNull {
                guard case .array(let names) = methods, !names.isEmpty else {
                    throw fail("\(at).methods", "expected a non-empty array such as [\"GET\", \"POST\"]")
                }
                var set = Set<HTTPRequest.Method>()
                for name in names {
                    guard case .string(let text) = name, let method = HTTPRequest.Method(text.uppercased()) else {
                        throw fail("\(at).methods", "expected HTTP methods such as \"GET\"")
                    }
                    set.insert(method)
                }
                rule.methods = set
            }
            rules.append(rule)
        }
        return rules
    }
}
