import Foundation
import HammockClient
import Testing

@Suite("An app finds its test's mock server in its launch environment")
struct MockLaunchEnvironmentTests {
    @Test("No variable: no URL, so the app uses its own server")
    func absent() throws {
        #expect(try MockLaunchEnvironment.baseURL(in: ["HOME": "/root"]) == nil)
    }

    @Test("An http or https URL with a host is the base URL, its path kept")
    func present() throws {
        let url = try MockLaunchEnvironment.baseURL(in: ["HAMMOCK_BASE_URL": "http://127.0.0.1:54321/api/v1"])
        #expect(url?.absoluteString == "http://127.0.0.1:54321/api/v1")
        #expect(try MockLaunchEnvironment.baseURL(in: ["HAMMOCK_BASE_URL": "HTTPS://mock.test"])?.host == "mock.test")
    }

    @Test(
        "Anything else set is an error naming the value, never a silent fall back to the real server",
        arguments: ["", "localhost:8080", "ftp://127.0.0.1", "http://", "/people", "not a url"])
    func invalid(value: String) {
        let error = #expect(throws: MockLaunchEnvironment.InvalidValue.self) {
            try MockLaunchEnvironment.baseURL(in: ["HAMMOCK_BASE_URL": value])
        }
        #expect(error?.description == "HAMMOCK_BASE_URL is '\(value)', not an http or https URL with a host")
    }
}
