import Foundation
import HammockClient
import Testing

@Suite("An app finds its test's mock server in its launch environment")
struct MockLaunchEnvironmentTests {
    @Test("No variable: no URL, so the app uses its own server")
    func absent() throws {
        #expect(try MockLaunchEnvironment.baseURL(in: ["HOME": "/root"]) == nil)
    }

    @Test(
        "A loopback http or https URL is the base URL, its path kept",
        arguments: [
            "http://127.0.0.1:54321/api/v1", "HTTPS://localhost:8443", "http://[::1]:8888", "http://127.0.0.2",
            "http://app.localhost:3000",
        ])
    func present(value: String) throws {
        let url = try MockLaunchEnvironment.baseURL(in: ["HAMMOCK_BASE_URL": value])
        #expect(url?.absoluteString == value)
    }

    @Test(
        "Anything else set is an error naming the value, never a silent fall back to the real server",
        arguments: ["", "localhost:8080", "ftp://127.0.0.1", "http://", "/people", "not a url"])
    func invalid(value: String) {
        let error = #expect(throws: MockLaunchEnvironment.InvalidValue.self) {
            try MockLaunchEnvironment.baseURL(in: ["HAMMOCK_BASE_URL": value])
        }
        #expect(error?.description == "HAMMOCK_BASE_URL is '\(value)': not an http or https URL with a host")
    }

    @Test(
        "Another host is refused unless the app names it: the environment cannot send a shipped app's requests elsewhere",
        arguments: [
            "http://collector.attacker.example/v1", "https://mock.test", "http://10.0.0.7:8888", "http://127.0.0.1.nip.io",
        ])
    func otherHosts(value: String) throws {
        let error = #expect(throws: MockLaunchEnvironment.InvalidValue.self) {
            try MockLaunchEnvironment.baseURL(in: ["HAMMOCK_BASE_URL": value])
        }
        #expect(error?.reason.contains("not a loopback address") == true)
        let host = try #require(URL(string: value)?.host)
        let named = try MockLaunchEnvironment.baseURL(in: ["HAMMOCK_BASE_URL": value], allowingHosts: [host])
        #expect(named?.absoluteString == value)
    }

    @Test("An in-process mock's URL is refused with a message naming .loopback, where before every request failed later")
    func inProcessURL() {
        let error = #expect(throws: MockLaunchEnvironment.InvalidValue.self) {
            try MockLaunchEnvironment.baseURL(in: ["HAMMOCK_BASE_URL": "http://3f0c5a8e-2b1d.hammock.invalid"])
        }
        #expect(error?.reason.contains(".loopback") == true)
    }
}
