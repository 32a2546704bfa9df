// Shared by every client under Tests/GeneratedClients (scripts/check-generated-clients copies it into each).
import Foundation
import HammockClient

/// The mock's URL, the one argument.
func baseURL() -> URL {
    guard CommandLine.arguments.count == 2, let url = URL(string: CommandLine.arguments[1]) else {
        print("usage: \(CommandLine.arguments[0]) BASE-URL")
        exit(2)
    }
    return url
}

/// How many promises were checked.
@MainActor var checked = 0

/// Ends the program with status 1 at the first broken promise.
@MainActor func expect(_ condition: Bool, _ what: String, line: Int = #line) {
    checked += 1
    guard !condition else { return }
    print("FAILED at line \(line): \(what)")
    exit(1)
}

/// The call must fail with this status.
@MainActor func expectStatus(_ code: Int, line: Int = #line, _ call: () async throws -> Void) async {
    checked += 1
    do {
        try await call()
        print("FAILED at line \(line): answered, expected \(code)")
        exit(1)
    } catch let error as RestError where error.status?.code == code {
        return
    } catch {
        print("FAILED at line \(line): \(error)")
        exit(1)
    }
}
