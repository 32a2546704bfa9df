import Foundation
import HammockClient
import HammockHTTPServer
import HammockServer
import HammockTesting
import HammockURLSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

/// URLSession's own cost, the floor of any URLProtocol: answers every request at once with a fixed
/// person, on the thread that asked, with no server behind it.
final class FixedAnswerProtocol: URLProtocol {
    static let body = Data(#"{"id":1,"name":"person 1","numberOfKids":1}"#.utf8)
    override class func canInit(with request: URLRequest) -> Bool { request.url?.host == "fixed.invalid" }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }
    override func startLoading() {
        guard let url = request.url,
            let response = HTTPURLResponse(
                url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Content-Type": "application/json"])
        else { return }
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: Self.body)
        client?.urlProtocolDidFinishLoading(self)
    }
    override func stopLoading() {}
}

/// `swift run -c release hammock-client-bench [--calls N]`: generated client against hand-written calls
/// on the same transport and server, in the same run. `hammock-client-bench download [--megabytes N]`:
/// ``DownloadBenchmark``.
@main
struct ClientBench {
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// CPU time of the whole process so far (user + system), in seconds.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// Wall and CPU seconds per call of `calls` sequential calls.
    static func measureBoth(calls: Int, _ call: @Sendable (Int) async throws -> Void) async throws -> (wall: Double, cpu: Double)
    {
        let cpu = cpuSeconds()
        let start = ContinuousClock.now
        for index in 0..<calls { try await call(index % 100 + 1) }
        return (seconds(ContinuousClock.now - start) / Double(calls), (cpuSeconds() - cpu) / Double(calls))
    }

    static func fixedSession() -> URLSessionTransport {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [FixedAnswerProtocol.self]
        return URLSessionTransport(session: URLSession(configuration: configuration))
    }

    /// The same hand-written GET through the three ways a test reaches a mock: HammockClient's in-process
    /// transport, URLSession in process (`urlSessionConfiguration`), URLSession over loopback.
    static func waysIn(server: MockServer, port: Int, calls: Int) async throws {
        let ways: [(String, any HTTPTransport, String)] = [
            ("MockServerTransport (HammockClient, in process)", MockServerTransport(server: server), "mock"),
            (
                "URLSession in process (urlSessionConfiguration)",
                URLSessionTransport(session: URLSession(configuration: server.urlSessionConfiguration())),
                server.inProcessURL.host ?? ""
            ),
            ("URLSession over loopback", URLSessionTransport(), "127.0.0.1:\(port)"),
            ("URLSession's floor: a URLProtocol answering at once, no server", fixedSession(), "fixed.invalid"),
        ]
        var results: [(wall: Double, cpu: Double)] = Array(repeating: (.infinity, .infinity), count: ways.count)
        for way in ways {
            let call = HandWritten(transport: way.1, scheme: "http", authority: way.2)
            _ = try await measureBoth(calls: calls / 10) { _ = try await call.person(id: $0) }
        }
        // Three rounds, the ways interleaved; each keeps its best.
        for _ in 0..<3 {
            for (index, way) in ways.enumerated() {
                let call = HandWritten(transport: way.1, scheme: "http", authority: way.2)
                let result = try await measureBoth(calls: calls) { _ = try await call.person(id: $0) }
                results[index] = (min(results[index].wall, result.wall), min(results[index].cpu, result.cpu))
            }
        }
        print("")
        print(
            "| GET /people/:id, sequential, \(calls) calls × best of 3 | time per call | CPU per call | time vs MockServerTransport |"
        )
        print("|---|---:|---:|---:|")
        for (index, way) in ways.enumerated() {
            print(
                String(
                    format: "| %@ | %.1f µs | %.1f µs | %.2f× |", way.0, results[index].wall * 1e6, results[index].cpu * 1e6,
                    results[index].wall / results[0].wall))
        }
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
        if arguments.dropFirst().first == "profile-generated" {
            // For `perf record`: only the generated client in process, for as long as asked.
            let seconds = arguments.firstIndex(of: "--seconds").flatMap { Int(arguments[$0 + 1]) } ?? 10
            try await profileGenerated(seconds: seconds)
            return
        }
        if arguments.dropFirst().first == "download" {
            let megabytes = arguments.firstIndex(of: "--megabytes").flatMap { Int(arguments[$0 + 1]) } ?? 1024
            try await DownloadBenchmark.run(megabytes: max(1, megabytes))
            return
        }
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
        try await waysIn(server: server, port: port, calls: calls)
        await server.stop()
    }

    /// Calls the generated client in process for `seconds`, nothing else: a profile of it shows the
    /// client's own costs beside the server's.
    static func profileGenerated(seconds: Int) async throws {
        let people = MockResource("people", fields: ["name": .string, "numberOfKids": .integer])
        let server = try await MockServer(resources: [people])
        try await server.addData(
            .array((1...100).map { ["name": .string("person \($0)"), "numberOfKids": .integer($0 % 4)] }), for: "people")
        let generated = BenchPeopleClient(
            client: RestClient(baseURL: URL(string: "http://mock")!, transport: MockServerTransport(server: server)))
        let end = ContinuousClock.now + .seconds(seconds)
        var calls = 0
        while ContinuousClock.now < end {
            for id in 1...100 { _ = try await generated.person(id: id) }
            calls += 100
        }
        print("\(calls) calls")
        await server.stop()
    }
}
