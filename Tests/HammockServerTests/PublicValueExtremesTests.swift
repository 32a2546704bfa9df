import Foundation
import HammockHTTPServer
import HammockJSON
import HammockServer
import Testing

/// Every public value of the server's types, set to its extremes, is clamped where it is used: none of
/// them may trap. Each of these trapped before: `Int64(idleTimeout * 1000)` on an infinite timeout,
/// `Duration.seconds(.infinity)`, `low + 100` on a rule's minimum near `Int.max`, `Double.random(in:)`
/// on a range wider than a double, twice a header budget of `Int.max`.
@Suite("Public values at their extremes")
struct PublicValueExtremesTests {
    @Test("Latency from any seconds, NaN and infinities included, is a range from 0 to a day")
    func latency() {
        for (low, high) in [(Double.nan, 1), (-.infinity, .infinity), (1e300, -1e300), (.infinity, .nan)] {
            let latency = Latency(minimumSeconds: low, maximumSeconds: high)
            #expect(latency.minimum >= .zero && latency.maximum <= .seconds(86_400) && latency.minimum <= latency.maximum)
        }
    }

    @Test("Timeouts of a configuration set in code to any Double become connection limits")
    func configurationTimeouts() throws {
        for seconds in [Double.infinity, -.infinity, .nan, 1e300, -5, 0] {
            var configuration = try ServerConfiguration(
                parsing: Array(#"{"resources": [{"name": "a", "fields": {"x": "string"}}]}"#.utf8), file: "a.json")
            configuration.idleTimeout = seconds
            configuration.requestTimeout = seconds
            let limits = configuration.connectionLimits
            #expect(limits.idleTimeout >= .zero && limits.idleTimeout <= .seconds(86_400), "\(seconds)")
        }
    }

    @Test(
        "A server started with zero, negative or huge connection limits serves a request and stops",
        arguments: [
            ConnectionLimits(
                idleTimeout: .zero, requestTimeout: .seconds(-5), lingerTimeout: .zero, maximumHeaderBytes: -1,
                maximumHeaderFields: Int.min),
            ConnectionLimits(
                idleTimeout: .seconds(Int64.max), requestTimeout: .seconds(Int64.max), lingerTimeout: .seconds(Int64.max),
                maximumHeaderBytes: Int.max, maximumHeaderFields: Int.max),
        ])
    func connectionLimits(limits: ConnectionLimits) async throws {
        let server = try await MockServer(resources: [Fixtures.people])
        try await server.whileServing(limits: limits) { port in
            let connection = try RawConnection(port: port)
            await connection.send("GET /people HTTP/1.1\r\nHost: x\r\n\r\n")
            let answer = await connection.readResponses(1).first
            // With a one-byte header budget the request is a 431; with the widest limits it is served.
            // With timeouts clamped to a millisecond, the idle or request timer may also win the race
            // against the client's first byte: then the answer is a 408 or the connection is closed
            // unanswered. What must never happen is a trap, a timer spinning, or a server that will not stop.
            if limits.idleTimeout > .seconds(1) {
                #expect(answer?.status == 200)
            } else if let answer {
                #expect([408, 431].contains(answer.status))
            }
        }
    }

    @Test("Generation rules at the ends of Int and Double produce values inside them")
    func generationRules() async throws {
        let resource = MockResource("things", fields: ["count": .integer, "weight": .float])
        let server = try await Fixtures.server(resources: [resource])
        let rules: [String: DataGeneration.FieldRule] = [
            "count": .init(minimum: .integer(Int.max - 3)),
            "weight": .init(minimum: .double(-1e308), maximum: .double(1e308)),
        ]
        _ = try await server.generateData(DataGeneration([.init("things", count: 20, fields: rules)]), seed: 9)
        for thing in await server.send(.get, "/things").1?.arrayValue ?? [] {
            #expect((thing["count"]?.intValue ?? 0) >= Int.max - 3)
            #expect(thing["weight"]?.doubleValue?.isFinite == true)
        }
        let wide: [String: DataGeneration.FieldRule] = ["count": .init(minimum: .integer(Int.min), maximum: .integer(Int.max))]
        _ = try await Fixtures.server(resources: [resource]).generateData(
            DataGeneration([.init("things", count: 5, fields: wide)]), seed: 9)
    }
}
