import Foundation
import HammockJSON
import HammockTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `hammock serve --store postgres://…` as a team runs it: several processes on one database and
/// namespace, the password from `PGPASSWORD` or the URL and never printed, a plain exit 2 when the
/// database cannot be reached.
@Suite("hammock serve on PostgreSQL", .timeLimit(.minutes(2)))
struct PostgresServeTests {
    func get(_ url: String) async throws -> JSON {
        let (data, _) = try await URLSession(configuration: .ephemeral).data(from: try #require(URL(string: url)))
        return try JSON(parsing: [UInt8](data))
    }

    /// Starts `hammock serve` and returns it with its base URL and the lines it printed up to the routes.
    func serve(_ arguments: [String], password: String) async throws -> (HammockProcess, String, [String]) {
        let process = try HammockProcess(
            ["serve"] + arguments + ["--port", "0"], shellPrefix: "export PGPASSWORD='\(password)'")
        var printed: [String] = []
        let banner = await process.firstLine {
            printed.append($0)
            return $0.hasPrefix("Hammock is serving")
        }
        let line = try #require(banner, "no banner; stderr: \(process.errorOutput.withLock { $0 })")
        _ = await process.firstLine {
            printed.append($0)
            return $0.contains("/people/:id/cars")
        }
        return (process, try #require(line.split(separator: " ").last.map(String.init)), printed)
    }

    @Test("Two processes on one database and namespace load the data once and serve one set; the password is never printed")
    func twoProcesses() async throws {
        let cluster = try await ThrowawayPostgres.shared()
        let arguments = [
            "Examples/people.json", "--store", cluster.url(), "--namespace", "cli_" + UUID().uuidString.prefix(8).lowercased(),
        ]
        async let started = (serve(arguments, password: cluster.password), serve(arguments, password: cluster.password))
        let ((first, firstURL, firstLines), (second, secondURL, secondLines)) = try await started
        let stores = (firstLines + secondLines).filter { $0.hasPrefix("store: ") }
        #expect(stores.count == 2 && stores.allSatisfy { $0.hasPrefix("store: postgres://hammock@127.0.0.1:") })
        // The people example's five people, loaded by one of the two.
        let loaded = (firstLines + secondLines).filter { $0.hasPrefix("data: people: loaded 5") }
        #expect(loaded.count == 1)
        #expect(try await get(firstURL + "/people").arrayValue?.count == 5)

        var request = URLRequest(url: try #require(URL(string: firstURL + "/people")))
        request.httpMethod = "POST"
        request.httpBody = Data(#"{"name":"shared"}"#.utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let (created, _) = try await URLSession(configuration: .ephemeral).data(for: request)
        let id = try #require(try JSON(parsing: [UInt8](created))["id"]?.intValue)
        #expect(try await get(secondURL + "/people/\(id)")["name"] == "shared")

        for process in [first, second] {
            process.interrupt()
            #expect(await process.exitStatus() == 0)
            #expect(!process.errorOutput.withLock { $0.contains(cluster.password) })
        }
        #expect(!(firstLines + secondLines).contains { $0.contains(cluster.password) })
    }

    @Test("An unreachable database or a refused sign-in exits 2 with a plain message that never shows the password")
    func unreachable() async throws {
        let cluster = try await ThrowawayPostgres.shared()
        let cases = [
            ("postgres://hammock:pw-in-url-7@127.0.0.1:1/postgres", "", "Connection refused"),
            (cluster.url(), "wrong-password-7", "password authentication failed"),
            (cluster.url(database: "nowhere"), cluster.password, #"database "nowhere" does not exist"#),
        ]
        // A URL that is not one: exit 2 before any connection, naming what it expected.
        let malformed = try HammockProcess(["serve", "Examples/people.json", "--store", "postgres:nowhere", "--port", "0"])
        #expect(await malformed.exitStatus() == 2)
        #expect(malformed.errorOutput.withLock { $0.contains("expected postgres://USER@HOST:PORT/DATABASE") })
        for (url, password, reason) in cases {
            let process = try HammockProcess(
                ["serve", "Examples/people.json", "--store", url, "--port", "0"], shellPrefix: "export PGPASSWORD='\(password)'")
            #expect(await process.exitStatus() == 2)
            let errors = process.errorOutput.withLock { $0 }
            #expect(errors.contains("cannot reach PostgreSQL at hammock@127.0.0.1:"), "\(errors)")
            #expect(errors.contains(reason), "\(errors)")
            #expect(!errors.contains("pw-in-url-7") && !errors.contains("wrong-password-7") && !errors.contains(cluster.password))
        }
    }
}
