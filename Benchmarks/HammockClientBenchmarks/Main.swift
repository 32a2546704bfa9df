import Foundation
import HammockClient
import HammockHTTPServer
import HammockServer
import HammockTesting

struct Person: Codable, Sendable {
    var id: Int?
    var name: String?
    var numberOfKids: Int?
}

@API
protocol BenchPeople: Sendable {
    @GET("/people/{id}")
    func person(id: Int) async throws -> Person
}

/// What a developer would write by hand on the same transport: build the request, send, check, decode.
struct HandWritten: Sendable {
    let transport: any HTTPTransport
    let scheme: String
    let authority: String

    func person(id: Int) async throws -> Person {
        let request = HTTPRequest(method: .get, scheme: scheme, authority: authority, path: "/people/\(id)")
        let (response, body) = try await transport.send(request, body: nil)
        guard (200..<300).contains(response.status.code) else { throw URLError(.badServerResponse) }
        return try JSONDecoder().decode(Person.self, from: Data(body))
    }
}

/// `swift run -c release hammock-client-bench [--calls N]`: generated client against hand-written calls
/// on the same transport and server, in the same run.
@main
struct ClientBench {
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// The best of `rounds` timings of `calls` sequential calls, in seconds per call.
    static func measure(calls: Int, rounds: Int, _ call: @Sendable (Int) async throws -> Void) async throws -> Double {
        var best = Double.infinity
        for _ in 0..<rounds {
            let start = ContinuousClock.now
            for index in 0..<calls { try await call(index % 100 + 1) }
            best = min(best, seconds(ContinuousClock.now - start) / Double(calls))
        }
        return best
    }

    static func main() async throws {
        let arguments = CommandLine.arguments
        let calls = arguments.firstIndex(of: "--calls").flatMap { Int(arguments[$0 + 1]) } ?? 2000
        let people = MockResource("people", fields: ["name": .string, "numberOfKids": .integer])
        let server = try await MockServer(resources: [people])
        try await server.addData(
            .array((1...100).map { ["name": .string("person \($0)"), "numberOfKids": .integer($0 % 4)] }), for: "people")
        let port = try await server.start(port: 0)

        let inProcess = MockServerTransport(server: server)
        let loopback = URLSessionTransport()
        let cases: [(String, any HTTPTransport, String, Int)] = [
            ("in process (MockServerTransport)", inProcess, "mock", calls * 10),
            ("loopback (URLSessionTransport)", loopback, "127.0.0.1:\(port)", calls),
        ]
        print("| GET /people/:id, sequential | generated | hand-written | overhead per call | calls/s ratio |")
        print("|---|---:|---:|---:|---:|")
        for (name, transport, authority, count) in cases {
            let generated = BenchPeopleClient(
                client: RestClient(baseURL: URL(string: "http://\(authority)")!, transport: transport))
            let handWritten = HandWritten(transport: transport, scheme: "http", authority: authority)
            // Warm up both, then alternate twice and keep each one's best.
            _ = try await measure(calls: count / 10, rounds: 1) { _ = try await generated.person(id: $0) }
            _ = try await measure(calls: count / 10, rounds: 1) { _ = try await handWritten.person(id: $0) }
            var generatedTime = Double.infinity
            var handTime = Double.infinity
            for _ in 0..<2 {
                handTime = min(handTime, try await measure(calls: count, rounds: 1) { _ = try await handWritten.person(id: $0) })
                generatedTime = min(
                    generatedTime, try await measure(calls: count, rounds: 1) { _ = try await generated.person(id: $0) })
            }
            let overhead = (generatedTime - handTime) * 1e6
            print(
                String(
                    format: "| %@ | %.1f µs (%.0f/s) | %.1f µs (%.0f/s) | %+.1f µs (%+.1f%%) | %.2f |", name, generatedTime * 1e6,
                    1 / generatedTime, handTime * 1e6, 1 / handTime, overhead, (generatedTime / handTime - 1) * 100,
                    handTime / generatedTime))
        }
        await server.stop()
    }
}
