import Foundation
import HTTPTypes
import HammockWire

/// What keeps the admin API to the developer and the tests driving the mock, away from the web pages
/// open in the same machine's browser (docs/security.md, "The admin API and web pages").
///
/// A mock listens on the developer's laptop while a browser is open. Any page there can send requests to
/// `http://127.0.0.1:8888`, and a page whose name it re-points at 127.0.0.1 (DNS rebinding) can even read
/// the answers as its own origin's. So, on every admin path (the console's page and files included):
/// - **Host**: the request must name this machine: `localhost` (or a name under it), an IP address, an
///   in-process server's `.hammock.invalid` name, or a name configured (``MockServer/Options/adminHosts``,
///   `--allow-host`). A rebinding page's requests carry its own name, and are refused (403), as webpack's
///   and Vite's dev servers refuse them.
/// - **Origin**: a request a browser marks as coming from a page (`Origin`) must come from the server's
///   own origin, the console's (403 otherwise, and for the opaque `null`); a data endpoint also refuses
///   what the browser marks `Sec-Fetch-Site: cross-site` or `same-site`. No admin answer grants CORS,
///   whatever the resources' setting, so no other page can read one.
/// - **Content type**: a write with a body (or with a `Content-Type`) must say JSON (415 otherwise): a
///   page can send `text/plain` and form bodies without asking first, never `application/json`.
/// - **Token**: when one is set, `Authorization: Bearer TOKEN`, compared in constant time (401).
struct AdminGuard: Sendable {
    /// Names configured besides the built-in ones, lowercased, without a trailing dot.
    let allowedHosts: Set<String>
    /// `Bearer TOKEN` as bytes, when a token is required.
    let expectedToken: [UInt8]?

    init(allowedHosts: [String], token: String?) {
        self.allowedHosts = Set(allowedHosts.map(Self.normalizedName))
        expectedToken = token.map { Array($0.utf8) }
    }

    static let hostField = HTTPField.Name("Host")!
    static let originField = HTTPField.Name("Origin")!
    static let fetchSiteField = HTTPField.Name("Sec-Fetch-Site")!

    // MARK: Host and origin

    /// Refuses a request addressed to a name that is not this machine's, or sent by another origin's page.
    /// - Parameter holdsData: Whether the endpoint reads or changes data (everything but the console's
    ///   page and its files).
    func checkSite(of request: MockRequest, holdsData: Bool) throws(HTTPProblem) {
        let host = request.headerFields[Self.hostField]
        if let host {
            guard let authority = Authority(hostField: host), isAllowed(authority.name) else {
                throw HTTPProblem(
                    .forbidden,
                    detail: "The admin API answers only requests addressed to this machine; Host '\(host.prefix(100))' "
                        + "is neither localhost nor an IP address (give the name with --allow-host, or allowedHosts, "
                        + "if it is yours)")
            }
        }
        if let origin = request.headerFields[Self.originField] {
            // The server speaks plain HTTP: an `https:` page is another origin, whatever its host and port.
            guard let source = Authority(origin: origin), let host, let target = Authority(hostField: host), source == target
            else {
                throw HTTPProblem(
                    .forbidden,
                    detail: "The admin API does not answer other web pages: Origin '\(origin.prefix(100))' is not this server's")
            }
        }
        if holdsData, let site = request.headerFields[Self.fetchSiteField]?.lowercased(),
            site == "cross-site" || site == "same-site"
        {
            throw HTTPProblem(.forbidden, detail: "The admin API does not answer other web pages (Sec-Fetch-Site: \(site))")
        }
    }

    /// Whether `name` (lowercased) is this machine's, or one configured.
    func isAllowed(_ name: String) -> Bool {
        if Authority.isIPAddress(name) || name == "localhost" || name.hasSuffix(".localhost") { return true }
        // An in-process server's own name: `.invalid` never resolves (RFC 6761), so no page can rebind it.
        if name.hasSuffix(".hammock.invalid") { return true }
        return allowedHosts.contains(name)
    }

    static func normalizedName(_ name: String) -> String {
        var lowered = name.lowercased()
        while lowered.hasSuffix(".") { lowered.removeLast() }
        return lowered
    }

    // MARK: Content type and token

    /// Refuses a write whose body is not JSON: a page may send `text/plain`, a form or nothing declared
    /// without a preflight, but never `application/json`.
    func checkContentType(of request: MockRequest) throws(HTTPProblem) {
        guard request.method != .get, request.method != .head, request.method != .options else { return }
        let type = request.headerFields[.contentType]
        guard !request.body.isEmpty || type != nil else { return }
        let media = type.map { HeaderValue.mediaType(of: $0) } ?? ""
        guard media == "application/json" || (media.hasPrefix("application/") && media.hasSuffix("+json")) else {
            throw HTTPProblem(
                .unsupportedMediaType,
                detail: "The admin API reads JSON: send the body with 'Content-Type: application/json'"
                    + (type.map { " (found '\($0.prefix(100))')" } ?? ""))
        }
    }

