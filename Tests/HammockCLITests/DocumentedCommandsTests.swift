import Foundation
import Testing

/// The shell sessions the README and docs/server.md print, run as printed.
///
/// A fenced block with `$ ` lines is a transcript: each `$ ` line is a command and the lines up to the
/// next one are what it prints. `$ swift run hammock serve ARGS` (or `$ hammock serve ARGS`) starts
/// the built `hammock` on a free port, and each line printed under it must appear in the server's
/// output; a transcript that starts with `curl` runs against `hammock serve Examples/people.json`.
/// `$ curl ARGS` runs the system's curl with `localhost:PORT` pointed at that server, and its output
/// must equal the printed lines joined (a line's leading spaces are the text's wrapping, not output).
/// Every transcript runs twice, each time on a fresh server, because a reader runs it more than once.
/// A `sh` block without `$ ` lines must say why it is not run in an HTML comment just above it:
/// `<!-- not run: REASON -->`.
@Suite("The commands the documentation prints", .serialized, .timeLimit(.minutes(2)))
struct DocumentedCommandsTests {
    static let documents = ["README.md", "docs/server.md"]

    @Test("Every shell block in the README and docs/server.md is a transcript or says why it is not run")
    func everyShellBlockIsRunOrExplained() throws {
        for document in Self.documents {
            let blocks = DocumentedShellBlocks.parse(try Self.read(document))
            #expect(!blocks.isEmpty, "\(document) has no shell blocks")
            for block in blocks {
                switch block.kind {
                case .transcript(let steps): #expect(!steps.isEmpty)
                case .notRun(let reason): #expect(!reason.isEmpty, "\(document):\(block.line): a reason")
                case .unexplained:
                    Issue.record("\(document):\(block.line): a shell block with no `$ ` lines and no `<!-- not run: … -->`")
                }
            }
        }
    }

    @Test(
        "Every command the README and docs/server.md print answers what they print, on a first run and a second",
        arguments: documents)
    func transcriptsAnswerAsPrinted(document: String) async throws {
        let transcripts = DocumentedShellBlocks.parse(try Self.read(document)).compactMap { block in
            if case .transcript(let steps) = block.kind { (block.line, steps) } else { nil }
        }
        #expect(!transcripts.isEmpty)
        for (line, steps) in transcripts {
            for run in 1...2 {
                try await Self.play(steps, place: "\(document):\(line), run \(run)")
            }
        }
    }

