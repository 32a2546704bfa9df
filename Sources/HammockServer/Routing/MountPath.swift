import HTTPTypes

/// The prefix a server's routes are served under (`basePath: /api`): the router takes it off a request's
/// path before asking the routes, and answers speak paths from the API's root, as routes are written.
///
/// On the way out, references in an answer that are paths from the root (`/people/3`) are resolved
/// against the mount as a browser resolves a reference against a base (RFC 3986, 5.2): in `Location`,
/// `Content-Location` and each link-value of `Link` (RFC 8288), and nowhere else. A full URL, a
/// protocol-relative one (`//cdn.example/a`), a relative path, and anything inside a link's parameters
/// (a quoted title holding `</`) are left as they are; a `Link` that does not parse is left whole. (The
/// router pasted the prefix before every `</` of a `Link` and before any `Location` starting with `/`,
/// `//host` included.)
struct MountPath: Sendable, Hashable {
    /// A normalized base path (``MockServer/Options/normalizedBasePath(_:)``): `/api/v1`.
    let prefix: String

    /// The path inside the mount (`/api/people` → `/people`, `/api` → `/`), or `nil` for a path outside it.
    func inner(_ path: String) -> String? {
        guard path.hasPrefix(prefix) else { return nil }
        let rest = path.dropFirst(prefix.count)
        if rest.isEmpty { return "/" }
        return rest.hasPrefix("/") ? String(rest) : nil
    }

    /// `response` with its root-relative references resolved against the mount.
    func resolve(_ response: inout MockResponse) {
        resolveReference(in: .location, of: &response)
        resolveReference(in: .contentLocation, of: &response)
        if let link = response.headerFields[.link], let resolved = resolved(links: link) {
            response.headerFields[.link] = resolved
        }
    }

    private func resolveReference(in name: HTTPField.Name, of response: inout MockResponse) {
        if let value = response.headerFields[name], let resolved = resolved(reference: Substring(value)) {
            response.headerFields[name] = resolved
        }
    }

    /// `reference` under the mount if it is a path from the root (`/a`, not `//a`), else `nil`.
    func resolved(reference: Substring) -> String? {
        guard reference.hasPrefix("/"), !reference.hasPrefix("//") else { return nil }
        return prefix + reference
    }

    /// `header`, a `Link` value, with each link-value's target resolved; `nil` when nothing changes or
    /// the value does not parse (then it is left whole).
    func resolved(links header: String) -> String? {
        // A small scanner over link-values: `<target>` then `; name=value` parameters, where a value may be a
        // quoted string with `\` escapes; link-values are separated by commas outside quotes and targets.
        let bytes = Array(header.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + prefix.utf8.count * 4)
        var changed = false
        var index = 0
        var expectingTarget = true
        while index < bytes.count {
            let byte = bytes[index]
            if expectingTarget {
                if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
                    output.append(byte)
                    index += 1
                    continue
                }
                guard byte == UInt8(ascii: "<"),
                    let close = bytes[(index + 1)...].firstIndex(of: UInt8(ascii: ">"))
                else { return nil }
                let target = Substring(decoding: bytes[(index + 1)..<close], as: UTF8.self)
                output.append(UInt8(ascii: "<"))
                if let resolved = resolved(reference: target) {
                    output += Array(resolved.utf8)
                    changed = true
                } else {
                    output += bytes[(index + 1)..<close]
                }
                output.append(UInt8(ascii: ">"))
                index = close + 1
                expectingTarget = false
                continue
            }
            if byte == UInt8(ascii: "\"") {
                // A quoted string: copied through its closing quote, escapes included.
                output.append(byte)
                index += 1
                var closed = false
                while index < bytes.count {
                    let inner = bytes[index]
                    output.append(inner)
                    index += 1
                    if inner == UInt8(ascii: "\\"), index < bytes.count {
                        output.append(bytes[index])
                        index += 1
                    } else if inner == UInt8(ascii: "\"") {
                        closed = true
                        break
                    }
                }
                guard closed else { return nil }
                continue
            }
            output.append(byte)
            index += 1
            if byte == UInt8(ascii: ",") { expectingTarget = true }
        }
        return changed ? String(decoding: output, as: UTF8.self) : nil
    }
}
