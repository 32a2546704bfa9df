import Foundation
import GRDB
import SQLiteNIO

/// `swift run -c release` in this folder: microseconds per operation, GRDB and sqlite-nio, same run.
@main
struct SQLiteChoice {
    static let count = 2000
    static let table = "CREATE TABLE people (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, kids INTEGER, km REAL)"

    static func microseconds(_ operations: Int, _ body: @Sendable () async throws -> Void) async rethrows -> Double {
        let start = ContinuousClock.now
        try await body()
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return seconds / Double(operations) * 1e6
    }

    static func main() async throws {
        let directory = NSTemporaryDirectory() + "sqlite-choice-\(UUID().uuidString)/"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        // GRDB: a WAL DatabasePool, async API, as a server would use it.
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        let pool = try DatabasePool(path: directory + "grdb.sqlite", configuration: configuration)
        try await pool.write { @Sendable db in try db.execute(sql: table) }
        let grdbInsert = try await microseconds(count) {
            for index in 0..<count {
                try await pool.write { @Sendable db in
                    try db.execute(
                        sql: "INSERT INTO people (name, kids, km) VALUES (?, ?, ?)", arguments: ["p\(index)", index % 4, 1.5])
                }
            }
        }
        let grdbBulk = try await microseconds(count) {
            try await pool.write { @Sendable db in
                let statement = try db.cachedStatement(sql: "INSERT INTO people (name, kids, km) VALUES (?, ?, ?)")
                for index in 0..<count { try statement.execute(arguments: ["b\(index)", index % 4, 2.5]) }
            }
        }
        let grdbRead = try await microseconds(count) {
            for index in 0..<count {
                _ = try await pool.read { @Sendable db in
                    let row = try Row.fetchOne(
                        db.cachedStatement(sql: "SELECT id, name, kids, km FROM people WHERE id = ?"),
                        arguments: [index % count + 1])
                    return row?["name"] as String?
                }
            }
        }
        let grdbUnsafeRead = try await microseconds(count) {
            for index in 0..<count {
                _ = try await pool.unsafeRead { @Sendable db in
                    let row = try Row.fetchOne(
                        db.cachedStatement(sql: "SELECT id, name, kids, km FROM people WHERE id = ?"),
                        arguments: [index % count + 1])
                    return row?["name"] as String?
                }
            }
        }

        // sqlite-nio: one connection on NIO's thread pool, async API.
        let connection = try await SQLiteConnection.open(storage: .file(path: directory + "nio.sqlite"))
        _ = try await connection.query("PRAGMA journal_mode = WAL")
        _ = try await connection.query("PRAGMA synchronous = NORMAL")
        _ = try await connection.query(table)
        let nioInsert = try await microseconds(count) {
            for index in 0..<count {
                _ = try await connection.query(
                    "INSERT INTO people (name, kids, km) VALUES (?, ?, ?)",
                    [.text("p\(index)"), .integer(index % 4), .float(1.5)])
            }
        }
        let nioBulk = try await microseconds(count) {
            _ = try await connection.query("BEGIN")
            for index in 0..<count {
                _ = try await connection.query(
                    "INSERT INTO people (name, kids, km) VALUES (?, ?, ?)",
                    [.text("b\(index)"), .integer(index % 4), .float(2.5)])
            }
            _ = try await connection.query("COMMIT")
        }
        let nioRead = try await microseconds(count) {
            for index in 0..<count {
                let rows = try await connection.query(
                    "SELECT id, name, kids, km FROM people WHERE id = ?", [.integer(index % count + 1)])
                _ = rows.first?.column("name")?.string
            }
        }
        try await connection.close()

        print("| operation (µs each, \(count) sequential) | GRDB 7.10.0 | sqlite-nio 1.13.2 | sqlite-nio / GRDB |")
        print("|---|---:|---:|---:|")
        func row(_ name: String, _ grdb: Double, _ nio: Double) {
            print(
                "| \(name) | \(String(format: "%.1f", grdb)) | \(String(format: "%.1f", nio)) | \(String(format: "%.2f", nio / grdb)) |"
            )
        }
        row("point read by key (GRDB `read`)", grdbRead, nioRead)
        row("point read by key (GRDB `unsafeRead`)", grdbUnsafeRead, nioRead)
        row("insert, one transaction each", grdbInsert, nioInsert)
        row("insert, \(count) in one transaction (per row)", grdbBulk, nioBulk)
    }
}
