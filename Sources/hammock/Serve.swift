import ArgumentParser
import Foundation
import HammockServer
import Logging
import ServiceLifecycle
import UnixSignals

/// `hammock serve CONFIG`: loads the configuration, opens the store, loads sample data, listens.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the resources described in a configuration file.",
        discussion: """
            The store defaults to an SQLite file next to the configuration (people.json → people.sqlite).
            The file's "data" section is loaded only when the store is empty.
            """
    )

    @Argument(help: "The JSON configuration file.")
    var config: String

    @Option(help: "The address to bind (default: the file's host, else 127.0.0.1).")
    var host: String?

    @Option(help: "The port to bind; 0 picks a free one (default: the file's port, else 8888).")
    var port: Int?

    @Option(help: "Where records live: memory or sqlite:PATH.")
    var store: String?

    @Option(help: "Simulated response time in seconds: MIN..MAX, or one value.")
    var latency: String?

    @Flag(help: "Do not log each request.")
    var quiet = false

    func run() async throws {
        var configuration: ServerConfiguration
        do {
            configuration = try ServerConfiguration(contentsOfFile: config)
            try applyFlags(to: &configuration)
        } catch let error as ConfigurationError {
            Self.printError(error.description)
            throw ExitCode(2)
        }
        let location = configuration.store ?? .sqlite(path: Self.defaultStorePath(for: config))
        var logger = Logger(label: "hammock", factory: { StreamLogHandler.standardOutput(label: $0) })
        logger.logLevel = quiet ? .warning : .info
        let server: MockServer
        do {
            server = try await MockServer(configuration: configuration, store: location.makeStore(), logger: logger)
        } catch {
            Self.printError("\(config): \(error)")
            throw ExitCode(2)
        }
        let total = configuration.data.reduce(0) { $0 + ($1.records.arrayValue?.count ?? 0) }
        let reports = try await server.loadData(from: configuration) { resource, done, count in
            if total >= 1000 { Self.printError("loading \(resource): \(done)/\(count)") }
        }
        let host = configuration.host ?? "127.0.0.1"
        let port: Int
        do {
            port = try await server.start(host: host, port: configuration.port ?? 8888)
        } catch {
            Self.printError("hammock: \(error)")
            throw ExitCode(1)
        }
        printBanner(server: server, url: "http://\(host):\(port)", store: location, reports: reports)
        for await _ in await UnixSignalsSequence(trapping: .sigint, .sigterm) { break }
        Self.printLine("stopping")
        await server.stop()
    }

    func applyFlags(to configuration: inout ServerConfiguration) throws {
        if let host { configuration.host = host }
        if let port {
            guard (0...65535).contains(port) else { throw ConfigurationError(file: "--port", keyPath: "", message: "\(port) is not a port") }
            configuration.port = port
        }
        if let store {
            guard let location = StoreLocation(parsing: store) else {
                throw ConfigurationError(file: "--store", keyPath: "", message: "expected memory or sqlite:PATH, found \(store)")
            }
            configuration.store = location
        }
        if let latency {
            guard let range = Self.parseLatency(latency) else {
                throw ConfigurationError(file: "--latency", keyPath: "", message: "expected seconds as MIN..MAX or one value, found \(latency)")
            }
            configuration.latency = range
        }
    }

    static func parseLatency(_ text: String) -> Latency? {
        let parts = text.components(separatedBy: "..")
        let numbers = parts.compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard numbers.count == parts.count, (1...2).contains(numbers.count), numbers.allSatisfy({ $0 >= 0 && $0 <= 3600 }),
            let minimum = numbers.first, let maximum = numbers.last, minimum <= maximum
        else { return nil }
        return Latency(minimumSeconds: minimum, maximumSeconds: maximum)
    }

    /// `dir/people.json` → `dir/people.sqlite`.
    static func defaultStorePath(for config: String) -> String {
        let url = URL(fileURLWithPath: config)
        return url.deletingPathExtension().appendingPathExtension("sqlite").path
    }

    func printBanner(server: MockServer, url: String, store: StoreLocation, reports: [(resource: String, report: LoadReport)]) {
        Self.printLine("Hammock is serving \(config) at \(url)")
        Self.printLine("store: \(store)")
        for (resource, report) in reports { Self.printLine("data: \(resource): \(report)") }
        Self.printLine(RouteTable.render(server.routeTable))
    }

    /// Writes a line to standard output at once (no buffering), so a supervising process sees it.
    static func printLine(_ message: String) {
        FileHandle.standardOutput.write(Data((message + "\n").utf8))
    }

    static func printError(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}

/// `hammock routes CONFIG`: prints the route table without serving.
struct Routes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the routes a configuration file defines.")

    @Argument(help: "The JSON configuration file.")
    var config: String

    func run() async throws {
        let configuration: ServerConfiguration
        do {
            configuration = try ServerConfiguration(contentsOfFile: config)
        } catch {
            Serve.printError(error.description)
            throw ExitCode(2)
        }
        let server = try await MockServer(configuration: configuration, store: MemoryStore())
        print(RouteTable.render(server.routeTable))
    }
}

enum RouteTable {
    static func render(_ rows: [(methods: String, pattern: String, resource: String)]) -> String {
        let header = ("Verbs", "URI Pattern", "Resource")
        let verbWidth = max(header.0.count, rows.map(\.methods.count).max() ?? 0)
        let patternWidth = max(header.1.count, rows.map(\.pattern.count).max() ?? 0)
        func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: width - text.count) }
        var lines = ["\(pad(header.0, verbWidth))  \(pad(header.1, patternWidth))  \(header.2)"]
        for row in rows { lines.append("\(pad(row.methods, verbWidth))  \(pad(row.pattern, patternWidth))  \(row.resource)") }
        return lines.joined(separator: "\n")
    }
}
