import ArgumentParser

/// The `hammock` command: a thin front end over HammockServer.
@main
struct Hammock: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hammock",
        abstract: "A REST toolkit: serve a mock REST API described in a JSON file.",
        version: "0.1.0",
        subcommands: [Serve.self, Routes.self]
    )
}
