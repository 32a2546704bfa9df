import ArgumentParser
import HammockServer

/// The `hammock` command: a thin front end over HammockServer.
@main
struct Hammock: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hammock",
        abstract: "A REST toolkit: serve a mock REST API described in a JSON or YAML file, or an OpenAPI document.",
        version: MockServer.version,
        subcommands: [Serve.self, Record.self, Trust.self, Routes.self, OpenAPI.self, Generate.self, Init.self, Doctor.self]
    )
}
