import FuzzSupport
import HammockJSON
import HammockSQLite
import HammockServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Request bodies through the in-process server, on both stores at once. For any body: never a 5xx;
/// both stores answer the same status and the same bytes; a refused request changes nothing; what a
/// create answers is what a later read serves.
@main
struct FuzzTarget {
    static let resources = [
        MockResource(
            "people",
            fields: [
                "name": .string, "age": .integer, "height": .float, "active": .boolean, "avatar": .blob, "born": .date,
                "extra": .json,
            ]),
        MockResource("categories", fields: ["slug": .string, "title": .string], primaryKey: "slug"),
        MockResource("cars", fields: ["name": .string], parents: ["people"]),
    ]

    /// A memory server and an SQLite server, each with person 1.
    static let servers: [MockServer] = Fuzzer.wait {
        removeStore()
        atexit { FuzzTarget.removeStore() }  // libFuzzer ends a timed run with exit()
        var servers: [MockServer] = []
        for store in [MemoryStore() as any MockStore, try! SQLiteStore(path: storePath)] {
            let server = try! await MockServer(resources: resources, store: store)
            _ = await server.respond(to: MockRequest(.post, "/people", json: ["name": "first"]))
            servers.append(server)
        }
        return servers
    }

    /// This process's SQLite file, removed before the run and when the process exits.
    static var storePath: String { "/tmp/hammock-fuzz-\(getpid()).sqlite" }

    static func removeStore() {
        for suffix in ["", "-wal", "-shm"] { unlink(storePath + suffix) }
    }

    static let targets: [(HTTPRequest.Method, String, String)] = [
        (.post, "/people", "application/json"), (.put, "/people/1", "application/json"),
        (.patch, "/people/1", "application/x-www-form-urlencoded"), (.post, "/categories", "application/json"),
        (.post, "/people/1/cars", "application/json"), (.post, "/people", "application/x-www-form-urlencoded"),
    ]

    static func main() {
        Fuzzer.run { data, count in
            let bytes = Fuzzer.bytes(data, count)
            guard let selector = bytes.first else { return 0 }
            let (method, path, type) = FuzzTarget.targets[Int(selector) % FuzzTarget.targets.count]
            let request = MockRequest(method, path, headerFields: [.contentType: type], body: Array(bytes.dropFirst()))
            let servers = FuzzTarget.servers
            Fuzzer.wait {
                var answers: [MockResponse] = []
                for server in servers {
                    let before = await FuzzTarget.snapshot(server)
                    let response = await server.respond(to: request)
                    Fuzzer.check(
                        response.status.code < 500, "\(response.status.code): \(String(decoding: response.body, as: UTF8.self))")
                    if response.status.code >= 400 {
                        let after = await FuzzTarget.snapshot(server)
                        Fuzzer.check(after == before, "a refused request changed the data")
                    } else if let location = response.headerFields[.location] {
                        let stored = await server.respond(to: MockRequest(.get, location))
                        Fuzzer.check(stored.body == response.body, "served \(location) differs from what create answered")
                    }
                    answers.append(response)
                }
                Fuzzer.check(
                    answers[0].status == answers[1].status, "the stores answer \(answers[0].status) and \(answers[1].status)")
                Fuzzer.check(answers[0].body == answers[1].body, "the stores answer different bytes")
                // Keep the data small: what was created goes again.
                if let location = answers[0].headerFields[.location] {
                    for server in servers { _ = await server.respond(to: MockRequest(.delete, location)) }
                }
            }
            return 0
        }
    }

    static func snapshot(_ server: MockServer) async -> [[UInt8]] {
        var bodies: [[UInt8]] = []
        for path in ["/people", "/categories", "/cars"] { bodies.append(await server.respond(to: MockRequest(.get, path)).body) }
        return bodies
    }
}
