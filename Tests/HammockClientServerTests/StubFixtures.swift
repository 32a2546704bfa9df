import HTTPTypes
import HammockJSON
import HammockServer

extension StubRoute {
    /// A stub from plain values, for tests: a status code and header names as strings.
    static func fixture(
        _ method: HTTPRequest.Method, _ path: String, status: Int = 200, headers: [(String, String)] = [], json: JSON? = nil
    ) throws -> StubRoute {
        try StubRoute(
            method, path, status: HTTPResponse.Status(code: status),
            headers: headers.compactMap { name, value in HTTPField.Name(name).map { ($0, value) } }, body: json)
    }
}
