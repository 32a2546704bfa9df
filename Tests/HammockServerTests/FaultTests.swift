import Foundation
import HTTPTypes
import HammockHTTPServer
import HammockJSON
import HammockServer
import HammockTestSupport
import Testing

/// Failures injected on purpose: statuses and delays, on every kind of route, at a rate, replayed by a
/// seed, journaled, and managed from the configuration, the admin API and Swift.
@Suite("Faults")
struct FaultTests {
    func server(random: @escaping @Sendable () -> Double = { 0.5 }, clock: ManualClock? = nil) async throws -> MockServer {
        let server: MockServer
        if let clock {
            server = try await MockServer(resources: [Fixtures.people], clock: clock, random: random)
        } else {
            server = try await MockServer(resources: [Fixtures.people], random: random)
        }
        try await server.addData(["name": "ada"], for: "people")
        server.addStubs([try StubRoute(.get, "/health", body: ["ok": true])])
        try server.route(.get, "/me") { _ in MockResponse(json: ["me": true]) }
        return server
    }

    @Test(
        "The compact and JSON forms read and write the same faults",
        arguments: [
            "GET /people/:id 503 20%", "POST /orders 503 retry-after=2", "* delay=300", "/search delay=50..400",
            "GET /feed delay=lognormal:100:800", "/files/** 404", "GET /photos/* bandwidth=3g", "* bandwidth=1200",
            "POST /orders drop 10%", "* reset", "GET /people/:id timeout", "/files/** truncate", "* empty 50%", "* malformed",
        ])
    func forms(text: String) throws {
        let fault = try Fault(parsing: text)
        #expect(fault.description == text)
        #expect(try Fault(json: fault.json) == fault)
    }

