import ArgumentParser
import Foundation
import HammockServer

/// `hammock init [FILE]`: writes a starter configuration and says how to serve it.
struct Init: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a starter configuration: two related resources, a route of your own, sample data.",
        discussion: "The file is checked as `hammock serve` would read it. An existing file is kept unless --force."
    )

    @Argument(help: "The file to write.")
    var file = "hammock.json"

    @Flag(help: "Replace the file if it exists.")
    var force = false

    /// The starter: authors and their posts, a login stub, and a few records.
    static let starter = """
        {
          "port": 8888,
          "resources": [
            {"name": "authors", "fields": {"name": "string", "email": "string"}},
            {"name": "posts", "fields": {"title": "string", "body": "string", "publishedOn": "date", "likes": "integer"},
             "parents": ["authors"]}
          ],
          "data": {
            "authors": [
              {"name": "Ada Lovelace", "email": "ada@example.com"},
              {"name": "Grace Hopper", "email": "grace@example.com"}
            ],
            "posts": [
              {"title": "Notes on the engine", "body": "It weaves algebraic patterns.", "publishedOn": "2026-01-05", "likes": 12, "author_id": 1},
              {"title": "Finding the moth", "body": "First actual case of a bug.", "publishedOn": "2026-02-09", "likes": 30, "author_id": 2}
            ]
          },
          "routes": [
            {"method": "POST", "path": "/login", "match": {"body": {"password": "secret"}},
             "body": {"token": "t-{{body.username}}"}},
            {"method": "POST", "path": "/login", "status": 401, "body": {"error": "wrong password"}}
          ]
        }

        """

    func run() async throws {
        if FileManager.default.fileExists(atPath: file) && !force {
            Serve.printError("hammock: \(file) exists; choose another name, or --force to replace it")
            throw ExitCode(1)
        }
        // The starter must always be one `hammock serve` accepts.
        _ = try ServerConfiguration(parsing: Array(Self.starter.utf8), file: file)
        do {
            try Data(Self.starter.utf8).write(to: URL(fileURLWithPath: file))
        } catch {
            Serve.printError("hammock: cannot write \(file): \(error.localizedDescription)")
            throw ExitCode(1)
        }
        Serve.printLine("wrote \(file): authors and their posts, a POST /login route, sample data")
        Serve.printLine("serve it with:  hammock serve \(file)")
        Serve.printLine("then try:       curl localhost:8888/authors/1/posts")
    }
}
