public import Foundation

/// Where an app under a UI test finds the mock server its test started: the test puts the server's base
/// URL in the app's launch environment (`HAMMOCK_BASE_URL`), and the app reads it here.
///
/// ```swift
/// // In the app:
/// let baseURL = try MockLaunchEnvironment.baseURL() ?? URL(string: "https://api.example.com")!
///
/// // In the UI test (HammockServerTesting), with the server on a loopback port:
/// app.launchEnvironment.merge(mock.launchEnvironment) { _, new in new }
/// ```
public enum MockLaunchEnvironment {
    /// The variable's name: `HAMMOCK_BASE_URL`.
    public static let variable = "HAMMOCK_BASE_URL"

    /// A value of the variable that is not an absolute `http` or `https` URL with a host.
    public struct InvalidValue: Error, Sendable, Hashable, CustomStringConvertible {
        /// The value as found.
        public var value: String
        public var description: String {
            "\(MockLaunchEnvironment.variable) is '\(value)', not an http or https URL with a host"
        }
    }

    /// The base URL a test put in `environment` (the process's own by default); `nil` when it put none,
    /// as when the app runs outside a test.
    /// - Throws: ``InvalidValue`` when the variable is set to something that is not an `http` or `https`
    ///   URL with a host: a test's mistake, which must not send the app to its real server unnoticed.
    public static func baseURL(
        in environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(InvalidValue) -> URL? {
        guard let value = environment[variable] else { return nil }
        guard let url = URL(string: value), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else { throw InvalidValue(value: value) }
        return url
    }
}
