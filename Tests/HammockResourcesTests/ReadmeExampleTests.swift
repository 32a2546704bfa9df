import Foundation
import HammockClient
import HammockHTTPServer
import HammockResources
import HammockServer
import HammockTesting
import Testing

/// The README's resources example, kept compiling and true: the same lines in a screen-like owner,
/// against the mock server on loopback through the default transport.
@MainActor
@Suite("README example: observable resources", .timeLimit(.minutes(1)))
struct ReadmeResourcesExampleTests {
    struct Person: Decodable, Equatable, Sendable {
        var name: String
        static let empty = Person(name: "")
    }

    /// What a screen has: a spinner, a label, a way to show a person.
    @MainActor
    final class Screen {
        final class Spinner { var isHidden = false }
        final class Label { var text: String? }
        let spinner = Spinner()
        let errorLabel = Label()
        var shown: [Person] = []
        func render(_ person: Person) { shown.append(person) }

        func show(baseURL: String) throws -> HammockResources.Resource {
            // From the README (the server's URL instead of 127.0.0.1:8888):
            let api = try Service(baseURL: baseURL)
            api.configure("/people/*") { $0.pipeline[.model] = [.decoding(Person.self)] }
            let john = api.resource("/people").child("1")  // the same object as api.resource("/people/1")
            john.addObserver(owner: self) { [weak self] resource, event in
                guard let self else { return }
                spinner.isHidden = !resource.isLoading
                render(resource.latestData.typedContent(ifNone: Person.empty))
                errorLabel.text = resource.latestError?.userMessage
            }
            john.loadIfNeeded()  // as often as you like
            // Checks need the resource and the service it came from:
            #expect(john === api.resource("/people/1"))
            return john
        }
    }

    @Test("A screen observes a person, shows it, and hides its spinner")
    func observableResources() async throws {
        let server = try await MockServer(resources: [MockResource("people", fields: ["name": .string])])
        _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": "john"]))
        try await server.whileServing { port in
            let screen = Screen()
            let john = try screen.show(baseURL: "http://127.0.0.1:\(port)")
            #expect(await eventually { screen.shown.last == Person(name: "john") })
            #expect(screen.spinner.isHidden)
            #expect(screen.errorLabel.text == nil)
            withExtendedLifetime(john) {}
        }
    }
}
