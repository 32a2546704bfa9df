import Foundation
public import HTTPTypes

/// What a redirect does to a request, the same on every transport.
///
/// Within the request's origin (scheme, host and port) the request goes on as it was. To another
/// origin it keeps only the fields in ``keptAcrossOrigins``: whatever the app added (an API key from
/// `defaultHeaders`, `@Headers`, a service's configuration or an interceptor, a token, a cookie) stays
/// with the origin it was meant for, since a `Location` can name any host (an open redirect, a file
/// store). A 303, and a 301 or 302 after a `POST`, turn the request into a `GET` without a body
/// (RFC 9110 §15.4, as browsers and both transports' libraries do); 307 and 308 keep the method and body.
public enum RedirectRule {
    /// The fields that follow a redirect to another origin, by lowercased name: content negotiation,
    /// the client's name, and the framing of a body that a 307 or 308 sends again.
    public static let keptAcrossOrigins: Set<String> = [
        "accept", "accept-encoding", "accept-language", "user-agent", "content-type", "content-length",
        "content-encoding", "content-language", "cache-control", "pragma",
    ]

    /// The most redirects one request follows.
    public static let maximumRedirects = 10

    /// Whether `status` is a redirect the transports follow.
    public static func follows(_ status: Int) -> Bool { [301, 302, 303, 307, 308].contains(status) }

    /// Whether going from `original` to `target` leaves the origin (a URL without one always does).
    public static func leavesOrigin(from original: URL, to target: URL) -> Bool {
        guard let from = Origin(original) else { return true }
        return from != Origin(target)
    }

    /// Whether a field named `name` may follow a redirect from `original` to `target`.
    public static func keeps(_ name: String, from original: URL, to target: URL) -> Bool {
        !leavesOrigin(from: original, to: target) || keptAcrossOrigins.contains(name.lowercased())
    }

    /// The method after a redirect with `status`, and whether the body is sent again.
    public static func method(after status: Int, from method: HTTPRequest.Method) -> (method: HTTPRequest.Method, keepsBody: Bool)
    {
        switch status {
        case 303 where method != .head: (.get, false)
        case 301 where method == .post, 302 where method == .post: (.get, false)
        default: (method, true)
        }
    }

    /// The header fields for the request a redirect from `original` to `target` makes.
    public static func fields(
        _ fields: HTTPFields, from original: URL, to target: URL, keepsBody: Bool
    ) -> HTTPFields {
        var kept = HTTPFields()
        for field in fields where keeps(field.name.canonicalName, from: original, to: target) {
            if !keepsBody, field.name == .contentType || field.name == .contentLength { continue }
            kept.append(field)
        }
        return kept
    }
}

/// Which redirects a transport follows; each of this package's transports takes one (`redirects:`).
///
/// ```swift
/// let client = RestClient(baseURL: url, transport: URLSessionTransport(redirects: .sameOrigin))
/// ```
/// A redirect not followed is the answer: the 3xx itself, with its `Location`, as any other status.
public enum RedirectPolicy: Sendable, Hashable {
    /// Every redirect, up to ``RedirectRule/maximumRedirects``; leaving the origin keeps only the fields
    /// of ``RedirectRule/keptAcrossOrigins`` (the default).
    case follow
    /// Redirects within the request's origin (scheme, host and port) only.
    case sameOrigin
    /// None.
    case never

    /// Whether a redirect from `original` to `target` is followed.
    public func follows(from original: URL, to target: URL) -> Bool {
        switch self {
        case .follow: true
        case .sameOrigin: !RedirectRule.leavesOrigin(from: original, to: target)
        case .never: false
        }
    }
}