    /// Checks `Authorization: Bearer TOKEN` when a token is set, in time that depends only on the
    /// expected value's length.
    func authorize(_ request: MockRequest) throws(HTTPProblem) {
        guard let expected = expectedToken else { return }
        var given: [UInt8] = []
        if let value = request.headerFields[.authorization] {
            let trimmed = value.trimmingCharacters(in: .whitespaces)
            if trimmed.count > 7, trimmed.prefix(7).lowercased() == "bearer " {
                given = Array(trimmed.dropFirst(7).trimmingCharacters(in: .whitespaces).utf8)
            }
        }
        guard Self.constantTimeEquals(expected, given) else {
            throw HTTPProblem(
                .unauthorized,
                detail: request.headerFields[.authorization] == nil
                    ? "The admin API needs 'Authorization: Bearer TOKEN' (the server's --admin-token)"
                    : "The admin token is not the server's",
                headerFields: [.wwwAuthenticate: "Bearer realm=\"hammock-admin\""])
        }
    }

    /// Whether `given` equals `expected`, looking at every byte of `expected` whatever `given` holds.
    static func constantTimeEquals(_ expected: [UInt8], _ given: [UInt8]) -> Bool {
        var difference = expected.count ^ given.count
        for index in expected.indices {
            difference |= Int(expected[index] ^ (index < given.count ? given[index] : 0))
        }
        return difference == 0
    }

    /// Why `token` cannot protect the admin API, or `nil` when it can: an empty one compares equal to a
    /// missing header, and one with spaces or control characters around or in it cannot be sent as
    /// given.
    static func problem(withToken token: String) -> String? {
        if token.allSatisfy({ $0.isWhitespace }) { return "the admin token is empty; give at least one visible character" }
        guard token.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            return "the admin token must be visible ASCII characters with no spaces (it travels in an HTTP header)"
        }
        return nil
    }
}

/// A host and port as `Host` or `Origin` give them, for comparing the two.
struct Authority: Equatable {
    var scheme: String
    var name: String
    var port: Int

    /// `example.com:8080`, `[::1]:8888`, `localhost` (the scheme's default port).
    init?(hostField value: String, scheme: String = "http") {
        let text = value.trimmingCharacters(in: .whitespaces)
        var name: Substring
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            name = text[text.startIndex...close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                portText = rest.dropFirst()
            }
        } else if let colon = text.lastIndex(of: ":") {
            name = text[..<colon]
            portText = text[text.index(after: colon)...]
        } else {
            name = Substring(text)
        }
        guard !name.isEmpty, !name.contains(where: { $0 == "/" || $0 == "@" || $0.isWhitespace }) else { return nil }
        let defaultPort = scheme == "https" ? 443 : 80
        var port = defaultPort
        if let portText {
            guard let number = Int(portText), (0...65535).contains(number) else { return nil }
            port = number
        }
        self.init(scheme: scheme, name: AdminGuard.normalizedName(String(name)), port: port)
    }

    /// `http://localhost:8888` (RFC 6454's serialization); `nil` for `null` or anything else.
    init?(origin: String) {
        let text = origin.trimmingCharacters(in: .whitespaces).lowercased()
        for scheme in ["http", "https"] where text.hasPrefix(scheme + "://") {
            let rest = String(text.dropFirst(scheme.count + 3))
            guard !rest.contains("/"), let authority = Authority(hostField: rest, scheme: scheme) else { return nil }
            self = authority
            return
        }
        return nil
    }

    private init(scheme: String, name: String, port: Int) {
        self.scheme = scheme
        self.name = name
        self.port = port
    }

    /// Whether `name` is an IPv4 address in dotted decimals or a bracketed IPv6 address: a page reaches
    /// those only by being served from them, so no name can be re-pointed at them.
    static func isIPAddress(_ name: String) -> Bool {
        if name.hasPrefix("[") && name.hasSuffix("]") {
            let inner = name.dropFirst().dropLast()
            let zone = inner.firstIndex(of: "%")
            let address = inner[..<(zone ?? inner.endIndex)]
            let zoneName = zone.map { inner[inner.index(after: $0)...] } ?? ""
            return address.contains(":") && address.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
                && zoneName.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
        }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { part in
                !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCII) && part.allSatisfy(\.isNumber)
                    && (Int(part) ?? 256) <= 255
            }
    }
}

/// ``AdminGuard``'s checks as the step every admin route passes before the router answers it, in the
/// server's chain for routes of the kind ``MatchedRoute/Kind/admin`` (and in no other): the `Host`
/// allowlist and the cross-site refusals first (before a 404, so that a page re-pointed here cannot
/// learn which paths exist, and before a preflight's answer), then the token (a preflight carries none),
/// then a JSON body for a method the route allows. The router then answers `OPTIONS`, 405 and `HEAD`.
struct AdminGuardMiddleware: MockMiddleware {
    let admin: AdminRoutes

    func handle(_ request: MockRequest, next: (MockRequest) async throws -> MockResponse) async throws -> MockResponse {
        let guardian = admin.guardian
        let row = admin.row(for: request)?.row
        try guardian.checkSite(of: request, holdsData: row?.requiresToken ?? true)
        if let row, request.method != .options {
            if row.requiresToken { try guardian.authorize(request) }
            if row.methods.contains(request.method == .head ? .get : request.method) {
                try guardian.checkContentType(of: request)
            }
        }
        return try await next(request)
    }
}
