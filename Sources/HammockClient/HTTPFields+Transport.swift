import Foundation
package import HTTPTypes

extension HTTPFields {
    /// The fields as HTTP/1.1 header lines, for transports: each field as it is, except `Cookie`, whose
    /// values go out on one line joined by `"; "` (RFC 6265 §5.4 allows one `Cookie` line, and
    /// `HTTPFields` keeps one field per cookie, as HTTP/2 does).
    ///
    /// ```swift
    /// var fields = HTTPFields()
    /// fields[.cookie] = "a=1; b=2"          // two fields inside HTTPFields
    /// fields.http1Lines                     // [("Cookie", "a=1; b=2")]
    /// ```
    package var http1Lines: [(name: String, value: String)] {
        var lines: [(name: String, value: String)] = []
        lines.reserveCapacity(count)
        var cookieLine: Int?
        for field in self {
            if field.name == .cookie {
                if let index = cookieLine {
                    lines[index].value += "; " + field.value
                } else {
                    cookieLine = lines.count
                    lines.append((field.name.rawName, field.value))
                }
            } else {
                lines.append((field.name.rawName, field.value))
            }
        }
        return lines
    }
}

/// The scheme, host and port of a URL: where credentials may go (RFC 6454).
package struct Origin: Hashable, Sendable {
    let scheme: String
    let host: String
    let port: Int

    /// The origin of `scheme://host:port`; `nil` without a scheme or host.
    package init?(scheme: String?, host: String?, port: Int?) {
        guard let scheme = scheme?.lowercased(), let host = host?.lowercased(), !host.isEmpty else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
    }

    /// The origin of `url`; `nil` for a URL without a scheme or host.
    package init?(_ url: URL) {
        self.init(scheme: url.scheme, host: url.host, port: url.port)
    }
}
