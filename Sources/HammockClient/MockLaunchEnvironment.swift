public import Foundation

/// Where an app under a UI test finds the mock server its test started: the test puts the server's base
/// URL in the app's launch environment (`HAMMOCK_BASE_URL`), and the app reads it here.
///
/// ```swift
/// // In the app, in debug builds only:
/// #if DEBUG
/// let mockURL = try? MockLaunchEnvironment.baseURL()
/// #else
/// let mockURL: URL? = nil
/// #endif
/// let baseURL = mockURL ?? URL(string: "https://api.example.com")!
///
/// // In the UI test (HammockServerTesting), with the server on a loopback port:
/// app.launchEnvironment.merge(try mock.launchEnvironment) { _, new in new }
/// ```
///
/// Only a loopback address is taken (`localhost`, `127.0.0.1`, `::1`), unless the app names other hosts
/// (`allowingHosts:`, for a device reaching a mock on the developer's machine): an environment variable
/// must not send a shipped app's requests, tokens included, to whatever host someone put there.
public enum MockLaunchEnvironment {
    /// The variable's name: `HAMMOCK_BASE_URL`.
    public static let variable = "HAMMOCK_BASE_URL"

    /// A value of the variable that cannot be used, and why.
    public struct InvalidValue: Error, Sendable, Hashable, CustomStringConvertible {
        /// The value as found.
        public var value: String
        /// Why it cannot be used.
        public var reason: String

        public init(value: String, reason: String) {
            self.value = value
            self.reason = reason
        }

        public var description: String { "\(MockLaunchEnvironment.variable) is '\(value.prefix(200))': \(reason)" }
    }

    /// The base URL a test put in `environment` (the process's own by default); `nil` when it put none,
    /// as when the app runs outside a test.
    /// - Parameter hosts: Host names taken besides loopback ones (lowercased; `mybox.local`).
    /// - Throws: ``InvalidValue`` when the variable is set to something that is not an `http` or `https`
    ///   URL with a loopback host (or one of `hosts`): a test's mistake, which must not send the app to its
    ///   real server unnoticed, or someone else's value, which must not send it anywhere.
    public static func baseURL(
        in environment: [String: String] = ProcessInfo.processInfo.environment, allowingHosts hosts: Set<String> = []
    ) throws(InvalidValue) -> URL? {
        guard let value = environment[variable] else { return nil }
        guard let url = URL(string: value), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host?.lowercased(), !host.isEmpty
        else { throw InvalidValue(value: value, reason: "not an http or https URL with a host") }
        if host.hasSuffix(".hammock.invalid") {
            throw InvalidValue(
                value: value,
                reason: "the URL of a mock served in process, which no other process can reach; start the test's "
                    + "mock with .loopback (TestMock.start(.loopback) or .mockServer(…, reach: .loopback))")
        }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        guard isLoopback(bare) || hosts.contains(host) || hosts.contains(bare) else {
            throw InvalidValue(
                value: value,
                reason: "'\(host.prefix(100))' is not a loopback address; an app takes its mock from the environment "
                    + "only on this machine unless it names the host (baseURL(allowingHosts:))")
        }
        return url
    }

    /// `localhost`, a name under it, `127.x.x.x` or `::1`.
    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host.hasSuffix(".localhost") || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127"
            && parts.allSatisfy { part in part.count <= 3 && part.allSatisfy(\.isNumber) && (Int(part) ?? 256) <= 255 }
    }
}
