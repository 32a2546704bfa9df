import Foundation
import HammockClient
import HammockHTTPServer
import HammockJWT
import HammockResources
import HammockServer

/// A person as the app sees it: what `GET /people/:id` answers.
struct Person: Codable, Equatable, Sendable {
    var id: Int
    var name: String
    var email: String?
    var city: String?
}

/// What a rename sends.
struct PersonChanges: Codable, Sendable {
    var name: String
}

/// The API, declared: the client is generated, and so is `PeopleMock` for view-model tests.
@API
protocol People: Sendable {
    @GET("/people/{id}")
    func person(id: Int) async throws -> Person

    @PATCH("/people/{id}")
    @Body("changes")
    func update(id: Int, changes: PersonChanges) async throws -> Person
}

/// `swift run people-browser`: a command-line app over a people API that signs in, pages through the
/// list, opens a person, renames them optimistically and signs out: the typed road of HammockResources
/// from end to end. Commands come one per line on standard input (`help` lists them).
///
/// Without arguments it starts the mock of `people-browser.json` (beside this file) on a free port of
/// 127.0.0.1, so it runs anywhere the repository is checked out; with `--base-url URL` it talks to that
/// server instead (`swift run hammock serve Examples/PeopleBrowser/people-browser.json`). CI runs it
/// (`PeopleBrowserTests`), so this example cannot rot.
@main
struct PeopleBrowser {
    static func main() async {
        do {
            try await Browser.run(arguments: Array(CommandLine.arguments.dropFirst()))
        } catch {
            FileHandle.standardError.write(Data("people-browser: \(error)\n".utf8))
            exit(1)
        }
    }
}

@MainActor
final class Browser {
    let service: Service
    let authenticator: Authenticator
    let tokens: OAuthTokenEndpoint
    let people: PeopleClient
    /// The list, five people a page, paged by the cursor its envelope gives.
    let list: PagedResource<Person>

    init(baseURL: URL) throws {
        tokens = OAuthTokenEndpoint(url: baseURL.appending(path: "auth/token"), clientID: "people-browser")
        authenticator = Authenticator(tokenEndpoint: tokens)
        service = try Service(baseURL: baseURL, interceptors: [authenticator])
        people = PeopleClient(client: try service.restClient())
        list = service.pagedResource(
            "/people?_cursor=&_limit=5", of: Person.self, paging: .cursor(nextCursor: "next_cursor", items: "data"))
    }

    static func run(arguments: [String]) async throws {
        var server: MockServer?
        let baseURL: URL
        if let flag = arguments.firstIndex(of: "--base-url") {
            guard arguments.indices.contains(flag + 1), let url = URL(string: arguments[flag + 1]) else {
                throw BrowserError("--base-url needs a URL, such as http://localhost:8891")
            }
            baseURL = url
        } else {
            let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(path: "people-browser.json")
            let configuration = try ServerConfiguration(contentsOfFile: file.path)
            let mock = try await MockServer.inMemory(configuration, seed: 7, tokenSigner: JWTAccessTokens())
            _ = try await mock.start(host: "127.0.0.1", port: 0)
            guard let url = await mock.baseURL else { throw BrowserError("the demo server has no address") }
            (server, baseURL) = (mock, url)
        }
        let browser = try Browser(baseURL: baseURL)
        print("people-browser on \(baseURL.absoluteString); type help")
        for await line in StandardInput.lines() {
            let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard let command = words.first else { continue }
            if command == "quit" { break }
            await browser.perform(command, Array(words.dropFirst()))
        }
        await server?.stop()
    }

    func perform(_ command: String, _ arguments: [String]) async {
        do {
            switch (command, arguments.count) {
            case ("signin", 2):
                await authenticator.signIn(try await tokens.signIn(username: arguments[0], password: arguments[1]))
                print("signed in as \(arguments[0])")
            case ("list", 0):
                // The first page, or every loaded page again if a write made them stale.
                try await list.loadIfNeeded()
                showList()
            case ("more", 0):
                try await list.loadNextPage()
                showList()
            case ("all", 0):
                while list.hasNextPage { try await list.loadNextPage() }
                showList()
            case ("refresh", 0):
                try await list.refresh()
                showList()
            case ("show", 1):
                let person = service.resource(people.endpoints.person(id: try number(arguments[0])))
                show(try await person.loadIfNeeded())
            case ("rename", 2...):
                let id = try number(arguments[0])
                let name = arguments.dropFirst().joined(separator: " ")
                let person = service.resource(people.endpoints.person(id: id))
                try await person.loadIfNeeded()
                // Shown at once, sent, rolled back if refused; the list and the person go stale either way.
                let saved = try await person.mutate {
                    $0.name = name
                } send: {
                    try await self.people.update(id: id, changes: PersonChanges(name: name))
                }
                print("renamed #\(saved.id) to \(saved.name); list up to date: \(list.isUpToDate)")
            case ("signout", 0):
                await service.signOut(authenticator)
                print("signed out; people shown: \(list.items.count)")
            case ("help", _):
                print("signin USER PASSWORD, list, more, all, refresh, show ID, rename ID NAME, signout, quit")
            default:
                print("unknown command '\(command)'; type help")
            }
        } catch let error as AuthenticationError where error.reason == .signInRejected {
            print("sign-in refused: \(error.detail)")
        } catch let error as any RequestFailure where error.status == .unauthorized {
            print("sign in first (401)")
        } catch {
            print("error: \(error)")
        }
    }

    func number(_ text: String) throws -> Int {
        guard let value = Int(text) else { throw BrowserError("'\(text)' is not a number") }
        return value
    }

    func showList() {
        let items = list.items
        print("people: \(items.count) loaded in \(list.pages.count) pages; more: \(list.hasNextPage ? "yes" : "no")")
        for person in items { print("  #\(person.id) \(person.name)") }
    }

    func show(_ person: Person) {
        print("#\(person.id) \(person.name) <\(person.email ?? "")> \(person.city ?? "")")
    }
}

struct BrowserError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Standard input's lines, read on a thread of their own: a blocking read on the main actor would hold
/// up the work the answers schedule there.
enum StandardInput {
    static func lines() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        Thread.detachNewThread {
            while let line = readLine() { continuation.yield(line) }
            continuation.finish()
        }
        return stream
    }
}