    @Test(
        "Mistakes name what is wrong",
        arguments: [
            ("GET /people 503 120%", "the rate 1.2 is not between 0 and 1"), ("GET /people", "give an effect"),
            ("GET /people 503 delay=10", "give one effect per fault"), ("GET /people 503 soon", "not a status"),
            ("/people 099", "the status 99 is not from 200 to 599"), ("/people delay=700000", "not milliseconds"),
            ("/people delay=lognormal:100:50", "p99 at least the median"), ("people 503", "must start with /"),
            ("/people drop reset", "give one effect per fault"),
            ("/people bandwidth=4g", "expected bytes per second or one of edge, 3g, lte"),
            ("/people bandwidth=0", "from 1 to 10000000000"),
            ("/people crash", "not a status, delay=MS, bandwidth=B/S, drop, empty"),
            ("/people reset retry-after=2", "retry-after belongs to a status fault"),
        ])
    func compactMistakes(text: String, message: String) {
        let error = #expect(throws: FaultError.self) { try Fault(parsing: text) }
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "accepted")")
    }

    @Test("A status fault answers at once on resources, stubs and Swift routes, runs no route, and is journaled")
    func statusFault() async throws {
        let server = try await server()
        server.setFaults([try Fault("*", effect: .status(503, retryAfter: 2))])
        for path in ["/people/1", "/health", "/me"] {
            let (response, problem) = await server.send(.get, path)
            #expect(response.status == .serviceUnavailable, "\(path)")
            #expect(response.headerFields[.retryAfter] == "2")
            #expect(problem?["detail"]?.stringValue?.contains("* 503 retry-after=2") == true)
        }
        #expect(await server.send(.post, "/people", json: ["name": "bob"]).0.status == .serviceUnavailable)
        // No route matched, no fault: a 404 stays a 404.
        #expect(await server.send(.get, "/nowhere").0.status == .notFound)
        server.setFaults([])
        #expect(await server.send(.get, "/people").1?.arrayValue?.count == 1)  // the POST created nothing
        let faulted = server.journal.entries.filter { $0.fault != nil }
        #expect(faulted.count == 4)
        #expect(faulted.allSatisfy { $0.fault == "* 503 retry-after=2" && $0.status == .serviceUnavailable })
        #expect(server.journal.entries.last?.fault == nil)
    }

    @Test("A fault on GET /people/:id fires after routing: never for GET /people, nor for other methods")
    func afterRouting() async throws {
        let server = try await server()
        server.setFaults([try Fault(parsing: "GET /people/:id 500")])
        #expect(await server.send(.get, "/people").0.status == .ok)
        #expect(await server.send(.get, "/people/1").0.status == .internalServerError)
        #expect(await server.respond(to: MockRequest(.head, "/people/1")).status == .internalServerError)
        #expect(await server.send(.patch, "/people/1", json: ["name": "x"]).0.status == .ok)
        // A custom body replaces the problem.
        server.setFaults([try Fault("GET /people/:id", effect: .status(429, body: ["error": "slow down"]))])
        #expect(await server.send(.get, "/people/1").1 == ["error": "slow down"])
    }

    @Test(
        "A fault keys on the route the router matched: a stub on /people/new is not GET /people/:id, a literal id is one record")
    func keyedOnTheMatchedRoute() async throws {
        let server = try await server()
        try await server.addData(["name": "bob"], for: "people")
        server.addStubs([
            try StubRoute(.get, "/people/new", body: ["form": true]),
            try StubRoute(.get, "/files/**", body: ["file": true]),
        ])
        server.setFaults([try Fault(parsing: "GET /people/:id 500")])
        #expect(await server.send(.get, "/people/1").0.status == .internalServerError)
        #expect(await server.send(.get, "/people/new").0.status == .ok, "the stub's route has no parameter there")
        // A literal in a parameter's place is that record only.
        server.setFaults([try Fault(parsing: "GET /people/2 503")])
        #expect(await server.send(.get, "/people/2").0.status == .serviceUnavailable)
        #expect(await server.send(.get, "/people/1").0.status == .ok)
        #expect(await server.send(.get, "/people/new").0.status == .ok)
        // `*` is any one segment of the route, `**` one or more.
        server.setFaults([try Fault(parsing: "GET /people/* 502")])
        #expect(await server.send(.get, "/people/new").0.status == .badGateway)
        #expect(await server.send(.get, "/people/1").0.status == .badGateway)
        #expect(await server.send(.get, "/people").0.status == .ok)
        server.setFaults([try Fault(parsing: "/people/** 504")])
        #expect(await server.send(.get, "/people/1").0.status == .gatewayTimeout)
        #expect(await server.send(.get, "/people").0.status == .ok)
        // Inside a route's own `**`, a fault's literals are the request's segments.
        server.setFaults([try Fault(parsing: "GET /files/a/b.txt 404")])
        #expect(await server.send(.get, "/files/a/b.txt").0.status == .notFound)
        #expect(await server.send(.get, "/files/a/c.txt").0.status == .ok)
        #expect(await server.send(.get, "/files/a").0.status == .ok)
        #expect(await server.send(.get, "/files/a/b.txt/more").0.status == .ok)
        server.setFaults([try Fault(parsing: "GET /files/** 410")])
        #expect(await server.send(.get, "/files/a").0.status == .gone)
    }

    @Test("Faults and a request's own asks are one mechanism: a fault that fires wins, and only asks are listed as applied")
    func faultsAndAsks() async throws {
        let server = try await server()
        var asking = HTTPFields()
        asking[HTTPField.Name("Prefer")!] = "status=418"
        let asked = await server.respond(to: MockRequest(.get, "/people/1", headerFields: asking))
        #expect(asked.status.code == 418)
        #expect(asked.headerFields[HTTPField.Name("Preference-Applied")!] == "status=418")
        server.setFaults([try Fault(parsing: "GET /people/:id 503")])
        let faulted = await server.respond(to: MockRequest(.get, "/people/1", headerFields: asking))
        #expect(faulted.status == .serviceUnavailable)
        #expect(faulted.headerFields[HTTPField.Name("Preference-Applied")!] == nil)
        // Where no fault fires, the ask applies again.
        #expect(await server.respond(to: MockRequest(.get, "/health", headerFields: asking)).status.code == 418)
        #expect(server.journal.entries.map(\.fault) == [nil, "GET /people/:id 503", nil])
    }

    @Test("A rate fires on that share of requests, and the same seed replays the same requests failing")
    func seededReplay() async throws {
        func run(seed: UInt64) async throws -> [Int] {
            let server = try await server(random: MockServer.seededRandom(seed))
            server.setFaults([try Fault(parsing: "GET /people/:id 503 30%")])
            var statuses: [Int] = []
            for _ in 0..<200 { statuses.append(await server.send(.get, "/people/1").0.status.code) }
            return statuses
        }
        let first = try await run(seed: 42)
        #expect(try await run(seed: 42) == first)
        #expect(try await run(seed: 43) != first)
        let failed = first.filter { $0 == 503 }.count
        #expect((30...90).contains(failed), "\(failed) of 200")
        let never = try await server()
        never.setFaults([try Fault(parsing: "GET /people/:id 503 0%")])
        for _ in 0..<20 { #expect(await never.send(.get, "/people/1").0.status == .ok) }
    }

    @Test("A delay fault holds the route's answer on the server's clock; the stop releases it")
    func delayFault() async throws {
        let clock = ManualClock()
        let server = try await server(clock: clock)
        server.setFaults([try Fault(parsing: "/health delay=1500")])
        let answer = Task { await server.respond(to: MockRequest(.get, "/health")) }
        #expect(await eventually { clock.sleeperCount == 1 })
        clock.advance(by: .milliseconds(1499))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .milliseconds(1))
        #expect(await answer.value.status == .ok)
        #expect(server.journal.entries.last?.fault == "/health delay=1500")
        let held = Task { await server.respond(to: MockRequest(.get, "/health")) }
        #expect(await eventually { clock.sleeperCount == 1 })
        await server.stop()
        #expect(await held.value.status == .ok)
    }

    @Test("Delays are drawn from their distribution: uniform within its bounds, log-normal around its median")
    func distributions() {
        let uniform = Fault.Delay.uniform(.milliseconds(50), .milliseconds(400))
        #expect(uniform.draw(0, 0) == .milliseconds(50))
        #expect(uniform.draw(1, 0) == .milliseconds(400))
        let logNormal = Fault.Delay.logNormal(median: .milliseconds(100), p99: .milliseconds(800))
        // The second number at a quarter turn makes the normal draw 0: the median itself.
        let median = logNormal.draw(0.3, 0.25)
        #expect(abs(Double(median / .microseconds(1)) - 100_000) < 1)
        // The 99th percentile: z = 2.326 is drawn by e^(-z²/2) and a zero turn.
        let p99 = logNormal.draw(exp(-2.326_347_874 * 2.326_347_874 / 2), 0)
        #expect(abs(Double(p99 / .microseconds(1)) - 800_000) < 100)
        #expect(logNormal.draw(1e-300, 0) <= .seconds(600))
    }

    @Test("The admin API reads, replaces and clears faults; reset returns to the configured ones")
    func admin() async throws {
        let text = #"""
            {"resources": [{"name": "people", "fields": {"name": "string"}}],
             "faults": [{"route": "POST /people", "status": 503, "retryAfter": 1}]}
            """#
        let configuration = try ServerConfiguration(parsing: Array(text.utf8), file: "mock.json")
        let server = try await MockServer(configuration: configuration, store: MemoryStore())
        #expect(
            await server.send(.get, "/__hammock/faults").1 == [
                ["route": "POST /people", "status": 503, "retryAfter": 1, "name": "fault-1"]
            ])
        let replaced = await server.send(
            .put, "/__hammock/faults", json: [["route": "*", "delay": ["distribution": "uniform", "min": 0, "max": 0]]])
        #expect(replaced.1 == [["route": "*", "delay": ["distribution": "uniform", "min": 0, "max": 0], "name": "fault-1"]])
        #expect(await server.send(.post, "/people", json: ["name": "a"]).0.status == .created)
        let bad = await server.send(.put, "/__hammock/faults", json: [["route": "*", "status": 503, "rate": 2]])
        #expect(bad.0.status == .badRequest)
        #expect(bad.1?["detail"]?.stringValue == "[0].rate: the rate 2.0 is not between 0 and 1")
        // Connection and bandwidth faults travel the same way; a preset comes back by its name.
        let kinds: JSON = [
            ["route": "GET /people/:id", "kind": "reset", "rate": 0.5], ["route": "*", "bandwidth": "3g"],
            ["route": "/files/**", "bandwidth": 1200],
        ]
        let named: JSON = [
            ["route": "GET /people/:id", "kind": "reset", "rate": 0.5, "name": "fault-1"],
            ["route": "*", "bandwidth": "3g", "name": "fault-2"], ["route": "/files/**", "bandwidth": 1200, "name": "fault-3"],
        ]
        #expect(await server.send(.put, "/__hammock/faults", json: kinds).1 == named)
        #expect(
            server.faultsInForce.map(\.description) == [
                "GET /people/:id reset 50%", "* bandwidth=3g", "/files/** bandwidth=1200",
            ])
        #expect(await server.respond(to: MockRequest(.get, "/people/1")).delivery != .normal)
        #expect(await server.send(.delete, "/__hammock/faults").1 == [])
        try await server.reset()
        #expect(server.faultsInForce.map { Self.unnamed($0) } == configuration.faults)
        #expect(await server.send(.post, "/people", json: ["name": "a"]).0.status == .serviceUnavailable)
    }

    @Test("A configuration's faults name the key of a mistake")
    func configurationMistakes() {
        func error(_ faults: String) -> String? {
            do {
                _ = try ServerConfiguration(
                    parsing: Array(#"{"routes": [{"method": "GET", "path": "/a"}], "faults": \#(faults)}"#.utf8), file: "m.json")
                return nil
            } catch {
                return error.description
            }
        }
        #expect(
            error(#"[{"route": "*", "status": 503, "rate": -1}]"#)
                == "m.json: faults[0].rate: the rate -1.0 is not between 0 and 1")
        #expect(error(#"[{"route": "*"}]"#) == "m.json: faults[0]: give one effect: status, delay, bandwidth, kind or webSocket")
        #expect(
            error(#"[{"route": "*", "status": 503, "kind": "drop"}]"#)
                == "m.json: faults[0].kind: give one effect per fault, not status and kind")
        #expect(
            error(#"[{"route": "*", "kind": "crash"}]"#)
                == "m.json: faults[0].kind: expected one of drop, empty, reset, timeout, truncate, malformed")
        #expect(
            error(#"[{"route": "*", "bandwidth": 0}]"#)
                == "m.json: faults[0].bandwidth: expected bytes per second from 1 to 10000000000, or a preset such as \"3g\"")
        #expect(
            error(#"[{"route": "*", "kind": "reset", "retryAfter": 1}]"#)
                == "m.json: faults[0].retryAfter: belongs to a status fault, not to kind")
        #expect(
            error(#"[{"route": "*", "delay": {"distribution": "pareto"}}]"#)?.hasPrefix("m.json: faults[0].delay.distribution:")
                == true)
        #expect(error(#"[{"route": "*", "kill": "drop"}]"#)?.hasPrefix("m.json: faults[0].kill: unknown key") == true)
        #expect(error(#"{"route": "*"}"#) == "m.json: faults: expected an array of faults")
        #expect(
            error(#"[{"route": "*", "status": 503, "name": "a"}, {"route": "/b", "status": 500, "name": "a"}]"#)
                == "m.json: faults[1].name: 'a' names an earlier fault too; names are unique")
        #expect(
            error(#"[{"route": "*", "status": 503, "name": "a b"}]"#)?.hasPrefix("m.json: faults[0].name: a fault's name is")
                == true)
    }

    static func unnamed(_ fault: Fault) -> Fault {
        var fault = fault
        fault.name = nil
        return fault
    }

    @Test("One fault is added, replaced and removed by name in Swift; the others stay as they were")
    func oneFaultByName() async throws {
        let server = try await MockServer(resources: [Fixtures.people], store: MemoryStore())
        #expect(server.addFault(try Fault("POST /people", effect: .status(503))) == "fault-1")
        #expect(server.addFault(try Fault("GET /people", effect: .status(500), name: "list-down")) == "list-down")
        #expect(server.addFault(try Fault("DELETE /people/:id", effect: .status(502))) == "fault-2")
        #expect(server.faultsInForce.map(\.name) == ["fault-1", "list-down", "fault-2"])
        #expect(await server.respond(to: MockRequest(.get, "/people")).status.code == 500)

        // The same name replaces that fault in its place.
        server.addFault(try Fault("GET /people", effect: .status(504), name: "list-down"))
        #expect(server.faultsInForce.map(\.description) == ["POST /people 503", "GET /people 504", "DELETE /people/:id 502"])
        #expect(await server.respond(to: MockRequest(.get, "/people")).status.code == 504)

        let removed = server.removeFault(named: "list-down")
        #expect(removed?.description == "GET /people 504")
        #expect(server.removeFault(named: "list-down") == nil)
        #expect(await server.respond(to: MockRequest(.get, "/people")).status == .ok)
        #expect(await server.respond(to: MockRequest(.post, "/people", json: ["name": "a"])).status.code == 503)
        // A freed name is given again, the first free one first.
        #expect(server.removeFault(named: "fault-1") != nil)
        #expect(server.addFault(try Fault("*", effect: .delay(.fixed(.zero)))) == "fault-1")
        #expect(#expect(throws: FaultError.self) { try Fault("*", effect: .status(503), name: "no/slash") }?.key == "name")
        #expect(try Fault(parsing: "POST /login 503 name=login-down").name == "login-down")
    }

    @Test("Two hundred faults added at once from many tasks all land, each with a name of its own")
    func concurrentAdds() async throws {
        let server = try await MockServer(resources: [Fixtures.people], store: MemoryStore())
        let names = try await withBusyMachine {
            try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        let name = index.isMultiple(of: 2) ? "named-\(index)" : nil
                        return server.addFault(try Fault("GET /x\(index)", effect: .status(503), name: name))
                    }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
        }
        #expect(Set(names).count == 200)
        #expect(server.faultsInForce.count == 200)
        #expect(Set(server.faultsInForce.compactMap(\.name)) == Set(names))
        await withTaskGroup(of: Void.self) { group in
            for name in names { group.addTask { server.removeFault(named: name) } }
        }
        #expect(server.faultsInForce.isEmpty)
        #expect(await server.respond(to: MockRequest(.get, "/x0")).status == .notFound)
    }

    @Test("The admin API adds, reads, replaces and removes one fault by name, with problem+json for mistakes")
    func adminFaultByName() async throws {
        let server = try await MockServer(resources: [Fixtures.people], store: MemoryStore())
        let added = await server.send(.post, "/__hammock/faults", json: ["route": "POST /people", "status": 503])
        #expect(added.0.status == .created)
        #expect(added.0.headerFields[.location] == "/__hammock/faults/fault-1")
        #expect(added.1 == ["route": "POST /people", "status": 503, "name": "fault-1"])
        let put = await server.send(.put, "/__hammock/faults/slow-list", json: ["route": "GET /people", "delay": 0])
        #expect(put.0.status == .created)
        #expect(put.1 == ["route": "GET /people", "delay": 0, "name": "slow-list"])
        let replaced = await server.send(.put, "/__hammock/faults/slow-list", json: ["route": "GET /people", "status": 500])
        #expect(replaced.0.status == .ok)
        #expect(
            await server.send(.get, "/__hammock/faults/slow-list").1 == [
                "route": "GET /people", "status": 500, "name": "slow-list",
            ])
        #expect(await server.respond(to: MockRequest(.get, "/people")).status.code == 500)

        #expect(await server.send(.delete, "/__hammock/faults/slow-list").0.status == .noContent)
        #expect(await server.respond(to: MockRequest(.get, "/people")).status == .ok)
        let gone = await server.send(.delete, "/__hammock/faults/slow-list")
        #expect(gone.0.status == .notFound)
        #expect(gone.0.headerFields[.contentType] == "application/problem+json")
        #expect(await server.send(.get, "/__hammock/faults/slow-list").0.status == .notFound)
        #expect(await server.send(.get, "/__hammock/faults").1 == [["route": "POST /people", "status": 503, "name": "fault-1"]])

        let mismatch = await server.send(.put, "/__hammock/faults/a", json: ["route": "*", "status": 503, "name": "b"])
        #expect(mismatch.0.status == .badRequest)
        #expect(mismatch.1?["detail"] == "name: 'b' differs from the path's 'a'")
        let badName = await server.send(.put, "/__hammock/faults/a%20b", json: ["route": "*", "status": 503])
        #expect(badName.0.status == .badRequest)
        let duplicates = await server.send(
            .put, "/__hammock/faults",
            json: [["route": "*", "status": 503, "name": "x"], ["route": "/y", "status": 500, "name": "x"]])
        #expect(duplicates.0.status == .badRequest)
        #expect(duplicates.1?["detail"] == "[1].name: 'x' names an earlier fault too; names are unique")
        #expect(server.faultsInForce.map(\.name) == ["fault-1"])
    }

    @Test("In process a drop runs the route and loses its answer; empty, reset and malformed run none; all are thrown")
    func connectionFaultsInProcess() async throws {
        let server = try await server()
        server.setFaults([try Fault(parsing: "POST /people drop")])
        let dropped = await #expect(throws: ConnectionFaultError.self) {
            try await server.exchange(MockRequest(.post, "/people", json: ["name": "bob"]))
        }
        #expect(dropped?.fault == .drop)
        // The write happened: the answer was lost, not the request.
        #expect(server.journal.entries.last?.status == .created && server.journal.entries.last?.fault == "POST /people drop")
        for kind in [ConnectionFault.empty, .reset, .malformed] {
            server.setFaults([try Fault("POST /people", effect: .connection(kind))])
            let error = await #expect(throws: ConnectionFaultError.self) {
                try await server.exchange(MockRequest(.post, "/people", json: ["name": "eve"]))
            }
            #expect(error?.fault == kind)
            // No route ran: the journal keeps the request with status 0, as a browser reports a network error.
            #expect(server.journal.entries.last?.status.code == 0)
            // respond(to:) gives the answer itself, with how it was to be delivered.
            #expect(await server.respond(to: MockRequest(.post, "/people", json: ["name": "eve"])).delivery == .fault(kind))
        }
        server.setFaults([])
        #expect(await server.send(.get, "/people").1?.arrayValue?.map { $0["name"] } == ["ada", "bob"])
    }

    @Test("In process a truncate gives half the body in its error; a timeout waits until the caller gives up or the server stops")
    func truncateAndTimeoutInProcess() async throws {
        let server = try await server()
        let whole = await server.respond(to: MockRequest(.get, "/people/1")).body
        server.setFaults([try Fault(parsing: "GET /people/:id truncate")])
        let cut = await #expect(throws: ConnectionFaultError.self) { try await server.exchange(MockRequest(.get, "/people/1")) }
        #expect(cut?.partialResponse?.status == .ok)
        #expect(cut?.partialResponse?.body == Array(whole.prefix(whole.count / 2)))
        server.setFaults([try Fault(parsing: "GET /people/:id timeout")])
        let abandoned = Task { try await server.exchange(MockRequest(.get, "/people/1")) }
        #expect(await eventually { server.journal.entries.last?.fault == "GET /people/:id timeout" })
        abandoned.cancel()
        await #expect(throws: CancellationError.self) { try await abandoned.value }
        let waiting = Task { try await server.exchange(MockRequest(.get, "/people/1")) }
        #expect(await eventually { server.stopWaiters == 1 })
        await server.stop()
        let error = await #expect(throws: ConnectionFaultError.self) { try await waiting.value }
        #expect(error?.fault == .timeout)
    }

    @Test("A bandwidth fault paces the body on the server's clock: the last byte at size / rate, never before")
    func throttledInProcess() async throws {
        let clock = ManualClock()
        let server = try await server(clock: clock)
        try server.route(.get, "/blob") { _ in MockResponse(status: .ok, body: Array(repeating: 7, count: 200)) }
        // 100 bytes per second: slices of 5 bytes (a twentieth of a second each), 2 seconds in all.
        server.setFaults([try Fault(parsing: "GET /blob bandwidth=100")])
        let exchange = Task { try await server.exchange(MockRequest(.get, "/blob")) }
        for _ in 0..<39 {
            #expect(await eventually { clock.sleeperCount == 1 })
            clock.advance(by: .milliseconds(50))
        }
        #expect(await eventually { clock.sleeperCount == 1 })
        // 1.95 seconds in: the last slice is not due yet.
        clock.advance(by: .milliseconds(49))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .milliseconds(1))
        let response = try await exchange.value
        #expect(response.body == Array(repeating: 7, count: 200))
        #expect(server.journal.entries.last?.fault == "GET /blob bandwidth=100")
    }

    @Test("Over loopback a real client sees the injected 503 and its Retry-After")
    func overHTTP() async throws {
        let server = try await server()
        server.setFaults([try Fault(parsing: "GET /people/:id 503 retry-after=3")])
        try await server.whileServing { port in
            let reply = try await LoopbackClient(port: port).send("GET", "/people/1")
            #expect(reply.status == 503)
            #expect(reply.header("Retry-After") == "3")
            #expect(reply.header("Content-Type") == "application/problem+json")
        }
    }
}