    @Test("The transcript reader splits words as a shell does and knows a comment from a #")
    func shellWords() throws {
        #expect(
            try DocumentedShellBlocks.words(#"curl -X POST -d '{"a":"b c"}' "x y" z\ w  # a comment"#)
                == ["curl", "-X", "POST", "-d", #"{"a":"b c"}"#, "x y", "z w"])
        #expect(try DocumentedShellBlocks.words("curl 'localhost:8888/people?q=#1'") == ["curl", "localhost:8888/people?q=#1"])
        #expect(throws: DocumentedShellBlocks.UnclosedQuote.self) { try DocumentedShellBlocks.words("curl 'open") }
        let blocks = DocumentedShellBlocks.parse(
            """
            text
            <!-- not run: needs a database -->
            ```sh
            psql
            ```
            ```sh
            $ curl localhost:8888/a   # note
            {"a":1,
             "b":2}
            $ curl localhost:8888/b
            ```
            ```text
            GET /a → 200
            ```
            ```sh
            curl x
            ```
            """)
        #expect(blocks.count == 3)
        #expect(blocks.first?.kind == .notRun("needs a database"))
        #expect(
            blocks.dropFirst().first?.kind
                == .transcript([
                    .init(command: "curl localhost:8888/a   # note", output: [#"{"a":1,"#, #" "b":2}"#], line: 7),
                    .init(command: "curl localhost:8888/b", output: [], line: 10),
                ]))
        #expect(blocks.last?.kind == .unexplained)
    }

    static func read(_ document: String) throws -> String {
        try String(contentsOf: HammockProcess.packageRoot.appendingPathComponent(document), encoding: .utf8)
    }

    /// Runs one transcript against a server of its own, and stops it.
    static func play(_ steps: [DocumentedShellBlocks.Step], place: String) async throws {
        var steps = steps[...]
        var serveArguments = ["Examples/people.json"]
        var serverOutput: [String] = []
        if let first = steps.first, let arguments = try Self.serveArguments(first.command) {
            serveArguments = arguments
            serverOutput = first.output
            steps = steps.dropFirst()
        }
        let server = try await DocumentedServer.start(serveArguments)
        do {
            try await Self.play(steps, serverOutput: serverOutput, on: server, place: place)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    static func play(
        _ steps: ArraySlice<DocumentedShellBlocks.Step>, serverOutput: [String], on server: DocumentedServer, place: String
    ) async throws {
        for expected in serverOutput {
            let seen = await server.waitForLine(expected)
            #expect(seen, "\(place): `hammock serve` never printed \(expected)")
        }
        for step in steps {
            let words = try DocumentedShellBlocks.words(step.command)
            guard words.first == "curl" else {
                Issue.record("\(place), line \(step.line): only `hammock serve` and `curl` run here, not \(step.command)")
                continue
            }
            let arguments = words.dropFirst().map { server.pointedAtServer($0) }
            let output = try await Self.curl(Array(arguments))
            let printed = step.output.map { $0.drop { $0 == " " } }.joined()
            #expect(output == printed, "\(place), line \(step.line): \(step.command)")
        }
    }

    /// The arguments after `serve` when `command` starts a server; `nil` for any other command.
    static func serveArguments(_ command: String) throws -> [String]? {
        var words = try DocumentedShellBlocks.words(command)[...]
        if words.starts(with: ["swift", "run"]) { words = words.dropFirst(2) }
        guard words.starts(with: ["hammock", "serve"]) else { return nil }
        var arguments = Array(words.dropFirst(2))
        // The server takes a free port (`--port 0`, added below), not the one the reader's would use.
        if let port = arguments.firstIndex(of: "--port") { arguments.removeSubrange(port...min(port + 1, arguments.count - 1)) }
        return arguments
    }

    /// The system's curl, quiet but for errors; its standard output, whole.
    static func curl(_ arguments: [String]) async throws -> String {
        let process = try HammockProcess(["-sS", "--max-time", "20"] + arguments, executable: "/usr/bin/curl")
        var lines: [String] = []
        for await line in process.lines { lines.append(line) }
        let status = await process.exitStatus()
        #expect(status == 0, "curl \(arguments): \(process.errorOutput.withLock { $0 })")
        return lines.joined(separator: "\n")
    }
}

/// `hammock serve` for a transcript: its address, and its output as it comes.
struct DocumentedServer {
    let process: HammockProcess
    /// `127.0.0.1:PORT`.
    let authority: String
    let printed: LockedText

    struct NoBanner: Error, CustomStringConvertible {
        var description: String
    }

    static func start(_ arguments: [String]) async throws -> DocumentedServer {
        let process = try HammockProcess(["serve"] + arguments + ["--port", "0"])
        let printed = LockedText()
        var authority: String?
        for await line in process.lines {
            printed.withLock { $0 += line + "\n" }
            if line.hasPrefix("Hammock is serving"), let url = line.split(separator: " ").last,
                let components = URLComponents(string: String(url)), let host = components.host, let port = components.port
            {
                authority = "\(host):\(port)"
                break
            }
        }
        guard let authority else {
            throw NoBanner(description: "hammock serve \(arguments) printed no banner: \(process.errorOutput.withLock { $0 })")
        }
        return DocumentedServer(process: process, authority: authority, printed: printed)
    }

    func stop() async {
        process.interrupt()
        let status = await process.exitStatus()
        #expect(status == 0, "hammock serve exited with \(status): \(process.errorOutput.withLock { $0 })")
    }

    /// Whether the server prints `line` (or has), within 20 seconds.
    func waitForLine(_ line: String) async -> Bool {
        if printed.withLock({ $0.split(separator: "\n").contains { $0 == line } }) { return true }
        let lines = process.lines
        let printed = self.printed
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await next in lines {
                    printed.withLock { $0 += next + "\n" }
                    if next == line { return true }
                }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(20))
                return false
            }
            let found = await group.next() ?? false
            group.cancelAll()
            return found
        }
    }

    /// `word` with a `localhost:PORT` or `127.0.0.1:PORT` address pointed at this server.
    func pointedAtServer(_ word: String) -> String {
        guard let match = word.firstMatch(of: /(localhost|127\.0\.0\.1):[0-9]+/) else { return word }
        return word.replacingCharacters(in: match.range, with: authority)
    }
}

/// The shell blocks of a Markdown text.
enum DocumentedShellBlocks {
    struct Step: Equatable {
        var command: String
        var output: [String]
        var line: Int
    }

    enum Kind: Equatable {
        case transcript([Step])
        case notRun(String)
        case unexplained
    }

    struct Block {
        var kind: Kind
        /// The line of the opening fence, from 1.
        var line: Int
    }

    struct UnclosedQuote: Error {}

    static let shellFences: Set<Substring> = ["sh", "bash", "shell", "console", "text"]

    static func parse(_ markdown: String) -> [Block] {
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false)
        var blocks: [Block] = []
        var index = 0
        while index < lines.count {
            let fence = lines[index].drop { $0 == " " }
            guard fence.hasPrefix("```") else {
                index += 1
                continue
            }
            let info = fence.dropFirst(3)
            let opening = index
            var body: [(Int, Substring)] = []
            index += 1
            while index < lines.count, !lines[index].drop(while: { $0 == " " }).hasPrefix("```") {
                body.append((index + 1, lines[index]))
                index += 1
            }
            index += 1
            guard shellFences.contains(info) else { continue }
            var steps: [Step] = []
            for (number, text) in body {
                if text.hasPrefix("$ ") {
                    steps.append(Step(command: String(text.dropFirst(2)), output: [], line: number))
                } else if !steps.isEmpty {
                    steps[steps.count - 1].output.append(String(text))
                }
            }
            if !steps.isEmpty {
                blocks.append(Block(kind: .transcript(steps), line: opening + 1))
                continue
            }
            guard info != "text" else { continue }  // a text block without `$ ` shows no command
            let previous = opening > 0 ? lines[opening - 1] : ""
            if let reason = previous.firstMatch(of: /<!-- not run: (.+) -->/) {
                blocks.append(Block(kind: .notRun(String(reason.1)), line: opening + 1))
            } else {
                blocks.append(Block(kind: .unexplained, line: opening + 1))
            }
        }
        return blocks
    }

    /// `command`'s words as a POSIX shell splits them: single and double quotes, backslash escapes, and a
    /// `#` that starts a word starts a comment.
    static func words(_ command: String) throws -> [String] {
        var words: [String] = []
        var word = ""
        var inWord = false
        var characters = command.makeIterator()
        while let character = characters.next() {
            switch character {
            case " ", "\t":
                if inWord { words.append(word) }
                word = ""
                inWord = false
            case "#" where !inWord:
                return words
            case "'":
                inWord = true
                while true {
                    guard let next = characters.next() else { throw UnclosedQuote() }
                    if next == "'" { break }
                    word.append(next)
                }
            case "\"":
                inWord = true
                while true {
                    guard let next = characters.next() else { throw UnclosedQuote() }
                    if next == "\"" { break }
                    if next == "\\", let escaped = characters.next() {
                        if !"\"\\$`".contains(escaped) { word.append(next) }
                        word.append(escaped)
                    } else {
                        word.append(next)
                    }
                }
            case "\\":
                inWord = true
                if let escaped = characters.next() { word.append(escaped) }
            default:
                inWord = true
                word.append(character)
            }
        }
        if inWord { words.append(word) }
        return words
    }
}
