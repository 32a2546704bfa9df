import ArgumentParser
import Foundation
import HammockOpenAPI
import HammockServer

/// `hammock generate swift CONFIG`: source code for the mock's clients.
struct Generate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print source code for a client of the mock a configuration file or an OpenAPI document describes.",
        subcommands: [GenerateSwift.self])
}

/// `hammock generate swift CONFIG [--name PetStore]`: Codable models and an `@API` protocol.
struct GenerateSwift: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "swift",
        abstract: "Print Swift source: Codable models of the resources and an @API protocol with a method per route.",
        discussion: """
            HammockClient's @API macro turns the protocol into NAMEClient: \
            `let api = PetStoreClient(client: RestClient(baseURL: url))`. The same file always gives the same source.
            """)

    @Argument(help: "The configuration file (JSON, or YAML by its .yaml or .yml extension), or an OpenAPI 3.0 or 3.1 document.")
    var config: String

    @Option(help: "The protocol's name (the client is NAMEClient); the file's name by default.")
    var name: String?

    func run() async throws {
        let server = try await Serve.describedServer(Serve.readConfiguration(config), file: config, withData: false)
        let file = config.split(separator: "/").last.map(String.init) ?? config
        let source = SwiftClientSource.make(
            for: server, name: name ?? SwiftClientSource.typeName(Serve.documentTitle(for: config)), origin: file)
        // Names and paths come from a file someone else may have written: a source that would not read as
        // a plain client (an escape the generator missed) is refused, never printed.
        let problems = SwiftSourceCheck.problems(in: source)
        guard problems.isEmpty else {
            Serve.printError(
                "hammock: the client for \(config) would not be plain Swift (\(problems.prefix(3).joined(separator: "; "))); "
                    + "nothing was printed. This is a bug in Hammock: please report it with the file.")
            throw ExitCode(1)
        }
        FileHandle.standardOutput.write(Data(source.utf8))
    }
}
